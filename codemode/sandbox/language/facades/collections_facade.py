"""``collections`` for scripts: the container types and a sandbox-aware ``namedtuple``."""

from __future__ import annotations

import collections
from typing import Any, Final

from codemode.sandbox.language.builtins import counted_mapping, sized_sequence
from codemode.sandbox.language.facades import Facade, facade
from codemode.sandbox.language.facades.chainmap import ChainMap
from codemode.sandbox.language.guards import EXTRA_NAMES, NAMED_TUPLES, ScriptMeta
from codemode.sandbox.language.meter import MAIN_MODULE
from codemode.sandbox.language.state import counted, current_run

__all__ = ["FACADE"]


_MAX_FIELDS: Final = 256
_MAX_NAME: Final = 100


_RUN_NAMES: Final = 100_000
"""Characters of distinct named-tuple names one run may define (as many as its source)."""


def _charge_names(names: list[str]) -> None:
    """``collections.namedtuple`` interns the type and field names, and CPython 3.12 keeps
    interned strings for good: a run's distinct names are bounded like its source is
    (300 tuples of 256 long fields a run stayed in the host, 12 MB more per run)."""
    run = current_run()
    seen: set[str] = run.extras.setdefault("collections.namedtuple", set())
    fresh = {name for name in names if name not in seen}
    total = run.extras.get("collections.namedtuple.size", 0) + sum(map(len, fresh))
    if total > _RUN_NAMES:
        run.too_big(f"named tuple names over {_RUN_NAMES} characters in one run", total)
    seen.update(fresh)
    run.extras["collections.namedtuple.size"] = total


def namedtuple(typename: str, field_names: Any, *, defaults: Any = None) -> type:
    """A named tuple class whose fields (and count/index, ``_asdict``, ``_replace``, ``_make``,
    ``_fields``, ``_field_defaults``) scripts may read."""
    if isinstance(field_names, str) and len(field_names) > _MAX_FIELDS * (_MAX_NAME + 2):
        current_run().too_big("namedtuple() field names", len(field_names))
    names = field_names.replace(",", " ").split() if isinstance(field_names, str) else list(
        counted(field_names))
    if not all(isinstance(n, str) for n in [typename, *names]):
        # collections would str() them: the text of a script value can be huge.
        raise TypeError("namedtuple() type and field names must be strings")
    if len(names) > _MAX_FIELDS:
        raise ValueError(f"namedtuple() takes at most {_MAX_FIELDS} fields")
    if any(len(str(n)) > _MAX_NAME for n in [typename, *names]):
        size = sum(len(str(n)) for n in [typename, *names])
        current_run().too_big(f"namedtuple() with {len(names)} fields (at most {_MAX_FIELDS} "
                              f"fields, names of at most {_MAX_NAME} characters)", size)
    _charge_names([typename, *names])
    if defaults is not None:
        defaults = list(counted(defaults))
    # The names checked above, not ``field_names`` again: a script iterable can yield
    # other names the second time (thousands of fields, one long compile on the host).
    base = collections.namedtuple(typename, names, defaults=defaults,  # type: ignore[misc]
                                  module=MAIN_MODULE)
    NAMED_TUPLES.add(base)
    fields = frozenset(base._fields) | {"count", "index"}
    return type.__new__(ScriptMeta, typename, (base,), {"__slots__": (), EXTRA_NAMES: fields,
                                                          "__module__": MAIN_MODULE})


FACADE: Final = Facade("collections", {
    # Stand-ins: isinstance() sees the real classes; a bulk input is counted.
    "Counter": counted_mapping(collections.Counter),
    "defaultdict": counted_mapping(collections.defaultdict, 1),
    "OrderedDict": counted_mapping(collections.OrderedDict),
    "deque": sized_sequence(collections.deque),
    "namedtuple": namedtuple,
    "ChainMap": ChainMap,
    "abc": facade("collections.abc"),  # ``import collections.abc`` binds this facade
})
