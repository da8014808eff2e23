"""``time`` for scripts: clocks only (no blocking ``sleep``; use ``await asyncio.sleep``)."""

from __future__ import annotations

import time
from typing import Final

from codemode.sandbox.language.facades import Facade

__all__ = ["FACADE"]

FACADE: Final = Facade("time", {"time": time.time, "monotonic": time.monotonic,
                                "perf_counter": time.perf_counter})
