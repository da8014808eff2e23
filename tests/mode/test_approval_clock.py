"""Waiting for an approver does not use the run's timeout (#15), on both executors.

A nested call whose policy asks (``Ask``) waits for the registry's approver; meanwhile
the run's clock stands still, host side (the executor's deadline) and script side
(the meter's deadline and the runner's cancel scope), and moves on by the time the
approver took. Everything else still counts: a script that spins past its timeout
trips it, approval or not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import pytest

import codemode as cm

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio

TIMEOUT = 0.5
WAIT = 1.2
"""The approver's wait: longer than the run's whole timeout plus the executors' graces."""


def _registry(log: list[Any], wait: float = WAIT) -> cm.ToolRegistry:
    async def approver(ctx: cm.ExecContext, prompt: str) -> bool:
        log.append(("asked", ctx.name, prompt))
        await anyio.sleep(wait)  # a person deciding
        return True

    reg = cm.ToolRegistry(approver=approver)

    async def deploy(args: Any, ctx: cm.ExecContext) -> dict[str, Any]:
        log.append(("deployed", ctx.deadline is not None))
        return {"deployed": args["env"]}

    reg.register(cm.define_tool(
        name="deploy", execute=deploy,
        parameters={"type": "object", "properties": {"env": {"type": "string"}},
                    "required": ["env"]}))
    reg.pre_execute(lambda ctx: cm.Ask(f"deploy to {ctx.arguments['env']}?")
                    if ctx.name == "deploy" else None)
    return reg


def _mode(reg: cm.ToolRegistry, executor: Executor) -> cm.CodeMode:
    # policy_preflight off: the approval happens while the script runs, not before it;
    # operations out of reach, so a spinning script ends by its timeout however fast the
    # machine (10**7 operations sometimes came first on CI)
    return cm.CodeMode(reg, executor=executor,
                       limits=cm.Limits(timeout=TIMEOUT, operations=10**12),
                       policy_preflight=False)


async def test_an_approver_slower_than_the_timeout_does_not_time_the_run_out(
        executor: Executor) -> None:
    log: list[Any] = []
    mode = _mode(_registry(log), executor)
    await mode.run("1")  # a worker is up
    result = await mode.run("r = await tools.deploy(env='prod')\n[r, 'after']")
    assert result.error is None, result.error
    assert result.value == [{"deployed": "prod"}, "after"]
    assert log == [("asked", "deploy", "deploy to prod?"), ("deployed", True)]


async def test_the_wait_pauses_the_clock_but_the_script_still_has_its_own_time(
        executor: Executor) -> None:
    log: list[Any] = []
    mode = _mode(_registry(log, wait=0.3), executor)
    await mode.run("1")
    spin = "await tools.deploy(env='dev')\nwhile True:\n    pass\n"
    result = await mode.run(spin)
    assert result.error is not None and result.error.limit == "timeout", result.error
    assert log == [("asked", "deploy", "deploy to dev?"), ("deployed", True)]


async def test_a_spinning_script_without_approvals_still_trips_its_timeout(
        executor: Executor) -> None:
    mode = _mode(_registry([]), executor)
    await mode.run("1")
    result = await mode.run("while True:\n    pass\n")
    assert result.error is not None and result.error.limit == "timeout"
