"""The model's view of the tools: one line per argument, nested keys indented, shared docs once.

The prompt is read, never executed, so it trades Python syntax for size: ``name?: type``
instead of ``NotRequired``/``= ...``, ``"a"|"b"`` instead of ``Literal``, nested objects as
indented keys (or inline ``{k: T}`` when nothing documents them) instead of named
``TypedDict``s. What several tools repeat is written once, in a glossary after the header:
a key's description (its lines end in ``^``) and long sentences (``§n`` in the text).
Types come straight from the normalized schema, so nested descriptions, defaults and
constraints survive whatever datamodel-code-generator makes of the names.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from ._render import EXTRA
from ._schema import (
    annotated,
    constraint_notes,
    map_values,
    merge_key,
    normalize,
    other_keys,
    py_literal,
    root_object,
)
from ._text import (
    KEY_LIMIT,
    SLACK,
    TOOL_LIMIT,
    TRUNCATED,
    clean,
    cut,
    flat_text,
    prompt_text,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from codemode.dispatch.spec import ToolSpec

    from ._render import ArgName, ToolRender

__all__ = [
    "HEADER",
    "HEADER_CLAUSES",
    "NOTE",
    "NOTE_MIN_CHARS",
    "OTHER_KEYS",
    "SHARED",
    "SHARED_CLAUSES",
    "SHARED_MARK",
    "SHARED_MIN_TOOLS",
    "TEXT_RESULT",
    "TYPE_MIN_CHARS",
    "Line",
    "ToolPrompt",
    "assemble_prompt",
    "fallback_prompt",
    "sentences",
    "shared_descriptions",
    "shared_sentences",
    "shared_types",
    "tool_prompt",
]

TEXT_RESULT = "text"
"""The note on ``-> str`` of a tool that answers text (``ToolSpec.returns_text``); the
Code Mode rules say what it means."""
SHARED_MARK = "^"
"""Ends a key's line when its description is the one listed for that key under ``SHARED``."""
OTHER_KEYS = "**"
"""Stands for every key of an object that its named keys do not cover."""
NOTE = "§"
"""``§<n>`` in a description stands for shared sentence ``n``, listed under ``SHARED``."""
SHARED_CLAUSES = (
    "`Name = type` defines a type used below",
    f"a line ending in `{SHARED_MARK}` takes its key's description from here",
    f"`{NOTE}n` stands for sentence `{NOTE}n`",
)
"""What the glossary's title line says of its types, key descriptions and sentences."""
SHARED = "Shared ("
"""How the title line of the glossary that tools share starts; it explains what it lists."""
SHARED_MIN_TOOLS = 2
"""A (key, description) pair or a sentence is listed once when this many tools repeat it
(and only where listing it once is shorter than repeating it)."""
NOTE_MIN_CHARS = 30
"""Shorter sentences are not worth a reference."""
TYPE_MIN_CHARS = 24
"""Shorter literal types (``"asc"|"desc"``) stay in place: a name would save little."""
HEADER = (
    "# Call `await tools.<name>(arg=value, ...)`, keyword arguments only. Per tool:"
    " `name: description`, then a line per argument: `arg: type = default # description`;"
    " `arg?` is optional (not sent when omitted; `= v` is the tool's own default)"
)
"""How the first line of every prompt starts: the notation, said once."""
NO_TOOLS = "# No tools: scripts compute with Python alone.\n"
"""The whole SDK prompt of a registry without script-visible tools."""
HEADER_CLAUSES = (
    ("\n  ", "deeper lines are keys of the dict above (of each item for `list[dict]`)"),
    (f"{OTHER_KEYS}: ", f"`{OTHER_KEYS}` is any other key of a dict"),
    ("", '`"a"|"b"`: allowed values'),
    ("", "`-> type`: the result (else dict, list or str)"),
    (
        f" -> str # {TEXT_RESULT}\n",
        f"`-> str # {TEXT_RESULT}`: it answers text as sent (`json.loads()` it if it holds JSON)",
    ),
    ("\n[", "tools under a `[ns]` line are `tools.ns.<name>`"),
    (TRUNCATED, f"a description ending in `{TRUNCATED}` was cut short here"),
)
"""(what in the prompt needs it, clause): the header explains only the notation in use."""

_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.) (?=\S)")


def sentences(text: str) -> tuple[str, ...]:
    """Split a one-line description into sentences (joining them with spaces restores it)."""
    return tuple(_SENTENCE_END.split(text)) if text else ()


class Line(NamedTuple):
    """One indented line of a tool: an argument, a dict key, the result or a named type.

    A tool caches its lines flat, in one plain tuple of strings and numbers
    (:attr:`ToolPrompt.rows`): a large registry holds tens of thousands of lines, and the
    garbage collector stops tracking such a tuple (not an instance of a class, not even of
    a tuple subclass, and not reliably a tuple of tuples), so its full passes, which stall
    the process and a server's event loop, do not grow with the registry.
    """

    depth: int
    """Indentation in spaces (1 for arguments, the result and named types)."""
    head: str
    """What precedes the type: ``key: ``, ``key?: ``, ``-> `` or ``Name = ``."""
    key: str
    """The key as shown (glossary lookup); empty for results, named types and separators."""
    type: str
    """The type, in the prompt's notation."""
    default: str | None = None
    """Python literal of the schema default, if any."""
    doc: str = ""
    """One-line description plus constraint notes, may be empty."""
    parts: tuple[str, ...] = ()
    """``doc`` split into sentences."""

    def text(
        self, shared: Mapping[str, str], notes: Mapping[str, str], types: Mapping[str, str]
    ) -> str:
        """The line, its type and description given by the glossary where it has them."""
        out = " " * self.depth + self.head + types.get(self.type, self.type)
        if self.default is not None:
            out += f" = {self.default}"
        if not self.doc:
            return out
        if shared.get(self.key) == self.doc:
            return f"{out} {SHARED_MARK}"
        return f"{out} # {_noted(self.parts, notes)}"


_ROW = 6
"""Fields of a :class:`Line` kept in :attr:`ToolPrompt.rows` (all but ``parts``)."""


def _line(depth: int, head: str, key: str, type: str, default: str | None = None,
          doc: str = "") -> Line:
    """A line with its description split into sentences (once, here, where it is cached)."""
    return Line(depth, head, key, type, default, doc, sentences(doc) if doc else ())


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolPrompt:
    """One tool as the prompt shows it, before shared descriptions are factored out.

    Built once per tool and cached, so it also carries what assembly needs to decide
    sharing quickly: most tools share nothing and are joined in as :attr:`plain`.
    """

    qualname: str
    """``name`` or ``namespace.name``."""
    name: str
    """The tool's name within its namespace (what its line shows)."""
    namespace: str
    """The namespace (shown once, as ``[ns]``, above its tools), or empty."""
    doc: str
    """One-line tool description, whole (the block cuts it, see :func:`_cut_noted`)."""
    parts: tuple[str, ...]
    """``doc`` split into sentences."""
    rows: tuple[Any, ...]
    """Arguments (with their nested keys), then the result, then named types: the fields
    of each :class:`Line` but its ``parts``, one line after the other (see there why)."""
    pairs: frozenset[tuple[str, str]]
    """``(key, description)`` of every described key line."""
    long: tuple[str, ...]
    """Sentences of ``NOTE_MIN_CHARS`` or more in any of its descriptions, first use first."""
    literals: frozenset[str]
    """Its literal types of ``TYPE_MIN_CHARS`` or more (candidates for a shared name)."""
    plain: str
    """The block with nothing shared."""
    literal_keys: tuple[tuple[str, str], ...] = ()
    """``(literal type, key)`` of each line typed by one of :attr:`literals`, in order."""
    defines: tuple[str, ...] = ()
    """Names its named-type lines (``Name = ...``) define."""
    memo: dict[tuple[Any, ...], Any] = field(default_factory=dict, compare=False, repr=False)
    """Assembly's results for this tool, keyed by what it took from the glossary (its text,
    its long sentences outside the glossary). Kept on the tool rather than in a module
    table keyed by identity: fewer objects for the garbage collector to track, nothing
    kept after the tool is dropped."""

    def recall(self, key: tuple[Any, ...]) -> Any:
        """What :meth:`remember` stored under ``key``, else ``None``."""
        return self.memo.get(key)

    def remember(self, key: tuple[Any, ...], value: Any) -> None:
        """Add to :attr:`memo` (a cache, not part of the value), which holds a few
        glossaries' worth at most."""
        if len(self.memo) >= 8:
            self.memo.clear()
        self.memo[key] = value

    def text(
        self, shared: Mapping[str, str], notes: Mapping[str, str], types: Mapping[str, str]
    ) -> str:
        """The tool's block: ``name: description`` and its lines."""
        return _block(self.name, self.doc, self.parts, self.lines, shared, notes, types)

    @property
    def lines(self) -> tuple[Line, ...]:
        """:attr:`rows` as :class:`Line` values."""
        rows = self.rows
        return tuple(_line(*rows[i : i + _ROW]) for i in range(0, len(rows), _ROW))

    def shares(self, shared_pairs: frozenset[tuple[str, str]]) -> bool:
        """Whether a line of this tool has its description in the glossary."""
        return not self.pairs.isdisjoint(shared_pairs)


def _block(
    name: str,
    doc: str,
    parts: tuple[str, ...],
    lines: Iterable[Line],
    shared: Mapping[str, str],
    notes: Mapping[str, str],
    types: Mapping[str, str],
) -> str:
    head = f"{name}: {_cut_noted(parts, notes)}" if doc else name
    return "\n".join([head, *(line.text(shared, notes, types) for line in lines)])


def _noted(parts: tuple[str, ...], notes: Mapping[str, str]) -> str:
    return " ".join(notes.get(part, part) for part in parts)


def _cut_noted(parts: tuple[str, ...], notes: Mapping[str, str]) -> str:
    """A tool's description cut near ``TOOL_LIMIT``, counting what the prompt writes.

    A shared sentence costs its ``§n``, so a preamble many tools repeat does not use up
    the room for what the tool itself does: whole sentences are kept while what they
    write fits. Never less is kept than cutting the description alone would keep.
    """
    text = _noted(parts, notes)
    if len(text) <= TOOL_LIMIT * SLACK:
        return text
    out: list[str] = []
    used = kept = 0
    for part in parts:
        piece = notes.get(part, part)
        gap = 1 if out else 0
        if used + gap + len(piece) > TOOL_LIMIT:
            break
        out.append(piece)
        used += gap + len(piece)
        kept += gap + len(part)
    alone = cut(" ".join(parts), TOOL_LIMIT)
    if kept < len(alone):  # the whole sentences ``alone`` holds, then the rest of it
        out, start = [], 0
        for part in parts:
            if start + len(part) > len(alone):
                break
            out.append(notes.get(part, part))
            start += len(part) + 1
        out.extend([alone[start:]] if alone[start:] else [])
    return " ".join(out) + TRUNCATED


def shared_descriptions(tools: Iterable[ToolPrompt]) -> dict[str, str]:
    """Key → description for the pairs at least ``SHARED_MIN_TOOLS`` tools repeat.

    One description per key (its most used one), and only where listing it once is
    shorter than repeating it, so the mark always points at exactly one text.
    """
    counts: Counter[tuple[str, str]] = Counter()
    for tool in tools:
        counts.update(tool.pairs)
    best: dict[str, tuple[int, str]] = {}
    for (key, doc), n in sorted(pair for pair in counts.items() if pair[1] >= SHARED_MIN_TOOLS):
        if (n - 1) * (len(doc) + 1) > len(key) + 4 and n > best.get(key, (0, ""))[0]:
            best[key] = (n, doc)
    return {key: doc for key, (_, doc) in sorted(best.items())}


def shared_sentences(tools: Iterable[ToolPrompt], shared: Mapping[str, str]) -> dict[str, str]:
    """Sentence → ``§<n>`` for long sentences at least ``SHARED_MIN_TOOLS`` tools repeat.

    Numbered in order of first use (a ``Counter`` keeps it); descriptions the glossary
    holds whole are skipped.
    """
    shared_pairs = frozenset(shared.items())
    counts: Counter[str] = Counter()
    for tool in tools:
        found = tool.long
        if tool.shares(shared_pairs):
            key = _memo_key("long", sorted(tool.pairs & shared_pairs))
            found = tool.recall(key)
            if found is None:
                found = _long(
                    [tool.parts, *(ln.parts for ln in tool.lines if shared.get(ln.key) != ln.doc)]
                )
                tool.remember(key, found)
        counts.update(found)
    chosen = (sentence for sentence, n in counts.items() if n >= SHARED_MIN_TOOLS)
    return {sentence: f"{NOTE}{i}" for i, sentence in enumerate(chosen, start=1)}


def _long(groups: Iterable[tuple[str, ...]]) -> tuple[str, ...]:
    found = (part for parts in groups for part in parts if len(part) >= NOTE_MIN_CHARS)
    return tuple(dict.fromkeys(found))


def shared_types(tools: Iterable[ToolPrompt]) -> dict[str, str]:
    """Literal type text → a name, for long literal unions several lines repeat.

    Only literal unions (enums) are named: a type that mentions a tool's own named
    definition means something else in another tool. The name comes from the key
    that uses it most (``champion`` → ``Champion``), made unique against the other
    names and every name a tool defines.
    """
    counts: Counter[str] = Counter()
    keys: dict[str, Counter[str]] = {}
    taken = {"Any", "None", "True", "False"}
    for tool in tools:  # from what each cached tool precomputed: assembly runs on every change
        for text, key in tool.literal_keys:
            counts[text] += 1
            keys.setdefault(text, Counter())[key] += 1
        taken.update(tool.defines)
    names: dict[str, str] = {}
    for text, n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        key = min(keys[text].items(), key=lambda item: (-item[1], item[0]))[0]
        name = _type_name(key, taken)
        if n * len(text) > n * len(name) + len(name) + len(text) + 4:
            taken.add(name)
            names[text] = name
    return names


def _type_name(key: str, taken: set[str]) -> str:
    base = "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", key))
    if not base or base[0].isdigit():
        base = "T" + base
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    return name


def assemble_prompt(tools: list[ToolPrompt]) -> str:
    """Header, glossary, then every tool's block (grouped by namespace), ending in a newline."""
    if not tools:  # the header would explain a notation nothing below uses
        return NO_TOOLS
    shared = shared_descriptions(tools)
    notes = shared_sentences(tools, shared)
    types = shared_types(tools)
    parts = []
    if shared or notes or types:
        used = (bool(types), bool(shared), bool(notes))
        clauses = [clause for clause, on in zip(SHARED_CLAUSES, used, strict=True) if on]
        parts.append(SHARED + "; ".join(clauses) + "):")
        parts.extend(f" {name} = {text}" for text, name in types.items())
        parts.extend(f" {key}: {doc}" for key, doc in shared.items())
        parts.extend(f" {ref} {sentence}" for sentence, ref in notes.items())
    shared_pairs = frozenset(shared.items())
    namespace = ""
    for tool in sorted(tools, key=lambda tool: tool.namespace):
        if tool.namespace != namespace:
            namespace = tool.namespace
            parts.append(f"[{namespace}]")
        pairs = sorted(tool.pairs & shared_pairs)
        refs = [notes[sentence] for sentence in tool.long if sentence in notes]
        names = [types[text] for text in sorted(tool.literals) if text in types]
        if not (pairs or refs or names):
            parts.append(tool.plain)
        else:
            key = _memo_key("text", pairs, refs, names)
            parts.append(_shared_text(tool, key, shared, notes, types))
    body = "\n" + "\n".join(parts) + "\n"
    clauses = [clause for needs, clause in HEADER_CLAUSES if needs in body]
    return "; ".join([HEADER, *clauses]) + "." + body


def _memo_key(kind: str, pairs: list[tuple[str, str]], *groups: list[str]) -> tuple[Any, ...]:
    """``kind`` and what a tool takes from the glossary, as one flat tuple of strings (which
    the garbage collector stops tracking; a tuple of tuples it may keep tracking)."""
    flat: list[Any] = [kind]
    for key, doc in pairs:
        flat += (key, doc)
    for group in groups:
        flat.append(None)
        flat += group
    return tuple(flat)


def _shared_text(
    tool: ToolPrompt,
    key: tuple[Any, ...],
    shared: Mapping[str, str],
    notes: Mapping[str, str],
    types: Mapping[str, str],
) -> str:
    """The tool's text given what it takes from the glossary (``key``), remembered:
    regenerating after one tool changed re-renders only that tool, not the hundreds that
    share a description."""
    found = tool.recall(key)
    if isinstance(found, str):
        return found
    text = tool.text(shared, notes, types)
    tool.remember(key, text)
    return text


def tool_prompt(
    spec: ToolSpec, arguments: Sequence[ArgName], *, extra: bool, qualname: str
) -> ToolPrompt:
    """Render ``spec`` for the prompt: ``arguments`` give the Python names (and order),
    ``extra`` whether undeclared keys are allowed (``**extra_arguments``)."""
    schema, defs = normalize(spec.parameters)
    root = root_object(schema, defs)
    out_schema: Any = None
    if spec.output_schema is not None:
        out_schema, out_defs = normalize(spec.output_schema, key_prefix="Out")
        defs = {**defs, **out_defs}
    typer = _Typer(defs, [schema, out_schema])
    lines: list[Line] = []
    for arg in arguments:
        sub = root.properties.get(arg.wire, {})
        typer.field(lines, arg.py, sub, required=arg.required, depth=1)
    if extra:
        text, children = typer.type(root.extra, 1)
        # the keys ``patternProperties`` allows: ``**extra_arguments: int # (keys match ^x_)``
        keys = _doc({"patternProperties": dict.fromkeys(root.extra_keys, True)})
        lines.append(_line(1, f"**{EXTRA}: ", "", text, doc=keys))
        lines.extend(children)
    if out_schema is not None:
        returns, children = typer.type(out_schema, 1)
        doc = _doc(out_schema)
        if returns != "Any" or doc or children:
            lines.append(_line(1, "-> ", "", returns, doc=doc))
            lines.extend(children)
    elif spec.returns_text:
        lines.append(_line(1, "-> ", "", "str", doc=TEXT_RESULT))
    lines.extend(typer.named_lines())
    return _finish(qualname, flat_text(spec.description), lines)


def fallback_prompt(render: ToolRender, *, qualname: str) -> ToolPrompt:
    """A prompt from the render's own annotations, for a schema the prompt typer cannot read."""
    lines = [
        _line(1, f"{p.py}{'' if p.required else '?'}: ", p.py, p.annotation, p.default,
              prompt_text(p.doc))
        for p in render.params
    ]
    if render.extra is not None:
        lines.append(_line(1, f"**{EXTRA}: ", "", render.extra))
    if render.returns_text:
        lines.append(_line(1, "-> ", "", "str", doc=TEXT_RESULT))
    return _finish(qualname, flat_text(render.description), lines)


_NONE: frozenset[Any] = frozenset()
"""The one empty set that tools without literal types or described keys share."""


def _finish(qualname: str, doc: str, lines: list[Line]) -> ToolPrompt:
    """Everything assembly reads of a tool, computed once, here, where it is cached."""
    namespace, _, name = qualname.rpartition(".")
    parts = sentences(doc)
    literals = frozenset(ln.type for ln in lines if _literal_union(ln.type)) or _NONE
    rows = tuple(field for line in lines for field in line[:_ROW])
    return ToolPrompt(
        qualname=qualname,
        name=name,
        namespace=namespace,
        doc=doc,
        parts=parts,
        rows=rows,
        pairs=frozenset((ln.key, ln.doc) for ln in lines if ln.key and ln.doc) or _NONE,
        long=_long([parts, *(ln.parts for ln in lines)]),
        literals=literals,
        plain=_block(name, doc, parts, lines, {}, {}, {}),
        literal_keys=tuple((ln.type, ln.key) for ln in lines if ln.type in literals),
        defines=tuple(ln.head[:-3] for ln in lines
                      if ln.type not in literals and ln.head.endswith(" = ")),
    )


_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:e[-+]?\d+)?|True|False|None')


def _literal_union(text: str) -> bool:
    """A long type made of literals only (an enum), safe to name in the glossary."""
    return len(text) >= TYPE_MIN_CHARS and all(
        _LITERAL.fullmatch(member) for member in _split_top(text)
    )


_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}


def _doc(schema: Any) -> str:
    """Description (cut at the prompt limit) plus the notes a type cannot say."""
    if not isinstance(schema, dict):
        return ""
    desc = schema.get("description")
    text = prompt_text(desc) if isinstance(desc, str) else ""
    notes = constraint_notes(schema, annotation="Literal[")
    if not notes:
        return text
    # a server's 5,000-character pattern or format would fill the prompt, not inform it
    notes = [n if len(n) <= KEY_LIMIT * SLACK else cut(n, KEY_LIMIT) + TRUNCATED for n in notes]
    tail = "(" + "; ".join(notes) + ")"
    return f"{text} {tail}" if text else tail


def _key(name: str) -> str:
    return name if name.isidentifier() else py_literal(name)


def _union(texts: list[str]) -> str:
    if len(texts) == 1 and "|" not in texts[0] and texts[0] not in ("Any", "None"):
        return texts[0]
    seen = list(dict.fromkeys(t for text in texts for t in _split_top(text)))
    if "Any" in seen:  # ``X|Any`` still shows X's shape (and its keys' lines); Any has None
        seen = [t for t in seen if t not in ("Any", "None")] + ["Any"]
    elif "None" in seen:
        seen.remove("None")
        seen.append("None")
    return "|".join(seen)


_FLAT_MEMBER = re.compile(r"""(?:"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^|"'])+""")
"""A union member without brackets: quoted literals (which may hold ``|``) and other text."""


def _split_top(text: str) -> list[str]:
    """Members of a ``|`` union, not splitting inside brackets or quoted literals."""
    if "|" not in text:
        return [text]
    if not any(ch in text for ch in "[{()}]"):  # the common enum: regex, not a char loop
        found = _FLAT_MEMBER.findall(text)
        if "|".join(found) == text:
            return found
    parts: list[str] = []
    depth, start, quote, escaped = 0, 0, "", False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


class _Typer:
    """Types of one tool's schemas, sharing its definitions and the names some must take."""

    __slots__ = ("defs", "named", "repeated", "stack")

    def __init__(self, defs: Mapping[str, Any], roots: list[Any]) -> None:
        self.defs = defs
        """Normalized definitions of the parameters and output schemas."""
        self.named: dict[str, str] = {}
        """Definition key → shown name, for recursive or repeated object definitions."""
        self.stack: list[str] = []
        """Definitions being inlined (a repeat is recursion: the definition gets a name)."""
        refs: Counter[str] = Counter()
        if defs:  # normalized schemas only point into their defs
            _count_refs([*roots, *defs.values()], refs)
        self.repeated = frozenset(
            key for key, n in refs.items() if n > 1 and _has_properties(defs.get(key))
        )
        """Object definitions referenced more than once: named rather than inlined twice."""

    def field(
        self, out: list[Line], key: str, schema: Any, *, required: bool, depth: int
    ) -> None:
        """Append a key's line and the lines of its nested keys to ``out``."""
        text, children = self.type(schema, depth)
        schema = annotated(schema, self.defs)
        default = None
        if isinstance(schema, dict) and "default" in schema:
            default = py_literal(schema["default"])
        head = f"{key}: " if required else f"{key}?: "
        own, variants = _doc(schema), self._variant_docs(schema, depth)
        doc = f"{own} {variants}" if own and variants else own or variants
        out.append(_line(depth, head, key, text, default, doc))
        out.extend(children)

    def _variant_docs(self, schema: Any, depth: int) -> str:
        """``(A: its description; B: …)`` for the described ``anyOf``/``oneOf`` branches."""
        branches = schema.get("anyOf") or schema.get("oneOf") if isinstance(schema, dict) else None
        if not isinstance(branches, list):
            return ""
        described = [b for b in branches if isinstance(b, dict) and clean(b.get("description"))]
        others = [b for b in branches if not any(b is d for d in described)]
        if len(described) == 1 and all(b == {"type": "null"} for b in others):
            return prompt_text(described[0]["description"])  # ``X | None``: X's words
        docs = [f"{self.type(b, depth)[0]}: {prompt_text(b['description'])}" for b in described]
        return "(" + "; ".join(docs) + ")" if docs else ""

    def type(self, schema: Any, depth: int) -> tuple[str, list[Line]]:
        """``(type text, lines of nested keys at depth + 1)`` for ``schema``."""
        if not isinstance(schema, dict):
            return "Any", []
        ref = schema.get("$ref")
        siblings = {k: v for k, v in schema.items() if k != "$ref"} if isinstance(ref, str) else {}
        if isinstance(ref, str) and _typed(siblings):
            # 2019-09+: keywords beside a $ref apply too, as if in an allOf with it
            text, children = self._all_of({}, [{"$ref": ref}, siblings], depth)
        elif isinstance(ref, str):
            text, children = self._ref(ref.removeprefix("#/$defs/"), depth)
        else:
            text, children = self._core(schema, depth)
        if schema.get("nullable") is True:
            text = _union([text, "None"])
        return text, children

    def _ref(self, key: str, depth: int) -> tuple[str, list[Line]]:
        target = self.defs.get(key)
        if target is None:
            return "Any", []
        if key in self.named or key in self.stack or key in self.repeated:
            return self.named.setdefault(key, key), []
        self.stack.append(key)
        try:
            return self.type(target, depth)
        finally:
            self.stack.pop()

    def _core(self, schema: dict[str, Any], depth: int) -> tuple[str, list[Line]]:
        if "const" in schema:
            return py_literal(schema["const"]), []
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            return _union([py_literal(v) for v in enum]), []
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if isinstance(branches, list) and branches:
                return self._variants(branches, depth)
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and all_of:
            return self._all_of(schema, all_of, depth)
        types = schema.get("type")
        names = [t for t in (types if isinstance(types, list) else [types]) if isinstance(t, str)]
        if not names:
            if "properties" in schema or map_values(schema):
                names = ["object"]
            elif "items" in schema:
                names = ["array"]
            else:
                return "Any", []
        texts: list[str] = []
        children: list[Line] = []
        for name in names:
            if name in _SCALARS:
                texts.append(_SCALARS[name])
            elif name == "array":
                text, lines = self._array(schema, depth)
                texts.append(text)
                children.extend(lines)
            elif name == "object":
                text, lines = self._object(schema, depth)
                texts.append(text)
                children.extend(lines)
            else:
                texts.append("Any")
        return _union(texts), children

    def _variants(self, branches: list[Any], depth: int) -> tuple[str, list[Line]]:
        parts = [self.type(branch, depth) for branch in branches]
        children: list[Line] = []
        for _, lines in parts:
            if lines and children:
                children.append(Line(depth + 1, "", "", "(or)"))
            children.extend(lines)
        return _union([text for text, _ in parts]), children

    def _all_of(
        self, schema: dict[str, Any], parts: list[Any], depth: int
    ) -> tuple[str, list[Line]]:
        """Object parts merge into one object (constraint-only parts add their ``required``);
        other typed parts make an intersection ``A&B``."""
        keys = [_ref_key(part) for part in parts]
        looping = [key for key in keys if key is not None and key in self.stack]
        if looping:  # an object that merges itself: name it, as a recursive ref is
            return self.named.setdefault(looping[0], looping[0]), []
        resolved = [self._resolve(part) for part in parts]
        typed = [(p, r) for p, r in zip(parts, resolved, strict=True) if _typed(r)]
        if (typed or _has_properties(schema)) and all(_has_properties(r) for _, r in typed):
            merged: dict[str, Any] = {"properties": {}, "required": []}
            for part in [schema, *resolved]:
                if not isinstance(part, dict):
                    continue
                if isinstance(part.get("properties"), dict):
                    for name, sub in part["properties"].items():
                        merged["properties"][name] = merge_key(merged["properties"].get(name), sub)
                if isinstance(part.get("required"), list):
                    merged["required"].extend(part["required"])
            merging = [key for key in keys if key is not None]
            self.stack.extend(merging)
            try:
                return self._object(merged, depth)
            finally:
                del self.stack[len(self.stack) - len(merging):]
        if len(typed) == 1:
            return self.type(typed[0][0], depth)
        rendered = [self.type(part, depth) for part, _ in typed]
        children = [line for _, lines in rendered for line in lines]
        return "&".join(dict.fromkeys(text for text, _ in rendered)) or "Any", children

    def _resolve(self, schema: Any) -> Any:
        seen: set[str] = set()
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
            key = schema["$ref"].removeprefix("#/$defs/")
            if key in seen:
                return None
            seen.add(key)
            schema = self.defs.get(key)
        return schema

    def _array(self, schema: dict[str, Any], depth: int) -> tuple[str, list[Line]]:
        items = schema.get("items")
        fixed = schema.get("prefixItems", items if isinstance(items, list) else None)
        if isinstance(fixed, list) and fixed:  # a tuple: one type per position, ``*rest``
            rest = items if "prefixItems" in schema else schema.get("additionalItems")
            parts = [self.type(item, depth) for item in fixed]
            if rest is not False and schema.get("maxItems") != len(fixed):
                parts.append(self.type(rest if isinstance(rest, dict) else {}, depth))
                parts[-1] = (f"*{parts[-1][0]}", parts[-1][1])
            text = ", ".join(t for t, _ in parts)
            return f"tuple[{text}]", [line for _, lines in parts for line in lines]
        if not isinstance(items, dict) or not items:
            return "list", []
        inner, children = self.type(items, depth)
        return ("list" if inner == "Any" else f"list[{inner}]"), children

    def _object(self, schema: dict[str, Any], depth: int) -> tuple[str, list[Line]]:
        props = schema.get("properties")
        if isinstance(props, dict) and props:
            req = schema.get("required")
            required = set(req) if isinstance(req, list) else set()
            lines: list[Line] = []
            for name, sub in props.items():
                needed = name in required
                self.field(lines, _key(name), sub, required=needed, depth=depth + 1)
            shown = len(props)
            addl = schema.get("additionalProperties")
            patterns = schema.get("patternProperties")
            if isinstance(patterns, dict) and patterns:  # what keys they allow: the note
                addl = other_keys(schema)  # on the object's own line says
            if _typed(addl) or (addl is True and patterns):  # every other key's type
                value, children = self.type(addl, depth + 1)
                lines.append(_line(depth + 1, f"{OTHER_KEYS}: ", "", value, doc=_doc(addl)))
                lines.extend(children)
                shown += 1
            if len(lines) == shown and all(ln.default is None and not ln.doc for ln in lines):
                return "{" + ", ".join(ln.head + ln.type for ln in lines) + "}", []
            return "dict", lines
        values = [self.type(sub, depth) for sub in map_values(schema)]
        if not values:
            return "dict", []
        value = _union([text for text, _ in values])
        children = [line for _, lines in values for line in lines]
        return ("dict" if value == "Any" else f"dict[str, {value}]"), children

    def named_lines(self) -> list[Line]:
        """Lines of the definitions that took a name, each rendered once."""
        lines: list[Line] = []
        done: set[str] = set()
        while pending := [key for key in self.named if key not in done]:
            for key in pending:
                done.add(key)
                self.stack.append(key)
                text, children = self._core_of(self.defs[key])
                self.stack.pop()
                lines.append(_line(1, f"{self.named[key]} = ", "", text,
                                   doc=_doc(self.defs[key])))
                lines.extend(children)
        return lines

    def _core_of(self, schema: Any) -> tuple[str, list[Line]]:
        if not isinstance(schema, dict):
            return "Any", []
        if isinstance(schema.get("$ref"), str):
            return self.type(schema, 1)
        return self._core(schema, 1)


_TYPED = frozenset(
    {"type", "properties", "items", "enum", "const", "anyOf", "oneOf", "allOf"}
    | {"additionalProperties", "$ref"}
)
"""Keys that say what a value is (the rest of an ``allOf`` part only constrains it)."""


def _ref_key(schema: Any) -> str | None:
    """The definition key a ``{"$ref": ...}`` part points at, if it is one."""
    if isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        return str(schema["$ref"]).removeprefix("#/$defs/")
    return None


def _typed(schema: Any) -> bool:
    return isinstance(schema, dict) and not _TYPED.isdisjoint(schema)


def _has_properties(schema: Any) -> bool:
    return (
        isinstance(schema, dict)
        and isinstance(schema.get("properties"), dict)
        and bool(schema["properties"])
    )


def _count_refs(node: Any, refs: Counter[str]) -> None:
    if isinstance(node, list):
        for item in node:
            _count_refs(item, refs)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                refs[value.removeprefix("#/$defs/")] += 1
            elif key not in ("enum", "const", "default", "examples", "example"):
                _count_refs(value, refs)
