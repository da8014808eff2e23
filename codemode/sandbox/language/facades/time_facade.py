"""``time`` for scripts: clocks, and a ``sleep`` bounded by the run's deadline.

``sleep`` blocks the script (as in CPython; async code should ``await
asyncio.sleep``). It waits in short slices, each charged one operation, so a
cancelled or aborted run stops within a slice; a sleep that would end after the
run's deadline trips the timeout at once instead of waiting for it. ``usage.operations``
counts one operation per slice of the requested time.
"""

from __future__ import annotations

import math
import time
from typing import Final

from codemode.errors import LimitExceeded
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.sizes import charge_operations
from codemode.sandbox.language.state import current_run

__all__ = ["FACADE", "SLICE"]

SLICE: Final = 0.01
"""Longest single wait (seconds) between checks of the run's deadline and abort flag."""


def sleep(seconds: float, /) -> None:
    """``time.sleep(seconds)`` inside the run's time limit."""
    if type(seconds) is bool or not isinstance(seconds, int | float):
        raise TypeError(f"'{type(seconds).__name__}' object cannot be interpreted as an "
                        "integer or float")
    if seconds != seconds:
        raise ValueError("Invalid value NaN (not a number)")
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    meter = current_run().meter
    meter.check()
    end = time.monotonic() + seconds
    if end > meter.deadline:
        meter.trip(LimitExceeded("timeout", meter.timeout,
                                 f"time.sleep({seconds:g}) would end after the run's deadline"))
    slices = max(1, math.ceil(seconds / SLICE))
    charged = 0
    while (left := end - time.monotonic()) > 0:
        charge_operations(1)  # checks the deadline, an abort and the budget as it goes
        charged += 1
        time.sleep(min(left, SLICE))
    charge_operations(slices - charged)  # the same count however long each slice took


FACADE: Final = Facade("time", {"time": time.time, "monotonic": time.monotonic,
                                "perf_counter": time.perf_counter, "sleep": sleep})
