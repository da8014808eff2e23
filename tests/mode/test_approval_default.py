"""Approve before run is the default whenever the registry has policy to consult."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import codemode as cm

if TYPE_CHECKING:
    import pytest

    from codemode.sandbox import Executor

THREE = """\
await tools.write(path="a.txt", text="1")
await tools.write(path="b.txt", text="2")
await tools.write(path="/etc/hosts", text="3")
"""


def files(writes: list[str], *, policy: bool = True) -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    async def write(args: Any) -> str:
        writes.append(args["path"])
        return "ok"

    reg.register(cm.define_tool(name="write", execute=write, parameters={
        "path": {"type": "string", "required": True}, "text": {"type": "string"}}))
    if policy:
        reg.pre_execute(lambda ctx: cm.Deny("system files are read-only")
                        if ctx.name == "write" and ctx.arguments["path"].startswith("/etc/")
                        else None)
    return reg


async def test_the_third_call_denied_means_no_write_at_all(executor: Executor) -> None:
    writes: list[str] = []
    mode = cm.CodeMode(files(writes), executor=executor)  # no option: the default
    result = await mode.run(THREE)
    assert result.error is not None and result.error.type == "PreflightError"
    assert result.error.line == 3 and "system files are read-only" in result.error.message
    assert writes == []


async def test_through_run_code_the_third_call_denied_means_no_write(
        executor: Executor) -> None:
    writes: list[str] = []
    reg = files(writes)
    reg.register(cm.CodeMode(reg, executor=executor).as_tool())
    events: list[cm.ToolEvent] = []
    reg.subscribe(events.append)
    result = await reg.execute(cm.ToolCall(call_id="r", name="run_code",
                                           arguments={"code": THREE}))
    assert result.is_error and "PreflightError at line 3" in result.text
    assert writes == []
    assert [e.name for e in events if e.type == "tool/call"] == ["run_code"]  # nothing nested


async def test_opting_out_runs_until_the_denial(executor: Executor) -> None:
    writes: list[str] = []
    mode = cm.CodeMode(files(writes), executor=executor, policy_preflight=False)
    result = await mode.run(THREE)
    assert result.error is not None and result.error.type == "ToolCallError"
    assert writes == ["a.txt", "b.txt"]  # the old behaviour, when asked for


async def test_a_registry_without_policy_has_no_dry_pass() -> None:
    writes: list[str] = []
    reg = files(writes, policy=False)
    assert not cm.CodeMode(reg).policy_preflight  # None: decided per run
    async with cm.InProcessExecutor() as executor:
        result = await cm.CodeMode(reg, executor=executor).run(THREE)
    assert isinstance(result, cm.RunResult) and result.approval is None
    assert result.error is None and writes == ["a.txt", "b.txt", "/etc/hosts"]


async def test_a_hook_with_side_effects_checks_dry_run() -> None:
    writes: list[str] = []
    reg = files(writes, policy=False)
    audit: list[str] = []
    seen: list[bool] = []

    @reg.pre_execute
    def audited(ctx: cm.ExecContext) -> None:
        seen.append(ctx.dry_run)
        if not ctx.dry_run:  # the contract: side effects only for calls that will run
            audit.append(ctx.arguments["path"])

    async with cm.InProcessExecutor() as executor:
        result = await cm.CodeMode(reg, executor=executor).run(THREE.replace("/etc/", ""))
    assert result.error is None
    assert seen == [True, True, True, False, False, False]
    assert audit == ["a.txt", "b.txt", "hosts"]


async def test_a_hook_raising_in_the_dry_pass_leaves_the_call_to_run_time(
        caplog: pytest.LogCaptureFixture) -> None:
    writes: list[str] = []
    reg = files(writes, policy=False)

    @reg.pre_execute
    def fragile(ctx: cm.ExecContext) -> None:
        if ctx.dry_run:
            raise RuntimeError("no session in a dry run")

    async with cm.InProcessExecutor() as executor:
        result = await cm.CodeMode(reg, executor=executor).run(THREE)
    assert result.error is None and writes == ["a.txt", "b.txt", "/etc/hosts"]
    assert "decided when it runs" in caplog.text


def mail(outbox: list[str], read: list[str]) -> cm.ToolRegistry:
    reg = cm.ToolRegistry()

    async def get_credentials(args: Any) -> str:
        read.append("credentials")
        return "hunter2"

    async def send_email(args: Any) -> str:
        outbox.append(args["body"])
        return "sent"

    reg.register(cm.define_tool(name="get_credentials", execute=get_credentials,
                                labels={"secret"}))
    reg.register(cm.define_tool(name="send_email", execute=send_email, refuses={"secret"},
                                parameters={"body": {"type": "string", "required": True}}))
    return reg


async def test_a_refused_label_from_an_earlier_statement_refuses_the_script(
        executor: Executor) -> None:
    outbox: list[str] = []
    read: list[str] = []
    mode = cm.CodeMode(mail(outbox, read), executor=executor)  # no hooks: refuses is policy
    result = await mode.run('creds = await tools.get_credentials()\n'
                            'await tools.send_email(body="weekly report")')
    assert result.error is not None and result.error.type == "PreflightError"
    assert result.error.line == 2
    assert ("send_email refuses 'secret': read from get_credentials at line 1"
            in result.error.message)
    assert read == [] and outbox == []  # refused before the secret was even read


async def test_calls_of_one_statement_carry_nothing_to_each_other() -> None:
    """In a gather the send may start before the read ends: the run-time check decides."""
    outbox: list[str] = []
    read: list[str] = []
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(mail(outbox, read), executor=executor)
        result = await mode.run('await asyncio.gather(tools.get_credentials(), '
                                'tools.send_email(body="hi"))')
    assert result.error is None or result.error.type != "PreflightError"
    assert read == ["credentials"]  # the preflight left the pair to run time


async def test_an_ask_nobody_can_answer_refuses_the_script_up_front() -> None:
    writes: list[str] = []
    reg = files(writes, policy=False)
    reg.pre_execute(lambda ctx: cm.Ask(f"write {ctx.arguments['path']}?")
                    if ctx.arguments["path"] == "b.txt" else None)
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(reg, executor=executor)
        result = await mode.run(THREE)
        assert result.error is not None and result.error.type == "PreflightError"
        assert result.error.line == 2
        assert "needs approval (write b.txt?) and no approver is configured" in (
            result.error.message)
        assert writes == []
        reg.approver = lambda ctx, prompt: True  # now it can be asked when it is made
        assert (await mode.run(THREE)).error is None
    assert writes == ["a.txt", "b.txt", "/etc/hosts"]
