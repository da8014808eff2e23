"""Small helpers shared by the dispatch tests."""

from __future__ import annotations

import itertools
from typing import Any

import codemode as cm

_ids = itertools.count(1)


def call(name: str, arguments: Any = None, **fields: Any) -> cm.ToolCall:
    """A ToolCall with a fresh call id; ``arguments`` defaults to ``{}``."""
    return cm.ToolCall(
        call_id=f"c{next(_ids)}",
        name=name,
        arguments={} if arguments is None else arguments,
        **fields,
    )


async def echo(args: Any, ctx: cm.ExecContext) -> Any:
    """Handler returning its (frozen) arguments as structured data."""
    return cm.thaw(args)


class Events:
    """A subscriber that keeps every event."""

    def __init__(self) -> None:
        self.all: list[cm.ToolEvent] = []

    def __call__(self, event: cm.ToolEvent) -> None:
        self.all.append(event)

    def of(self, kind: str) -> list[cm.ToolEvent]:
        """Events of one type, in order."""
        return [e for e in self.all if e.type == kind]

    def types(self) -> list[str]:
        """The type of every event, in order."""
        return [e.type for e in self.all]
