"""Typed state between runs: a session keeps the JSON globals a script leaves."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import codemode as cm

if TYPE_CHECKING:
    from codemode.sandbox import Executor

FIRST = """\
rows = await tools.rows()
by_name = {row["name"]: row["n"] for row in rows}
helper = lambda x: x
len(rows)
"""
SECOND = """\
total = sum(row["n"] for row in rows)
[total, by_name["b"]]
"""


def rows_registry() -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    async def rows(args: Any) -> list[dict[str, Any]]:
        return [{"name": "a", "n": 1}, {"name": "b", "n": 2}]

    reg.register(cm.define_tool(name="rows", execute=rows, output_schema={"type": "array"}))
    return reg


async def test_a_two_run_session(executor: Executor) -> None:
    mode = cm.CodeMode(rows_registry(), executor=executor)
    session = mode.session()
    first = await session.run(FIRST)
    assert first.error is None and first.value == 2
    assert session.state == {"rows": [{"name": "a", "n": 1}, {"name": "b", "n": 2}],
                             "by_name": {"a": 1, "b": 2}}  # the lambda is not JSON: not kept
    prompt = session.prompt()
    assert "  by_name: dict = {\"a\": 1, \"b\": 2}" in prompt
    assert "  rows: list = [" in prompt
    second = await session.run(SECOND)
    assert second.error is None and second.value == [3, 2]
    assert set(session.state) == {"rows", "by_name", "total"}


async def test_a_two_run_session_through_run_code(executor: Executor) -> None:
    reg = rows_registry()
    mode = cm.CodeMode(reg, executor=executor)
    reg.register(mode.as_tool(session=mode.session()))
    first = await reg.execute(cm.ToolCall(call_id="t1", name="run_code",
                                          arguments={"code": FIRST}))
    assert not first.is_error and "value: 2" in first.text
    second = await reg.execute(cm.ToolCall(call_id="t2", name="run_code",
                                           arguments={"code": SECOND}))
    assert not second.is_error, second.text
    assert "value: [3, 2]" in second.text


async def test_what_a_session_keeps_is_bounded_and_only_from_finished_runs() -> None:
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(rows_registry(), executor=executor)
        session = mode.session(max_bytes=40)
        await session.run('small = "x" * 10\nbig = "y" * 100\nsmall')
        assert session.state == {"small": "x" * 10}
        failed = await session.run('small = "changed"\n1 / 0')
        assert failed.error is not None and session.state == {"small": "x" * 10}
        await session.run("small = {1, 2}")  # rebound to a set: no longer JSON, dropped
        assert session.state == {}


async def test_a_changed_sdk_clears_the_state() -> None:
    reg = rows_registry()
    async with cm.InProcessExecutor() as executor:
        session = cm.CodeMode(reg, executor=executor).session()
        await session.run("kept = 1")
        assert session.state == {"kept": 1}
        reg.register(cm.define_tool(name="other", execute=lambda args: 1))
        result = await session.run("kept")
    assert result.error is not None and "kept" in result.error.message
    assert session.state == {}


async def test_a_script_ending_in_an_assignment_keeps_its_value() -> None:
    async with cm.InProcessExecutor() as executor:
        session = cm.CodeMode(rows_registry(), executor=executor).session()
        result = await session.run("n = 3")
    assert result.value == 3 and session.state == {"n": 3}


async def test_a_script_cannot_lift_the_bound_by_rebinding_len() -> None:
    async with cm.InProcessExecutor() as executor:
        session = cm.CodeMode(rows_registry(), executor=executor).session(max_bytes=40)
        await session.run('len = lambda value: 0\nbig = "y" * 100\nsmall = "x"')
    assert session.state == {"small": "x"}


def secret_registry(sent: list[str]) -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    async def get_credentials(args: Any) -> dict[str, str]:
        return {"password": "hunter2"}

    async def send_email(args: Any) -> str:
        sent.append(args["body"])
        return "sent"

    reg.register(cm.define_tool(name="get_credentials", execute=get_credentials,
                                labels={"secret"}))
    reg.register(cm.define_tool(name="send_email", execute=send_email, refuses={"secret"},
                                parameters={"body": {"type": "string", "required": True}}))
    return reg


async def test_a_secret_kept_in_the_state_stays_refused_in_later_runs(
        executor: Executor) -> None:
    sent: list[str] = []
    reg = secret_registry(sent)
    session = cm.CodeMode(reg, executor=executor).session()
    first = await session.run('password = (await tools.get_credentials())["password"]')
    assert first.error is None and session.state == {"password": "hunter2"}
    later = await session.run("await tools.send_email(body=password)")  # known at run time
    assert later.error is not None and "refuses 'secret'" in later.error.message
    static = await session.run('await tools.send_email(body="the usual")')  # up front
    assert static.error is not None and static.error.type == "PreflightError"
    assert sent == []  # the secret the first run left never reached the sink
    assert "get_credentials at line 1" in session.labels["secret"]


async def test_a_secret_kept_in_the_state_stays_refused_through_run_code() -> None:
    sent: list[str] = []
    reg = secret_registry(sent)
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(reg, executor=executor)
        reg.register(mode.as_tool(session=mode.session()))
        await reg.execute(cm.ToolCall(call_id="t1", name="run_code", arguments={
            "code": 'creds = await tools.get_credentials()'}))
        leak = await reg.execute(cm.ToolCall(call_id="t2", name="run_code", arguments={
            "code": 'await tools.send_email(body=creds["password"])'}))
    assert leak.is_error and "refuses 'secret'" in leak.text
    assert sent == []


async def test_the_capture_finds_the_last_line_where_python_does() -> None:
    # str.splitlines() breaks at \x1c, \x0c, \x85, \u2028: the value capture used to land
    # on the wrong row (a SyntaxError, or a NameError for its own variable)
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(rows_registry(), executor=executor)
        for script in ('s = "a\x1cb"\nlen(s)', 's = """a\x0cb"""\r\nlen(s)',
                       'u = """x\u2028\n"""\rlen(u)', 't = "\x85"\n[t, 5][1] - 2'):
            session = mode.session()
            done = await session.run(script)
            assert done.error is None and done.value == 3, (script, done.error)
            assert len(session.state) == 1


async def test_a_script_of_many_assignments_keeps_them(executor: Executor) -> None:
    """The capture is one loop over the names (a block per name made 1 500 assignments,
    12 000 characters, a script of 350 000: refused as too long)."""
    mode = cm.CodeMode(rows_registry(), executor=executor)
    session = mode.session()
    script = "".join(f"v{i} = {i}\n" for i in range(1500)) + "'done'\n"
    result = await session.run(script)
    assert result.error is None and result.value == "done", result.error
    assert session.state == {f"v{i}": i for i in range(1500)}


async def test_names_past_the_length_cap_are_not_kept(executor: Executor) -> None:
    """A script near the length cap still runs: the names whose capture would not fit are
    not kept, and no earlier state stays under a name the script bound."""
    mode = cm.CodeMode(rows_registry(), executor=executor)
    session = mode.session()
    first = await session.run("last_one = 'old'\nfirst_one = 'old'\n1")
    assert first.error is None and session.state == {"last_one": "old", "first_one": "old"}
    pad = "#" * 85_000
    result = await session.run(
        "first_one = 'new'\n" + "".join(f"x{i} = {i}\n" for i in range(1000))
        + f"last_one = 'new'\n{pad}\n2")
    assert result.error is None and result.value == 2, result.error
    assert session.state["first_one"] == "new" and "last_one" not in session.state
