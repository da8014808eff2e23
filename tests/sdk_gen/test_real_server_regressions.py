"""Shapes real MCP servers publish that once lost facts in the prompt or the SDK (synthetic)."""

from __future__ import annotations

from typing import Any

import pytest

import sdk_gen

NULL = {"type": "null"}


def _lines(schema: dict[str, Any]) -> tuple[str, str]:
    """The prompt line of argument ``x`` and the module source, for a one-argument tool."""
    sdk = sdk_gen.generate([{"name": "t", "inputSchema": {"type": "object", "properties": {
        "x": schema}}}])  # fmt: skip
    line = next(text for text in sdk.prompt.splitlines() if text.startswith(" x?:"))
    return line, sdk.module_source


@pytest.mark.parametrize(
    ("schema", "note"),
    [
        # pydantic: `Annotated[int, Field(ge=0)] | None`, `datetime | None`, `UUID | None`
        ({"anyOf": [{"type": "integer", "minimum": 0}, NULL], "default": None}, "(>= 0)"),
        ({"anyOf": [{"type": "string", "format": "date-time"}, NULL]}, "(format date-time)"),
        ({"oneOf": [NULL, {"type": "string", "maxLength": 64}]}, "(max length 64)"),
        ({"anyOf": [{"type": "array", "items": {"type": "integer"}, "uniqueItems": True}, NULL]},
         "(unique items)"),
        # the field's own bound wins over its branch's
        ({"anyOf": [{"type": "integer", "minimum": 0}, NULL], "minimum": 5}, "(>= 5)"),
    ],
)  # fmt: skip
def test_bounds_of_an_optional_value_are_noted(schema: dict[str, Any], note: str) -> None:
    line, module = _lines(schema)
    assert line.endswith(note)
    assert note in module  # in the docstring too


def test_bounds_of_two_typed_branches_stay_in_them() -> None:
    """Whose bound it is would be lost in one note on the field."""
    schema = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "minLength": 2}]}
    line, _ = _lines(schema)
    assert "(" not in line
