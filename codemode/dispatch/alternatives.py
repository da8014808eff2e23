"""Messages for values no alternative of an ``anyOf``/``oneOf`` accepts.

jsonschema says only "... is not valid under any of the given schemas", and its
``best_match`` picks one alternative's complaint without saying it was one of several
(``{'kind': 'user'}`` got "'team' was expected" when the ``user`` branch only missed
``id``). A model must fix its call in one round, so the message lists what each
alternative expects and, when alternatives of the value's type exist, the specific
problem of the closest one (fewest complaints). Every part is bounded: a schema may
have hundreds of alternatives or enum values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import jsonschema.exceptions

__all__ = ["UNIONS", "describe", "explain", "is_union", "union_message"]

UNIONS: Final = frozenset({"anyOf", "oneOf"})
SHOWN_ALTERNATIVES: Final = 6
SHOWN_VALUES: Final = 6
PART_TEXT: Final = 70
"""Characters of one alternative's description, of the quoted value, of a literal."""
ALTERNATIVES_TEXT: Final = 180
CLOSEST_TEXT: Final = 100
"""With the quoted value and the header, a union message stays under ``PROBLEM_TEXT``."""

_JSON_TYPES: Final = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"),
    (list, "array"), (dict, "object"), (type(None), "null"),
)


def is_union(error: jsonschema.exceptions.ValidationError) -> bool:
    """True for "matches no alternative" (not oneOf's "matches several")."""
    return error.validator in UNIONS and bool(error.context)


def _alternatives(error: jsonschema.exceptions.ValidationError) -> list[Any]:
    found = error.schema.get(str(error.validator)) if isinstance(error.schema, Mapping) else None
    return found if isinstance(found, list) else []


def _cut(text: str, limit: int = PART_TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _literal(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return _cut(text, PART_TEXT // 2)


def _json_type(value: Any) -> str:
    for kind, name in _JSON_TYPES:
        if type(value) is kind:
            return name
    return "object" if isinstance(value, Mapping) else "array" if isinstance(value, list) else "?"


def _resolve(schema: Any, root: Mapping[str, Any]) -> Any:
    """A local ``$ref`` (``#/$defs/X``) followed, up to a few hops; others left as is."""
    for _ in range(8):
        if not isinstance(schema, Mapping):
            return schema
        ref = schema.get("$ref")
        if not isinstance(ref, str) or not ref.startswith("#"):
            return schema
        node: Any = root
        for part in ref[1:].split("/")[1:] if ref != "#" else []:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                return schema
            node = node[part]
        schema = node
    return schema


def _types(schema: Mapping[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list):
        return [k for k in kind if isinstance(k, str)]
    if "const" in schema:
        return [_json_type(schema["const"])]
    if isinstance(schema.get("enum"), list):
        return sorted({_json_type(v) for v in schema["enum"]})
    if "properties" in schema or "required" in schema:
        return ["object"]
    if "items" in schema:
        return ["array"]
    return []


def describe(schema: Any, root: Mapping[str, Any]) -> str:
    """What one alternative expects, in a few words: its types, const or enum values,
    an object's fixed (const) keys and required keys."""
    schema = _resolve(schema, root)
    if schema is True or schema == {}:
        return "anything"
    if not isinstance(schema, Mapping):
        return "nothing"
    parts: list[str] = []
    if "const" in schema:
        parts.append(f"exactly {_literal(schema['const'])}")
    elif isinstance(schema.get("enum"), list):
        values = schema["enum"]
        shown = _cut(", ".join(_literal(v) for v in values[:SHOWN_VALUES]), PART_TEXT - 20)
        more = f", … ({len(values) - SHOWN_VALUES} more)" if len(values) > SHOWN_VALUES else ""
        parts.append(f"one of {shown}{more}")
    else:
        parts.append(" or ".join(_types(schema)) or "any type")
    props = schema.get("properties")
    if isinstance(props, Mapping):
        fixed = [f"{k}={_literal(_resolve(v, root)['const'])}" for k, v in props.items()
                 if isinstance(_resolve(v, root), Mapping) and "const" in _resolve(v, root)]
        if fixed:
            parts.append("with " + ", ".join(fixed))
    required = schema.get("required")
    if isinstance(required, list) and required:
        parts.append("requiring " + ", ".join(str(k) for k in required))
    if any(key in schema for key in UNIONS):
        parts.append("(nested alternatives)")
    title = schema.get("title")
    text = " ".join(parts)
    if isinstance(title, str) and title:
        text = f"{_cut(title, 30)}: {text}"
    return text if "const" in schema or "enum" in schema else _cut(text)


def _closest(error: jsonschema.exceptions.ValidationError, root: Mapping[str, Any]
             ) -> tuple[int, jsonschema.exceptions.ValidationError, bool] | None:
    """The alternative of the value's type with fewest complaints, its most relevant
    complaint and whether it is the only alternative of that type; None when no
    alternative takes the value's type or several tie."""
    import jsonschema.exceptions

    alternatives = _alternatives(error)
    kind = _json_type(error.instance)
    by_index: dict[int, list[jsonschema.exceptions.ValidationError]] = {}
    for sub in error.context or ():
        index = sub.relative_schema_path[0] if sub.relative_schema_path else None
        if isinstance(index, int):
            by_index.setdefault(index, []).append(sub)
    candidates = []
    for index, subs in by_index.items():
        if index >= len(alternatives):
            continue
        types = _types(_resolve(alternatives[index], root)) if isinstance(
            _resolve(alternatives[index], root), Mapping) else []
        fits = not types or kind in types or (kind == "integer" and "number" in types)
        if fits and not any(s.validator == "type" and not s.path for s in subs):
            candidates.append((len(subs), index, subs))
    if not candidates:
        return None
    fewest, index, subs = min(candidates, key=lambda c: (c[0], c[1]))
    if sum(1 for c in candidates if c[0] == fewest) > 1:
        return None  # a tie (eight consts, three equally wrong objects): naming one misleads
    best = jsonschema.exceptions.best_match(subs)
    while all(best is not sub for sub in subs) and best.parent is not None:
        best = best.parent  # best_match descends into nested unions: explain them whole
    return index, best, len(candidates) == 1


def explain(error: jsonschema.exceptions.ValidationError, root: Mapping[str, Any]
            ) -> tuple[jsonschema.exceptions.ValidationError, str]:
    """The error to report for ``error`` and its message. When only one alternative
    takes the value's type, the type chose the branch: its own problem, at its own
    path, is the whole answer (``labels[1].confidence: 'SURE' is not one of ...``).
    Otherwise :func:`union_message`."""
    if not is_union(error):
        return error, error.message
    closest = _closest(error, root)
    if closest is not None and closest[2]:
        return explain(closest[1], root)
    return error, union_message(error, root)


def union_message(error: jsonschema.exceptions.ValidationError,
                  root: Mapping[str, Any]) -> str:
    """Why ``error.instance`` matches no alternative of ``error``'s anyOf/oneOf."""
    alternatives = _alternatives(error)
    described: list[str] = []
    for i, alt in enumerate(alternatives[:SHOWN_ALTERNATIVES]):
        part = f"({i + 1}) {describe(alt, root)}"
        if described and sum(len(d) + 2 for d in described) + len(part) > ALTERNATIVES_TEXT:
            break
        described.append(part)
    shown = "; ".join(described)
    if len(alternatives) > len(described):
        shown += f"; … ({len(alternatives) - len(described)} more)"
    text = (f"{_literal(error.instance)} ({_json_type(error.instance)}) matches none of "
            f"{len(alternatives)} alternatives: {shown}")
    closest = _closest(error, root)
    if closest is not None:
        index, sub, _ = closest
        where = _cut("".join(f"[{p}]" if isinstance(p, int) else f".{p}"
                             for p in list(sub.path)), 30)
        inner = union_message(sub, root) if is_union(sub) else sub.message
        text += f"; closest ({index + 1}){' at ' + where if where else ''}: " + _cut(
            inner, CLOSEST_TEXT)
    return text
