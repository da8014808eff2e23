"""Logging under the ``codemode`` logger: quiet by default, bounded, and saying what happened.

Worker lifecycle (started, ready, retired, exited), limit trips, refused frames and
upstream failures are logged; nothing a script or a worker sends makes a record long.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import codemode as cm
import codemode.mcp
from codemode.sandbox import Executor, InProcessExecutor, WorkerPoolExecutor

ROOT = Path(__file__).resolve().parents[2]
STREAM_RUNTIME = "tests.integrations.stream_runtime:run"
LONGEST = 600
"""No record a run causes is longer than this (messages clip what they quote at 300)."""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


async def no_tools(path: str, arguments: dict[str, Any]) -> Any:
    raise AssertionError("no tool is called")


def messages(caplog: pytest.LogCaptureFixture, name: str = "codemode") -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == name or r.name.startswith(name + ".")]


def test_nothing_is_printed_until_the_application_configures_logging() -> None:
    """In a fresh process: a protocol violation (a WARNING) prints nothing by default
    (no ``logging.lastResort``); after ``basicConfig`` the same event is shown."""
    program = textwrap.dedent(f"""
        import logging, sys
        import anyio
        import codemode as cm

        async def no_tools(path, arguments):
            raise AssertionError

        async def violate():
            async with cm.WorkerPoolExecutor(size=1, runtime={STREAM_RUNTIME!r}) as pool:
                result = await pool.run("foreign", call_tool=no_tools,
                                        on_output=lambda text: None)
            assert result.error is not None and result.error.type == "SandboxError"

        anyio.run(violate)
        print("--configured--", file=sys.stderr, flush=True)
        logging.basicConfig(stream=sys.stderr, format="%(name)s %(levelname)s %(message)s")
        anyio.run(violate)
    """)
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    before, _, after = done.stderr.partition("--configured--")
    assert before == ""
    assert "codemode.sandbox WARNING sandbox worker" in after
    assert "broke the protocol" in after


async def test_worker_lifecycle_is_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="codemode"):
        async with WorkerPoolExecutor(size=1, recycle="every_run") as pool:
            result = await pool.run("1 + 1", call_tool=no_tools)
    assert result.value == 2
    logged = messages(caplog, "codemode.sandbox")
    for what in ("started", "is ready", "retired", "exited"):
        assert any(m.startswith("sandbox worker ") and what in m for m in logged), (what, logged)


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_a_limit_trip_is_logged(kind: str, caplog: pytest.LogCaptureFixture) -> None:
    executor: Executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(
        size=1)
    with caplog.at_level(logging.INFO, logger="codemode"):
        async with executor:
            result = await executor.run("while True:\n    pass", call_tool=no_tools,
                                        limits=cm.Limits(operations=1000))
    assert result.error is not None
    assert result.error.limit == "operations"
    assert any(m.startswith("a run hit its operations limit") for m in messages(caplog))


async def test_a_refused_frame_is_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="codemode"):
        async with WorkerPoolExecutor(size=1, runtime=STREAM_RUNTIME) as pool:
            result = await pool.run("flood", call_tool=no_tools, limits=cm.Limits(output=100),
                                    on_output=lambda text: None)
    assert result.error is not None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING
                and r.name == "codemode.sandbox"]
    assert len(warnings) == 1
    assert "broke the protocol" in warnings[0].getMessage()
    assert "more output than the run may print" in warnings[0].getMessage()


async def test_an_upstream_failure_is_logged_clipped(caplog: pytest.LogCaptureFixture) -> None:
    """An upstream that prints a huge banner and exits: its failure is a WARNING
    naming it, with the reason clipped."""
    noisy = {"command": sys.executable, "args": ["-c", "print('x' * 100_000)"]}
    with caplog.at_level(logging.INFO, logger="codemode"):
        async with codemode.mcp.connect({"mcpServers": {"noisy": noisy}}, startup_timeout=10,
                                        require_all=False, executor=InProcessExecutor()) as gw:
            (status,) = gw.status()
            assert status.state == "down"
    logged = messages(caplog, "codemode.gateway")
    assert logged
    assert logged[0].startswith("upstream noisy is down: ")
    assert all(len(m) <= LONGEST for m in logged)


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_what_scripts_write_never_makes_a_long_record(
        kind: str, caplog: pytest.LogCaptureFixture) -> None:
    executor: Executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(
        size=1)
    scripts = [
        "raise ValueError('x' * 1_000_000)",
        "print('y' * 1_000_000)\n1",
        "s = 'z' * 100_000\nwhile True:\n    t = s",
    ]
    with caplog.at_level(logging.DEBUG, logger="codemode"):
        async with executor:
            for script in scripts:
                await executor.run(script, call_tool=no_tools,
                                   limits=cm.Limits(operations=10_000, output=1_000_000))
    assert caplog.records  # the limit trips were logged
    assert all(len(r.getMessage()) <= LONGEST for r in caplog.records if
               r.name.startswith("codemode") and r.name != "codemode.worker")
