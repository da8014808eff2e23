"""``types`` for scripts: ``SimpleNamespace`` only.

Models turn JSON into attribute bags (``json.loads(raw, object_hook=lambda d:
SimpleNamespace(**d))``, ``cfg = SimpleNamespace(limit=5)``). The stdlib class is not
handed out: its instances are host objects a script may not write, and its type's other
members are the host's. This one holds the script's values in a dict of its own behind
a slot the script cannot name (``_`` names are refused), reads and writes them as
attributes, and has CPython's ``repr``, ``==`` and ``vars()``; nothing else is
reachable through it. The other ``types`` names (``FunctionType``, ``ModuleType`` …)
would hand out host classes: absent.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Final, final

from codemode.sandbox.language.builtins import DictType
from codemode.sandbox.language.compare import GUARDS
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfListed
from codemode.sandbox.language.sizes import RENDER_CHILDREN, charge_operations

__all__ = ["FACADE", "SimpleNamespace"]

_POSITIONAL: Final = sys.version_info >= (3, 13)
"""3.13's ``SimpleNamespace(mapping_or_iterable, /, **kwargs)``; before it keywords only."""


class _Rendering(threading.local):
    """The namespaces whose ``repr`` is being built on this thread (a namespace inside
    itself shows as ``namespace(...)``, as CPython's)."""

    def __init__(self) -> None:
        self.ids: set[int] = set()


_RENDERING: Final = _Rendering()
_EQ: Final = GUARDS["_eq_"]


@final
class SimpleNamespace(SelfListed):
    """``types.SimpleNamespace``: attributes that are the script's values."""

    __slots__ = ("_values",)
    __hash__ = None  # type: ignore[assignment]  # unhashable, as CPython's
    _values: dict[str, Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        values: dict[str, Any] = {}
        if args:
            if not _POSITIONAL:
                raise TypeError("no positional arguments expected")
            if len(args) > 1:
                raise TypeError(f"SimpleNamespace expected at most 1 argument, got "
                                f"{len(args)}")
            # the script's ``dict``: pairs are drawn through the budget (a plain ``dict()``
            # read a million of them for one operation)
            given: dict[Any, Any] = DictType(args[0])  # type: ignore[call-arg, assignment]
            charge_operations(len(given))
            for key in given:
                if type(key) is not str:
                    raise TypeError(f"keywords must be strings, not '{type(key).__name__}'")
            values.update(given)
        values.update(kwargs)
        object.__setattr__(self, "_values", values)

    def sandbox_getattr(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"'types.SimpleNamespace' object has no attribute "
                                 f"{name!r}") from None

    def __getattr__(self, name: str) -> Any:
        # ``ns.n += 1`` reads through the write guard's target, plainly
        if name.startswith("_"):
            raise AttributeError(name)
        return self.sandbox_getattr(name)

    def __setattr__(self, name: str, value: Any) -> None:
        if type(name) is not str:
            raise TypeError(f"attribute name must be string, not '{type(name).__name__}'")
        if name.startswith("_"):
            raise AttributeError(f"a SimpleNamespace attribute may not start with '_' in "
                                 f"the sandbox: {name!r}")
        self._values[name] = value

    def __delattr__(self, name: str) -> None:
        if type(name) is not str or name not in self._values:
            raise AttributeError(f"'types.SimpleNamespace' object has no attribute "
                                 f"{name!r}")
        del self._values[name]

    def sandbox_vars(self) -> dict[str, Any]:
        charge_operations(len(self._values))
        return dict(self._values)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SimpleNamespace):
            # C compares the dicts, calling this again for nested namespaces: charged per
            # call (two namespaces built alike 40 deep compare 2**40 times); the values
            # through the script's ``==`` guard (two lists built alike 26 deep held the
            # host loop 1.4 s uncharged when compared here plainly)
            charge_operations(1 + len(self._values))
            return bool(_EQ(self._values, other._values))
        return NotImplemented

    def __repr__(self) -> str:
        key = id(self)
        if key in _RENDERING.ids:
            return "namespace(...)"
        _RENDERING.ids.add(key)
        try:
            return "namespace(" + ", ".join(
                f"{k}={v!r}" for k, v in self._values.items()) + ")"
        finally:
            _RENDERING.ids.discard(key)


RENDER_CHILDREN[SimpleNamespace] = lambda bag: [*bag._values.items()]
"""Read, not charged: the result is sized after the run has ended (``sandbox_vars``'s
charge then raised out of the runner: the worker died, the in-process run raised)."""

FACADE: Final = Facade("types", {"SimpleNamespace": SimpleNamespace})
