"""``time`` for scripts: clocks, ``struct_time`` conversions, and a bounded ``sleep``.

``localtime`` is UTC, as ``datetime.now()`` is: a script never learns the host's time
zone. ``strftime``'s format is sized as ``date.strftime``'s is (a long format renders in a
buffer CPython grows to 256 times its length); ``strptime`` takes the lengths
``datetime.strptime`` takes.

``sleep`` blocks the script (as in CPython; async code should ``await
asyncio.sleep``). It waits in short slices, each charged one operation, so a
cancelled or aborted run stops within a slice; a sleep that would end after the
run's deadline trips the timeout at once instead of waiting for it. ``usage.operations``
counts one operation per slice of the requested time.
"""

from __future__ import annotations

import calendar
import importlib
import math
import time
from typing import Any, Final

from codemode.errors import LimitExceeded
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import check_strftime, check_strptime
from codemode.sandbox.language.sizes import charge_operations
from codemode.sandbox.language.state import current_run

__all__ = ["FACADE", "SLICE"]

importlib.import_module("_strptime")  # time.strptime imports it; a confined worker cannot

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


_STRUCT_TIME: Final = time.struct_time
_UTC_FIELDS: Final = {"tm_zone": "UTC", "tm_gmtoff": 0}


def _seconds(secs: object, what: str) -> float | None:
    if secs is None:
        return None
    if type(secs) is bool or not isinstance(secs, int | float):
        raise TypeError(f"time.{what}() takes a number of seconds, not "
                        f"{type(secs).__name__!r}")
    return secs


def gmtime(secs: float | None = None, /) -> time.struct_time:
    """``time.gmtime(secs)``: the UTC ``struct_time`` of a timestamp (now without one)."""
    return time.gmtime(_seconds(secs, "gmtime"))


def localtime(secs: float | None = None, /) -> time.struct_time:
    """``time.localtime(secs)``: the sandbox's local time is UTC."""
    fields = tuple(time.gmtime(_seconds(secs, "localtime")))
    return _STRUCT_TIME(fields, _UTC_FIELDS)


def _time_tuple(t: Any, what: str) -> Any:
    if type(t) is not _STRUCT_TIME and type(t) is not tuple:
        raise TypeError(f"time.{what}() takes a struct_time or a tuple of 9 integers, not "
                        f"{type(t).__name__!r}")
    fields = tuple(t)
    if len(fields) != 9 or not all(type(item) is int for item in fields):
        raise TypeError(f"time.{what}() takes a struct_time or a tuple of 9 integers")
    return fields


def strftime(format: str, t: object = None, /) -> str:
    """``time.strftime(format, t)``, ``t`` the local (UTC) time by default."""
    if type(format) is not str:
        raise TypeError(f"strftime() argument 1 must be str, not {type(format).__name__}")
    check_strftime(format)
    moment = localtime() if t is None else t
    if type(moment) is not _STRUCT_TIME:
        moment = _time_tuple(moment, "strftime")
    return time.strftime(format, moment)


def strptime(string: str, format: str = "%a %b %d %H:%M:%S %Y", /) -> time.struct_time:
    """``time.strptime``, with the lengths ``datetime.strptime`` takes."""
    check_strptime(string, format)
    return time.strptime(string, format)


def mktime(t: object, /) -> float:
    """``time.mktime(t)``: the timestamp of a local (UTC) time."""
    return float(calendar.timegm(_time_tuple(t, "mktime")))


def asctime(t: object = None, /) -> str:
    """``time.asctime(t)``: ``'Thu Jan  1 00:00:00 1970'``."""
    moment = localtime() if t is None else t
    if type(moment) is not _STRUCT_TIME:
        moment = _time_tuple(moment, "asctime")
    return time.asctime(moment)


def ctime(secs: float | None = None, /) -> str:
    """``time.ctime(secs)``: ``asctime(localtime(secs))``."""
    return time.asctime(localtime(secs))


FACADE: Final = Facade("time", {
    "time": time.time, "time_ns": time.time_ns, "monotonic": time.monotonic,
    "monotonic_ns": time.monotonic_ns, "perf_counter": time.perf_counter,
    "perf_counter_ns": time.perf_counter_ns, "sleep": sleep, "gmtime": gmtime,
    "localtime": localtime, "strftime": strftime, "strptime": strptime, "mktime": mktime,
    "asctime": asctime, "ctime": ctime,
})
