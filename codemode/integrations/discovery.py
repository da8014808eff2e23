"""Discovery: find the few tools a task needs among many, without a model or the network.

``ToolIndex`` ranks tool specs for a free-text query with BM25 over three weighted
fields: the tool's name (split at ``_``, ``-``, ``.`` and camelCase), its argument
names, and its description plus argument descriptions. Text is lower-cased and split
into words; CJK text becomes character bigrams, so non-English descriptions are
searchable too. ``discovery_tools`` builds the tools a client and a script call:
``search_tools``/``describe_tools`` (client-facing) and ``search``/``describe``
(``await tools.search(query=...)`` inside a script), over one ``CodeMode``'s SDK.

Sizes: ``estimate_tokens`` is the estimate every number in ``docs/serve.md`` uses,
one token per four characters (rounded up), the usual rule of thumb for English text
and code with BPE tokenizers.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, final

import sdk_gen
from codemode.dispatch.tool import Tool, define_tool

if TYPE_CHECKING:
    from codemode.dispatch.context import ExecContext
    from codemode.dispatch.spec import ToolSpec
    from codemode.mode.code_mode import CodeMode

__all__ = [
    "DISCOVERY_NAMES",
    "MAX_NAME",
    "MAX_QUERY",
    "Hit",
    "ToolIndex",
    "discovery_tools",
    "estimate_tokens",
    "tokenize",
]

DISCOVERY_NAMES = ("search", "describe", "search_tools", "describe_tools")
"""Wire names of the discovery tools (never indexed themselves)."""

MAX_QUERY = 1000
"""Longest ``search`` query (characters). Ranking runs on the host's loop, in time the
query's distinct words times the tools: a script's query of 300,000 distinct words held
the loop of a 200-tool host for 28 s, and 40 MB of text for over a minute."""

MAX_NAME = 300
"""Longest tool name ``describe`` takes (unknown names are quoted back in its error)."""

_WORD = re.compile(r"[a-z0-9]+|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_STOP = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "for", "from", "has", "have",
    "if", "in", "into", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to",
    "was", "were", "will", "with", "you", "your", "which", "when", "use", "used", "using",
    "what", "how", "who", "where", "why", "i", "me", "my", "do", "does", "please", "want",
    "need", "some", "any", "all", "there",
})
_WEIGHTS = (("name", 3.0), ("arguments", 1.5), ("text", 1.0))


def estimate_tokens(text: str) -> int:
    """Tokens by the documented estimate: ``ceil(chars / 4)``."""
    return math.ceil(len(text) / 4)


def _stem(word: str) -> str:
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + keep
    return word


def tokenize(text: str) -> list[str]:
    """Search terms of ``text``: camelCase and snake_case split, lower-cased, stop words
    dropped, plural and -ing/-ed endings cut; CJK runs as character bigrams."""
    out: list[str] = []
    for run in _WORD.findall(_CAMEL.sub(" ", text).lower()):
        if run[0] >= "\u3040":
            out.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
        elif run not in _STOP:
            out.append(_stem(run))
    return out


def _argument_fields(parameters: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    names: list[str] = []
    texts: list[str] = []
    props = parameters.get("properties")
    if isinstance(props, Mapping):
        for key, sub in props.items():
            names.append(str(key))
            if isinstance(sub, Mapping) and isinstance(sub.get("description"), str):
                texts.append(sub["description"])
    return names, texts


@final
@dataclass(frozen=True, kw_only=True, slots=True)
class Hit:
    """One ranked search result."""

    name: str
    """Wire name of the tool."""
    score: float
    """BM25 score (higher is better); only comparable within one query."""


@final
class ToolIndex:
    """BM25 (k1 = 1.2, b = 0.75) over tool specs, fields weighted name 3, arguments 1.5,
    description 1 (a weighted term frequency, as in BM25F)."""

    k1 = 1.2
    b = 0.75

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self._docs: list[tuple[str, dict[str, float], float]] = []
        df: Counter[str] = Counter()
        for spec in specs:
            arg_names, arg_texts = _argument_fields(spec.parameters)
            fields = {
                "name": tokenize(" ".join(filter(None, [spec.namespace, spec.name]))),
                "arguments": [t for n in arg_names for t in tokenize(n)],
                "text": tokenize(" ".join([spec.description, *arg_texts])),
            }
            tf: dict[str, float] = {}
            for field, weight in _WEIGHTS:
                for term in fields[field]:
                    tf[term] = tf.get(term, 0.0) + weight
            length = float(sum(tf.values()))
            self._docs.append((spec.name, tf, length))
            df.update(tf.keys())
        count = len(self._docs)
        self._idf = {t: math.log(1 + (count - n + 0.5) / (n + 0.5)) for t, n in df.items()}
        self._avg = sum(d[2] for d in self._docs) / count if count else 0.0

    def __len__(self) -> int:
        return len(self._docs)

    def search(self, query: str, *, limit: int = 5) -> list[Hit]:
        """The best ``limit`` tools for ``query``, best first (ties by name); tools
        sharing no term with the query are left out."""
        terms = set(tokenize(query))
        hits: list[Hit] = []
        for name, tf, length in self._docs:
            score = 0.0
            for term in terms:
                freq = tf.get(term)
                if freq:
                    norm = self.k1 * (1 - self.b + self.b * length / self._avg)
                    score += self._idf[term] * freq * (self.k1 + 1) / (freq + norm)
            if score > 0:
                hits.append(Hit(name=name, score=score))
        hits.sort(key=lambda h: (-h.score, h.name))
        return hits[:limit]


def _summary(text: str, cap: int = 160) -> str:
    first = re.split(r"(?<=[.!?。])\s|\n\n", text.strip(), maxsplit=1)[0].strip()
    return first if len(first) <= cap else first[: cap - 2].rstrip() + " …"


@final
class Discovery:
    """Search and describe over one ``CodeMode``'s current SDK (rebuilt when tools change)."""

    def __init__(self, mode: CodeMode) -> None:
        self.mode = mode
        self._index: tuple[int, ToolIndex, dict[str, str]] | None = None

    def _current(self) -> tuple[ToolIndex, dict[str, str]]:
        version = self.mode.registry.version
        if self._index is None or self._index[0] != version:
            specs = [s for s in self.mode.visible_specs() if s.name not in DISCOVERY_NAMES]
            paths = {wire: path for path, wire in self.mode.sdk().names.tools.items()}
            self._index = (version, ToolIndex(specs), paths)
        return self._index[1], self._index[2]

    def search(self, query: str, limit: int = 5) -> list[dict[str, Any]]:
        """Ranked matches: SDK path, wire name, first sentence, argument names."""
        index, paths = self._current()
        specs = {s.name: s for s in self.mode.visible_specs()}
        out: list[dict[str, Any]] = []
        for hit in index.search(query, limit=limit):
            spec = specs[hit.name]
            arguments, _ = _argument_fields(spec.parameters)
            out.append(
                {
                    "tool": paths.get(hit.name, hit.name),
                    "summary": _summary(spec.description),
                    "arguments": arguments,
                }
            )
        return out

    def describe(self, names: Sequence[str]) -> str:
        """The SDK text (typed signatures and docs, as the full prompt shows them) of the
        named tools, by SDK path (``ns.name``) or wire name; unknown names fail, listed."""
        _, paths = self._current()
        by_path = {path: wire for wire, path in paths.items()}
        specs = {s.name: s for s in self.mode.visible_specs()}
        wanted: list[ToolSpec] = []
        unknown: list[str] = []
        for key in names:
            wire = by_path.get(key, key if key in paths else None)
            if wire is None:
                unknown.append(key)
            elif specs[wire] not in wanted:
                wanted.append(specs[wire])
        if unknown:
            raise LookupError(
                f"no such tool: {', '.join(map(repr, unknown))}; search_tools finds tools"
                f" by what they do ({len(paths)} tools)"
            )
        return sdk_gen.generate(wanted).prompt


def discovery_tools(mode: CodeMode) -> tuple[Discovery, list[Tool]]:
    """``search``/``describe`` (scripts) and ``search_tools``/``describe_tools`` (clients)."""
    found = Discovery(mode)
    search_schema = {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_QUERY,
                "description": "What the tool should do, in words.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": 50,
                "default": 5,
                "description": "How many matches to return.",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    describe_schema = {
        "type": "object",
        "properties": {
            "names": {
                "type": "array",
                "items": {"type": "string", "maxLength": MAX_NAME},
                "minItems": 1,
                "maxItems": 50,
                "description": "Tools by SDK path (`ns.name`), as search returns them.",
            },
        },
        "required": ["names"],
        "additionalProperties": False,
    }

    async def search(args: Mapping[str, Any], ctx: ExecContext) -> Any:
        return {"matches": found.search(args["query"], int(args.get("limit", 5)))}

    async def describe(args: Mapping[str, Any], ctx: ExecContext) -> str:
        return found.describe(list(args["names"]))

    search_text = (
        "Find tools by what they do: ranked matches (SDK path, summary, argument names)"
        " for a query in words."
    )
    describe_text = (
        "Typed SDK signatures and docs of the named tools, exactly as scripts call them."
    )
    tools = [
        define_tool(
            name=name,
            description=text,
            parameters=schema,
            execute=handler,
            output_schema=output,
            visible_in_code=in_code,
        )
        for name, text, schema, handler, output, in_code in (
            ("search", search_text, search_schema, search, _SEARCH_OUTPUT, True),
            ("describe", describe_text, describe_schema, describe, None, True),
            ("search_tools", search_text, search_schema, search, _SEARCH_OUTPUT, False),
            ("describe_tools", describe_text, describe_schema, describe, None, False),
        )
    ]
    return found, tools


_SEARCH_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "matches": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "description": "SDK path: `tools.<tool>(...)`."},
                    "summary": {"type": "string"},
                    "arguments": {"type": "array", "items": {"type": "string"}},
                },
                "required": ["tool", "summary", "arguments"],
            },
        }
    },
    "required": ["matches"],
}
