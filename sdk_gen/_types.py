"""Named types (TypedDicts, aliases) for one tool, made by datamodel-code-generator.

One in-process ``generate()`` call per tool, with pinned options. Its output is split into
imports (merged module-wide later) and a body of definitions; a compact rendering of the
same definitions feeds the prompt. ``datamodel_code_generator`` is imported on first use
because importing and warming it up costs far more than the rest of ``sdk_gen``.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from codemode.errors import SdkGenerationError

from ._schema import strip_formats
from ._text import comment_text

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["TypeBlock", "render_types"]


@dataclass(frozen=True, kw_only=True, slots=True)
class TypeBlock:
    """Definitions generated for one tool."""

    imports: tuple[tuple[str, str], ...]
    """``(module, name)`` pairs the definitions need (``from module import name``)."""
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


def render_types(tool: str, prefix: str, named: Mapping[str, Any]) -> TypeBlock:
    """Generate types for ``named`` schemas (keys become ``prefix + key``) and their refs.

    ``named`` holds the tool's hoisted schemas and its normalized ``$defs`` side by side;
    every ``$ref`` in them points at ``#/$defs/<key>``.
    """
    from datamodel_code_generator import generate

    doc = {"$defs": {key: strip_formats(schema) for key, schema in named.items()}}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            code = generate(doc, **_options(prefix))
    except Exception as exc:
        raise SdkGenerationError(tool, f"datamodel-code-generator failed: {exc}") from exc
    if not isinstance(code, str):
        raise SdkGenerationError(tool, "datamodel-code-generator returned no single module")
    return _split(tool, code, drop=f"{prefix}Model")


def _split(tool: str, code: str, *, drop: str) -> TypeBlock:
    tree = ast.parse(code)
    lines = code.splitlines()
    imports: list[tuple[str, str]] = []
    chunks: list[str] = []
    compact: list[str] = []
    names: list[str] = []
    body = tree.body
    for index, node in enumerate(body):
        if isinstance(node, ast.ImportFrom):
            if node.module != "__future__":
                imports.extend((node.module or "", alias.name) for alias in node.names)
            continue
        if isinstance(node, ast.Import):
            raise SdkGenerationError(tool, f"unexpected import: {ast.unparse(node)}")
        if _is_docstring(node) and index > 0 and _bound(body[index - 1]):
            continue
        bound = _bound(node)
        if bound == drop and _is_any_alias(node):
            continue
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
