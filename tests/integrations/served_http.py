"""``codemode serve --transport http`` as a process for tests (no tests here): started,
its URL read from the line it logs, stopped with SIGTERM, and its stderr checked for a
traceback of ours."""

from __future__ import annotations

import signal
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Mapping, Sequence
    from pathlib import Path

__all__ = ["served_http"]


@asynccontextmanager
async def served_http(command: Sequence[str], *, cwd: Path, env: Mapping[str, str],
                      errlog: Path) -> AsyncIterator[str]:
    """Run ``command`` (a ``serve --transport http``) until the block ends; yields its
    URL once its stderr (written to ``errlog``) says where it serves."""
    with errlog.open("w", encoding="utf-8") as err:
        proc = await anyio.open_process(list(command), stderr=err, cwd=cwd, env=dict(env))
    log = anyio.Path(errlog)
    try:
        with anyio.fail_after(60):
            while True:
                said = await log.read_text(encoding="utf-8")
                if "serving MCP on http" in said:
                    break
                await anyio.sleep(0.05)
        yield said.split("serving MCP on ")[1].split()[0]
        assert proc.returncode is None, await log.read_text(encoding="utf-8")
    finally:
        proc.send_signal(signal.SIGTERM)
        await proc.wait()
    assert "Traceback" not in await log.read_text(encoding="utf-8")
