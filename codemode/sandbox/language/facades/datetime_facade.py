"""``datetime`` for scripts: the value classes (their attributes are allowlisted in guards)."""

from __future__ import annotations

import datetime
import importlib
from typing import Any, Final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.sizes import RENDER_SIZERS

__all__ = ["FACADE"]

importlib.import_module("_strptime")  # datetime.strptime imports it; a confined worker cannot


def _zone_size(zone: Any) -> int:
    """A timezone's repr/str shows its name, which the script chooses (any length)."""
    if zone is None:
        return 0
    name = zone.tzname(None) if isinstance(zone, datetime.timezone) else None
    return 96 + (len(name) if isinstance(name, str) else 0)


RENDER_SIZERS.setdefault(datetime.timezone, _zone_size)
RENDER_SIZERS.setdefault(datetime.datetime, lambda value: 96 + _zone_size(value.tzinfo))
RENDER_SIZERS.setdefault(datetime.time, lambda value: 96 + _zone_size(value.tzinfo))

FACADE: Final = Facade("datetime", {
    "datetime": datetime.datetime, "date": datetime.date, "time": datetime.time,
    "timedelta": datetime.timedelta, "timezone": datetime.timezone,
    "MINYEAR": datetime.MINYEAR, "MAXYEAR": datetime.MAXYEAR,
    "UTC": datetime.UTC,  # 3.11: ``datetime.now(UTC)``, the same object as timezone.utc
})
