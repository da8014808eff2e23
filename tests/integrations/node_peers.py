"""The MCP peers written with the official TypeScript SDK, and what a test does without them.

They are pinned in ``.ci/node/package.json`` (``package-lock.json`` beside it) and installed
into ``.ci/node/node_modules`` by ``npm ci --prefix .ci/node`` (``.ci/run`` does it once).
Without node or the install the tests that need them skip, unless
``CODEMODE_REQUIRE_NODE=1`` (set by ``.ci/run``): then they fail, so CI never passes by
testing less. No test here reaches the network: the servers run from that folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.integrations.ports import free_port

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["CHANGING", "CLIENT", "NODE_MODULES", "REQUIRE_ENV", "everything_http",
           "node_or_skip", "peer"]

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / ".ci" / "node" / "node_modules"
"""Where ``npm ci --prefix .ci/node`` installs the pinned peers."""
CLIENT = str(Path(__file__).resolve().parent / "node" / "ts_client.cjs")
"""The TypeScript SDK client script run against ``codemode serve``."""
CHANGING = str(Path(__file__).resolve().parent / "node" / "changing_server.cjs")
"""A TypeScript SDK server whose tool set changes (argument: ``NODE_MODULES``)."""
REQUIRE_ENV = "CODEMODE_REQUIRE_NODE"
_BINS = ("mcp-server-everything", "mcp-server-memory", "mcp-server-filesystem")


def node_or_skip() -> str:
    """The ``node`` program; skips the test when node or the pinned peers are missing,
    fails it when they are required (CI)."""
    node = shutil.which("node")
    missing = [b for b in _BINS if not (NODE_MODULES / ".bin" / b).exists()]
    if node is None or missing or not (NODE_MODULES / "@modelcontextprotocol" / "sdk").is_dir():
        why = ("node is not on PATH" if node is None else
               f"the pinned MCP peers are not installed in {NODE_MODULES.parent}"
               " (run: npm ci --prefix .ci/node)")
        if os.environ.get(REQUIRE_ENV, "") not in ("", "0"):
            pytest.fail(f"{why}; {REQUIRE_ENV} is set", pytrace=False)
        pytest.skip(why)
    return node


def peer(name: str) -> str:
    """The installed launcher of one peer (``mcp-server-memory``)."""
    return str(NODE_MODULES / ".bin" / name)


@contextmanager
def everything_http(port: int | None = None) -> Iterator[str]:
    """``server-everything`` in its streamable HTTP mode, on ``port`` (a free one if none);
    yields its URL once it listens."""
    node = node_or_skip()
    port = port or free_port()
    script = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    process = subprocess.Popen(
        [node, str(script), "streamableHttp"], env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        said = process.stderr.readline()
        assert f"listening on port {port}" in said, said
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.kill()
        process.wait()
        if process.stderr is not None:
            process.stderr.close()
