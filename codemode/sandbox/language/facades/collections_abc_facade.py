"""``collections.abc`` for scripts: the abstract collections, for ``isinstance`` checks.

They are the host's own classes, so ``isinstance(x, Mapping)`` answers as in CPython;
the guards give a script no attribute of them (``register`` would change what every
later run's checks answer) and refuse them as bases, like every host class.
"""

from __future__ import annotations

import collections.abc
from typing import Final

from codemode.sandbox.language.facades import Facade

__all__ = ["FACADE"]

FACADE: Final = Facade("collections.abc", {name: getattr(collections.abc, name) for name in (
    "Callable", "Collection", "Container", "Generator", "Hashable", "Iterable", "Iterator",
    "Mapping", "MutableMapping", "MutableSequence", "MutableSet", "Reversible", "Sequence",
    "Set", "Sized",
)})
