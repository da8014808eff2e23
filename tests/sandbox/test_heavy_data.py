"""Heavy data a script makes cannot stall or grow the host.

- An integer past the sandbox's cap cannot come out of ``statistics`` (it squares big
  ints), where the script's next ``math.gcd`` or ``divmod`` would be one C call of seconds.
- A call's heavy arguments are checked, frozen and (``@tool``) converted on a worker
  thread, not on the host's event loop (``frozen.HEAVY_VALUES``); so is a tool's heavy
  result, made into a ``ToolResult`` and copied for the script.
- The run's trace does not keep a call's big arguments (``broker.TRACE_ARGUMENTS``).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

import codemode as cm
from codemode.dispatch import decorator, pipeline
from codemode.dispatch.frozen import HEAVY_VALUES, heavy
from codemode.mode.bridge import Bridge
from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor
from codemode.sandbox.executors.broker import NOT_KEPT, TRACE_ARGUMENTS
from codemode.sandbox.language.sizes import MAX_INT_BITS

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _registry(seen: list[Any]) -> cm.ToolRegistry:
    registry = cm.ToolRegistry()

    @cm.tool
    def ack(data: list[Any]) -> int:
        """Count the items."""
        seen.append(data)
        return len(data)

    async def raw(args: Any, ctx: cm.ExecContext) -> int:
        seen.append(args["data"])
        return len(args["data"])

    @cm.tool
    def total(data: list[int]) -> int:
        """Add the items."""
        seen.append(data)
        return sum(data)

    registry.register(ack)
    registry.register(total)
    registry.register(cm.define_tool(name="raw", execute=raw, parameters={
        "type": "object", "properties": {"data": {}}, "required": ["data"]}))
    return registry


@pytest.mark.parametrize("func", ["variance", "pvariance"])
async def test_statistics_cannot_make_an_int_past_the_cap(func: str) -> None:
    script = (f"import statistics\nv = 2 ** {MAX_INT_BITS - 100} + 1\n"
              f"w = statistics.{func}([v, 1])\nw.bit_length()\n")
    async with InProcessExecutor() as executor:
        mode = cm.CodeMode(cm.ToolRegistry(), executor=executor)
        run = await mode.run(script)
    assert run.value is None
    assert run.error is not None and run.error.limit == "memory"
    assert "cap on integers" in run.error.message
    assert run.error.line == 3


async def test_statistics_results_under_the_cap_are_exact() -> None:
    script = "import statistics\nv = 2 ** 1000\nstatistics.variance([v, 0]) == v * v // 2\n"
    async with InProcessExecutor() as executor:
        run = await cm.CodeMode(cm.ToolRegistry(), executor=executor).run(script)
    assert run.error is None and run.value is True


@pytest.mark.parametrize(("value", "limit", "expected"), [
    ({"a": 1}, 5, False),
    ({"a": [1, 2, 3]}, 3, True),  # the dict's one key and the list's three items
    ({"a": [1, 2, 3]}, 4, False),
    (lambda: {"a": [{}] * 10**6}, 100, True),  # built in the test: a parameter lives
    # in every xdist worker for the whole run, and a million references there slow each
    # full garbage collection
    ({"a": {"b": {"c": list(range(50))}}}, 60, False),
    ({"a": {"b": {"c": list(range(50))}}}, 50, True),
    ({"a": ("x",) * 30, "b": "y" * 4096}, 40, False),  # a string of up to 4 KB is one value
    ({"a": ("x",) * 30, "b": "y" * 10**6}, 40, True),  # a longer one weighs one per KB
    ({"a": ("x",) * 30, "b": "y" * 10**6}, 2000, False),
    ({"a": [2**1000] * 30}, 40, False),  # an integer of up to 1,024 bits is one value
    ({"a": [10**4000] * 30}, 2000, True),  # ~4,000 digits weigh ~170 each (their spelling)
    ({"a": [10**4000] * 5}, 2000, False),
    # a flat dict and a lone scalar are read without the walk: the same answers
    ({"a": 1}, 0, True),
    ({"a": 1, "b": "x", "c": None}, 2, True),
    ({"a": 1, "b": 2.5, "c": None, "d": True}, 4, False),
    ({"a": "y" * 10**6}, 40, True),
    ({"a": 10**4000}, 100, True),
    ({"a": 10**4000}, 2000, False),
    ("y" * 10**6, 40, True),
    ("y" * 10**6, 2000, False),
    (10**4000, 100, True),
    (2**1000, 0, False),
    (True, 0, False),
    (None, 0, False),
    (1.5, 0, False),
])
def test_heavy_counts_values(value: Any, limit: int, expected: bool) -> None:
    assert heavy(value() if callable(value) else value, limit) is expected


@pytest.mark.parametrize("tool", ["ack", "raw"])
@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_heavy_arguments_are_converted_off_the_loop(
        monkeypatch: pytest.MonkeyPatch, tool: str, kind: str) -> None:
    threads: dict[str, list[bool]] = {"checked": [], "typed": []}
    checked, typed = pipeline._checked, decorator._typed_arguments

    def spy_checked(*args: Any) -> Any:
        threads["checked"].append(threading.current_thread() is threading.main_thread())
        return checked(*args)

    def spy_typed(*args: Any) -> Any:
        threads["typed"].append(threading.current_thread() is threading.main_thread())
        return typed(*args)

    monkeypatch.setattr(pipeline, "_checked", spy_checked)
    monkeypatch.setattr(decorator, "_typed_arguments", spy_typed)
    seen: list[Any] = []
    size = HEAVY_VALUES + 5
    script = (f"small = await tools.{tool}(data=[1, 2])\n"
              f"big = await tools.{tool}(data=[0] * {size})\n[small, big]\n")
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    async with executor:
        run = await cm.CodeMode(_registry(seen), executor=executor).run(script)
    assert run.error is None, run.error
    assert run.value == [2, size]
    assert [len(data) for data in seen] == [2, size]
    assert list(seen[1]) == [0] * size
    assert threads["checked"] == [True, False]  # the small call on the loop, the big one off
    assert threads["typed"] == ([True, False] if tool == "ack" else [])


async def test_invalid_heavy_arguments_are_refused_with_their_problem() -> None:
    seen: list[Any] = []
    script = "bad = [str(i) for i in range(3)]\nawait tools.total(data=bad)\n"
    big = f"bad = [str(i) for i in range({HEAVY_VALUES + 1})]\nawait tools.total(data=bad)\n"
    async with InProcessExecutor() as executor:
        mode = cm.CodeMode(_registry(seen), executor=executor)
        small_run, big_run = await mode.run(script), await mode.run(big)
    assert seen == []
    for run in (small_run, big_run):
        assert run.error is not None and run.error.type == "ToolCallError"
        assert "invalid arguments for 'total'" in run.error.message
        assert "'0' is not of type 'integer'" in run.error.message


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_the_trace_does_not_keep_big_arguments(kind: str) -> None:
    seen: list[Any] = []
    text = "x" * (TRACE_ARGUMENTS + 10)
    script = (f"s = 'x' * {len(text)}\na = await tools.raw(data=s)\n"
              "b = await tools.raw(data=[s[:10]])\n"
              f"c = await tools.raw(data=[[0] * {TRACE_ARGUMENTS}])\n[a, b, c]\n")
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    async with executor:
        run = await cm.CodeMode(_registry(seen), executor=executor).run(script)
    assert run.error is None, run.error
    assert run.value == [len(text), 1, 1]
    assert seen[0] == text  # the tool got the whole argument; only the trace drops it
    first, second, third = (record.arguments for record in run.calls)
    assert list(first) == [NOT_KEPT] and list(third) == [NOT_KEPT]
    assert f"{TRACE_ARGUMENTS:,}" in first[NOT_KEPT]
    assert second == {"data": ["x" * 10]}



@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_a_heavy_result_is_made_and_copied_off_the_loop(
        monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    on_loop: dict[str, list[bool]] = {"normalise": [], "to_script": []}
    normalise, to_script = pipeline.normalise, Bridge.to_script

    def spy_normalise(*args: Any, **kwargs: Any) -> Any:
        on_loop["normalise"].append(threading.current_thread() is threading.main_thread())
        return normalise(*args, **kwargs)

    def spy_to_script(self: Bridge, *args: Any) -> Any:
        on_loop["to_script"].append(threading.current_thread() is threading.main_thread())
        return to_script(self, *args)

    monkeypatch.setattr(pipeline, "normalise", spy_normalise)
    monkeypatch.setattr(Bridge, "to_script", spy_to_script)
    size = HEAVY_VALUES + 5
    rows = [{"n": i} for i in range(size)]

    async def rows_tool(args: Any, ctx: cm.ExecContext) -> Any:
        return rows[: args["n"]]

    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="rows", execute=rows_tool, parameters={
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}))
    script = (f"small = await tools.rows(n=2)\nbig = await tools.rows(n={size})\n"
              "[small, len(big), big[-1]['n'], sum(r['n'] for r in big)]\n")
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    async with executor:
        run = await cm.CodeMode(registry, executor=executor).run(script)
    assert run.error is None, run.error
    assert run.value == [[{"n": 0}, {"n": 1}], size, size - 1, size * (size - 1) // 2]
    # the small result takes the lean path on the loop (no normalise call at all)
    assert on_loop["normalise"] == [False]
    assert on_loop["to_script"] == [True, False]


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_a_result_of_huge_integers_is_spelled_in_steps_off_the_loop(
        monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """A few hundred integers of 4,000 digits are few values but seconds of decimal
    spelling in one C call (it holds the GIL, so a thread alone does not help): they
    weigh as heavy, and their text is written in steps on a worker thread."""
    from codemode.dispatch import content

    threads: list[bool] = []
    in_steps = content.dumps_in_steps

    def spy(value: Any) -> str:
        threads.append(threading.current_thread() is threading.main_thread())
        return in_steps(value)

    monkeypatch.setattr(content, "dumps_in_steps", spy)
    numbers = [10**4000 + i for i in range(300)]

    async def give(args: Any, ctx: cm.ExecContext) -> Any:
        return numbers

    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="give", execute=give))
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    async with executor:
        run = await cm.CodeMode(registry, executor=executor).run(
            "xs = await tools.give()\n[len(xs), xs[-1] - 10**4000]\n")
    assert run.error is None, run.error
    assert run.value == [300, 299]
    assert threads == [False]


async def test_arguments_past_the_frame_cap_are_refused_by_name_and_never_sent() -> None:
    from codemode.sandbox.executors.protocol import MAX_FRAME

    seen: list[Any] = []
    limits = cm.Limits(memory=1 << 31, timeout=60)
    async with WorkerPoolExecutor(size=1) as pool:
        run = await cm.CodeMode(_registry(seen), executor=pool, limits=limits).run(
            f"try:\n    await tools.ack(data=['x' * {MAX_FRAME}])\n"
            "except ToolCallError as exc:\n    refused = str(exc)\nrefused\n")
    assert run.error is None, run.error
    assert "more than a call may carry" in run.value and str(MAX_FRAME) in run.value
    assert seen == []
    assert run.calls == ()


async def test_huge_integer_arguments_are_spelled_in_steps_in_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process the script's thread spells the arguments, and one C call for 3,000
    integers of 4,000 digits held the GIL (so the host loop) 0.6 s: arguments that are not
    small are written in steps, and the tool gets exactly the integers."""
    from codemode.sandbox.runtime import toolproxy

    made: list[int] = []

    class Counted(toolproxy.JsonSteps):
        def __init__(self, **options: Any) -> None:
            made.append(1)
            super().__init__(**options)

    monkeypatch.setattr(toolproxy, "JsonSteps", Counted)
    seen: list[Any] = []
    async with InProcessExecutor() as executor:
        run = await cm.CodeMode(_registry(seen), executor=executor).run(
            "small = await tools.ack(data=[1, 2])\n"
            "big = await tools.ack(data=[10**4000 + i for i in range(200)])\n[small, big]\n")
    assert run.error is None, run.error
    assert run.value == [2, 200]
    assert seen[1] == [10**4000 + i for i in range(200)]
    assert made == [1]


@pytest.mark.parametrize("where", [0, 1 << 20, 3 * (1 << 20) + 5])
def test_lone_surrogates_are_replaced_wherever_they_are(where: int) -> None:
    from codemode.sandbox.language.state import clean_text

    text = "é" * (4 << 20)
    dirty = text[:where] + "\ud800" + text[where:]
    assert clean_text(dirty) == text[:where] + "\ufffd" + text[where:]
    assert clean_text(text) is text


SLOW_ON_THE_LOOP = [
    # a pattern's searches may take PATTERN_BUDGET (0.1 s) whatever the arguments' size
    ("pattern", {"s": {"type": "string", "pattern": "^(a|aa)+$"}}, "'a' * 40 + 'b'"),
    # explaining a failure quotes the value in every message (an anyOf of eight branches
    # quoted 8 MB of strings eight times: 0.4 s)
    ("explained", {"s": {"anyOf": [{"type": "integer"}, {"enum": [1, 2]}]}},
     "['x' * 4000] * 100"),
]


@pytest.mark.parametrize(("label", "properties", "value"), SLOW_ON_THE_LOOP,
                         ids=[label for label, _, _ in SLOW_ON_THE_LOOP])
async def test_validation_that_can_be_slow_runs_off_the_loop(
        monkeypatch: pytest.MonkeyPatch, label: str, properties: dict[str, Any],
        value: str) -> None:
    """Arguments far under ``HEAVY_VALUES`` held the host loop for 0.2 s (pattern) and
    0.4 s (explained): checked on a worker thread instead, the call failing as before."""
    on_loop: list[bool] = []
    checked = pipeline._checked

    def spy_checked(*args: Any) -> Any:
        on_loop.append(threading.current_thread() is threading.main_thread())
        return checked(*args)

    monkeypatch.setattr(pipeline, "_checked", spy_checked)
    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="take", execute=lambda args: "ok", parameters={
        "type": "object", "properties": properties}))
    async with InProcessExecutor() as executor:
        run = await cm.CodeMode(registry, executor=executor).run(
            f"await tools.take(s={value})\n")
    assert run.error is not None and run.error.type == "ToolCallError"
    assert "invalid arguments for 'take'" in run.error.message
    assert on_loop == [False]
