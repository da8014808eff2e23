"""Worker lifecycle edges: a run cancelled while its worker boots, a worker start out of
file descriptors."""

from __future__ import annotations

import functools
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from codemode.sandbox.executors import pool as pool_module
from codemode.sandbox.executors.pool import WorkerPoolExecutor

SLOW_BOOT = "tests.sandbox.slow_boot_runtime:run"


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every worker the pool starts, in order (the pool's own class, recording)."""
    workers: list[Any] = []
    real = pool_module._Worker

    def start(*args: Any, **kwargs: Any) -> Any:
        worker = real(*args, **kwargs)
        workers.append(worker)
        return worker

    monkeypatch.setattr(pool_module, "_Worker", start)
    return workers


async def test_a_run_cancelled_while_its_worker_boots_kills_it_and_refills(
    started: list[Any],
) -> None:
    calls: list[str] = []

    async def host(name: str, arguments: dict[str, Any]) -> Any:
        calls.append(name)

    # spare=False: the refill is a fresh boot, not this process's spare
    async with WorkerPoolExecutor(size=1, runtime=SLOW_BOOT, spare=False) as pool:
        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(functools.partial(pool.run, "await tools.t()", call_tool=host,
                                                tool_paths=["t"]))
                await anyio.wait_all_tasks_blocked()  # the run waits for `ready`
                assert len(started) == 1 and not started[0].ready
                tg.cancel_scope.cancel()
            booting = started[0]
            wait = functools.partial(booting.process.wait, timeout=10)
            assert await anyio.to_thread.run_sync(wait) == -signal.SIGKILL
        assert len(started) == 2, "the pool refilled to its size"
        assert started[1].process.pid != booting.process.pid
        assert started[1].process.poll() is None
    assert calls == []
    assert started[1].process.wait(timeout=10) is not None, "aclose ended the replacement"


async def test_a_worker_gone_before_its_run_is_replaced_and_the_run_still_runs(
    started: list[Any],
) -> None:
    """A worker can exit between runs after its last ``done`` (its pipe is closed when the
    next run is written): nothing of the new run reached it, so the run goes to a fresh
    worker instead of failing as a crash."""
    calls: list[str] = []

    async def host(name: str, arguments: dict[str, Any]) -> Any:
        calls.append(name)
        return arguments["x"]

    script = "await tools.echo(x=2) * 21"
    async with WorkerPoolExecutor(size=1, spare=False) as pool:  # started[0] is its worker
        first = await pool.run(script, call_tool=host, tool_paths=("echo",))
        assert first.value == 42, first.error
        gone = started[0]

        async def closed_pipe(frame: bytes) -> None:
            raise pool_module._WorkerGone

        gone.send = closed_pipe
        second = await pool.run(script, call_tool=host, tool_paths=("echo",))
    assert second.error is None and second.value == 42, second.error
    assert calls == ["echo", "echo"]
    assert len(started) >= 2 and not gone.alive


FD_PRESSURE = """
import asyncio, json, os, resource
from codemode.errors import SandboxError
from codemode.sandbox import WorkerPoolExecutor

async def host(name, args):
    return None

def open_fds():
    return len(os.listdir("/proc/self/fd")) - 1  # the listing's own

async def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    report = {"grew": [], "errors": set()}
    async with WorkerPoolExecutor(size=1) as pool:
        base = open_fds()
        for extra in range(1, 13):
            counts = []
            for _ in range(3):
                resource.setrlimit(resource.RLIMIT_NOFILE, (base + extra, hard))
                try:
                    await pool.run("1", call_tool=host)
                except SandboxError as exc:
                    report["errors"].add(type(exc.__cause__).__name__)
                finally:
                    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
                counts.append(open_fds())
            if counts[-1] > counts[0]:
                report["grew"].append([extra, counts])
        report["after"] = (await pool.run("1", call_tool=host)).value
    report["errors"] = sorted(report["errors"])
    print(json.dumps(report))

asyncio.run(main())
"""


def test_a_worker_start_out_of_descriptors_leaks_none() -> None:
    # Each failed start kept its uid lease's descriptor and, forking from the template, the
    # pipes made before the one that failed: a host under fd pressure ran out for good.
    # Nor was the failure a SandboxError: the OSError came out of run() as it was.
    root = Path(__file__).resolve().parents[2]
    child = subprocess.run([sys.executable, "-c", FD_PRESSURE], cwd=root, capture_output=True,
                           text=True, timeout=120, check=False)
    assert child.returncode == 0, child.stderr[-2000:]
    report = json.loads(child.stdout)
    assert report["grew"] == []
    assert report["errors"] == ["OSError"]
    assert report["after"] == 1
