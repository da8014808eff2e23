"""``@tool`` signatures of plain JSON types, read without pydantic.

Most tool functions take ``str``, ``int``, ``float``, ``bool``, a ``Literal`` of texts,
lists and dicts of those, each maybe ``| None``: what JSON already is. For them this module
writes the parameters schema pydantic writes (the same keys, in the same order) and makes
the conversions pydantic's validation would (``1`` for a ``float`` becomes ``1.0``, ``2.0``
for an ``int`` becomes ``2``), so a process that defines such tools never imports pydantic
(some 170 ms of a fresh process). Anything else (``Annotated``, models, dataclasses,
dates, unions of several types, a default that is no plain JSON) is pydantic's, as before.
"""

from __future__ import annotations

import math
import types
from typing import TYPE_CHECKING, Any, Final, Literal, Union, final, get_args, get_origin

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["Converter", "plain_schema"]

_SCALARS: Final[dict[Any, str]] = {str: "string", int: "integer", float: "number",
                                   bool: "boolean"}

_INT_BOUND: Final = 2.0 ** 63
"""pydantic takes a whole float for an ``int`` only strictly inside ±2**63 (its i64):
``1e300`` arrived as a 997-bit int, pydantic refuses it."""


class _Refused(ValueError):
    """A JSON number the annotated type cannot hold, as pydantic's validation refuses it."""


def _to_int(value: Any) -> Any:
    if type(value) is not float:
        return value
    if not -_INT_BOUND < value < _INT_BOUND:
        raise _Refused(f"{value!r} is too large for an integer written as a float (its"
                       " magnitude must stay below 2**63; write it without a fraction or"
                       " exponent)")
    return int(value)


def _to_float(value: Any) -> Any:
    if type(value) is not int:
        return value
    try:  # pydantic refuses what float() does: an int past float's range (OverflowError)
        return float(value)
    except OverflowError:
        raise _Refused(f"an integer of {value.bit_length()} bits is past the range of a"
                       " float (about ±1.8e308)") from None


_CONVERT: Final[dict[Any, Any]] = {int: _to_int, float: _to_float}


def _each(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: [convert(item) for item in value]


def _values(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: {key: convert(item) for key, item in value.items()}


def _or_none(convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: None if value is None else convert(value)


def _item(hint: Any) -> tuple[dict[str, Any], Any] | None:
    """(schema, conversion or None) of a list's item or a dict's value, None if not plain."""
    if hint is Any:
        return {}, None
    if hint in _SCALARS:
        return {"type": _SCALARS[hint]}, _CONVERT.get(hint)
    return None


def _plain(hint: Any) -> tuple[dict[str, Any], Any] | None:
    """(schema, conversion or None) of a parameter's type, None if it is not plain."""
    found = _item(hint)
    if found is not None:
        return found
    origin, args = get_origin(hint), get_args(hint)
    if hint is list or (origin is list and args == (Any,)):
        return {"items": {}, "type": "array"}, None
    if hint is dict or (origin is dict and args == (str, Any)):
        return {"additionalProperties": True, "type": "object"}, None
    if origin is list and len(args) == 1:
        item = _item(args[0])
        if item is None or not item[0]:
            return None
        return {"items": item[0], "type": "array"}, None if item[1] is None else _each(item[1])
    if origin is dict and len(args) == 2 and args[0] is str:
        value = _item(args[1])
        if value is None or not value[0]:
            return None
        return ({"additionalProperties": value[0], "type": "object"},
                None if value[1] is None else _values(value[1]))
    if origin is Literal and len(args) > 1 and all(type(a) is str for a in args) and len(
            set(args)) == len(args):
        return {"enum": list(args), "type": "string"}, None
    if origin in (Union, types.UnionType) and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        found = _plain(inner)
        if found is None or not found[0]:
            return None
        return ({"anyOf": [found[0], {"type": "null"}]},
                None if found[1] is None else _or_none(found[1]))
    return None


def _json(value: Any) -> bool:
    """``value`` is plain JSON data (as pydantic writes a default into the schema)."""
    kind = type(value)
    if value is None or kind in (str, int, bool):
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(_json(item) for item in value)
    if kind is dict:
        return all(type(key) is str and _json(item) for key, item in value.items())
    return False


@final
class Converter:
    """The conversions pydantic's validation makes to a plain signature's JSON arguments."""

    __slots__ = ("_steps",)

    def __init__(self, steps: dict[str, Callable[[Any], Any]]) -> None:
        self._steps = steps

    def convert(self, raw: dict[str, Any]) -> dict[str, Any]:
        """``raw`` (a fresh dict of validated JSON) as the annotated types; ``ValueError``
        (naming the argument) for a number the type cannot hold, where pydantic refuses it."""
        steps = self._steps
        if not steps:
            return raw
        out = {}
        for key, value in raw.items():
            try:
                out[key] = steps[key](value) if key in steps else value
            except _Refused as exc:
                raise ValueError(f"argument {key!r}: {exc}") from None
        return out


def plain_schema(
    params: Sequence[tuple[str, Any, Any, str | None]],
) -> tuple[dict[str, Any], Converter] | None:
    """The parameters schema and converter of ``(name, hint, default or ..., doc)``, or
    None when a parameter is not plain (pydantic reads the signature then)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    steps: dict[str, Callable[[Any], Any]] = {}
    for name, hint, default, doc in params:
        found = _plain(hint)
        if found is None or (default is not ... and not _json(default)):
            return None
        schema, convert = found
        prop = dict(schema)
        if default is ...:
            required.append(name)
        else:
            prop["default"] = default
        if doc is not None:
            prop["description"] = doc
        properties[name] = dict(sorted(prop.items()))
        if convert is not None:
            steps[name] = convert
    out: dict[str, Any] = {"properties": properties}
    if required:
        out["required"] = required
    out["type"] = "object"
    out["additionalProperties"] = False
    return out, Converter(steps)
