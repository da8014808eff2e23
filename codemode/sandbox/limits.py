"""Run limits: what one script may consume, with documented defaults.

``Limits`` is a plain value: it crosses to a worker process as JSON
(:meth:`Limits.to_json` / :meth:`Limits.from_json`), and every limit that trips
is reported by its field name (``LimitExceeded.limit``) and configured value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, Final

__all__ = ["DEFAULT_LIMITS", "FRAME_DEPTH", "FRAME_VALUES", "LIMIT_NAMES", "Limits"]

FRAME_VALUES: Final = 500_000
"""Most JSON values (containers, scalars, object members) one frame from a worker may hold:
the protocol's bound, here so the script side keeps its results and calls inside it."""
FRAME_DEPTH: Final = 100
"""Deepest nesting of arrays and objects one frame from a worker may hold."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Limits:
    """What one run may consume; each field is also the name reported when it trips."""

    timeout: float = 30.0
    """Wall-clock seconds for the whole run, tool calls included."""
    operations: int = 10_000_000
    """Loop iterations, function entries and items consumed by iterating builtins."""
    memory: int = 512 * 1024 * 1024
    """Bytes: worker address-space rlimit; in-process only the size guards apply."""
    recursion: int = 200
    """Nested script function calls (script frames on the stack)."""
    output: int = 65_536
    """Bytes of printed text kept; the rest is dropped with a marker (not an error)."""
    result: int = 1_048_576
    """Bytes of the JSON-encoded result value."""
    calls: int = 1_000
    """Tool calls per run."""
    concurrency: int = 16
    """Tool calls in flight at once (``asyncio.gather`` beyond this waits)."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float) \
                    or not 0 < value < math.inf:  # NaN fails both comparisons
                raise ValueError(f"Limits.{f.name} must be a positive finite number, got {value!r}")
            if f.name != "timeout" and not isinstance(value, int):
                raise ValueError(f"Limits.{f.name} must be an int, got {value!r}")

    def to_json(self) -> dict[str, Any]:
        """Plain JSON object (for the worker protocol; every run sends one, so no ``asdict``)."""
        return {name: getattr(self, name) for name in _FIELD_NAMES}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Limits:
        """Inverse of :meth:`to_json`; unknown keys are an error."""
        return cls(**data)


_FIELD_NAMES: Final = tuple(f.name for f in fields(Limits))

DEFAULT_LIMITS: Final = Limits()
"""The limits used when a caller passes none."""

LIMIT_NAMES: Final = frozenset(f.name for f in fields(Limits))
"""Every name ``ScriptError.limit`` can take."""
