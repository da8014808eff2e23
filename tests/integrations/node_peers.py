"""The MCP peers written with the official TypeScript SDK, and what a test does without them.

They are pinned in ``.ci/node/package.json`` (``package-lock.json`` beside it) and installed
into ``.ci/node/node_modules`` by ``npm ci --prefix .ci/node`` (``.ci/run`` does it once).
The first test that needs them runs that install itself when node and npm are there and
the folder is not (so the README's one test command sets everything up). Without node,
npm or the install the tests that need them skip, unless ``CODEMODE_REQUIRE_NODE=1`` (set
by ``.ci/run``): then they fail, so CI never passes by testing less. No test here reaches
the network once installed: the servers run from that folder.
"""

from __future__ import annotations

import fcntl
import functools
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


def _installed() -> bool:
    return all((NODE_MODULES / ".bin" / b).exists() for b in _BINS) and (
        NODE_MODULES / "@modelcontextprotocol" / "sdk").is_dir()


@functools.cache
def _install() -> str | None:
    """``npm ci --prefix .ci/node`` once per process, unless installed (a lock keeps the
    suite's other worker processes from installing at the same time); why it failed."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not on PATH"
    with (NODE_MODULES.parent / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed():
            return None
        done = subprocess.run(
            [npm, "ci", "--prefix", str(NODE_MODULES.parent), "--no-audit", "--no-fund",
             "--loglevel=error"], capture_output=True, text=True, timeout=600, check=False)
    if done.returncode != 0 or not _installed():
        return f"npm ci --prefix .ci/node failed: {done.stderr.strip()[-400:]}"
    return None


def node_or_skip() -> str:
    """The ``node`` program; installs the pinned peers if they are missing, skips the test
    when node or the install is not there, fails it when they are required (CI)."""
    node = shutil.which("node")
    failed = None if node is None or _installed() else _install()
    if node is None or failed is not None:
        why = "node is not on PATH" if node is None else (
            f"the pinned MCP peers are not installed in {NODE_MODULES.parent}: {failed}")
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
