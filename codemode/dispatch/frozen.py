"""Deep-frozen JSON values: what hooks and handlers see of a call's arguments.

A frozen value is made once per call; nothing downstream can mutate it by
accident, and the caller's own dict stays detached from it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import Any, Final, NoReturn, TypeVar

from codemode.dispatch.failure import failure_text
from codemode.jsontext import compact_encoder, int_cost, small_scalars

__all__ = ["HEAVY_VALUES", "FrozenDict", "NotJSONError", "constructor", "freeze", "heavy",
           "thaw"]

_T = TypeVar("_T")


class NotJSONError(TypeError):
    """A value that is not plain JSON data (dict/list/str/int/float/bool/None)."""

    def __init__(self, path: str, value: object, reason: str | None = None) -> None:
        self.path = path
        self.type_name = type(value).__name__
        super().__init__(f"{path}: {reason or f'{self.type_name} is not JSON data'}")


class FrozenDict(dict[str, Any]):
    """An immutable ``dict``: reads like a dict, serialises like one, refuses writes."""

    __slots__ = ()

    def _refuse(self, *_: object, **__: object) -> NoReturn:
        raise TypeError("frozen: call arguments cannot be modified (copy with thaw())")

    __setitem__ = __delitem__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(sorted(self.items(), key=lambda kv: kv[0])))

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return (dict, (dict(self),))

    def __repr__(self) -> str:
        return f"FrozenDict({dict.__repr__(self)})"


def freeze(value: Any) -> Any:
    """Return a detached deep-frozen copy; raise NotJSONError (with its JSON path) otherwise.

    Subclasses of the JSON types (``IntEnum``/``StrEnum`` members, named tuples,
    ``OrderedDict``, ``defaultdict``) freeze as their base type, as ``json.dumps`` writes
    them. A container whose reading raises is not JSON data either: a tool's odd return
    value fails as an invalid result that says why, never as an error of the host."""
    try:
        return _freeze(value)
    except _Bad as exc:
        path, bad = _find_bad(value, "$")
        if not path:  # not found again (a container that reads differently twice)
            path, bad = "$", value
        reason = None
        if isinstance(exc, _Unreadable):
            reason = f"reading {type(bad).__name__} raised {failure_text(exc.error)}"
        raise NotJSONError(path, bad, reason) from None
    except RecursionError:  # a list that holds itself, or nesting past the stack
        raise NotJSONError("$", value, "nested too deeply for JSON (or it holds itself)"
                           ) from None


class _Bad(Exception):
    """Internal: a non-JSON value was met; the slow path then finds where."""


class _Unreadable(_Bad):
    """Internal: reading a container (its own ``keys``, ``__iter__`` …) raised."""

    def __init__(self, error: Exception) -> None:
        super().__init__()
        self.error = error


def _freeze(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is dict or kind is FrozenDict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                if not isinstance(key, str):
                    raise _Bad
                key = str.__str__(key)  # a StrEnum key, as json.dumps writes it
            leaf = type(item)
            # Inline the scalar cases: most argument values are leaves.
            out[key] = item if leaf is str or leaf is int or leaf is bool else _freeze(item)
        return FrozenDict(out)
    if kind is list or kind is tuple:
        return tuple([_freeze(item) for item in value])
    if kind is float and math.isfinite(value):
        return value
    return _freeze_subclass(value)


def _freeze_subclass(value: Any) -> Any:
    """A subclass of a JSON type as its base type. The base type's own slot makes the copy
    (``str.__str__``, ``int.__int__``), so an override of the subclass never runs for a
    scalar; a container is read through its own methods, and one that raises is refused."""
    if isinstance(value, Mapping):
        try:
            copy: Any = dict(value)
        except Exception as exc:
            raise _Unreadable(exc) from None
        return _freeze(copy)
    if isinstance(value, (list, tuple)):
        try:
            items = list(value)
        except Exception as exc:
            raise _Unreadable(exc) from None
        return tuple([_freeze(item) for item in items])
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):  # bool cannot be subclassed: IntEnum, IntFlag …
        return int.__int__(value)
    if isinstance(value, float):
        number = float.__float__(value)
        if math.isfinite(number):
            return number
    raise _Bad


def _find_bad(value: Any, path: str) -> tuple[str, object]:
    """The path and value of the first non-JSON part of ``value``; ``("", None)`` if none."""
    if isinstance(value, Mapping):
        try:
            pairs = list(value.items())
        except Exception:
            return path, value
        for key, item in pairs:
            if not isinstance(key, str):
                return f"{path} (key {key!r})", key
            found = _find_bad(item, f"{path}.{key}")
            if found[0]:
                return found
        return "", None
    if isinstance(value, (list, tuple)):
        try:
            items = list(value)
        except Exception:
            return path, value
        for i, item in enumerate(items):
            found = _find_bad(item, f"{path}[{i}]")
            if found[0]:
                return found
        return "", None
    try:
        _freeze(value)
    except _Bad:
        return path, value
    return "", None


HEAVY_VALUES: Final = 2_000
"""JSON values past which a call's arguments or result are copied, checked and converted
on a worker thread, not on the event loop (the pipeline's freeze and normalise, ``@tool``'s
conversion, a run's copy for its script): that is about a microsecond of Python work per
value, so a call stays within a few milliseconds of the loop, sixteen gathered ones too
(a script's call with 499,000 values held the loop for over a second, a tool's result of
400,000 for 0.9 s, sixteen gathered calls of 19,990 values 1.3 s)."""


_LONG_TEXT: Final = 1 << 12
_BIG_INT: Final = 1 << 1024


def heavy(value: Any, limit: int) -> bool:
    """Whether ``value`` holds more than ``limit`` JSON values (containers count their
    items), a long string weighing one per KB and a huge integer by the microseconds its
    digits take (``jsontext.int_cost``: 3,000 integers of 4,000 digits were 0.6 s of one
    C call). Reads at most about ``limit`` of them: a container's length is counted
    before its items are, so ``[{}] * 10**6`` answers at once."""
    kind = type(value)
    if kind is dict or kind is FrozenDict:
        # the common call's arguments or result: a few small scalars, read at once
        if len(value) <= limit and small_scalars(value.values(), _LONG_TEXT, _BIG_INT):
            return False
    elif ((kind is int and -_BIG_INT < value < _BIG_INT) or kind is float or kind is bool
          or value is None or (kind is str and len(value) <= _LONG_TEXT)):
        return False
    seen = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict or kind is FrozenDict:
            seen += len(item)
            if seen > limit:
                return True
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            seen += len(item)
            if seen > limit:
                return True
            stack.extend(item)
        elif kind is str:
            if len(item) > _LONG_TEXT:
                seen += len(item) >> 10
                if seen > limit:
                    return True
        elif kind is int:
            if not -_BIG_INT < item < _BIG_INT:
                seen += int_cost(item)
                if seen > limit:
                    return True
        elif kind is float or kind is bool or item is None:
            continue
        elif isinstance(item, (Mapping, list, tuple)):
            # an OrderedDict, a defaultdict, a named tuple: rare, and not read here (its
            # own methods may be slow or raise), so copied off the loop whatever its size
            return True
    return False


def thaw(value: Any) -> Any:
    """Return a plain mutable JSON copy (dicts and lists) of a frozen value."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value  # a leaf, told without the two isinstance checks
    if isinstance(value, dict):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(item) for item in value]
    return value


dumps: Final = compact_encoder(ascii=False, allow_nan=False)
"""Serialise JSON data compactly; frozen values serialise like plain ones. Made once:
``json.dumps`` with non-default options builds an encoder on every call."""


def constructor(cls: type[_T]) -> Callable[..., _T]:
    """A keyword-only constructor for the frozen, slotted dataclass ``cls`` that fills its
    slots directly. The generated ``__init__`` pays one ``object.__setattr__`` per field,
    half the cost of the values the pipeline makes on every call (contexts, results).

    Same fields and defaults as ``cls(...)``; a field with a ``default_factory`` must be
    passed. For classes without ``__post_init__`` (nothing else would be skipped).
    """
    if not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__} is not a dataclass without __post_init__")
    names: list[str] = []
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    for i, f in enumerate(dataclasses.fields(cls)):
        scope[f"_set{i}"] = getattr(cls, f.name).__set__  # the slot's member descriptor
        if f.default is not dataclasses.MISSING:
            scope[f"_default{i}"] = f.default
            names.append(f"{f.name}=_default{i}")
        else:
            names.append(f.name)
    body = "".join(f"    _set{i}(obj, {f.name})\n" for i, f in enumerate(dataclasses.fields(cls)))
    exec(f"def make(*, {', '.join(names)}):\n    obj = _new(_cls)\n{body}    return obj\n",
         scope)
    make: Callable[..., _T] = scope["make"]
    make.__qualname__ = make.__name__ = f"new_{cls.__name__}"
    return make
