"""Named types (TypedDicts, aliases) for one tool, made by datamodel-code-generator.

One in-process ``generate()`` call per tool, with pinned options. Its output is split into
imports (merged module-wide later) and a body of definitions; a compact rendering of the
same definitions feeds the prompt. ``datamodel_code_generator`` is imported on first use
because importing and warming it up costs far more than the rest of ``sdk_gen``.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codemode.errors import SdkGenerationError

from ._schema import for_types
from ._text import (
    comment_text,
    escape_controls,
    has_surrogate,
    show_surrogates,
    stand_in_block,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping, Sequence

__all__ = ["TypeBlock", "render_types"]


@dataclass(frozen=True, kw_only=True, slots=True)
class TypeBlock:
    """Definitions generated for one tool."""

    imports: tuple[tuple[str, str], ...]
    """``(module, name)`` pairs the definitions need (``from module import name``); ``name``
    may read ``X as Y`` when the generator renamed an import a field name would shadow."""
    source: str
    """The definitions as formatted Python source (no imports)."""
    compact: str
    """The same definitions for the prompt: descriptions as comments, no blank lines."""
    names: tuple[str, ...]
    """Top-level names the definitions bind."""


def _options(prefix: str) -> dict[str, Any]:
    from datamodel_code_generator.enums import DataModelType, InputFileType
    from datamodel_code_generator.format import Formatter, PythonVersion

    return {
        "input_file_type": InputFileType.JsonSchema,
        "output_model_type": DataModelType.TypingTypedDict,
        "target_python_version": PythonVersion.PY_311,
        "formatters": [Formatter.BUILTIN],
        "disable_timestamp": True,
        "use_union_operator": True,
        "use_standard_collections": True,
        "use_double_quotes": True,
        "enum_field_as_literal": "all",
        "use_field_description": True,
        "use_schema_description": True,
        "use_closed_typed_dict": False,
        "allow_remote_refs": False,
        "class_name_prefix": prefix,
    }


def _keep_exact_keys() -> None:
    """Make datamodel-code-generator write a ``TypedDict`` in the functional form whenever a
    field's Python name would differ from its key.

    Its class form prints fields by their Python names, and it renames valid identifiers
    it dislikes (``_private`` becomes ``field_private``), and Python NFKC-normalises class
    field names (``ﬁle`` becomes ``file``): the type would then describe a key the tool
    never sees. Patched once, in process; a missing hook (another version)
    leaves it alone.
    """
    import unicodedata

    from datamodel_code_generator.model import typed_dict

    valid = getattr(typed_dict, "_is_valid_field_name", None)
    source = getattr(typed_dict, "_field_source_name", None)
    if valid is None or source is None or getattr(valid, "_sdk_gen", False):
        return

    def exact(field: Any) -> bool:
        name = source(field)
        return bool(valid(field)) and field.name == name == unicodedata.normalize("NFKC", name)

    exact._sdk_gen = True  # type: ignore[attr-defined]
    typed_dict._is_valid_field_name = exact


def _strings(node: Any) -> Iterator[str]:
    """Every key and string value in a JSON value."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from _strings(value)
    elif isinstance(node, list):
        for item in node:
            yield from _strings(item)


def _sentinel(index: int) -> str:
    return f"Sdkarg{index}Z"


def render_types(
    tool: str, prefix: str, wanted: Sequence[tuple[tuple[str, ...], Any]], refs: Mapping[str, int]
) -> tuple[TypeBlock, list[str]]:
    """Generate one named type per ``wanted`` ``(candidate names, schema)`` pair.

    ``refs`` maps each definition key (every ``$ref`` points at ``#/$defs/<key>``) to the
    index of its entry in ``wanted``. Each schema is generated under a sentinel name, then
    renamed to ``prefix + name`` for the first candidate name that is free (then the last
    one numbered): datamodel-code-generator names nested classes after their fields, so a
    wanted name could otherwise go to another class. Returns the block and the final name
    of each wanted schema.
    """
    from datamodel_code_generator import generate

    _keep_exact_keys()
    texts = list(_strings([schema for _, schema in wanted]))
    block = stand_in_block(texts) if any(has_surrogate(text) for text in texts) else None
    sentinels = {key: _sentinel(index) for key, index in refs.items()}
    doc_defs = {
        _sentinel(i): for_types(schema, sentinels, stand_in=block)
        for i, (_, schema) in enumerate(wanted)
    }
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = generate({"$defs": doc_defs}, **_options(prefix))
    except Exception as exc:
        raise SdkGenerationError(tool, f"datamodel-code-generator failed: {exc}") from exc
    if not isinstance(code, str):
        raise SdkGenerationError(tool, "datamodel-code-generator returned no single module")
    if block is not None:
        code = show_surrogates(code, block)
    code = _drop_root(_repair(escape_controls(code)), f"{prefix}Model")
    code, finals = _rename(tool, code, prefix, [names for names, _ in wanted])
    return _split(tool, code), finals


_BARE = {"list": "list[Any]", "dict": "dict[str, Any]"}


def _repair(code: str) -> str:
    """Fix what the type generator writes but ``mypy --strict`` refuses.

    A recursive array becomes a bare ``list`` alias (``list[Any]`` here), and a functional
    ``TypedDict`` keeps a name Python's parser NFKC-normalises in the variable
    (``"Idº"`` for ``Ido``), which mypy reports as a mismatch.
    """
    lines = code.split("\n")
    for node in ast.parse(code).body:
        value = node.value if isinstance(node, ast.AnnAssign | ast.Assign) else None
        target = _bound(node)
        if isinstance(node, ast.AnnAssign) and isinstance(value, ast.Name) and value.id in _BARE:
            _replace(lines, value, _BARE[value.id])
        elif (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "TypedDict"
            and value.args
            and isinstance(value.args[0], ast.Constant)
            and value.args[0].value != target
        ):
            _replace(lines, value.args[0], f'"{target}"')
    return "\n".join(lines)


def _replace(lines: list[str], node: ast.expr, text: str) -> None:
    """Replace a one-line expression (``ast`` columns count UTF-8 bytes)."""
    assert node.end_col_offset is not None and node.lineno == node.end_lineno
    raw = lines[node.lineno - 1].encode("utf-8")
    fixed = raw[: node.col_offset] + text.encode("utf-8") + raw[node.end_col_offset :]
    lines[node.lineno - 1] = fixed.decode("utf-8")


def _drop_root(code: str, root: str) -> str:
    """Remove the ``<prefix>Model: TypeAlias = Any`` the schema's empty root produces."""
    lines = code.split("\n")
    for node in ast.parse(code).body:
        if _bound(node) == root and _is_any_alias(node):
            assert node.end_lineno is not None
            del lines[node.lineno - 1 : node.end_lineno]
            break
    return "\n".join(lines) + "\n"


def _rename(
    tool: str, code: str, prefix: str, names: list[tuple[str, ...]]
) -> tuple[str, list[str]]:
    pattern = re.compile(rf"\b{re.escape(prefix)}Sdkarg(\d+)Z(\w*)")
    bound = {_bound(node) for node in ast.parse(code).body} - {""}
    tails: dict[int, set[str]] = {}
    for match in pattern.finditer(code):
        tails.setdefault(int(match.group(1)), set()).add(match.group(2))
    taken = {name for name in bound if not pattern.fullmatch(name)}
    finals: list[str] = []
    chosen: dict[int, str] = {}
    for index, options in enumerate(names):
        if "" not in tails.get(index, set()):
            raise SdkGenerationError(tool, f"no type generated for {options[0]!r}")
        candidates = [prefix + option for option in options]
        n = 2
        while any(candidates[0] + tail in taken for tail in tails[index]):
            candidates.pop(0)
            if not candidates:
                candidates.append(f"{prefix}{options[-1]}{n}")
                n += 1
        candidate = candidates[0]
        taken.update(candidate + tail for tail in tails[index])
        chosen[index] = candidate
        finals.append(candidate)
    renamed = pattern.sub(lambda m: chosen[int(m.group(1))] + m.group(2), code)
    return renamed, finals


def _split(tool: str, code: str) -> TypeBlock:
    tree = ast.parse(code)
    lines = code.split("\n")
    imports: list[tuple[str, str]] = []
    chunks: list[str] = []
    compact: list[str] = []
    names: list[str] = []
    body = tree.body
    used = _used_names(tree)
    for index, node in enumerate(body):
        if isinstance(node, ast.ImportFrom):
            if node.module != "__future__":
                imports.extend(
                    (node.module or "", _imported(alias))
                    for alias in node.names
                    if (alias.asname or alias.name) in used  # it imports some it never uses
                )
            continue
        if isinstance(node, ast.Import):
            raise SdkGenerationError(tool, f"unexpected import: {ast.unparse(node)}")
        if _is_docstring(node) and index > 0 and _bound(body[index - 1]):
            continue
        bound = _bound(node)
        doc = _trailing_doc(body, index)
        end = body[index + 1].end_lineno if doc is not None else node.end_lineno
        chunks.append("\n".join(lines[node.lineno - 1 : end]))
        compact.append(_compact(node, doc))
        if bound:
            names.append(bound)
    return TypeBlock(
        imports=tuple(sorted(set(imports))),
        source="\n\n\n".join(chunks),
        compact="\n".join(compact),
        names=tuple(names),
    )


def _used_names(tree: ast.Module) -> set[str]:
    """Names the code reads, forward references in string annotations included."""
    used: set[str] = set()
    docs = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    for node in ast.walk(tree):
        if id(node) in docs:
            continue
        if isinstance(node, ast.Name):
            used.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.isidentifier():
                used.add(node.value)
                continue
            try:
                ref = ast.parse(node.value, mode="eval")
            except (SyntaxError, ValueError):  # most are dict keys, not annotations
                continue
            used.update(n.id for n in ast.walk(ref) if isinstance(n, ast.Name))
    return used


def _imported(alias: ast.alias) -> str:
    return f"{alias.name} as {alias.asname}" if alias.asname else alias.name


def _bound(node: ast.stmt) -> str:
    if isinstance(node, ast.ClassDef):
        return node.name
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Name):
            return target.id
    return ""


def _is_any_alias(node: ast.stmt) -> bool:
    value = node.value if isinstance(node, ast.AnnAssign | ast.Assign) else None
    return isinstance(value, ast.Name) and value.id == "Any"


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _trailing_doc(body: list[ast.stmt], index: int) -> str | None:
    if index + 1 < len(body) and not isinstance(body[index], ast.ClassDef):
        nxt = body[index + 1]
        if _is_docstring(nxt):
            assert isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
            return str(nxt.value.value)
    return None


def _compact(node: ast.stmt, doc: str | None) -> str:
    if isinstance(node, ast.ClassDef):
        bases = ", ".join(ast.unparse(b) for b in node.bases)
        head = f"class {node.name}({bases}):"
        out: list[str] = []
        fields = node.body
        for i, item in enumerate(fields):
            if _is_docstring(item):
                if i == 0:
                    assert isinstance(item, ast.Expr) and isinstance(item.value, ast.Constant)
                    head += comment_text(str(item.value.value))
                continue
            line = "    " + ast.unparse(item)
            nxt = fields[i + 1] if i + 1 < len(fields) else None
            if nxt is not None and _is_docstring(nxt):
                assert isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant)
                line += comment_text(str(nxt.value.value))
            out.append(line)
        return "\n".join([head, *out]) if out else head + " ..."
    if isinstance(node, ast.AnnAssign) and node.value is not None:
        text = f"{ast.unparse(node.target)} = {ast.unparse(node.value)}"
    else:
        text = ast.unparse(node)
    return text + (comment_text(doc) if doc else "")
