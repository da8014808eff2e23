"""Local tools ``codemode serve --tools`` loads in the serve tests (a real module on disk).

``slow`` appends ``started``/``cancelled``/``finished`` lines to the file named by
``CODEMODE_TEST_LOG``, so a test can see a nested call start and get cancelled.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio

import codemode as cm

_PIXEL = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def _log(line: str) -> None:
    with Path(os.environ["CODEMODE_TEST_LOG"]).open("a", encoding="utf-8") as f:
        f.write(line + "\n")


@cm.tool
async def slow(seconds: float) -> str:
    """Sleep, then answer; logs when it starts, finishes or is cancelled.

    Args:
        seconds: How long to sleep.
    """
    _log("started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        _log("cancelled")
        raise
    _log("finished")
    return "done"


@cm.tool
async def snapshot(label: str) -> list[dict[str, str]]:
    """A one-pixel PNG image with a caption.

    Args:
        label: Caption text.
    """
    return [cm.text(label), cm.image(_PIXEL, "image/png")]


@cm.tool
async def shout(text: str) -> str:
    """Upper-case a text.

    Args:
        text: What to upper-case.
    """
    return text.upper()


registry = cm.ToolRegistry()
for _tool in (slow, snapshot, shout):
    registry.register(_tool)
