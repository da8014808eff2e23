"""``datetime`` for scripts: the value classes (their attributes are allowlisted in guards)."""

from __future__ import annotations

import datetime
from typing import Final

from . import Facade

__all__ = ["FACADE"]

FACADE: Final = Facade("datetime", {
    "datetime": datetime.datetime, "date": datetime.date, "time": datetime.time,
    "timedelta": datetime.timedelta, "timezone": datetime.timezone,
    "MINYEAR": datetime.MINYEAR, "MAXYEAR": datetime.MAXYEAR,
})
