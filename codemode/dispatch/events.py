"""Dispatch events and their subscribers, including the JSONL session log.

Every dispatch emits exactly one ``tool/call`` and one ``tool/result``;
handlers may add ``tool/update`` events in between.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TextIO

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["EventType", "JsonlSessionLog", "ToolEvent"]

EventType = Literal["tool/call", "tool/update", "tool/result"]


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolEvent:
    """One step of one dispatch, as subscribers see it."""

    type: EventType
    """``tool/call``, ``tool/update`` or ``tool/result``."""
    call_id: str
    """The call's id."""
    name: str
    """Wire name of the tool."""
    token: str
    """The dispatch's token (as text)."""
    parent: str | None
    """The parent dispatch's token, if any."""
    agent: str | None
    """Who called."""
    time: float
    """Wall-clock time (``time.time()``) of the event."""
    arguments: Mapping[str, Any] | None = None
    """Raw arguments, on ``tool/call``."""
    data: Any = None
    """Partial result, on ``tool/update``."""
    is_error: bool | None = None
    """On ``tool/result``."""
    error: str | None = None
    """Error message, on failed ``tool/result``."""
    duration: float | None = None
    """Seconds in the pipeline, on ``tool/result``."""
    meta: Mapping[str, Any] | None = None
    """The handler's meta, on ``tool/result``; never shown to the model."""
    content: tuple[Mapping[str, Any], ...] | None = None
    """The model-visible content blocks, on ``tool/result`` (so a replay can re-render the
    result card exactly as the live view did)."""
    replayed: bool | None = None
    """True on both events of a call a resumed run answered from its journal (no handler
    ran)."""

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with the fields that are set."""
        out: dict[str, Any] = {}
        for name in self.__slots__:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


Subscriber = Callable[[ToolEvent], Any]


class JsonlSessionLog:
    """A subscriber appending one JSON line per event to a file (thread-safe, flushed per line)."""

    def __init__(self, path: str | Path) -> None:
        from pathlib import Path  # not at import: a host that logs no session skips ~3 ms

        self.path = Path(path)
        self._lock = threading.Lock()
        self._file: TextIO | None = self.path.open("a", encoding="utf-8")

    def __call__(self, event: ToolEvent) -> None:
        line = json.dumps(event.to_json(), ensure_ascii=False, default=str)
        with self._lock:
            if self._file is None:
                raise ValueError(f"session log {self.path} is closed")
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file; further events raise."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> JsonlSessionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def now() -> float:
    """Event timestamp."""
    return time.time()
