"""Arguments a corpus tool's schema accepts, built from the schema alone (deterministic):
only what it requires, a type-correct value each (an enum's first value, a default, a
format's example). The corpus tests call real tools' schemas with them."""

from __future__ import annotations

from typing import Any

__all__ = ["sample_arguments"]

_FORMATS = {
    "date-time": "2024-01-02T03:04:05Z", "date": "2024-01-02", "time": "03:04:05Z",
    "uri": "https://example.com/a", "email": "a@example.com",
    "uuid": "123e4567-e89b-12d3-a456-426614174000",
}


def sample_arguments(schema: Any) -> Any:
    """A value of the parameters ``schema`` with only what it requires."""
    return _sample(schema, schema)


def _sample(schema: Any, root: dict[str, Any], depth: int = 0) -> Any:
    """A value of ``schema`` with only what it requires (deterministic)."""
    if not isinstance(schema, dict) or depth > 8:
        return "x"
    if isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#"):
        node: Any = root
        for part in schema["$ref"][1:].split("/")[1:]:
            step = part.replace("~1", "/").replace("~0", "~")
            node = node.get(step, {}) if isinstance(node, dict) else {}
        return _sample(node, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if schema.get("default") is not None:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            kept = [o for o in schema[key] if not (isinstance(o, dict) and o.get("type") == "null")]
            return _sample((kept or schema[key])[0], root, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    kind = kind or ("object" if "properties" in schema else "string")
    if kind == "string":
        text = _FORMATS.get(schema.get("format"), "sample")
        return text.ljust(schema.get("minLength") or 0, "x")
    if kind in ("integer", "number"):
        low = schema.get("minimum")
        return (int(low) if kind == "integer" else low) if isinstance(low, int | float) else 2
    if kind == "array":
        items = schema.get("items", {})
        if isinstance(items, list):
            return [_sample(i, root, depth + 1) for i in items]
        return [_sample(items, root, depth + 1) for _ in range(schema.get("minItems") or 1)]
    if kind == "object":
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        return {r: _sample(props.get(r, {}), root, depth + 1) for r in required}
    return {"boolean": True, "null": None}.get(kind, "x")
