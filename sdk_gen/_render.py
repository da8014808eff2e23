"""Render one tool: its function (module, stub and prompt forms), types and name table.

Everything here depends only on the spec and on names chosen by the assembler, so the
result is cached by a hash of both (see ``SdkCache``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from codemode.errors import SdkGenerationError

from ._names import assign_identifiers, pascal_case
from ._schema import (
    Hoist,
    annotated,
    constraint_notes,
    inline_annotation,
    normalize,
    py_literal,
    ref_key,
    root_object,
)
from ._text import clean, docstring

if TYPE_CHECKING:
    from collections.abc import Mapping

    from codemode.dispatch.spec import ToolSpec

    from ._types import TypeBlock

__all__ = [
    "ARG_RESERVED",
    "EXTRA",
    "RETURNS_TEXT",
    "ArgName",
    "Param",
    "ToolRender",
    "argument_names",
    "fallback_render",
    "render_tool",
]

_PLACEHOLDER = re.compile("\x00(\\d+)\x00")
"""Where a generated type's final name goes once datamodel-code-generator has run."""

RETURNS_TEXT = "Text, as the tool sent it (it publishes no output schema): json.loads() JSON."
"""What a text-answering tool's docstring says of its ``str`` result."""
EXTRA = "extra_arguments"
"""Name of the ``**kwargs`` of a tool whose root schema explicitly allows undeclared keys."""
ARG_RESERVED = frozenset({"_invoke", "_result", EXTRA})
"""Names a generated function body uses, so no parameter may take them."""


class ArgName(NamedTuple):
    """One keyword argument's names, without its type (a tuple: the GC need not scan it)."""

    py: str
    """Python name."""
    wire: str
    """Wire name."""
    required: bool
    """Whether the schema requires it."""


def _arguments(properties: Mapping[str, Any], required: frozenset[str], *,
               method: bool) -> list[ArgName]:
    """Python names of the root's properties: required first, then in schema order."""
    mapping = assign_identifiers(properties, reserved=ARG_RESERVED, avoid_private=method)
    args = [ArgName(mapping[wire], wire, wire in required) for wire in properties]
    args.sort(key=lambda a: not a.required)
    return args


def argument_names(spec: ToolSpec, *, method: bool = False) -> tuple[tuple[ArgName, ...], bool]:
    """``(arguments, whether undeclared keys are allowed)``: what names and the prompt need
    of a tool's signature, without rendering its annotations and docs."""
    schema, defs = normalize(spec.parameters)
    root = root_object(schema, defs)
    return tuple(_arguments(root.properties, root.required, method=method)), root.extra is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class Param:
    """One keyword argument of a generated function."""

    py: str
    """Python name."""
    wire: str
    """Wire name, exactly as the schema spells it."""
    annotation: str
    """Python type annotation."""
    required: bool
    """Whether the schema requires it (no default in the signature)."""
    default: str | None
    """Python literal of the schema default, if any (documentation: omitted is not sent)."""
    doc: str
    """Description plus notes (constraints, formats), may be empty."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolRender:
    """Everything generated for one tool."""

    wire: str
    """Wire tool name."""
    py: str
    """Function (or method) name."""
    params: tuple[Param, ...]
    """Keyword arguments, required first, then in schema order."""
    extra: str | None
    """Annotation of ``**extra_arguments`` when the root allows undeclared keys."""
    returns: str
    """Return annotation."""
    description: str
    """Tool description (full)."""
    types: TypeBlock | None
    """Generated named types, if the tool needs any."""
    warnings: tuple[str, ...]
    """Degradations (a schema part typed as ``Any`` because it could not be rendered)."""
    returns_text: bool = False
    """The tool answers text (``ToolSpec.returns_text``): ``-> str``, said in the docstring."""

    @property
    def arguments(self) -> dict[str, str]:
        """Python argument name → wire argument name."""
        return {p.py: p.wire for p in self.params}

    def signature(self, *, mode: str, indent: str = "") -> str:
        """``async def name(*, ...) -> R:`` in module and stub, one parameter per line.

        Optional arguments default to ``OMIT`` in the module and to ``...`` in the stub.
        """
        parts = []
        for p in self.params:
            text = f"{p.py}: {p.annotation}"
            if not p.required:
                text += " = " + ("OMIT" if mode == "module" else "...")
            parts.append(text)
        if self.extra is not None:
            parts.append(f"**{EXTRA}: {self.extra}")
        head = f"{indent}async def {self.py}("
        tail = f") -> {self.returns}:"
        if not parts:
            return head + tail
        star = ["*"] if self.params else []
        inner = "".join(f"{indent}    {part},\n" for part in [*star, *parts])
        return f"{head}\n{inner}{indent}{tail}"

    def doc_paragraphs(self) -> list[str]:
        """Docstring paragraphs: description, then one line per documented argument."""
        paras = [self.description] if self.description else []
        args = []
        for p in self.params:
            doc = p.doc
            if p.default is not None:
                doc = f"{doc} Default: {p.default}.".lstrip()
            if doc or p.py != p.wire:
                wire = f"(wire name {p.wire!r})" if p.py != p.wire else ""
                args.append(f"{p.py}: " + " ".join(part for part in (doc, wire) if part))
        if args:
            paras.append("Args:\n" + "\n".join("    " + a for a in args))
        if self.returns_text:
            paras.append(f"Returns:\n    {RETURNS_TEXT}")
        return paras

    def function(self, *, stub: bool, indent: str = "") -> str:
        """The function as module (with body) or stub (``...``) source."""
        lines = [self.signature(mode="stub" if stub else "module", indent=indent)]
        doc = docstring(self.doc_paragraphs(), indent=indent + "    ")
        if doc:
            lines.append(doc)
        if stub:
            lines.append(f"{indent}    ...")
            return "\n".join(lines)
        pairs = [f"{py_literal(p.wire)}: {p.py}" for p in self.params]
        if self.extra is not None:
            pairs.append(f"**{EXTRA}")
        call = f"_invoke({py_literal(self.wire)}, {{{', '.join(pairs)}}})"
        if len(call) + len(indent) + 30 > 100 and pairs:
            inner = "".join(f"{indent}            {pair},\n" for pair in pairs)
            call = f"_invoke(\n{indent}        {py_literal(self.wire)},\n{indent}        {{\n"
            call += f"{inner}{indent}        }},\n{indent}    )"
        if self.returns == "Any":
            lines.append(f"{indent}    return await {call}")
        else:
            lines.append(f"{indent}    _result: {self.returns} = await {call}")
            lines.append(f"{indent}    return _result")
        return "\n".join(lines)


def render_tool(
    spec: ToolSpec, *, py: str, prefix: str, method: bool = False, types: bool = True
) -> ToolRender:
    """Render ``spec`` as function ``py`` whose generated types are named ``prefix…``.

    A ``method`` (of a namespace class) takes no ``__x`` parameter: it would be mangled.
    Without ``types`` (names and the prompt need none) no named type is generated and
    annotations that would use one read ``Any``: datamodel-code-generator is the slow part.
    """
    schema, defs = normalize(spec.parameters)
    root = root_object(schema, defs)
    names = _arguments(root.properties, root.required, method=method)
    mapping = {arg.wire: arg.py for arg in names}
    out_schema: Any = None
    out_defs: dict[str, Any] = {}
    if spec.output_schema is not None:
        out_schema, out_defs = normalize(spec.output_schema, key_prefix="Out")
    wanted: list[tuple[tuple[str, ...], Any]] = []
    refs: dict[str, int] = {}
    for key, sub in {**defs, **out_defs}.items():
        bare = key.removeprefix("Out") if key in out_defs else key
        refs[key] = len(wanted)
        wanted.append(((bare, key, f"{bare}Def"), sub))

    def hoister(*bases: str) -> Hoist:
        def hoist(sub: Any, hint: str) -> str:
            key = ref_key(sub)
            if key in refs:
                return f"\x00{refs[key]}\x00"
            wanted.append(((*(base + hint for base in bases), f"{bases[0]}{hint}Arg"), sub))
            return f"\x00{len(wanted) - 1}\x00"

        return hoist

    annotations = {
        wire: inline_annotation(sub, hoister(pascal_case(mapping[wire]))) or "Any"
        for wire, sub in root.properties.items()
    }
    extra = None
    if root.extra is not None:
        extra = inline_annotation(root.extra, hoister("Extra")) or "Any"
    returns = "str" if spec.returns_text and spec.output_schema is None else "Any"
    if spec.output_schema is not None:
        returns = inline_annotation(out_schema, hoister("Result", "Output")) or "Any"
    block: TypeBlock | None = None
    warnings: tuple[str, ...] = ()
    finals: list[str] = ["Any"] * len(wanted)
    if wanted and types:
        from ._types import render_types  # the typed files only: a run needs no types

        try:
            block, finals = render_types(spec.name, prefix, wanted, refs)
        except SdkGenerationError as exc:
            warnings = (str(exc),)

    def place(text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: finals[int(m.group(1))], text)

    annotations = {wire: place(ann) for wire, ann in annotations.items()}
    extra = place(extra) if extra is not None else None
    returns = place(returns)
    params = []
    for arg in names:
        sub = annotated(root.properties[arg.wire], defs)
        params.append(Param(
            py=arg.py,
            wire=arg.wire,
            annotation=annotations[arg.wire],
            required=arg.required,
            default=py_literal(sub["default"])
            if isinstance(sub, dict) and "default" in sub
            else None,
            doc=_param_doc(sub, annotations[arg.wire]),
        ))
    return ToolRender(
        wire=spec.name,
        py=py,
        params=tuple(params),
        extra=extra,
        returns=returns,
        description=clean(spec.description),
        types=block,
        warnings=warnings,
        returns_text=spec.returns_text and spec.output_schema is None,
    )


def _param_doc(schema: Any, annotation: str) -> str:
    if not isinstance(schema, dict):
        return ""
    desc = clean(schema.get("description"))
    notes = constraint_notes(schema, annotation=annotation)
    if not notes:
        return desc
    tail = "(" + "; ".join(notes) + ")"
    return f"{desc} {tail}" if desc else tail


def fallback_render(spec: ToolSpec, *, py: str, problem: str) -> ToolRender:
    """A render for a spec the generator could not read: any keyword arguments, sent as is."""
    return ToolRender(
        wire=spec.name,
        py=py,
        params=(),
        extra="Any",
        returns="Any",
        description=clean(spec.description),
        types=None,
        warnings=(f"cannot read the schema ({problem}); typed as **{EXTRA}: Any",),
    )
