"""The script-side runner: results, errors located in the script, limits, outcome JSON."""

from __future__ import annotations

import textwrap
import threading
from typing import Any

import anyio
import pytest

from codemode.errors import LimitExceeded, ToolCallError
from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.language.render import render_cost
from codemode.sandbox.language.sizes import plain_size, render_size
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.result import RunOutcome, ScriptError
from codemode.sandbox.runtime.runner import RunControl, run_script
from codemode.sandbox.runtime.toolproxy import key_problem

SMALL = Limits(timeout=2.0, operations=20_000, memory=8 * 1024 * 1024, recursion=30,
               output=200, result=1000, calls=5, concurrency=2)


class Host:
    """A host callback that records calls; ``fail``/``boom`` raise."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, name: str, args: dict[str, Any]) -> Any:
        self.calls.append((name, args))
        if name == "fail":
            raise ToolCallError("fail", "bad input", "$.q")
        if name == "boom":
            raise RuntimeError("host secret /etc/passwd")
        return {"tool": name, "args": args}


async def run(source: str, *, limits: Limits = SMALL, host: Host | None = None,
              paths: tuple[str, ...] = ("echo", "fail", "boom", "ns.get")) -> RunOutcome:
    broker = CallBroker(host or Host(), limits)
    return await run_script(textwrap.dedent(source), call=broker.answer_json, tool_paths=paths,
                            limits=limits)


@pytest.mark.parametrize(("source", "value"), [
    ("1 + 1", 2),
    ("x = [i * i for i in range(4)]\nx", [0, 1, 4, 9]),
    ("d = {'a': (1, 2)}\nd", {"a": [1, 2]}),
    ("{1, 3, 2}", [1, 2, 3]),
    ("x = 5", None),
    ("if True:\n    7", None),
    ("async def f(x):\n    return x + 1\nawait f(1)", 2),
    ("r = await tools.echo(q='a')\nr['args']", {"q": "a"}),
    ("r = await tools.ns.get(k=1)\nr['tool']", "ns.get"),
    ("def f():\n    '''doc'''\n    return 3\nf()", 3),
    ("class P:\n    def __init__(self, x):\n        self.x = x\nP(4).x", 4),
    ("counts = {}\ncounts['a'] = 1\ncounts['a'] += 2\ncounts", {"a": 3}),
    ("s = 'ab'\ns += 'c'\ns", "abc"),
    ("f'{3:>4}|{\"x\"!r}'", "   3|'x'"),
    ("'%s-%03d' % ('a', 7)", "a-007"),
    ("lst = [1]\nlst *= 3\nlst", [1, 1, 1]),
    ("a, *b = [1, 2, 3]\n[a, b]", [1, [2, 3]]),
    ("g = (i for i in range(3))\nsum(g)", 3),
    ("type('x') is str and isinstance('x', str)", True),
    ("type(3) is int and isinstance(True, int) and int('ff', 16) == 255", True),
    ("str(b'abc', 'utf-8') + 'x'.encode('ascii').decode()", "abcx"),
    ("round(2.567, 2)", 2.57),
    ("'abcdef'[1:3] + 'xyz'[::-1]", "bczyx"),
    ("isinstance({1}, set) and type({1}) is set and set('aab') == {'a', 'b'}", True),
    ("dict.fromkeys('ab', 0)", {"a": 0, "b": 0}),
    ("[*range(3), *'ab']", [0, 1, 2, "a", "b"]),
    ("print('\\ud800')\n'\\udfff'", "\ufffd"),
])
async def test_last_expression_is_the_value(source: str, value: Any) -> None:
    outcome = await run(source)
    assert outcome.error is None, outcome.error
    assert outcome.value == value


async def test_print_goes_to_one_bounded_buffer_shared_by_all_scopes() -> None:
    outcome = await run("""
        def f():
            print('in f')
        print('top', 1)
        f()
        for i in range(100):
            print('x' * 10)
    """)
    assert outcome.error is None
    assert outcome.output.startswith("top 1\nin f\nxxxxxxxxxx\n")
    assert outcome.output.endswith("\n…[output truncated at 200 bytes]")
    assert len(outcome.output.split("\n…")[0].encode()) == 200
    assert outcome.output_bytes == len("top 1\nin f\n") + 100 * 11


@pytest.mark.parametrize(("source", "kind", "line", "column"), [
    ("x = 1\ny = 1 / 0", "ZeroDivisionError", 2, 5),
    ("def f():\n    return [][1]\n\nf()", "IndexError", 2, 12),
    ("x = (\n", "SyntaxError", 1, 5),
    ("y = 2\nz = y.__class__", "SyntaxError", 2, 5),
    ("undefined_name", "NameError", 1, 1),
    ("raise ValueError('nope')", "ValueError", 1, 1),
    ("await tools.fail(q=1)", "ToolCallError", 1, 1),
])
async def test_errors_are_located_in_the_script(source: str, kind: str, line: int,
                                                column: int) -> None:
    outcome = await run(source)
    assert outcome.error is not None
    assert (outcome.error.type, outcome.error.line, outcome.error.column) == (kind, line, column)
    assert outcome.value is None
    for host_marker in ("site-packages", "codemode/", ".py\"", "RestrictedPython"):
        assert host_marker not in outcome.error.traceback
        assert host_marker not in outcome.error.message


async def test_traceback_lists_script_frames_only() -> None:
    outcome = await run("def inner():\n    return 1 / 0\ndef outer():\n    return inner()\nouter()")
    assert outcome.error is not None
    assert outcome.error.traceback.splitlines() == [
        "Traceback (script frames, most recent call last):",
        "  line 5, in <script>", "    outer()",
        "  line 4, in outer", "    return inner()",
        "  line 2, in inner", "    return 1 / 0",
        "ZeroDivisionError: division by zero",
    ]


async def test_traceback_ends_with_the_errors_notes_as_cpythons() -> None:
    outcome = await run("e = ValueError('bad')\ne.add_note('while pricing AAPL')\n"
                        "e.add_note('two\\nlines')\ne.add_note('x' * 5000)\nraise e")
    assert outcome.error is not None
    assert outcome.error.message == "bad"  # str(e), as in CPython
    # the notes read up to the message's own bound (2,000 characters, a line break each)
    assert outcome.error.traceback.splitlines()[-5:] == [
        "ValueError: bad", "while pricing AAPL", "two", "lines", "x" * (2000 - 19 - 10 - 1) + "…"]


async def test_a_million_empty_notes_print_a_bounded_traceback() -> None:
    roomy = Limits(timeout=10.0, operations=5_000_000, memory=64 * 1024 * 1024)
    outcome = await run("e = ValueError('bad')\nlist(map(e.add_note, [''] * 10**6))\nraise e",
                        limits=roomy)
    assert outcome.error is not None and outcome.error.type == "ValueError"
    # 2,000 notes of a line break each, then the cut
    assert outcome.error.traceback.endswith("ValueError: bad" + "\n" * 2001 + "…")


async def test_host_exception_is_hidden_behind_internal_error() -> None:
    outcome = await run("""
        try:
            await tools.boom()
        except ToolCallError as e:
            r = [e.tool, e.message, e.path, str(e)]
        r
    """)
    assert outcome.value == ["boom", "internal error", None, "internal error"]


async def test_tool_call_error_fields_cross_as_strings() -> None:
    outcome = await run("""
        try:
            await tools.fail(q=1)
        except ToolCallError as e:
            r = [e.tool, e.message, e.path]
        r
    """)
    assert outcome.value == ["fail", "bad input", "$.q"]


@pytest.mark.parametrize(("source", "message"), [
    ("tools.echo(q=1)['x']", "add `await`"),
    ("for x in tools.echo(q=1):\n    pass", "add `await`"),
    ("str(tools.echo(q=1))", "add `await`"),
    ("tools.echo(q=1).send", "add `await`"),
    ("tools.echo(q=1)", "add `await`"),
    ("if tools.echo(q=1):\n    pass", "add `await`"),
    ("await tools.echo(1)", "keyword arguments only"),
    ("tools.ech", "did you mean 'echo'"),
    ("tools.ns.gett", "did you mean 'get'"),
    ("await tools.echo(q=print)", "JSON"),
    ("'x'.encode('punycode')", "not available"),
    ("str(b'x', 'idna')", "not available"),
    ("sum()", "sum() missing"),
    ("import json\njson.nope", "module 'json' has no attribute 'nope'"),
    ("c = []\nc.append(c)\nawait tools.echo(q=c)", "JSON"),
])
async def test_tool_misuse_gives_actionable_errors(source: str, message: str) -> None:
    host = Host()
    outcome = await run(source, host=host)
    assert outcome.error is not None
    assert message in outcome.error.message
    assert host.calls == []


@pytest.mark.parametrize(("source", "limit"), [
    ("while True:\n    pass", "operations"),
    ("for i in range(10**9):\n    pass", "operations"),
    ("def f(n):\n    return f(n + 1)\nf(0)", "recursion"),
    ("async def f():\n    return await f()\nawait f()", "recursion"),
    ("f = lambda: f()\nf()", "recursion"),
    ("'a' * 10**9", "memory"),
    ("10 ** 10 ** 10", "memory"),
    ("1 << 10**9", "memory"),
    ("x = 'a' * 1000\nwhile True:\n    x = x + x", "memory"),
    ("'%*d' % (10**9, 1)", "memory"),
    ("f'{1:>{10**9}}'", "memory"),
    ("list(range(5000))", "result"),
    ("int('f' * 40000, 16)", "memory"),
    ("round(1, -10**6)", "memory"),
    ("a = [0] * 100\nb = [a] * 100\nstr([b] * 100)", "operations"),
    ("x = [[]]\nfor i in range(30):\n    x = [x, x]\nprint(x)", "operations"),
    ("await tools.echo(x='a' * 10**6)", "memory"),
    ("'%s' % ([[0] * 1000] * 1000,)", "operations"),
    ("k = [0] * 15000\nlen(set(k + k))", "operations"),
    ("k = [0] * 15000\nlen({*k, *k})", "operations"),
    ("len(dict.fromkeys([0] * 30000))", "operations"),
    ("import asyncio\nawait asyncio.sleep(10)", "timeout"),
    ("for i in range(6):\n    await tools.echo(i=i)", "calls"),
])
async def test_limits_trip_with_their_name(source: str, limit: str) -> None:
    limits = Limits(timeout=0.3, operations=20_000, memory=8 * 1024 * 1024, recursion=30,
                    output=200, result=1000, calls=5, concurrency=2)
    outcome = await run(source, limits=limits)
    assert outcome.error is not None, outcome.value
    assert (outcome.error.type, outcome.error.limit) == ("LimitExceeded", limit)
    assert f"{limit}=" in outcome.error.message


@pytest.mark.parametrize("handler", [
    "except Exception:\n    pass",
    "except:\n    pass",
    "finally:\n    pass",
])
async def test_a_tripped_limit_cannot_be_swallowed(handler: str) -> None:
    host = Host()
    source = ("try:\n    while True:\n        pass\n" + handler
              + "\nawait tools.echo(after=1)\n'done'")
    outcome = await run(source, host=host)
    assert outcome.error is not None
    assert outcome.error.limit == "operations"
    assert outcome.error.line == 2
    assert host.calls == []


async def test_swallowed_timeout_still_reports_timeout() -> None:
    outcome = await run("""
        import asyncio
        try:
            await asyncio.sleep(5)
        except:
            pass
        'swallowed'
    """, limits=Limits(timeout=0.2))
    assert outcome.error is not None and outcome.error.limit == "timeout"


async def test_operations_are_counted_per_iteration() -> None:
    outcome = await run("for i in range(1000):\n    pass\nn = 0\nwhile n < 500:\n    n += 1")
    assert outcome.error is None
    assert 1500 <= outcome.operations <= 1510


async def test_outcome_round_trips_as_json() -> None:
    outcome = await run("print('hi')\nawait tools.fail(q=1)")
    again = RunOutcome.from_json(outcome.to_json())
    assert again == outcome
    assert again.error is not None and again.error.type == "ToolCallError"


async def test_limits_round_trip_and_validate() -> None:
    limits = Limits(timeout=1.5, calls=3)
    assert Limits.from_json(limits.to_json()) == limits
    with pytest.raises(ValueError, match="calls"):
        Limits(calls=0)


async def test_call_tool_or_call_is_required() -> None:
    with pytest.raises(TypeError, match="exactly one"):
        await run_script("1")


async def test_value_returned_by_call_tool_directly() -> None:
    async def call_tool(name: str, args: dict[str, Any]) -> Any:
        if name == "limit":
            raise LimitExceeded("calls", 1, "test")
        return [name, args]

    outcome = await run_script("await tools.a(x=1)", call_tool=call_tool, tool_paths=["a"])
    assert outcome.value == ["a", {"x": 1}]
    limited = await run_script("await tools.limit()", call_tool=call_tool,
                               tool_paths=["limit"])
    assert limited.error is not None and limited.error.limit == "calls"


async def test_broker_refuses_tools_outside_the_run() -> None:
    host = Host()
    broker = CallBroker(host, SMALL, tool_paths=["echo"])
    reply = await broker.answer("not_exposed", {})
    assert reply == {"error": {"tool": "not_exposed", "message": "no such tool in this run",
                               "path": None}}
    assert host.calls == []


def test_host_reapplies_output_and_result_limits() -> None:
    forged = RunOutcome(value="v" * 5000, output="o" * 5000, output_bytes=1)
    result = forged.to_result(calls=(), time=0.0, limits=SMALL)
    assert result.output.endswith("[output truncated at 200 bytes]")
    assert len(result.output.encode()) < 300
    assert result.error is not None and result.error.limit == "result"
    assert result.value is None
    error = ScriptError.from_json({"type": "LimitExceeded", "message": "x", "line": None,
                                   "column": None, "traceback": "", "limit": "nonsense"})
    assert error.limit is None


@pytest.mark.parametrize(("source", "head", "whole"), [
    ("raise ValueError('x' * 10**6)", "x" * 100, False),
    ("raise ValueError('short')", "short", True),
    ("raise KeyError('k' * 10**6)", "<error message too large>", True),
    ("raise ValueError(['y' * 1000] * 1000)", "<error message too large>", True),
    ("class E(Exception):\n    pass\nraise E('z' * 10**6)", "z" * 100, False),
], ids=["long-string-clipped", "short-whole", "key-error-not-rendered", "list-not-rendered",
        "script-class-clipped"])
async def test_an_oversized_error_message_shows_its_head_only_when_it_is_one_string(
        source: str, head: str, whole: bool) -> None:
    outcome = await run(source)
    assert outcome.error is not None
    message = outcome.error.message
    assert message.startswith(head) and len(message) <= 2001
    assert message.endswith("…") != whole


@pytest.mark.parametrize(("source", "value"), [
    ("f = lambda x: x\n[f(None), f(''), f(0), f(3), f([])]", [None, "", 0, 3, []]),
    ("g = lambda: 0\ng()", 0),
    ("[x for x in [0, None, '', 1] if x is not None]", [0, "", 1]),
    ("[*[0, False, None]]", [0, False, None]),
    ("sum(x for x in [0, 0, 2])", 2),
], ids=["lambda-values", "lambda-falsy", "loop-falsy-items", "starred-falsy", "counted-falsy"])
async def test_ticks_never_change_a_value(source: str, value: Any) -> None:
    outcome = await run(source)
    assert outcome.error is None and outcome.value == value


class _Stopper:
    """Aborts a run from another thread once the host saw its first call (no timing)."""

    def __init__(self, control: RunControl, reason: str) -> None:
        self.control = control
        self.reason = reason
        self.first_call = threading.Event()
        self.thread = threading.Thread(target=self._stop)
        self.thread.start()

    def _stop(self) -> None:
        self.first_call.wait(30)
        self.control.abort(self.reason)
        self.control.abort("a second reason is ignored")


class _AbortHost(Host):
    def __init__(self, stopper: _Stopper | None = None) -> None:
        super().__init__()
        self.stopper = stopper
        self.cancelled = 0

    async def __call__(self, name: str, args: dict[str, Any]) -> Any:
        if self.stopper is not None:
            self.stopper.first_call.set()
        if name == "slow":
            self.calls.append((name, args))
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                self.cancelled += 1
                raise
        return await super().__call__(name, args)


LONG = Limits(timeout=60.0, operations=10**12, calls=100)


async def _aborted(source: str, host: Host, control: RunControl) -> RunOutcome:
    broker = CallBroker(host, LONG)
    with anyio.fail_after(30):
        return await run_script(textwrap.dedent(source), call=broker.answer_json,
                                tool_paths=("echo", "slow"), limits=LONG, control=control)


def _assert_aborted(outcome: RunOutcome, reason: str) -> None:
    assert outcome.error is not None, outcome.value
    assert (outcome.error.type, outcome.error.limit) == ("LimitExceeded", "timeout")
    assert reason in outcome.error.message
    assert "second reason" not in outcome.error.message
    assert outcome.value is None


async def test_a_run_aborted_before_it_starts_runs_nothing() -> None:
    control = RunControl()
    control.abort("stopped before the start")
    host = _AbortHost()
    outcome = await _aborted("await tools.echo(n=1)\n'ran'", host, control)
    _assert_aborted(outcome, "stopped before the start")
    assert host.calls == []


async def test_an_abort_stops_a_cpu_loop_at_its_next_tick() -> None:
    control = RunControl()
    stopper = _Stopper(control, "the host stopped it")
    host = _AbortHost(stopper)
    outcome = await _aborted("await tools.echo()\nn = 0\nwhile True:\n    n += 1", host, control)
    stopper.thread.join()
    _assert_aborted(outcome, "the host stopped it")
    assert outcome.error is not None and outcome.error.line in (3, 4)
    assert host.calls == [("echo", {})]


async def test_an_abort_cancels_the_call_the_script_waits_for() -> None:
    control = RunControl()
    stopper = _Stopper(control, "cancelled by the host")
    host = _AbortHost(stopper)
    outcome = await _aborted("x = 1\nawait tools.slow()\n'after'", host, control)
    stopper.thread.join()
    _assert_aborted(outcome, "cancelled by the host")
    assert outcome.error is not None and outcome.error.line == 2
    assert host.calls == [("slow", {})] and host.cancelled == 1


async def test_an_abort_the_script_swallows_still_fails_the_run() -> None:
    control = RunControl()
    stopper = _Stopper(control, "no way out")
    host = _AbortHost(stopper)
    source = """
    try:
        await tools.slow()
    except:
        pass
    'finished anyway'
    """
    outcome = await _aborted(source, host, control)
    stopper.thread.join()
    _assert_aborted(outcome, "no way out")
    assert host.cancelled == 1


def test_watch_before_a_run_attached_does_nothing() -> None:
    control = RunControl()
    control.watch()  # no run yet: nothing to check, and no error
    control.abort("later")
    control.watch()
    assert control._reason == "later"


@pytest.mark.parametrize("failure", [GeneratorExit(), RuntimeError("walker bug"),
                                     AttributeError("no such slot")])
async def test_a_result_check_that_fails_is_the_runs_error_not_the_runners(
        failure: BaseException, monkeypatch: pytest.MonkeyPatch) -> None:
    """The result is sized after the run ended: a size walker that reads a script object
    through a charged path meets the ended run (``GeneratorExit``), and that ended the
    worker process (r41, a ``SimpleNamespace`` in the result). Whatever a walker raises is
    now the run's error; the next run is unaffected. (A tuple: a plain JSON value is sized
    by ``plain_size`` alone, the walkers are for the rest.)"""
    import codemode.sandbox.runtime.runner as runner

    def broken(value: Any, limit: int) -> int:
        raise failure

    with monkeypatch.context() as patch:
        patch.setattr(runner, "render_cost", broken)
        outcome = await run("x = {'a': (1, 2)}\nx")
    assert outcome.value is None and outcome.error is not None
    assert outcome.error.type == "TypeError"
    assert "could not be checked as JSON data" in outcome.error.message
    assert type(failure).__name__ in outcome.error.message
    assert (await run("x = {'a': [1, 2]}\nx")).value == {"a": [1, 2]}


PLAIN = [None, True, 1.5, 0, -(1 << 1023), (1 << 1024) - 1, "", "é\u2028\x00" * 50,
         "\U000e0001" * 100, [], {}, {"k": "v" * 1000}, [[[]]] * 3, {"a": [1, "x", None]},
         list(range(255)), {str(i): [i, str(i)] for i in range(100)}]


@pytest.mark.parametrize("value", PLAIN)
def test_plain_size_is_at_least_what_the_walkers_count(value: Any) -> None:
    """A run's result that ``plain_size`` sizes skips ``render_cost``, ``render_size`` and
    ``key_problem``: its bound must be over what they count, or a result they refuse
    would pass."""
    big = 1 << 40
    found = plain_size(value)
    assert found is not None
    nodes, size = found
    assert nodes >= render_cost(value, big)
    assert size >= render_size(value, big)
    assert key_problem(value, strict=False) is None


def _cycle() -> list[Any]:
    loop: list[Any] = []
    loop.append(loop)
    return loop


class _Dict(dict[str, Any]):
    pass


@pytest.mark.parametrize("value", [
    (1, 2), {1: "a"}, {"a": {True: 1}}, 1 << 1024, -(1 << 1024), _Dict(a=1), _cycle(),
    list(range(600)), "x" * 40_000, [{"k": "x" * 20_000}] * 3, b"bytes", {1.5},
    [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]],
])
def test_plain_size_leaves_everything_else_to_the_walkers(value: Any) -> None:
    assert plain_size(value) is None
