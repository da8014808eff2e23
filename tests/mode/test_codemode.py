"""Code Mode end to end: scripts re-enter the registry's pipeline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import pytest

import codemode as cm

if TYPE_CHECKING:
    from codemode.sandbox import Executor


def run_code_call(code: str, call_id: str = "outer-1", **extra: Any) -> cm.ToolCall:
    return cm.ToolCall(call_id=call_id, name="run_code", arguments={"code": code, **extra})


async def test_nested_calls_go_through_the_pipeline_with_the_run_code_token_as_parent(
    registry: cm.ToolRegistry, executor: Executor
) -> None:
    mode = cm.CodeMode(registry, executor=executor)
    registry.register(mode.as_tool())
    events: list[cm.ToolEvent] = []
    registry.subscribe(events.append)
    result = await registry.execute(
        run_code_call(
            "x = await tools.add(a=1, b=2)\ny = await tools.add(a=x['sum'], b=10)\ny['sum']"
        )
    )
    assert not result.is_error, result.text
    assert "value: 13" in result.text
    outer = [e for e in events if e.name == "run_code"]
    nested = [e for e in events if e.name == "add"]
    assert [e.type for e in outer] == ["tool/call", "tool/result"]
    assert [e.type for e in nested] == ["tool/call", "tool/result"] * 2
    assert {e.parent for e in nested} == {outer[0].token}
    assert [e.call_id for e in nested if e.type == "tool/call"] == [
        "outer-1:code:1",
        "outer-1:code:2",
    ]
    assert result.meta is not None
    assert [c["name"] for c in result.meta["calls"]] == ["add", "add"]


async def test_a_policy_that_denies_direct_calls_denies_them_from_code(
    registry: cm.ToolRegistry, executor: Executor, recorder: Any
) -> None:
    direct = await registry.execute(
        cm.ToolCall(call_id="d", name="delete_file", arguments={"path": "/etc/motd"})
    )
    assert direct.is_error and "read-only session" in direct.text
    mode = cm.CodeMode(registry, executor=executor)
    run = await mode.run(
        "try:\n"
        "    await tools.delete_file(path='/etc/motd')\n"
        "    outcome = 'deleted'\n"
        "except ToolCallError as e:\n"
        "    outcome = [e.tool, e.message]\n"
        "outcome"
    )
    assert run.ok, run.error
    assert run.value[0] == "delete_file"
    assert "read-only session" in run.value[1]
    assert not [entry for entry in recorder.log if entry[0] == "deleted"]


async def test_validation_errors_surface_as_tool_call_error_with_the_python_path(
    registry: cm.ToolRegistry, executor: Executor
) -> None:
    mode = cm.CodeMode(registry, executor=executor)
    run = await mode.run(
        "a = 'x'\n"
        "try:\n"
        "    await tools.add(a=a, b=2)\n"
        "except ToolCallError as e:\n"
        "    r = [e.tool, e.path, e.message]\n"
        "r"
    )
    assert run.ok, run.error
    tool, path, message = run.value
    assert (tool, path) == ("add", "$.a")
    assert "'x' is not of type 'integer'" in message


async def test_an_uncaught_tool_error_reports_the_script_line(
    registry: cm.ToolRegistry, executor: Executor
) -> None:
    mode = cm.CodeMode(registry, executor=executor)
    run = await mode.run("x = 1\ny = await tools.fail()\ny")
    assert run.error is not None
    assert (run.error.type, run.error.line) == ("ToolCallError", 2)
    assert "ValueError: disk on fire" in run.error.message


async def test_results_become_python_data(registry: cm.ToolRegistry, executor: Executor) -> None:
    mode = cm.CodeMode(registry, executor=executor)
    run = await mode.run(
        "s = await tools.stats()\n"
        "e = await tools.slow_echo(text='{\"a\": 1}', delay=0)\n"
        "a = await tools.add(a=2, b=3)\n"
        "[s['mean'], e, a['sum']]"
    )
    assert run.ok, run.error
    assert run.value == [2.5, '{"a": 1}', 5]


async def test_non_text_blocks_are_placeholders_in_the_script_and_attached_to_run_code(
    registry: cm.ToolRegistry, executor: Executor
) -> None:
    mode = cm.CodeMode(registry, executor=executor)
    registry.register(mode.as_tool())
    result = await registry.execute(run_code_call("snap = await tools.snapshot()\nsnap"))
    assert not result.is_error, result.text
    images = [b for b in result.content if b["type"] == "image"]
    assert images == [{"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}]
    assert "a chart" in result.text and "[image image/png" in result.text


async def test_hot_reload_removes_a_disposed_tool_from_sdk_and_proxy(
    registry: cm.ToolRegistry, executor: Executor
) -> None:
    async def shout(args: Any) -> str:
        return str(args["text"]).upper()

    handle = registry.register(
        cm.define_tool(
            name="shout", parameters={"text": {"type": "string", "required": True}}, execute=shout
        )
    )
    mode = cm.CodeMode(registry, executor=executor)
    assert "shout" in mode.sdk().names.tools
    first = await mode.run("await tools.shout(text='hi')")
    assert first.value == "HI"
    handle.dispose()
    assert "shout" not in mode.sdk().names.tools
    assert "shout" not in mode.prompt()
    second = await mode.run("await tools.shout(text='hi')")
    assert second.error is not None and second.error.type == "PreflightError"
    unchecked = cm.CodeMode(registry, executor=executor, preflight=False)
    third = await unchecked.run("await tools.shout(text='hi')")
    assert third.error is not None and "shout" in third.error.message
    assert third.calls == ()


async def test_run_code_and_hidden_tools_are_not_reachable_from_scripts(
    registry: cm.ToolRegistry, executor: Executor
) -> None:
    async def secret(args: Any) -> str:
        return "s3cret"

    registry.register(cm.define_tool(name="secret", execute=secret, visible_in_code=False))
    mode = cm.CodeMode(registry, executor=executor, preflight=False)
    registry.register(mode.as_tool())
    assert set(mode.sdk().names.tools) == {
        "add",
        "slow_echo",
        "delete_file",
        "snapshot",
        "stats",
        "fail",
    }
    for script in ("await tools.run_code(code='1')", "await tools.secret()"):
        run = await mode.run(script)
        assert run.error is not None and run.error.type == "AttributeError", run.error
        assert run.calls == ()


async def test_parallel_calls_overlap(registry: cm.ToolRegistry, executor: Executor) -> None:
    arrived: list[str] = []
    everyone = anyio.Event()

    async def meet(args: Any) -> str:
        arrived.append(args["text"])
        if len(arrived) == 4:
            everyone.set()
        with anyio.fail_after(10):  # calls made one after another never all arrive
            await everyone.wait()
        return str(args["text"])

    registry.register(
        cm.define_tool(name="meet", parameters={"text": {"type": "string"}}, execute=meet)
    )
    mode = cm.CodeMode(registry, executor=executor)
    run = await mode.run(
        "texts = ['a', 'b', 'c', 'd']\n"
        "out = await asyncio.gather(*[tools.meet(text=t) for t in texts])\n"
        "out"
    )
    assert run.ok, run.error
    assert run.value == ["a", "b", "c", "d"]
    assert sorted(arrived) == ["a", "b", "c", "d"], "every call started before any ended"


async def test_cancelling_the_outer_call_cancels_nested_calls(
    registry: cm.ToolRegistry, executor: Executor, recorder: Any
) -> None:
    mode = cm.CodeMode(registry, executor=executor)
    registry.register(mode.as_tool())
    events: list[cm.ToolEvent] = []
    registry.subscribe(events.append)
    script = (
        "import asyncio\nawait asyncio.gather(tools.slow_echo(text='x', delay=4), "
        "tools.slow_echo(text='y', delay=4))"
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(registry.execute, run_code_call(script))
        with anyio.fail_after(20):
            await recorder.wait_for("start", 2)
        tg.cancel_scope.cancel()
    assert {name for event, name, _ in recorder.log if event == "start"} == {"x", "y"}
    nested = [e for e in events if e.type == "tool/result" and e.name == "slow-echo"]
    assert len(nested) == 2 and all(e.error == "cancelled" for e in nested)
    before = list(events)
    sentinel = await registry.execute(run_code_call("await tools.add(a=1, b=1)", "sentinel"))
    assert not sentinel.is_error and "value: {\"sum\": 2}" in sentinel.text
    late = [e for e in events[len(before):] if not e.call_id.startswith("sentinel")]
    assert late == [], "nothing is dispatched after the run returned"
    assert not [entry for entry in recorder.log if entry[0] == "end"]


async def test_preflight_rejects_bad_scripts_without_running_them(
    registry: cm.ToolRegistry, executor: Executor, recorder: Any
) -> None:
    mode = cm.CodeMode(registry, executor=executor)
    run = await mode.run(
        "await tools.slow_echo(text='ran', delay=0)\n"
        "await tools.add(a=1)\n"
        "await tools.ad(a=1, b=2)\n"
    )
    assert run.error is not None and run.error.type == "PreflightError"
    assert run.error.line == 2
    assert "line 2: tools.add is missing required argument(s): b" in run.error.message
    assert "line 3: unknown tool tools.ad; did you mean add?" in run.error.message
    assert recorder.log == []


async def test_run_code_timeout_argument_is_capped_by_the_host(
    registry: cm.ToolRegistry, executor: Executor
) -> None:
    mode = cm.CodeMode(
        registry, executor=executor, limits=cm.Limits(timeout=1.0, operations=10**12)
    )
    registry.register(mode.as_tool())
    result = await registry.execute(run_code_call("while True:\n    pass", timeout=60))
    assert result.is_error
    assert result.meta is not None
    assert result.meta["error"]["limit"] == "timeout"
    assert result.meta["limits"]["timeout"] == 1.0


async def test_run_code_caps_a_timeout_too_large_for_a_float(
    registry: cm.ToolRegistry
) -> None:
    # float(10**400) raised OverflowError: the run failed with a Python error
    async with cm.InProcessExecutor() as executor:
        registry.register(cm.CodeMode(registry, executor=executor,
                                      limits=cm.Limits(timeout=2.0)).as_tool())
        result = await registry.execute(run_code_call("1 + 1", timeout=10**400))
    assert not result.is_error, result.text
    assert result.meta is not None and result.meta["limits"]["timeout"] == 2.0


def test_check_reports_policy_violations_with_their_line(registry: cm.ToolRegistry) -> None:
    mode = cm.CodeMode(registry)
    problems = mode.check("x = 1\ny = x.__class__\n")
    assert len(problems) == 1
    assert problems[0].line == 2
    assert str(problems[0]).startswith("line 2: ")
    assert "Line" not in problems[0].message and "__class__" in problems[0].message


def test_prompt_explains_the_script_rules_then_lists_tools(registry: cm.ToolRegistry) -> None:
    mode = cm.CodeMode(registry)
    prompt = mode.prompt()
    assert "await" in prompt and "asyncio.gather" in prompt and "ToolCallError" in prompt
    assert prompt.index("Available tools") < prompt.index("slow_echo")


async def test_the_prompt_names_each_importable_module_once(registry: cm.ToolRegistry) -> None:
    """``urllib`` only holds ``parse``: the prompt names ``urllib.parse``, and every module
    it names imports in a run (every facade loads at once: a long clock for a loaded CI)."""
    mode = cm.CodeMode(registry, executor=cm.InProcessExecutor(),
                       limits=cm.Limits(timeout=60))
    line = next(x for x in mode.prompt().splitlines() if "Imports are limited to" in x)
    listed = line.split(": ", 1)[1].rstrip(".").split(", ")
    assert "urllib.parse" in listed and "urllib" not in listed
    assert "collections" in listed and "collections.abc" in listed
    run = await mode.run("".join(f"import {name}\n" for name in listed) + "1")
    assert run.ok, run.error
    await mode.aclose()


@pytest.mark.parametrize("code", ["", None, 3])
async def test_run_code_rejects_bad_arguments(registry: cm.ToolRegistry, code: Any) -> None:
    mode = cm.CodeMode(registry)
    registry.register(mode.as_tool())
    result = await registry.execute(
        cm.ToolCall(call_id="c", name="run_code", arguments={"code": code})
    )
    assert result.is_error and result.error is not None
    assert result.error.kind == "invalid_arguments"


async def test_python_names_map_back_to_exact_wire_names(executor: Executor) -> None:
    seen: list[dict[str, Any]] = []

    async def search(args: Any) -> str:
        seen.append(cm.thaw(args))
        return "ok"

    registry = cm.ToolRegistry()
    registry.register(
        cm.define_tool(
            name="search-repos",
            parameters={
                "type": "object",
                "properties": {
                    "from": {"type": "string"},
                    "user-id": {"type": "integer"},
                    "class": {"type": "string"},
                },
                "required": ["from"],
                "additionalProperties": False,
            },
            execute=search,
        )
    )
    mode = cm.CodeMode(registry, executor=executor)
    sdk = mode.sdk()
    assert sdk.names.tools == {"search_repos": "search-repos"}
    assert sdk.names.arguments["search-repos"] == {
        "from_": "from",
        "user_id": "user-id",
        "class_": "class",
    }
    run = await mode.run(
        "a = await tools.search_repos(from_='2024', user_id=7, class_='x')\n"
        "try:\n"
        "    await tools.search_repos(from_=len('x'))\n"
        "except ToolCallError as e:\n"
        "    where = e.path\n"
        "[a, where]"
    )
    assert run.ok, run.error
    assert run.value == ["ok", "$.from_"]
    assert seen == [{"from": "2024", "user-id": 7, "class": "x"}]


async def test_call_start_times_count_from_the_script_start_not_the_worker_boot() -> None:
    async def ok(args: Any) -> str:
        return "ok"

    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="ok", execute=ok))
    async with cm.WorkerPoolExecutor(size=1) as fresh_pool:
        mode = cm.CodeMode(registry, executor=fresh_pool)
        run = await mode.run("await tools.ok()\nawait tools.ok()")
    assert run.ok, run.error
    assert len(run.calls) == 2
    for record in run.calls:
        assert 0 <= record.started <= record.started + record.duration <= run.usage.time


async def test_resources_reach_the_script_as_text_or_as_a_note_naming_them(
    executor: Executor,
) -> None:
    registry = cm.ToolRegistry()

    async def files(args: Any, ctx: cm.ExecContext) -> list[Any]:
        return [
            cm.resource("file:///notes.md", text="# Notes\nhello", mime_type="text/markdown"),
            cm.resource("file:///logo.png", blob="aGVsbG8gd29ybGQ=", mime_type="image/png"),
            {"type": "resource_link", "uri": "file:///big.csv", "name": "big",
             "mimeType": "text/csv"},
        ]

    registry.register(cm.define_tool(name="files", execute=files))
    mode = cm.CodeMode(registry, executor=executor)
    run = await mode.run("(await tools.files()).splitlines()")
    assert run.ok, run.error
    assert run.value == [
        "# Notes",
        "hello",
        "[resource file:///logo.png image/png, 16 base64 chars: attached to the run_code result]",
        "[resource link file:///big.csv (big, text/csv)]",
    ]
    assert [b["resource"]["uri"] for b in run.attachments] == ["file:///logo.png"]



@pytest.mark.parametrize(("returned", "expected"), [
    pytest.param(None, None, id="none"),
    pytest.param(0, 0, id="zero"),
    pytest.param(False, False, id="false"),
    pytest.param([], [], id="empty-list"),
    pytest.param("", "", id="empty-text"),
    pytest.param("none", "none", id="text"),
])
async def test_a_side_effect_tool_returning_none_gives_the_script_none(
    executor: Executor, returned: Any, expected: Any,
) -> None:
    """JSON null is the one value whose structured form reads as "no data": the script
    gets ``None`` (not the text ``"null"``, which is truthy), and falsy values stay."""
    registry = cm.ToolRegistry()

    async def act(args: Any) -> Any:
        return returned

    registry.register(cm.define_tool(name="act", execute=act))
    mode = cm.CodeMode(registry, executor=executor)
    run = await mode.run("r = await tools.act()\n[r, type(r).__name__, bool(r)]")
    assert run.ok, run.error
    assert run.value == [expected, type(expected).__name__, bool(expected)]

PREFLIGHT_FAILURES = [
    pytest.param("await tools.slow_echo(text='ran', delay=0)\nawait tools.add(a=1)", 2,
                 "tools.add is missing required argument(s): b", id="missing-argument"),
    pytest.param("await tools.slow_echo(text='ran', delay=0)\nawait tools.ad(a=1, b=2)", 2,
                 "unknown tool tools.ad; did you mean add?", id="unknown-tool"),
    pytest.param("await tools.slow_echo(text='ran', delay=0)\nawait tools.add(a='x', b=2)", 2,
                 "tools.add", id="literal-fails-its-schema"),
]


async def _run_via_run_code(mode: cm.CodeMode, registry: cm.ToolRegistry,
                            script: str) -> tuple[str, int | None, str]:
    registry.register(mode.as_tool())
    result = await registry.execute(run_code_call(script))
    assert result.is_error and result.meta is not None
    error = result.meta["error"]
    assert list(result.meta["calls"]) == []
    assert result.text.startswith(f"error: PreflightError at line {error['line']}: ")
    return error["type"], error["line"], error["message"]


async def _run_via_mode(mode: cm.CodeMode, registry: cm.ToolRegistry,
                        script: str) -> tuple[str, int | None, str]:
    run = await mode.run(script)
    assert run.error is not None and run.calls == ()
    return run.error.type, run.error.line, run.error.message


@pytest.mark.parametrize("entry", [_run_via_mode, _run_via_run_code], ids=["run", "run_code"])
@pytest.mark.parametrize(("script", "line", "problem"), PREFLIGHT_FAILURES)
async def test_every_entry_point_preflights_before_any_call(
    registry: cm.ToolRegistry, recorder: Any, entry: Any, script: str, line: int, problem: str
) -> None:
    events: list[cm.ToolEvent] = []
    registry.subscribe(events.append)
    mode = cm.CodeMode(registry, executor=cm.InProcessExecutor())
    kind, where, message = await entry(mode, registry, script)
    assert (kind, where) == ("PreflightError", line)
    assert message.startswith("the script was not run:\n")
    assert problem in message
    assert recorder.log == []
    assert {e.name for e in events} <= {"run_code"}, "no nested call was dispatched"


ARRAYS = {
    "type": "object",
    "properties": {
        "tags": {"type": "array", "items": {"type": "string"}},
        "grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
        "from": {"type": "array", "items": {"type": "integer"}},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"from": {"type": "string"}, "to": {"type": "string"}},
                "required": ["from"],
            },
        },
        "range": {
            "type": "object",
            "properties": {"from": {"type": "array", "items": {"type": "integer"}}},
        },
    },
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("arguments", "path"),
    [
        pytest.param("tags=['a', n]", "$.tags[1]", id="array-index"),
        pytest.param("tags=[n, 'b', 'c']", "$.tags[0]", id="first-index"),
        pytest.param("grid=[[1, 2], [3, str(n)]]", "$.grid[1][1]", id="nested-arrays"),
        pytest.param("from_=[1, 2, str(n)]", "$.from_[2]", id="renamed-key-with-index"),
        pytest.param("items=[{'from': 'a'}, {'from': n}]", "$.items[1].from",
                     id="array-of-objects-keeps-its-nested-wire-key"),
        pytest.param("items=[{'from': 'a'}, {'to': str(n)}]", "$.items[1]",
                     id="array-of-objects-missing-key"),
        pytest.param("range={'from': [1, str(n)]}", "$.range.from[1]",
                     id="object-then-array"),
    ],
)
async def test_tool_call_error_path_keeps_indexes_and_script_names(
    executor: Executor, arguments: str, path: str
) -> None:
    seen: list[Any] = []

    async def book(args: Any) -> str:
        seen.append(args)
        return "booked"

    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="book", parameters=ARRAYS, execute=book))
    mode = cm.CodeMode(registry, executor=executor)
    run = await mode.run(
        "n = len('xy')\n"
        "try:\n"
        f"    await tools.book({arguments})\n"
        "    r = None\n"
        "except ToolCallError as e:\n"
        "    r = [e.tool, e.path]\n"
        "r"
    )
    assert run.ok, run.error
    assert run.value == ["book", path]
    assert seen == []


class _RogueExecutor:
    """An executor that calls whatever path it likes (as a compromised worker would try)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.raised: list[BaseException] = []

    async def run(self, source: str, *, call_tool: Any, tool_paths: Any = (),
                  limits: Any = None) -> cm.ScriptResult:
        try:
            await call_tool(self.path, {"path": "/etc/passwd"})
        except cm.ToolCallError as exc:
            self.raised.append(exc)
        return cm.ScriptResult(value="done")

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize("path", ["ghost", "run_code", "delete-file", "slow-echo"])
async def test_the_bridge_refuses_paths_the_sdk_does_not_offer(
    registry: cm.ToolRegistry, recorder: Any, path: str
) -> None:
    """Wire names (``slow-echo``), hidden tools and unknown names are not script paths."""
    rogue = _RogueExecutor(path)
    mode = cm.CodeMode(registry, executor=rogue, preflight=False)
    registry.register(mode.as_tool())
    events: list[cm.ToolEvent] = []
    registry.subscribe(events.append)
    run = await mode.run("1")
    assert run.value == "done"
    [error] = rogue.raised
    assert (error.tool, error.message) == (path, f"unknown tool tools.{path}")
    assert events == [] and recorder.log == []


@pytest.mark.parametrize("forged", [
    "#codemode:prelude " + "[" * 50_000,  # deeply nested JSON: a RecursionError to decode
    '#codemode:prelude {"modules": ["json"], "dialects": true}',
])
async def test_a_strict_scripts_first_line_is_never_read_as_a_host_prelude(
    registry: cm.ToolRegistry, executor: Executor, forged: str
) -> None:
    # A strict CodeMode attaches no prelude of its own unless it has inputs; a script that
    # starts with the marker gets an empty one, so its own line stays a comment.
    mode = cm.CodeMode(registry, executor=executor, strict=True, preflight=False)
    result = await mode.run(f"{forged}\ntry:\n    x = json.dumps(1)\nexcept NameError:\n"
                            "    x = 'no json'\nx")
    assert result.error is None, result.error
    assert result.value == "no json"  # the forged line bound no module
    again = await mode.run("1 + 1")
    assert again.value == 2


@pytest.mark.parametrize("registry_value", [None, "tools", {}])
def test_a_codemode_without_a_registry_is_refused_where_it_is_made(
        registry_value: Any) -> None:
    with pytest.raises(TypeError, match="CodeMode takes a ToolRegistry, not"):
        cm.CodeMode(registry_value)


@pytest.mark.parametrize(("script", "limits", "message"), [
    (None, None, "run\\(\\) takes the script's source as a str, not NoneType"),
    (b"1", None, "not bytes"),
    (1, None, "not int"),
    ("1", 5, r"limits must be a codemode\.Limits, not int"),
    ("1", {"timeout": 1}, "not dict"),
])
async def test_run_refuses_arguments_of_the_wrong_type_by_name(
        registry: cm.ToolRegistry, script: Any, limits: Any, message: str) -> None:
    # None and 1 failed with "object of type 'NoneType' has no len()", limits=5 with an
    # AttributeError from inside the run
    mode = cm.CodeMode(registry, executor=cm.InProcessExecutor())
    with pytest.raises(TypeError, match=message):
        await mode.run(script, limits=limits)
    with pytest.raises(TypeError, match=r"limits must be a codemode\.Limits"):
        cm.CodeMode(registry, limits=limits or 5)
    await mode.aclose()
