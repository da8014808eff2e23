"""The behavioural table both executors must pass, with identical results.

Every row runs on ``InProcessExecutor`` and on ``WorkerPoolExecutor``; a second
test runs each row on both and compares the results field by field (timings
and peak memory aside).
"""

from __future__ import annotations

import functools
import textwrap
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from codemode.errors import ToolCallError
from codemode.sandbox.executors.inprocess import InProcessExecutor
from codemode.sandbox.executors.pool import WorkerPoolExecutor
from codemode.sandbox.limits import Limits

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from codemode.sandbox.executors.base import Executor
    from codemode.sandbox.runtime.result import ScriptResult

TOOL_PATHS = ("echo", "add", "fail", "boom", "slow", "meet", "nonjson", "ns.echo")


class Host:
    """The host side of the table's tools: records every call and the peak concurrency."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.active = 0
        self.peak = 0
        self.cancelled = 0
        self.closed = False
        self.late: list[str] = []
        """Calls delivered after ``closed`` was set (after ``run()`` returned)."""
        self.met = anyio.Event()
        """Set once ``meet(n=...)`` saw ``n`` calls in flight at once."""

    async def __call__(self, name: str, arguments: dict[str, Any]) -> Any:
        if self.closed:  # recorded, not asserted: the broker would turn an assert into a reply
            self.late.append(name)
        self.calls.append((name, arguments))
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            return await self._dispatch(name, arguments)
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        finally:
            self.active -= 1

    async def _dispatch(self, name: str, arguments: dict[str, Any]) -> Any:
        if name in ("echo", "ns.echo"):
            return arguments
        if name == "add":
            return arguments["a"] + arguments["b"]
        if name == "fail":
            raise ToolCallError(name, "nope", "/a")
        if name == "boom":
            raise RuntimeError("secret host detail /etc/passwd")
        if name == "slow":
            await anyio.sleep(arguments.get("delay", 0.02))
            return arguments.get("value")
        if name == "meet":
            # Waits until n calls are in flight together (once), instead of hoping that
            # sleeps overlap: a peak below n shows up as a timeout, never as luck.
            if self.active >= arguments["n"]:
                self.met.set()
            with anyio.fail_after(10):
                await self.met.wait()
            return arguments.get("value")
        if name == "nonjson":
            return object()
        raise ToolCallError(name, "unknown tool")


@dataclass(frozen=True, kw_only=True)
class Case:
    """One row: a script, its limits, and what the result must say."""

    id: str
    source: str
    limits: Limits = field(default_factory=Limits)
    value: Any = None
    output: str | None = None
    error: str | None = None
    limit: str | None = None
    line: int | None = None
    message: str | None = None
    calls: list[tuple[str, bool]] | None = None
    check: Callable[[ScriptResult, Host], None] | None = None

    def script(self) -> str:
        return textwrap.dedent(self.source).strip("\n")


def _output_truncated(result: ScriptResult, host: Host) -> None:
    assert result.output.startswith("x" * 10)
    assert "output truncated at 10 bytes" in result.output
    assert result.usage.output_bytes == 101


def _peak(n: int) -> Callable[[ScriptResult, Host], None]:
    def check(result: ScriptResult, host: Host) -> None:
        assert host.peak == n, host.peak

    return check


def _host_saw(n: int) -> Callable[[ScriptResult, Host], None]:
    def check(result: ScriptResult, host: Host) -> None:
        assert len(host.calls) == n, host.calls

    return check


def _no_host_detail(result: ScriptResult, host: Host) -> None:
    assert result.error is not None
    assert "secret" not in result.error.message + result.error.traceback


def _host_call_cancelled(result: ScriptResult, host: Host) -> None:
    assert host.cancelled == 1
    assert host.active == 0


CASES = [
    Case(id="value-of-last-expression", source="x = 2\nx * 21", value=42),
    Case(id="no-trailing-expression", source="x = 1", value=None),
    Case(id="json-value", source="{'a': [1, 2.5, None, True], 'b': 'é'}",
         value={"a": [1, 2.5, None, True], "b": "é"}),
    Case(id="print-output", source="print('a', 1)\nprint('b')\n'done'",
         output="a 1\nb\n", value="done"),
    Case(id="output-truncated-not-error", source="print('x' * 100)\n7",
         limits=Limits(output=10), value=7, check=_output_truncated),
    Case(id="error-line", source="a = 1\nb = 0\na / b", error="ZeroDivisionError", line=3),
    Case(id="error-line-in-function", source="""
         def f(d):
             return d['missing']
         f({})
         """, error="KeyError", line=2),
    Case(id="syntax-error", source="x = (\n", error="SyntaxError", line=1),
    Case(id="output-kept-on-error", source="print('before')\nraise ValueError('bad')",
         error="ValueError", message="bad", output="before\n", line=2),
    Case(id="tool-value", source="await tools.add(a=1, b=2)", value=3,
         calls=[("add", True)]),
    Case(id="namespaced-tool", source="await tools.ns.echo(x=[1, {'y': None}])",
         value={"x": [1, {"y": None}]}, calls=[("ns.echo", True)]),
    Case(id="sequential-calls", source="""
         total = 0
         for i in range(5):
             total += await tools.add(a=i, b=1)
         total
         """, value=15, calls=[("add", True)] * 5),
    Case(id="tool-error-caught", source="""
         try:
             await tools.fail()
         except ToolCallError as e:
             r = [e.tool, e.message, e.path]
         r
         """, value=["fail", "nope", "/a"], calls=[("fail", False)]),
    Case(id="tool-error-uncaught", source="x = 1\nawait tools.fail()",
         error="ToolCallError", line=2, message="nope", calls=[("fail", False)]),
    Case(id="host-exception-hidden", source="await tools.boom()", error="ToolCallError",
         message="internal error", calls=[("boom", False)], check=_no_host_detail),
    Case(id="host-result-not-json", source="await tools.nonjson()", error="ToolCallError",
         message="internal error", calls=[("nonjson", False)]),
    Case(id="unknown-tool", source="await tools.nope()", error="AttributeError",
         calls=[]),
    Case(id="positional-argument", source="await tools.echo(1)", error="TypeError",
         calls=[]),
    Case(id="missing-await", source="r = tools.echo(x=1)\nr['x']", error="TypeError",
         message="await", calls=[]),
    Case(id="argument-not-json", source="await tools.echo(x={1, 2})",
         error="TypeError", message="JSON", calls=[]),
    Case(id="argument-nan", source="await tools.echo(x=float('nan'))",
         error="TypeError", message="JSON", calls=[]),
    Case(id="argument-circular", source="a = []\na.append(a)\nawait tools.echo(x=a)",
         error="TypeError", line=3, calls=[]),
    Case(id="argument-tuple-becomes-list", source="await tools.echo(x=(1, 2))",
         value={"x": [1, 2]}),
    Case(id="gather", source="""
         import asyncio
         await asyncio.gather(*[tools.add(a=i, b=1) for i in range(5)])
         """, value=[1, 2, 3, 4, 5], calls=[("add", True)] * 5),
    Case(id="gather-runs-concurrently", source="""
         import asyncio
         await asyncio.gather(*[tools.meet(value=i, n=4) for i in range(4)])
         """, value=[0, 1, 2, 3], check=_peak(4)),
    Case(id="replies-seen-in-the-order-answered", source="""
         import asyncio
         order = []
         async def one(name):
             await tools.echo(x=name)
             order.append(name)
         for i in range(20):
             await asyncio.gather(one('a'), one('b'))
         order == ['a', 'b'] * 20
         """, value=True),
    Case(id="gather-with-failure", source="""
         import asyncio
         try:
             await asyncio.gather(tools.add(a=1, b=1), tools.fail())
         except ToolCallError as e:
             r = e.message
         r
         """, value="nope"),
    Case(id="limit-timeout", source="while True:\n    pass",
         limits=Limits(timeout=0.3, operations=10**12),
         error="LimitExceeded", limit="timeout"),
    Case(id="limit-timeout-in-tool-call", source="await tools.slow(delay=10)",
         limits=Limits(timeout=0.3), error="LimitExceeded", limit="timeout",
         check=_host_call_cancelled),
    Case(id="limit-operations", source="for i in range(10 ** 9):\n    pass",
         limits=Limits(operations=1000), error="LimitExceeded", limit="operations"),
    Case(id="limit-operations-not-swallowed", source="""
         try:
             while True:
                 pass
         except Exception:
             pass
         'swallowed'
         """, limits=Limits(operations=1000), error="LimitExceeded", limit="operations"),
    Case(id="limit-recursion", source="def f(n):\n    return f(n + 1)\nf(0)",
         limits=Limits(recursion=50), error="LimitExceeded", limit="recursion"),
    Case(id="limit-memory-size-guard", source="'a' * 10 ** 10",
         error="LimitExceeded", limit="memory"),
    Case(id="limit-result", source="'x' * 2000", limits=Limits(result=100),
         error="LimitExceeded", limit="result"),
    Case(id="limit-calls", source="""
         for i in range(5):
             await tools.echo(i=i)
         """, limits=Limits(calls=3), error="LimitExceeded", limit="calls",
         check=_host_saw(3)),
    Case(id="limit-concurrency-bounds-gather", source="""
         import asyncio
         await asyncio.gather(*[tools.meet(n=2) for i in range(8)])
         len('ok')
         """, limits=Limits(concurrency=2), value=2, check=_peak(2)),
]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def executors() -> AsyncIterator[dict[str, Executor]]:
    async with InProcessExecutor() as inprocess, WorkerPoolExecutor(size=2) as pool:
        await pool.start()
        yield {"inprocess": inprocess, "pool": pool}


async def _run(executor: Executor, case: Case) -> tuple[ScriptResult, Host]:
    host = Host()
    with anyio.fail_after(case.limits.timeout + 20):
        result = await executor.run(case.script(), call_tool=host, tool_paths=TOOL_PATHS,
                                    limits=case.limits)
    host.closed = True
    return result, host


async def _barrier(executor: Executor) -> None:
    """Later runs on ``executor``, one on each of its workers at once (they meet in a tool
    call): whatever an earlier run left behind on any of them was read before these ended."""
    width = getattr(executor, "size", 1)
    arrived = 0
    everyone = anyio.Event()

    async def meet(name: str, arguments: dict[str, Any]) -> Any:
        nonlocal arrived
        arrived += 1
        if arrived == width:
            everyone.set()
        await everyone.wait()
        return arguments["i"]

    values: list[Any] = []

    async def one(i: int) -> None:
        result = await executor.run(f"await tools.echo(i={i})", call_tool=meet,
                                    tool_paths=TOOL_PATHS)
        values.append(result.value)

    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            for i in range(width):
                tg.start_soon(one, i)
    assert sorted(values) == list(range(width))


def _assert_case(case: Case, result: ScriptResult, host: Host) -> None:
    if case.error is None:
        assert result.error is None, result.error
        assert result.value == case.value
    else:
        assert result.error is not None, result.value
        assert result.error.type == case.error, result.error
        assert result.error.limit == case.limit, result.error
        assert result.value is None
        if case.limit is not None:
            assert case.limit in result.error.message
    if case.line is not None:
        assert result.error is not None and result.error.line == case.line, result.error
    if case.message is not None:
        assert result.error is not None and case.message in result.error.message, result.error
    if case.output is not None:
        assert result.output == case.output
    if case.calls is not None:
        assert [(c.name, c.ok) for c in result.calls] == case.calls
        assert [n for n, _ in host.calls] == [n for n, _ in case.calls]
    assert result.usage.calls == len(result.calls)
    assert host.late == []
    if case.check is not None:
        case.check(result, host)


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_behaviour(executors: dict[str, Executor], kind: str, case: Case) -> None:
    result, host = await _run(executors[kind], case)
    _assert_case(case, result, host)


def _comparable(result: ScriptResult) -> ScriptResult:
    """The result without timings and peak memory.

    A timeout is compared by type, limit and value only: how far the script got
    is timing-dependent, and when the worker is killed by the host's backstop
    (a busy machine can delay the runner's own report past the grace period)
    the line it was on is unknown.
    """
    calls = tuple(replace(c, started=0.0, duration=0.0) for c in result.calls)
    usage = replace(result.usage, time=0.0, peak_memory=None)
    error = result.error
    if error is not None and error.limit == "timeout":
        usage = replace(usage, operations=0)
        value = error.message.split(":")[1]
        error = replace(error, message=value, line=None, column=None, traceback="")
        result = replace(result, error=error)
    return replace(result, calls=calls, usage=usage)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_executors_agree(executors: dict[str, Executor], case: Case) -> None:
    inprocess, _ = await _run(executors["inprocess"], case)
    pooled, _ = await _run(executors["pool"], case)
    assert _comparable(pooled) == _comparable(inprocess)


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_cancelling_run_cancels_calls_and_none_after(
    executors: dict[str, Executor], kind: str
) -> None:
    host = Host()
    entered = anyio.Event()

    async def call_tool(name: str, arguments: dict[str, Any]) -> Any:
        if name == "slow":
            entered.set()
        return await host(name, arguments)

    source = "await tools.slow(delay=30)\nfor i in range(100):\n    await tools.echo(i=i)"
    run = functools.partial(executors[kind].run, source, call_tool=call_tool,
                            tool_paths=TOOL_PATHS)
    with anyio.fail_after(20):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await entered.wait()
            tg.cancel_scope.cancel()
    host.closed = True
    await _barrier(executors[kind])
    assert host.late == []
    assert host.calls == [("slow", {"delay": 30})]
    assert host.cancelled == 1


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_abandoned_call_is_cancelled_and_none_after(
    executors: dict[str, Executor], kind: str
) -> None:
    source = """
import asyncio
try:
    await asyncio.wait_for(tools.slow(delay=30), 0.05)
except asyncio.TimeoutError:
    r = 'gave up'
r
"""
    host = Host()
    with anyio.fail_after(20):
        result = await executors[kind].run(source, call_tool=host, tool_paths=TOOL_PATHS)
    host.closed = True
    assert result.value == "gave up"
    await _barrier(executors[kind])
    assert host.late == []
    assert host.calls == [("slow", {"delay": 30})]
    assert host.cancelled == 1
    assert host.active == 0
