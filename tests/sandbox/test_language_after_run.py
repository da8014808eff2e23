"""After a run returns, no script code runs: the host's stderr, logs and loop stay quiet.

An async generator left by ``break`` used to be finalized later by asyncio: its
``finally`` ran after the script's globals were cleared, outside the meter, and its
error was logged to the host's stderr ("Task exception was never retrieved") with
text the script chose; a C call kept in a local ran there too, freezing an in-process
host's loop. Each script below leaves such code behind; the host watches its stderr
(fd 2), its logs, the unraisable hook and a 10 ms heartbeat task on its own loop while
the run and a later run on the same executor go by.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import sys
import time
import types
from typing import TYPE_CHECKING, Any, Final

import anyio
import pytest

import codemode.sandbox as sandbox
from codemode.sandbox import Limits
from codemode.sandbox.language.meter import SCRIPT_FILENAME

if TYPE_CHECKING:
    from collections.abc import Iterator

MARK: Final = "INJECTED-HOST-LINE"

LEFTOVERS: Final = {
    "asyncgen-finally-raises": (f"""
async def g():
    try:
        yield 1
        yield 2
    finally:
        raise ValueError("Task exception was never retrieved {MARK}")
async for x in g():
    break
'done'
""", "done"),
    "asyncgen-finally-prints": (f"""
async def g():
    try:
        yield 1
    finally:
        print("{MARK} from finally")
async for x in g():
    break
'done'
""", "done"),
    "async-genexp": (f"""
async def g():
    try:
        yield 1
        yield 2
    finally:
        raise ValueError("{MARK}")
xs = (x async for x in g())
async for y in xs:
    break
'done'
""", "done"),
    "asyncgen-in-gathered-tasks": (f"""
async def g():
    try:
        yield 1
        yield 2
    finally:
        raise ValueError("{MARK}")
async def first():
    async for x in g():
        return x
await asyncio.gather(first(), first())
""", [1, 1]),
    "asyncgen-kept-in-a-global": (f"""
async def g():
    try:
        yield 1
        yield 2
    finally:
        raise ValueError("{MARK}")
kept = g()
async for x in kept:
    break
'done'
""", "done"),
    "sync-generator-kept-suspended": (f"""
def g():
    try:
        yield 1
        yield 2
    finally:
        raise ValueError("{MARK}")
kept = g()
next(kept)
'done'
""", "done"),
    "c-call-kept-in-a-local-for-a-finally": ("""
row = [0] * 10**6
big = tuple([row] * 10**4)
count = tuple.count
async def g():
    try:
        yield 1
    finally:
        count(big, [1] * 10**6)
async for x in g():
    break
'done'
""", "LimitExceeded"),
}
"""Name -> (script, its value or the error type it must end with)."""

LIMITS: Final = Limits(timeout=5.0, operations=200_000, memory=256 * 1024 * 1024)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["InProcessExecutor", "WorkerPoolExecutor"])
async def executor(request: pytest.FixtureRequest) -> Any:
    async with getattr(sandbox, request.param)() as ex:
        yield ex


@contextlib.contextmanager
def _unraisable() -> Iterator[list[str]]:
    seen: list[str] = []
    previous = sys.unraisablehook
    sys.unraisablehook = lambda info: seen.append(f"{info.exc_type.__name__}: {info.exc_value}")
    try:
        yield seen
    finally:
        sys.unraisablehook = previous


async def _host(name: str, args: dict[str, Any]) -> Any:
    return args


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(LEFTOVERS))
async def test_no_script_code_after_the_run(
        executor: Any, name: str, capfd: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture, record_property: Any) -> None:
    source, expected = LEFTOVERS[name]
    capfd.readouterr()
    caplog.set_level(logging.DEBUG)
    gaps: list[float] = []

    async def heartbeat() -> None:
        last = time.monotonic()
        while True:
            await anyio.sleep(0.01)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    with _unraisable() as unraisable:
        async with anyio.create_task_group() as tg:
            tg.start_soon(heartbeat)
            result = await executor.run(source, call_tool=_host, limits=LIMITS)
            # what the run left behind would surface now: loop turns, a GC pass, a later run
            for _ in range(20):
                await anyio.sleep(0.01)
            during = len(gaps)  # the collection below pauses the loop by itself
            gc.collect()
            after = await executor.run("1 + 1", call_tool=_host, limits=LIMITS)
            await anyio.sleep(0.05)
            tg.cancel_scope.cancel()
    record_property("largest_heartbeat_gap_s", round(max(gaps[:during], default=0.0), 4))
    captured = capfd.readouterr()
    logged = "\n".join(record.getMessage() + str(record.exc_info or "")
                       for record in caplog.records)
    assert unraisable == [], unraisable
    assert captured.err == "" and captured.out == "", (captured.out[-500:], captured.err[-500:])
    assert MARK not in logged and "never retrieved" not in logged, logged[-1000:]
    assert after.error is None and after.value == 2, after.error
    if expected == "LimitExceeded":
        assert result.error is not None and result.error.limit == "operations", result.error
    else:
        assert result.error is None, result.error
        assert result.value == expected
    if name == "asyncgen-finally-prints":  # the finally ran inside the run, into its output
        assert f"{MARK} from finally" in result.output


SURVIVES_ITS_CLOSE: Final = {
    "async-generator": """
async def g():
    try:
        yield 1
    finally:
        while True:
            try:
                await tools.echo(fin=1)
                yield 2
            except BaseException:
                pass
kept = [g()]
kept.append(kept)
async for x in kept[0]:
    break
'done'
""",
    "generator": """
def g():
    try:
        yield 1
    finally:
        try:
            yield 2
        except BaseException:
            pass
        yield 3
kept = [g()]
kept.append(kept)
next(kept[0])
'done'
""",
}
"""Generators whose ``finally`` yields again, so the run's close leaves them suspended;
kept in a reference cycle, so only a later collection drops them."""


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(SURVIVES_ITS_CLOSE))
async def test_a_generator_that_survives_its_close_never_resumes(name: str) -> None:
    """Dropped after the run, CPython closed such a generator once more: its ``except`` and
    ``finally`` ran in the host's thread at the host's next collection (in-process). The
    host traces its own thread while it collects: no script frame may run there."""
    ran: list[str] = []

    def trace(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename == SCRIPT_FILENAME:
            ran.append(f"{frame.f_code.co_name} {event} line {frame.f_lineno}")
        return trace

    async with sandbox.InProcessExecutor() as ex:
        gc.collect()
        gc.disable()  # the cycle stays until the host's own collection below
        try:
            result = await ex.run(SURVIVES_ITS_CLOSE[name], call_tool=_host, limits=LIMITS,
                                  tool_paths=("echo",))
        finally:
            gc.enable()
        sys.settrace(trace)
        try:
            gc.collect()
        finally:
            sys.settrace(None)
    assert result.error is None and result.value == "done", result.error
    assert ran == []


def _script_generators() -> int:
    """Script generators, coroutines and async generators alive in this process."""
    codes = {types.GeneratorType: "gi_code", types.AsyncGeneratorType: "ag_code",
             types.CoroutineType: "cr_code"}
    return sum(1 for obj in gc.get_objects() if type(obj) in codes
               and getattr(obj, codes[type(obj)]).co_filename == SCRIPT_FILENAME)


LEFT_BEHIND: Final = {
    **SURVIVES_ITS_CLOSE,
    "async-generator-never-iterated": """
async def g(text):
    yield text
kept = [g("x" * 1000) for _ in range(3)]
'done'
""",
    # r50: the close after the run's end reaches an exit that host code stands in for (an
    # exit stack, a @contextmanager), which raises a TypeError in the stop's place; a
    # suppress(TypeError) around it swallowed that and the generator yielded again
    "generator-suppresses-what-an-exit-raised": """
import contextlib
def g():
    with contextlib.suppress(TypeError):
        with contextlib.ExitStack():
            yield 1
    yield 2
kept = [g()]
kept.append(kept)
next(kept[0])
'done'
""",
    "async-generator-suppresses-what-an-exit-raised": """
import contextlib
async def g():
    try:
        yield 1
    finally:
        with contextlib.suppress(TypeError):
            async with contextlib.AsyncExitStack():
                yield 2
        yield 3
kept = [g()]
kept.append(kept)
await anext(kept[0])
'done'
""",
}
"""Generators a run leaves for its end to close: those above, async generators never
iterated (their ``aclose()`` after the run's end first iterated them, which the run
refused as script code iterating after the run), and generators whose ``suppress``
swallowed what an exit raised in the close's place (r50)."""


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(LEFT_BEHIND))
async def test_no_generator_outlives_its_run(name: str) -> None:
    """A handler in a generator that caught the run's close could yield again: the
    generator stayed suspended, held for the life of the process with all it referenced,
    so an in-process host grew by what each run left (40 generators holding a megabyte
    string each: +40 MiB per run, run after run, each run within its memory limit). Every
    ``except``/``finally`` of a generator now begins with a tick, which raises once the
    run has ended: the close finishes the generator. An async generator never iterated was
    held too, with its arguments (40 of a megabyte each: +40 MiB per run)."""
    async with sandbox.InProcessExecutor() as ex:
        gc.collect()
        before = _script_generators()
        for _ in range(2):
            result = await ex.run(LEFT_BEHIND[name], call_tool=_host, limits=LIMITS,
                                  tool_paths=("echo",))
            assert result.error is None and result.value == "done", result.error
        gc.collect()
        assert _script_generators() == before
