"""Wire names → Python identifiers, and the exact mapping back.

Scripts call ``tools.search_repos(from_=...)``; the host must send ``search-repos`` with
``{"from": ...}``. Every mapping here is injective (collisions get numbered suffixes in a
deterministic order), so the reverse lookup in :class:`SdkNames` is exact.
"""

from __future__ import annotations

import builtins
import functools
import keyword
import re
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["SdkNames", "assign_identifiers", "pascal_case", "to_identifier"]

SOFT_KEYWORDS = frozenset({"_", "case", "match", "type"})
"""Legal identifiers that read as syntax; tool names avoid them (properties may keep them)."""

_INVALID_RUN = re.compile(r"[^\w]+")
_INVALID_EDGES = re.compile(r"^[^\w]+|[^\w]+$")


def _nfkc(text: str) -> str:
    """NFKC form of a non-ASCII name (ASCII text is its own: most names skip the import)."""
    import unicodedata

    return unicodedata.normalize("NFKC", text)


def to_identifier(wire: str, *, fallback: str = "arg") -> str:
    """Turn one wire name into a valid (NFKC-stable) identifier; keywords get a ``_`` suffix."""
    text = wire if wire.isascii() else _nfkc(wire)
    if not text.isidentifier():
        text = _INVALID_RUN.sub("_", _INVALID_EDGES.sub("", text))
    if not text:
        text = fallback
    if not text.isidentifier():
        text = "_" + text
    if not text.isidentifier():
        text = "".join(ch if ("_" + ch).isidentifier() else "_" for ch in text)
    if keyword.iskeyword(text):
        text += "_"
    return text


def assign_identifiers(
    wires: Iterable[str],
    *,
    reserved: Iterable[str] = (),
    avoid_soft: bool = False,
    avoid_private: bool = False,
    public: bool = False,
) -> dict[str, str]:
    """Map each wire name to a unique identifier, deterministically.

    A wire name that already *is* a usable identifier keeps it; the others, in sorted order,
    take the mapped form, else ``<base>_``, else the first free ``<base>_<n>`` (n = 2, 3, …).
    ``reserved`` names (builtins, module internals) are never handed out. ``avoid_private``
    shrinks leading ``__`` to ``_``: in a class body ``__x`` is name-mangled, and a module
    function named ``__getattr__`` or ``__name__`` would change what the module does.
    ``public`` drops leading underscores altogether (``_query`` → ``query``, else
    ``query_``): scripts reach tools and namespaces as attributes of ``tools``, and the
    sandbox refuses every attribute that starts with ``_``.
    """
    taken = set(reserved)
    ordered = sorted(set(wires))
    mapping: dict[str, str] = {}
    bases = {w: _base(w, avoid_soft=avoid_soft, avoid_private=avoid_private, public=public)
             for w in ordered}
    for wire in ordered:
        if bases[wire] == wire and wire not in taken:
            mapping[wire] = wire
            taken.add(wire)
    for wire in ordered:
        if wire in mapping:
            continue
        base = bases[wire]
        stem, n = (base if base.endswith("_") else base + "_"), 2
        candidate = base if base not in taken or base.endswith("_") else stem
        while candidate in taken:
            candidate = f"{stem}{n}"
            n += 1
        mapping[wire] = candidate
        taken.add(candidate)
    return mapping


@functools.lru_cache(maxsize=1 << 16)
def _base(wire: str, *, avoid_soft: bool, avoid_private: bool, public: bool = False) -> str:
    ident = to_identifier(wire)
    if public and ident.startswith("_"):
        bare = ident.lstrip("_")
        ident = to_identifier(bare if bare.isidentifier() else "t_" + bare)
    if avoid_private and ident.startswith("__"):
        ident = "_" + ident.lstrip("_")
    if avoid_soft and ident in SOFT_KEYWORDS:
        ident += "_"
    return ident


BUILTIN_NAMES = frozenset(dir(builtins))
"""Module-level names a tool function must not shadow (the module itself uses ``list``, …)."""


@functools.lru_cache(maxsize=4096)
def pascal_case(text: str) -> str:
    """``get_issue`` → ``GetIssue``; used to prefix a tool's generated types."""
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", text) if p]
    joined = "".join(p[:1].upper() + p[1:] for p in parts)
    if not joined or not joined[0].isalpha():
        joined = "T" + joined
    return joined


@final
@dataclass(frozen=True, kw_only=True, slots=True)
class SdkNames:
    """The exact Python ↔ wire mapping of one generated SDK."""

    tools: Mapping[str, str]
    """Python path (``search_repos`` or ``github.get_issue``) → wire tool name."""
    arguments: Mapping[str, Mapping[str, str]]
    """Wire tool name → {Python argument name → wire argument name}."""

    @classmethod
    def build(
        cls, tools: Mapping[str, str], arguments: Mapping[str, Mapping[str, str]]
    ) -> SdkNames:
        """Freeze the mappings (read-only views over sorted copies)."""
        frozen_args = {
            wire: MappingProxyType(dict(sorted(args.items()))) for wire, args in arguments.items()
        }
        return cls(
            tools=MappingProxyType(dict(sorted(tools.items()))),
            arguments=MappingProxyType(dict(sorted(frozen_args.items()))),
        )

    def wire_to_python(self, tool: str) -> str:
        """Python path of a wire tool name (``KeyError`` if absent)."""
        for path, wire in self.tools.items():
            if wire == tool:
                return path
        raise KeyError(tool)

    def python_to_wire(self, path: str) -> str:
        """Wire tool name of a Python path such as ``github.get_issue``."""
        return self.tools[path]

    def arguments_to_wire(self, tool: str, arguments: Mapping[str, object]) -> dict[str, object]:
        """Rename Python keyword arguments of wire tool ``tool`` to wire names.

        Names the tool does not declare pass through unchanged (tools accepting extra keys).
        """
        table = self.arguments.get(tool, {})
        return {table.get(name, name): value for name, value in arguments.items()}

    def arguments_to_python(self, tool: str, arguments: Mapping[str, object]) -> dict[str, object]:
        """Inverse of :meth:`arguments_to_wire`."""
        back = {wire: py for py, wire in self.arguments.get(tool, {}).items()}
        return {back.get(name, name): value for name, value in arguments.items()}
