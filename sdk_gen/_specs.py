"""Inputs the generator accepts: ``ToolSpec`` values, or dicts in the MCP ``tools/list`` shape."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from codemode.dispatch.spec import ToolSpec
from codemode.errors import SdkGenerationError

__all__ = ["SpecLike", "as_spec", "as_specs", "spec_digest"]

SpecLike = ToolSpec | Mapping[str, Any]
"""A ``ToolSpec`` or a ``{"name", "description", "inputSchema", "outputSchema"?}`` dict
(optional keys: ``namespace``, ``visible_in_code``, ``returns_text``)."""


def as_spec(item: SpecLike) -> ToolSpec:
    """Adapt one input to a ``ToolSpec`` (dicts use MCP keys; ``namespace`` is optional)."""
    if isinstance(item, ToolSpec):
        return item
    if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
        raise SdkGenerationError(repr(item)[:60], "expected a ToolSpec or a dict with a 'name'")
    name = item["name"]
    params = item.get("inputSchema", item.get("parameters"))
    output = item.get("outputSchema", item.get("output_schema"))
    description = item.get("description")
    return ToolSpec(
        name=name,
        description=description if isinstance(description, str) else "",
        parameters=params if isinstance(params, Mapping) else {"type": "object"},
        output_schema=output if isinstance(output, Mapping) else None,
        namespace=item.get("namespace"),
        visible_in_code=bool(item.get("visible_in_code", True)),
        returns_text=bool(item.get("returns_text", False)) and not isinstance(output, Mapping),
    )


def as_specs(items: Iterable[SpecLike]) -> list[ToolSpec]:
    """Adapt many inputs, keeping only the tools scripts may call."""
    specs = [as_spec(item) for item in items]
    return [spec for spec in specs if spec.visible_in_code]


def spec_digest(spec: ToolSpec) -> str:
    """Hash of everything in a spec that shapes its rendering.

    Built from ``repr``, which is exact and order-preserving for JSON data (key order
    matters: it decides parameter order) and cheaper than serialising to JSON.
    """
    payload = repr(
        (spec.name, spec.description, spec.parameters, spec.output_schema, spec.namespace,
         spec.returns_text)
    )
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()
