"""``collections`` for scripts: the container types and a sandbox-aware ``namedtuple``."""

from __future__ import annotations

import collections
from typing import Any, Final

from codemode.sandbox.guards import EXTRA_NAMES, ScriptMeta

from . import Facade

__all__ = ["FACADE"]


def namedtuple(typename: str, field_names: Any, *, defaults: Any = None) -> type:
    """A named tuple class whose fields (and count/index) scripts may read."""
    base = collections.namedtuple(typename, field_names, defaults=defaults)  # type: ignore[misc]
    fields = frozenset(base._fields) | {"count", "index"}
    return type.__new__(ScriptMeta, typename, (base,), {"__slots__": (), EXTRA_NAMES: fields})


FACADE: Final = Facade("collections", {
    "Counter": collections.Counter, "defaultdict": collections.defaultdict,
    "OrderedDict": collections.OrderedDict, "deque": collections.deque,
    "namedtuple": namedtuple,
})
