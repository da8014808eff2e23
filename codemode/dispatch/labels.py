"""Data-flow labels: what a run has read, and the refusal a sink gives it.

Run-level and monotone: a run carries every label of every result it has read, so a
value derived from a ``secret`` is caught however the script reshapes it (sound, but
coarse: a run that read a secret cannot send anything to a tool refusing ``secret``,
even text that does not contain it).
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, final

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

__all__ = ["LabelTrail", "refusal"]


@final
class LabelTrail:
    """The labels one run carries, each with the first place it was read."""

    __slots__ = ("_carried", "_sources")

    def __init__(self, inherited: Mapping[str, str] | None = None) -> None:
        self._sources: dict[str, str] = dict(inherited or {})
        self._carried: Mapping[str, str] = MappingProxyType(dict(self._sources))

    def read(self, labels: Iterable[str], source: str) -> None:
        """The run has read a result carrying ``labels`` from ``source`` (``tool at line 3``)."""
        for label in labels:
            if label not in self._sources:
                self._sources[label] = source
                self._carried = MappingProxyType(dict(self._sources))

    @property
    def carried(self) -> Mapping[str, str]:
        """Label → where it was first read (a read-only snapshot, made when it changes)."""
        return self._carried

    def __bool__(self) -> bool:
        return bool(self._sources)


def refusal(tool: str, refuses: frozenset[str], carried: Mapping[str, str]) -> str | None:
    """Why ``tool`` refuses a call from a run carrying ``carried``, or None when it does not."""
    hits = sorted(label for label in carried if label in refuses)
    if not hits:
        return None
    return "; ".join(f"{tool} refuses {label!r}: read from {carried[label]}" for label in hits)
