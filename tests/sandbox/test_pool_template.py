"""Worker templates (``executors/template.py``): once a pool has a worker up, a template
boots per interpreter and runtime, and every later spare is a fork of it that confines
itself with the taking pool's plan. A worker forked from it must be exactly as confined
as a booted one, hold nothing of the template's, reach the template no more than it
reaches the host, and report how it died; a template that dies or is unsupported leaves
pools booting workers from scratch."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import pytest

from codemode.errors import SandboxError
from codemode.sandbox import Limits, WorkerPoolExecutor, spare_workers, worker_templates
from codemode.sandbox.executors import launch
from codemode.sandbox.executors import pool as pool_module

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

pytestmark = pytest.mark.anyio

RUNTIME = "tests.sandbox.spare_runtime:{}"
LIMITS = Limits(timeout=10)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def no_tool(name: str, arguments: dict[str, Any]) -> Any:
    return None


async def _run(pool: WorkerPoolExecutor, source: str) -> Any:
    result = await pool.run(source, call_tool=no_tool, limits=LIMITS)
    assert result.error is None, result.error
    return result.value


async def _pid(pool: WorkerPoolExecutor) -> int:
    pid = await _run(pool, "import os\nresult = os.getpid()")
    assert isinstance(pid, int)
    return pid


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return int(stat.read().rsplit(")", 1)[1].split()[1])


def _status(pid: int) -> dict[str, str]:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return dict(line.rstrip("\n").split(":\t", 1) for line in status if ":\t" in line)


async def _forked_spare(pool: WorkerPoolExecutor, spares: set[int],
                        templates: set[int]) -> tuple[int, int]:
    """(spare, template) new since ``spares`` and ``templates``: the pool's runs refill
    the spare, which is forked once the template the first refill started is ready."""
    for _ in range(500):
        made = set(spare_workers()) - spares
        if made:
            assert len(made) == 1, made
            new = set(worker_templates()) - templates
            assert len(new) == 1, new
            return made.pop(), new.pop()
        await _pid(pool)
        await anyio.lowlevel.checkpoint()
        await anyio.sleep(0.01)
    raise AssertionError("no forked spare appeared")


@contextlib.asynccontextmanager
async def _with_spare(name: str) -> AsyncIterator[tuple[WorkerPoolExecutor, int, int]]:
    """(pool, spare, template): an unconfined pool under a runtime name of the test's,
    once the template forked a spare next to it."""
    spares, templates = set(spare_workers()), set(worker_templates())
    async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format(name),
                                  confinement="off") as first:
        await first.start()
        spare, template = await _forked_spare(first, spares, templates)
        yield first, spare, template


@contextlib.asynccontextmanager
async def _taken_spare(name: str, **options: Any
                       ) -> AsyncIterator[tuple[WorkerPoolExecutor, int, int]]:
    """(pool, spare, template): a new pool (``options``) whose worker is the spare of
    :func:`_with_spare`."""
    async with _with_spare(name) as (_first, spare, template), WorkerPoolExecutor(
            size=1, runtime=RUNTIME.format(name), **options) as pool:
        assert await _pid(pool) == spare
        yield pool, spare, template


async def test_workers_spawned_while_the_template_boots_are_forked_once_it_is_ready() -> None:
    # ``spawn`` (a first run's, or a prompt's) before the template is up defers the
    # workers to it; on asyncio a loop timer forks them as soon as it is ready, so the
    # first run finds them booted instead of forking them while it waits.
    templates = set(worker_templates())
    async with WorkerPoolExecutor(size=2, runtime=RUNTIME.format("ahead"),
                                  confinement="off") as pool:
        pool.spawn()
        assert len(pool._idle) == 0  # deferred: the template only just started
        (template,) = set(worker_templates()) - templates
        with anyio.fail_after(30):
            while len(pool._idle) < 2:  # noqa: ASYNC110 (no run, nothing else to wait on)
                await anyio.sleep(0.005)
        forked = {worker.process.pid for worker in pool._idle}
        assert {_parent(pid) for pid in forked} == {template}
        assert await _pid(pool) in forked  # the first run took one of them
        assert {worker.process.pid for worker in pool._idle} <= forked


async def test_spawn_makes_the_spare_once_its_workers_are_ready_without_a_run() -> None:
    # The pool's first fill takes the process's spare (when there is one); the next is
    # forked once the pool's workers are ready, while the host waits for a model, not in
    # the first run's check-in (where the fork held the loop before the caller resumed).
    spares, templates = set(spare_workers()), set(worker_templates())
    async with WorkerPoolExecutor(size=2, runtime=RUNTIME.format("spawned_spare"),
                                  confinement="off") as pool:
        pool.spawn()
        (template,) = set(worker_templates()) - templates
        with anyio.fail_after(30):
            while not set(spare_workers()) - spares:  # noqa: ASYNC110 (no run to wait on)
                await anyio.sleep(0.005)
        (spare,) = set(spare_workers()) - spares
        assert len(pool._idle) == 2 and all(worker.ready for worker in pool._idle)
        assert spare not in {worker.process.pid for worker in pool._idle}
        assert _parent(spare) == template


async def test_a_pool_spawned_with_spares_off_makes_no_spare() -> None:
    spares, templates = set(spare_workers()), set(worker_templates())
    async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("spawned_no_spare"),
                                  confinement="off", spare=False) as pool:
        pool.spawn()
        with anyio.fail_after(30):
            while not pool._idle or not pool._idle[0].poll_ready():  # noqa: ASYNC110
                await anyio.sleep(0.005)
        await anyio.sleep(0.05)  # several of the spare check's timer periods
        assert set(spare_workers()) <= spares
        assert set(worker_templates()) <= templates


async def test_a_forked_worker_is_confined_by_the_taking_pools_plan() -> None:
    # (test_pool_spares.py checks the spare is unconfined while it waits)
    async with _taken_spare("forked", confinement="strict") as (second, spare, template):
        assert _parent(spare) == template != os.getpid()
        assert _parent(template) == os.getpid()
        assert second.confinement is not None and second.confinement.complete
        taken = _status(spare)
        assert (taken["Seccomp"], taken["NoNewPrivs"]) == ("2", "1")
        assert taken["Uid"].split()[0] != _status(template)["Uid"].split()[0]


PARENT_PROBES = textwrap.dedent("""\
    import ctypes, errno, os
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getppid()
    def attempt(action):
        try:
            action()
        except OSError as exc:
            return errno.errorcode.get(exc.errno)
        return "reached"
    def checked(value):
        if value == -1:
            raise OSError(ctypes.get_errno(), "")
        return value
    result = {
        "parent": parent,
        "kill(parent, 0)": attempt(lambda: os.kill(parent, 0)),
        "kill(parent, SIGKILL)": attempt(lambda: os.kill(parent, 9)),
        "ptrace the parent": attempt(lambda: checked(libc.ptrace(16, parent, 0, 0))),
        "read its environ": attempt(lambda: open(f"/proc/{parent}/environ", "rb").read()),
        "read its memory": attempt(lambda: open(f"/proc/{parent}/mem", "rb").read(1)),
        "open its socket": attempt(lambda: open(f"/proc/{parent}/fd/3", "rb")),
        "fork a sibling": attempt(os.fork),
    }
""")


async def test_a_forked_worker_cannot_reach_its_template() -> None:
    async with _taken_spare("parent", confinement="strict") as (second, spare, template):
        probes = await _run(second, PARENT_PROBES)
        assert probes.pop("parent") == template
        # refused, or absent from the worker's own root (its template's /proc entry)
        assert all(outcome in {"EPERM", "EACCES", "ENOENT"}
                   for outcome in probes.values()), probes
        assert await _pid(second) == spare  # the worker is still the same one
    # the template is untouched: alive, not traced, and it still forks
    assert _status(template)["State"].split()[0] in {"S", "R"}
    assert _status(template)["TracerPid"] == "0"
    async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("parent")) as third:
        assert _parent(await _pid(third)) == template


def _descriptors(pid: int) -> list[str]:
    targets = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            targets.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except FileNotFoundError:  # closed meanwhile
            continue
    return targets


async def test_a_forked_worker_holds_nothing_of_the_templates() -> None:
    async with _taken_spare("leak") as (_second, spare, template):
        theirs = set(_descriptors(template))
        mine = _descriptors(spare)
        control = [t for t in theirs if t.startswith("socket:")]
        assert control and not set(control) & set(mine)  # not the template's socket
        assert not [t for t in mine if "pidfd" in t or f"/proc/{template}/" in t], mine
        assert all(f"/proc/{spare}/" in t for t in mine if t.startswith("/proc/")), mine
        # the same kinds of descriptors, as many, as a worker booted from scratch has
        async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("leak"),
                                      spare=False) as plain:
            booted = await _pid(plain)
            assert _parent(booted) == os.getpid()
            booted_kinds = sorted(t.split(":")[0] if ":" in t else t.rsplit("/", 1)[-1]
                                  for t in _descriptors(booted))
        kinds = sorted(t.split(":")[0] if ":" in t else t.rsplit("/", 1)[-1] for t in mine)
        assert kinds == booted_kinds


RULESET = "anon_inode:[landlock-ruleset]"


@pytest.mark.parametrize(("name", "options", "filesystem"), [
    ("ruleset_kept", {}, True), ("ruleset_off", {"confinement": "off"}, False),
    ("ruleset_unavailable", {"unavailable": "filesystem"}, False)])
async def test_a_spare_builds_its_ruleset_while_idle_and_keeps_none_once_taken(
        name: str, options: dict[str, Any], filesystem: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The ruleset is built before the plan; a plan that confines no files closes it (a
    # worker keeps no descriptor it would not have had), one that does enforces it.
    async with _with_spare(name) as (_first, spare, _template):
        with anyio.fail_after(10):  # built once it warmed up, while it waits for a plan
            while RULESET not in _descriptors(spare):  # noqa: ASYNC110 (another process)
                await anyio.sleep(0.005)
        if "unavailable" in options:
            monkeypatch.setenv("CODEMODE_CONFINE_UNAVAILABLE", options.pop("unavailable"))
        async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format(name),
                                      **options) as taking:
            assert await _pid(taking) == spare
            assert RULESET not in _descriptors(spare)
            assert taking.confinement is not None
            assert taking.confinement.filesystem.active is filesystem


async def test_a_forked_worker_reports_how_it_died() -> None:
    async with _taken_spare("status", confinement="off") as (second, spare, _template):
        died = await second.run("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
                                call_tool=no_tool, limits=LIMITS)
        assert died.error is not None
        assert died.error.message == "the worker process died unexpectedly (status -9)"
        assert await _pid(second) != spare  # replaced, and the pool serves on
        exited = await second.run("import os\nos._exit(7)", call_tool=no_tool,
                                  limits=LIMITS)
        assert exited.error is not None
        assert exited.error.message == "the worker process died unexpectedly (status 7)"


async def test_forked_workers_draw_different_random_numbers() -> None:
    """Through the real runner's ``random`` facade, in two forks of one template running
    at the same time (a tool call holds each until both arrived)."""
    source = ("import random\nawait tools.meet()\n"
              "[random.random() for _ in range(4)]")
    arrived: list[anyio.Event] = [anyio.Event(), anyio.Event()]

    async def meet(name: str, arguments: dict[str, Any]) -> Any:
        arrived[0 if not arrived[0].is_set() else 1].set()
        await arrived[1].wait()
        return None

    async with WorkerPoolExecutor(size=2, confinement="off") as pool:
        await pool.start()
        workers = [worker.process.pid for worker in pool._idle]
        assert len(workers) == 2
        assert all(_parent(pid) in worker_templates() for pid in workers)
        draws: list[Any] = []

        async def draw() -> None:
            result = await pool.run(source, call_tool=meet, tool_paths=["meet"],
                                    limits=LIMITS)
            assert result.error is None, result.error
            draws.append(result.value)

        async with anyio.create_task_group() as tg:
            tg.start_soon(draw)
            tg.start_soon(draw)
        assert len(draws) == 2 and draws[0] != draws[1]


async def test_a_dead_template_leaves_pools_booting_and_is_replaced(
        caplog: pytest.LogCaptureFixture) -> None:
    templates = set(worker_templates())
    async with _with_spare("lost") as (first, spare, template):
        os.kill(template, signal.SIGKILL)
        for _ in range(500):
            if _status(template)["State"].startswith("Z"):
                break
            await anyio.sleep(0.01)
        with caplog.at_level(logging.INFO, logger="codemode.sandbox"):
            async with WorkerPoolExecutor(size=2, runtime=RUNTIME.format("lost")) as second:
                await second.start()
                workers = [worker.process.pid for worker in second._idle]
                assert spare in workers  # forked before: it lives on without its template
                booted = [pid for pid in workers if pid != spare]
                assert len(booted) == 1 and _parent(booted[0]) == os.getpid()
                assert await _run(second, "result = 6 * 7") == 42
                assert template not in worker_templates()
        assert f"sandbox worker template {template} exited (status -9); workers boot from " \
            "scratch" in caplog.text
        # a refill starts the next template, and its forks serve again
        replacement = None
        for _ in range(500):
            await _pid(first)
            await anyio.lowlevel.checkpoint()
            fresh = set(worker_templates()) - templates - {template}
            if fresh:
                replacement = fresh.pop()
                break
            await anyio.sleep(0.01)
        assert replacement is not None and _parent(replacement) == os.getpid()


async def test_without_templates_spares_are_booted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "supported", lambda: False)
    spares, templates = set(spare_workers()), set(worker_templates())
    async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("plain")) as first:
        await first.start()
        made = set(spare_workers()) - spares
        assert len(made) == 1
        spare = made.pop()
        assert _parent(spare) == os.getpid()  # booted from its own command line
        assert set(worker_templates()) == templates
        async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("plain"),
                                      confinement="strict") as second:
            assert await _pid(second) == spare
            assert _status(spare)["Seccomp"] == "2"


async def test_a_template_that_cannot_start_falls_back_to_a_booted_spare(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.EAGAIN, "fork refused")

    monkeypatch.setattr(launch, "Template", refused)
    spares, templates = set(spare_workers()), set(worker_templates())
    with caplog.at_level(logging.INFO, logger="codemode.sandbox"):
        async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("plain")) as pool:
            await pool.start()
            assert await _run(pool, "result = 1 + 1") == 2
    assert "no sandbox worker template: [Errno 11] fork refused" in caplog.text
    assert set(worker_templates()) == templates
    assert len(set(spare_workers()) - spares) <= 1


EXITING_HOST = textwrap.dedent("""\
    import anyio, json, sys, time
    from codemode.sandbox import Limits, WorkerPoolExecutor, spare_workers, worker_templates
    async def no_tool(name, arguments):
        return None
    async def main():
        pool = WorkerPoolExecutor(size=1, runtime="tests.sandbox.spare_runtime:exits")
        await pool.start()
        for _ in range(500):
            if spare_workers():
                break
            await pool.run("result = 1", call_tool=no_tool, limits=Limits(timeout=10))
            await anyio.sleep(0.01)
        print(json.dumps({"spares": spare_workers(), "templates": worker_templates(),
                          "workers": [w.process.pid for w in pool._idle]}), flush=True)
        # the pool is never closed: the process exits with its workers up
    anyio.run(main)
""")


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):  # reaped, maybe mid-read
        return True


def test_a_host_that_exits_ends_its_template_and_forked_workers_silently() -> None:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", EXITING_HOST], capture_output=True,
                          text=True, timeout=120, cwd=root, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    pids = json.loads(done.stdout)
    assert len(pids["spares"]) == 1 and len(pids["templates"]) == 1
    everyone = pids["spares"] + pids["templates"] + pids["workers"]
    deadline = time.monotonic() + 10
    while not all(_gone(pid) for pid in everyone) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert all(_gone(pid) for pid in everyone), everyone


async def test_a_process_forked_from_the_host_leaves_its_workers_alone() -> None:
    async with _with_spare("exits") as (pool, spare, template):
        worker = await _pid(pool)
        read_end, write_end = os.pipe()
        child = os.fork()
        if child == 0:  # pragma: no cover - the forked child reports through the pipe
            try:
                seen = {"spares": list(spare_workers()), "templates": list(worker_templates())}
                pool_module._end_at_exit()  # what its exit runs: it must kill nothing
                os.write(write_end, json.dumps(seen).encode())
            finally:
                os._exit(0)
        os.close(write_end)
        _, status = await anyio.to_thread.run_sync(os.waitpid, child, 0)
        with os.fdopen(read_end, "rb") as report:
            seen = json.loads(report.read())
        assert os.waitstatus_to_exitcode(status) == 0
        assert seen == {"spares": [], "templates": []}  # the child knows none of them
        for pid in (spare, template, worker):
            assert _status(pid)["State"].split()[0] in {"S", "R"}, pid
        assert await _pid(pool) == worker  # the host's pool serves on, same worker
        async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("exits")) as other:
            assert await _pid(other) == spare  # and the spare and template are still its


async def test_a_late_status_from_a_stopped_template_still_names_the_death() -> None:
    async with _taken_spare("late", confinement="off") as (second, _spare, template):
        await anyio.sleep(0.05)  # the refill after that run forks the next spare
        os.kill(template, signal.SIGSTOP)  # it cannot reap or report meanwhile
        try:
            async with anyio.create_task_group() as tg:
                async def resume() -> None:
                    await anyio.sleep(0.3)  # past the 0.1 s any worker's status gets
                    os.kill(template, signal.SIGCONT)

                tg.start_soon(resume)
                died = await second.run("import os, signal\n"
                                        "os.kill(os.getpid(), signal.SIGKILL)",
                                        call_tool=no_tool, limits=LIMITS)
        finally:
            os.kill(template, signal.SIGCONT)
        assert died.error is not None
        assert died.error.message == "the worker process died unexpectedly (status -9)"


async def test_a_template_that_does_not_answer_a_fork_is_dropped(
        caplog: pytest.LogCaptureFixture) -> None:
    async with _with_spare("stopped") as (_first, spare, template):
        os.kill(template, signal.SIGSTOP)
        try:
            with caplog.at_level(logging.INFO, logger="codemode.sandbox"):
                async with WorkerPoolExecutor(size=2, runtime=RUNTIME.format("stopped"),
                                              confinement="off") as second:
                    await second.start()
                    workers = [worker.process.pid for worker in second._idle]
                    assert spare in workers
                    booted = [pid for pid in workers if pid != spare]
                    assert len(booted) == 1 and _parent(booted[0]) == os.getpid()
                    assert await _run(second, "result = 6 * 7") == 42
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(template, signal.SIGCONT)
    assert f"sandbox worker template {template} did not answer a fork; workers boot " \
        "from scratch" in caplog.text
    assert template not in worker_templates()


async def test_a_forked_worker_reads_exactly_what_a_booted_one_reads() -> None:
    """The template walks its modules for Landlock once (``confine.remember_read_paths``);
    each fork's allowlist is still the one a booted worker of that runtime builds."""
    async with _taken_spare("paths", confinement="strict") as (forked, _spare, _template):
        assert forked.confinement is not None
        from_template = forked.confinement.filesystem.detail
    async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("paths"),
                                  confinement="strict", spare=False) as booted:
        await booted.start()
        assert booted.confinement is not None
        assert booted.confinement.filesystem.detail == from_template
    assert "read-only beneath" in from_template


def test_remembered_read_paths_are_walked_again_once_modules_changed() -> None:
    from codemode.sandbox.executors import confine

    confine.remember_read_paths()
    remembered = confine._read_paths()
    assert remembered == confine._read_paths()
    import tabnanny  # noqa: F401  (a module nothing here imported before)

    walked = confine._read_paths()
    assert any(path.endswith("tabnanny.py") for path in walked)
    assert not any(path.endswith("tabnanny.py") for path in remembered)


async def test_a_spare_taken_when_no_uid_can_be_leased_is_not_lost(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async with _with_spare("leased") as (_first, spare, _template):

        def no_uid() -> Any:
            raise SandboxError("no spare uid for a sandbox worker")

        monkeypatch.setattr(pool_module._LEASES, "claim", no_uid)
        async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("leased"),
                                      confinement="strict") as second:
            with pytest.raises(SandboxError, match="no spare uid"):
                await second.start()
        assert spare not in spare_workers()
        for _ in range(500):  # the spare it took was killed and reaped, not left waiting
            if _gone(spare):
                break
            await anyio.sleep(0.01)
        assert _gone(spare)


async def test_a_dead_spare_whose_status_is_not_reported_yet_is_not_taken() -> None:
    """The spare died and its template (stopped here) has not reaped it: its pidfd says
    it ended, so no pool hands it a plan or a run."""
    async with _with_spare("dying") as (_first, spare, template):
        os.kill(template, signal.SIGSTOP)  # it cannot reap or report the spare's death
        try:
            os.kill(spare, signal.SIGKILL)
            for _ in range(500):
                if _status(spare)["State"].startswith("Z"):
                    break
                await anyio.sleep(0.01)
            assert spare not in spare_workers()
            async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("dying"),
                                          confinement="off") as second:
                worker = await _pid(second)
                assert worker != spare
                assert await _run(second, "result = 6 * 7") == 42
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(template, signal.SIGCONT)


async def test_a_spare_whose_pipe_takes_no_plan_is_replaced() -> None:
    """The spare is stopped with its pipe full: the plan cannot be written, so the taking
    pool kills it and starts another worker in its place (it kept the dead one, and its
    ``start()`` failed: 'a sandbox worker failed to start')."""
    async with _with_spare("unplanned") as (_first, spare, _template):
        (taken,) = [w for w in pool_module._SPARES.values() if w.process.pid == spare]
        os.kill(spare, signal.SIGSTOP)
        try:
            with contextlib.suppress(BlockingIOError):
                while True:
                    os.write(taken._write_fd, bytes(65536))
            async with WorkerPoolExecutor(size=1, runtime=RUNTIME.format("unplanned"),
                                          confinement="off") as second:
                await second.start()
                assert await _pid(second) != spare
                assert not taken.alive
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.kill(spare, signal.SIGCONT)
