"""A runtime whose import never finishes: a worker started with it never announces itself
(the pool tests cancel runs while such a worker boots). No tests here."""

from __future__ import annotations

import time

time.sleep(3600)


async def run(*args: object, **kwargs: object) -> None:  # never reached
    raise AssertionError("unreachable")
