"""A client process for ``codemode serve`` over HTTP that starts a long run and waits:
``python slow_client.py URL MODE`` (``MODE``: ``legacy`` or ``auto``). A test kills it
(SIGKILL: no ``notifications/cancelled``, no goodbye) to see what serve does with the run
of a client that vanished. The official ``mcp`` client."""

from __future__ import annotations

import sys

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, mode: str) -> None:
    async with Client(streamable_http_client(url), mode=mode) as client:  # type: ignore[arg-type]
        await client.call_tool("run_code", {"code": "await tools.slow(seconds=600)"})


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
