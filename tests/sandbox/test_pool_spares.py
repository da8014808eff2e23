"""A pool keeps one spare worker per interpreter and runtime (warmed up, with no plan and
so neither confined nor running anything: a fork of the worker template, or booted where
there is none); the next worker any pool needs takes it and confines itself with that
pool's plan (``pool.spare_workers``). tests/sandbox/test_pool_template.py covers the
template itself."""

from __future__ import annotations

import errno
import logging
import os
import signal
import time
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import pytest

from codemode.sandbox import Limits, WorkerPoolExecutor, spare_workers, worker_templates
from codemode.sandbox.executors import launch
from codemode.sandbox.executors import pool as pool_module

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio

RUNTIME = "tests.sandbox.spare_runtime:{}"
LIMITS = Limits(timeout=10)
SECRET = "codemode-spare-secret-51c2"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def no_tool(name: str, arguments: dict[str, Any]) -> Any:
    return None


def _status(pid: int) -> dict[str, str]:
    """The kernel's view of ``pid`` (``/proc/<pid>/status``: seccomp mode, no_new_privs)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return dict(line.rstrip("\n").split(":\t", 1) for line in status if ":\t" in line)


def _wait_dead(pid: int) -> None:
    """Until ``pid`` is a zombie (killed, not yet reaped by its pool) or gone (a forked
    spare's template reaps it at once)."""
    for _ in range(1000):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return
        except (FileNotFoundError, ProcessLookupError):  # reaped, maybe mid-read
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} did not die")


async def _pid(pool: WorkerPoolExecutor) -> int:
    result = await pool.run("import os\nresult = os.getpid()", call_tool=no_tool,
                            limits=LIMITS)
    assert result.error is None, result.error
    assert isinstance(result.value, int)
    return result.value


async def _new_spare(pool: WorkerPoolExecutor, before: set[int]) -> int:
    """The one spare pid that appeared since ``before``: the pool's runs refill it (the
    first refill starts the template, a later one forks the spare from it)."""
    for _ in range(500):
        made = set(spare_workers()) - before
        if made:
            assert len(made) == 1, made
            return made.pop()
        await _pid(pool)
        await anyio.lowlevel.checkpoint()
        await anyio.sleep(0.01)
    raise AssertionError("no spare appeared")


async def test_a_new_pool_takes_the_spare_and_confines_it_with_its_own_plan(
        tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    read = f"result = open({str(secret)!r}).read()"
    before = set(spare_workers())
    async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("adopt"),
                                  confinement="off") as first:
        await first.start()  # then it keeps a spare
        spare = await _new_spare(first, before)
        waiting = _status(spare)
        assert (waiting["Seccomp"], waiting["NoNewPrivs"]) == ("0", "0")  # no plan yet
        unconfined = await first.run(read, call_tool=no_tool, limits=LIMITS)
        assert unconfined.value == SECRET  # the file is there to be read
        async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("adopt"),
                                      confinement="strict") as second:
            assert await _pid(second) == spare
            assert second.confinement is not None and second.confinement.complete
            taken = _status(spare)
            assert (taken["Seccomp"], taken["NoNewPrivs"]) == ("2", "1")
            confined = await second.run(read, call_tool=no_tool, limits=LIMITS)
            assert confined.error is None
            assert confined.value != SECRET
            assert confined.value["raised"] == "FileNotFoundError"  # not in its own root
        assert spare not in spare_workers()


async def test_a_spare_that_died_waiting_is_not_taken() -> None:
    before = set(spare_workers())
    async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("dead")) as first:
        await first.start()
        spare = await _new_spare(first, before)
        os.kill(spare, signal.SIGKILL)
        await anyio.to_thread.run_sync(_wait_dead, spare)
        async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("dead")) as second:
            worker = await _pid(second)
            assert worker != spare
            assert worker != await _pid(first)
        assert spare not in spare_workers()


async def test_every_run_replacement_is_the_spare() -> None:
    before = set(spare_workers())
    async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("every"),
                                  recycle="every_run") as pool:
        await pool.start()
        spare = await _new_spare(pool, before)
        first = await _pid(pool)
        assert first != spare
        assert await _pid(pool) == spare  # the first run's replacement was the spare
        await anyio.lowlevel.checkpoint()  # a spare is started once the run returned
        assert spare not in spare_workers()  # and a new one waits in its place
        assert len(set(spare_workers()) - before - {spare}) == 1


async def test_a_pool_without_spares_neither_keeps_nor_takes_one() -> None:
    before, templates = set(spare_workers()), set(worker_templates())
    async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("refuse"),
                                  spare=False) as plain:
        await plain.start()
        await _pid(plain)
        await anyio.lowlevel.checkpoint()
        assert set(spare_workers()) == before
        assert set(worker_templates()) == templates  # nor a template
        async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("refuse")) as keeper:
            await keeper.start()
            spare = await _new_spare(keeper, before)
            async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("refuse"),
                                          spare=False) as other:
                assert await _pid(other) != spare
            assert spare in spare_workers()


async def test_a_spare_that_cannot_be_started_leaves_the_pool_working(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    real = pool_module._Worker

    def no_spare(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 2 and not kwargs:  # (python, runtime): a spare, with no plan
            raise OSError(errno.EAGAIN, "fork refused")
        return real(*args, **kwargs)

    def no_template(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EAGAIN, "fork refused")

    monkeypatch.setattr(pool_module, "_Worker", no_spare)
    monkeypatch.setattr(launch, "Template", no_template)
    before = set(spare_workers())
    with caplog.at_level(logging.INFO, logger="codemode.sandbox"):
        async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("broken")) as pool:
            await pool.start()
            assert await _pid(pool) > 0
            await anyio.lowlevel.checkpoint()
            assert await _pid(pool) > 0
    assert set(spare_workers()) == before
    assert "no sandbox worker template: [Errno 11] fork refused" in caplog.text
    assert "no spare sandbox worker: [Errno 11] fork refused" in caplog.text


async def test_a_pool_that_took_the_spare_and_closed_at_once_leaves_a_new_one() -> None:
    before = set(spare_workers())
    async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("closing")) as first:
        await first.start()
        spare = await _new_spare(first, before)
    async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("closing")) as second:
        assert await _pid(second) == spare
    await anyio.lowlevel.checkpoint()  # the refill runs once the run has returned
    assert len(set(spare_workers()) - before - {spare}) == 1
