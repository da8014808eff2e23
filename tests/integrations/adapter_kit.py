"""Shared by the framework adapter tests: a registry with one real tool and its call log."""

from __future__ import annotations

import codemode as cm

GOOD_SCRIPT = "r = await tools.add(a=20, b=22)\nprint('sum', r)\nr"
BAD_SCRIPT = "1 / 0"


def make_registry(log: list[tuple[int, int]]) -> cm.ToolRegistry:
    """A registry whose ``add`` records each call in ``log`` (proof it really ran)."""
    registry = cm.ToolRegistry()

    @registry.register
    @cm.tool
    async def add(a: int, b: int) -> int:
        """Add two integers."""
        log.append((a, b))
        return a + b

    return registry
