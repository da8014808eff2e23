"""Worker lifecycle edges: a run cancelled while its worker boots."""

from __future__ import annotations

import functools
import signal
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
