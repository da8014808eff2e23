"""``logging_server.py`` (the official SDK's server, tools that log) over streamable HTTP,
as a process for tests (no tests here)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx2

from tests.integrations.ports import free_port

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

__all__ = ["talker_over_http"]

SERVER = str(Path(__file__).resolve().parent / "logging_server.py")


@asynccontextmanager
async def talker_over_http(port: int | None = None) -> AsyncIterator[tuple[str, Any]]:
    """The server on ``port`` (a free one if none); yields its URL, once it answers, and
    its process."""
    url = f"http://127.0.0.1:{port or free_port()}/mcp"
    async with await anyio.open_process(
            [sys.executable, SERVER, "http", url.split(":")[2].split("/")[0]],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        try:
            async with httpx2.AsyncClient() as http:
                with anyio.fail_after(60):
                    while True:
                        with contextlib.suppress(httpx2.TransportError):
                            await http.get(url)
                            break
                        await anyio.sleep(0.1)
            yield url, proc
        finally:
            if proc.returncode is None:
                proc.terminate()
