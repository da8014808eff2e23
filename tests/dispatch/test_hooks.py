"""Extension points: pre_execute, guards, execute wrappers, post_execute, result observers."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

import codemode as cm

from .support import call

Next = Callable[[cm.ExecContext], Awaitable[Any]]


@pytest.fixture
def ran(registry: cm.ToolRegistry) -> list[str]:
    """Register tool ``t`` (returns ``{content, meta}``); the list records handler runs."""
    runs: list[str] = []

    async def handler(args: Any, ctx: cm.ExecContext) -> Any:
        runs.append(ctx.call_id)
        return cm.Envelope(f"ran {dict(args)}", meta={"secret": 1})

    registry.register(
        cm.define_tool(name="t", parameters={"k": {"type": "integer"}}, execute=handler)
    )
    return runs


def denied(result: cm.ToolResult) -> str:
    assert result.is_error and result.error is not None and result.error.kind == "denied"
    return result.text


async def test_hooks_run_in_pipeline_order(registry: cm.ToolRegistry) -> None:
    order: list[str] = []

    async def handler(args: Any, ctx: cm.ExecContext) -> str:
        order.append("handler")
        return "ok"

    registry.register(cm.define_tool(name="t", execute=handler))

    @registry.pre_execute
    def pre1(ctx: cm.ExecContext) -> None:
        order.append("pre1")

    @registry.pre_execute
    async def pre2(ctx: cm.ExecContext) -> cm.Allow:
        order.append("pre2")
        return cm.Allow()

    @registry.guard
    def guard(ctx: cm.ExecContext) -> None:
        order.append("guard")

    @registry.wrap_execute
    async def outer(ctx: cm.ExecContext, call_next: Next) -> Any:
        order.append("outer>")
        value = await call_next(ctx)
        order.append("<outer")
        return value

    @registry.wrap_execute
    def inner(ctx: cm.ExecContext, call_next: Next) -> Awaitable[Any]:
        order.append("inner")
        return call_next(ctx)

    @registry.post_execute
    def post(ctx: cm.ExecContext, result: cm.ToolResult) -> None:
        order.append("post")

    @registry.on_result
    async def observe(result: cm.ToolResult) -> None:
        order.append("observe")

    result = await registry.execute(call("t"))
    assert result.text == "ok"
    assert order == [
        "pre1",
        "pre2",
        "guard",
        "outer>",
        "inner",
        "handler",
        "<outer",
        "post",
        "observe",
    ]


async def test_hooks_get_frozen_data(registry: cm.ToolRegistry, ran: list[str]) -> None:
    refusals: list[str] = []

    def attempt(label: str, action: Callable[[], object]) -> None:
        try:
            action()
        except (TypeError, AttributeError, dataclasses.FrozenInstanceError):
            refusals.append(label)

    @registry.pre_execute
    def pre(ctx: cm.ExecContext) -> None:
        attempt("pre.args", lambda: ctx.arguments.__setitem__("k", 2))
        attempt("pre.ctx", lambda: setattr(ctx, "call_id", "forged"))

    @registry.guard
    def guard(ctx: cm.ExecContext) -> None:
        attempt("guard.args", lambda: ctx.arguments.pop("k"))

    @registry.post_execute
    def post(ctx: cm.ExecContext, result: cm.ToolResult) -> None:
        attempt("post.result", lambda: setattr(result, "is_error", True))
        attempt("post.meta", lambda: result.meta.__setitem__("secret", 2))  # type: ignore[union-attr]

    @registry.on_result
    def observe(result: cm.ToolResult) -> None:
        attempt("observe.content", lambda: result.content[0].__setitem__("text", "x"))
        attempt("observe.result", lambda: setattr(result, "content", ()))

    result = await registry.execute(call("t", {"k": 1}))
    assert refusals == [
        "pre.args",
        "pre.ctx",
        "guard.args",
        "post.result",
        "post.meta",
        "observe.content",
        "observe.result",
    ]
    assert result.text == "ran {'k': 1}" and result.meta == {"secret": 1}


async def test_deny_stops_the_call_with_its_reason(
    registry: cm.ToolRegistry, ran: list[str]
) -> None:
    later: list[str] = []
    registry.pre_execute(lambda ctx: cm.Deny("read-only mode"))
    registry.pre_execute(lambda ctx: later.append("pre"))
    registry.guard(lambda ctx: later.append("guard"))
    result = await registry.execute(call("t"))
    assert denied(result) == "call to 't' denied: read-only mode"
    assert ran == [] and later == []


async def test_guard_deny_is_final_even_when_pre_execute_allowed(
    registry: cm.ToolRegistry, ran: list[str]
) -> None:
    registry.pre_execute(lambda ctx: cm.Allow())
    registry.guard(lambda ctx: None)
    registry.guard(lambda ctx: cm.Deny("budget exhausted") if ctx.arguments.get("k") else None)
    assert "budget exhausted" in denied(await registry.execute(call("t", {"k": 1})))
    assert ran == []
    assert not (await registry.execute(call("t"))).is_error
    assert len(ran) == 1


async def test_allow_does_not_skip_later_hooks_or_guards(
    registry: cm.ToolRegistry, ran: list[str]
) -> None:
    registry.pre_execute(lambda ctx: cm.Allow())
    registry.pre_execute(lambda ctx: cm.Deny("second opinion"))
    assert "second opinion" in denied(await registry.execute(call("t")))
    assert ran == []


@pytest.mark.parametrize(
    ("approver", "outcome"),
    [
        pytest.param(lambda ctx, prompt: True, None, id="sync-yes"),
        pytest.param(lambda ctx, prompt: cm.Allow(), None, id="allow"),
        pytest.param(
            lambda ctx, prompt: False, "call to 't' not approved (delete things?)", id="sync-no"
        ),
        pytest.param(
            lambda ctx, prompt: None, "call to 't' not approved (delete things?)", id="none-is-no"
        ),
        pytest.param(
            lambda ctx, prompt: cm.Deny("operator said no"),
            "call to 't' not approved: operator said no",
            id="deny",
        ),
        pytest.param(
            None,
            "call to 't' needs approval (delete things?) and no approver is configured",
            id="missing",
        ),
    ],
)
async def test_ask_consults_the_approver(approver: Any, outcome: str | None) -> None:
    asked: list[tuple[str, str]] = []

    def recording(ctx: cm.ExecContext, prompt: str) -> Any:
        asked.append((ctx.name, prompt))
        return approver(ctx, prompt)

    registry = cm.ToolRegistry(approver=recording if approver else None)
    registry.register(cm.define_tool(name="t", execute=lambda args: "done"))
    registry.pre_execute(lambda ctx: cm.Ask("delete things?"))
    result = await registry.execute(call("t"))
    if outcome is None:
        assert not result.is_error and result.text == "done"
    else:
        assert denied(result) == outcome
    assert asked == ([("t", "delete things?")] if approver else [])


async def test_async_approver_and_guard_after_approval() -> None:
    async def approver(ctx: cm.ExecContext, prompt: str) -> bool:
        await anyio.lowlevel.checkpoint()
        return True

    registry = cm.ToolRegistry(approver=approver)
    registry.register(cm.define_tool(name="t", execute=lambda args: "done"))
    registry.pre_execute(lambda ctx: cm.Ask("ok?"))
    assert (await registry.execute(call("t"))).text == "done"
    registry.guard(lambda ctx: cm.Deny("guards still apply"))
    assert "guards still apply" in denied(await registry.execute(call("t")))


@pytest.mark.parametrize(
    ("stage", "value", "message"),
    [
        ("pre_execute", "yes", "expected None, Allow(), Deny(reason) or Ask(prompt)"),
        ("guard", cm.Ask("?"), "guards may only return None or Deny(reason)"),
        ("approver", "maybe", "approver returned 'maybe'"),
    ],
)
async def test_contract_violations_raise_pipeline_error(
    stage: str, value: Any, message: str
) -> None:
    registry = cm.ToolRegistry(
        approver=(lambda ctx, prompt: value) if stage == "approver" else None
    )
    registry.register(cm.define_tool(name="t", execute=lambda args: "done"))
    if stage == "pre_execute":
        registry.pre_execute(lambda ctx: value)
    elif stage == "guard":
        registry.guard(lambda ctx: value)
    else:
        registry.pre_execute(lambda ctx: cm.Ask("?"))
    with pytest.raises(
        cm.PipelineError, match=r"expected|guards may only|approver returned"
    ) as caught:
        await registry.execute(call("t"))
    assert message in str(caught.value)


async def test_deadline_wrapper_turns_a_slow_handler_into_a_timeout(
    registry: cm.ToolRegistry,
) -> None:
    cleaned: list[str] = []

    async def slow(args: Any, ctx: cm.ExecContext) -> str:
        try:
            await anyio.sleep_forever()
        finally:
            cleaned.append("handler saw cancellation")
        return "never"

    registry.register(cm.define_tool(name="slow", execute=slow))

    @registry.wrap_execute
    async def deadline(ctx: cm.ExecContext, call_next: Next) -> Any:
        return await call_next(ctx.with_deadline(0.01))

    result = await registry.execute(call("slow"))
    assert result.is_error and result.error is not None
    assert (result.error.kind, result.text) == ("timeout", "'slow' timed out (deadline passed)")
    assert cleaned == ["handler saw cancellation"]


async def test_removing_the_deadline_lets_the_handler_finish(registry: cm.ToolRegistry) -> None:
    registry.register(cm.define_tool(name="t", execute=lambda args, ctx: str(ctx.deadline)))

    @registry.wrap_execute
    async def add(ctx: cm.ExecContext, call_next: Next) -> Any:
        return await call_next(ctx.with_deadline(0.0))

    @registry.wrap_execute
    async def remove(ctx: cm.ExecContext, call_next: Next) -> Any:
        return await call_next(ctx.with_deadline(None))

    assert (await registry.execute(call("t"))).text == "None"


async def test_retry_wrapper_retries_a_flaky_handler(registry: cm.ToolRegistry) -> None:
    attempts: list[int] = []

    async def flaky(args: Any, ctx: cm.ExecContext) -> str:
        attempts.append(len(attempts) + 1)
        if len(attempts) < 3:
            raise ConnectionError("try again")
        return f"succeeded on attempt {len(attempts)}"

    registry.register(cm.define_tool(name="flaky", execute=flaky))

    @registry.wrap_execute
    async def retry(ctx: cm.ExecContext, call_next: Next) -> Any:
        for _ in range(4):
            try:
                return await call_next(ctx)
            except ConnectionError:
                continue
        raise ConnectionError("gave up")

    result = await registry.execute(call("flaky"))
    assert not result.is_error and result.text == "succeeded on attempt 3"
    assert attempts == [1, 2, 3]


@pytest.mark.parametrize(
    "change",
    [
        lambda ctx: dataclasses.replace(ctx, arguments=cm.FrozenDict(k=2)),
        lambda ctx: dataclasses.replace(ctx, call_id="forged"),
        lambda ctx: dataclasses.replace(ctx, name="other"),
        lambda ctx: dataclasses.replace(ctx, token=cm.Token()),
        lambda ctx: dataclasses.replace(ctx, parent=cm.Token()),
        lambda ctx: dataclasses.replace(ctx, agent="root"),
        lambda ctx: dataclasses.replace(ctx, spec=cm.ToolSpec(name="t")),
        lambda ctx: dataclasses.replace(ctx, report=print),
        lambda ctx: {"not": "a context"},
    ],
    ids=["arguments", "call_id", "name", "token", "parent", "agent", "spec", "report", "dict"],
)
async def test_wrappers_may_only_change_signal_or_deadline(
    registry: cm.ToolRegistry, ran: list[str], change: Any
) -> None:
    @registry.wrap_execute
    async def tamper(ctx: cm.ExecContext, call_next: Next) -> Any:
        return await call_next(change(ctx))

    with pytest.raises(cm.PipelineError, match="wrapper"):
        await registry.execute(call("t", {"k": 1}))
    assert ran == []


async def test_fired_signal_gives_a_cancelled_result(registry: cm.ToolRegistry) -> None:
    started = anyio.Event()
    cleaned: list[str] = []
    signal = cm.CancelSignal()

    async def slow(args: Any, ctx: cm.ExecContext) -> str:
        assert ctx.signal is signal
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cleaned.append("cancelled")
        return "never"

    registry.register(cm.define_tool(name="slow", execute=slow))
    registry.wrap_execute(lambda ctx, call_next: call_next(ctx.with_signal(signal)))
    results: list[cm.ToolResult] = []
    async with anyio.create_task_group() as tg:

        async def caller() -> None:
            results.append(await registry.execute(call("slow")))

        tg.start_soon(caller)
        await started.wait()
        signal.cancel("user pressed stop")
        signal.cancel("second reason is ignored")
    [result] = results
    assert result.is_error and result.error is not None
    assert (result.error.kind, result.text) == ("cancelled", "'slow' was cancelled")
    assert cleaned == ["cancelled"]
    assert signal.cancelled and signal.reason == "user pressed stop"


async def test_signal_fired_before_the_handler_means_it_never_runs(
    registry: cm.ToolRegistry, ran: list[str]
) -> None:
    signal = cm.CancelSignal()
    signal.cancel()
    registry.wrap_execute(lambda ctx, call_next: call_next(ctx.with_signal(signal)))
    result = await registry.execute(call("t"))
    assert result.error is not None and result.error.kind == "cancelled"
    assert ran == []


async def test_handler_errors_under_a_signal_stay_plain(registry: cm.ToolRegistry) -> None:
    async def boom(args: Any, ctx: cm.ExecContext) -> str:
        raise ValueError("bad")

    registry.register(cm.define_tool(name="boom", execute=boom))
    registry.wrap_execute(lambda ctx, call_next: call_next(ctx.with_signal(cm.CancelSignal())))
    result = await registry.execute(call("boom"))
    assert result.error is not None
    assert (result.error.kind, result.text) == ("handler_error", "ValueError: bad")


async def test_unfired_signal_returns_the_handler_value(
    registry: cm.ToolRegistry, ran: list[str]
) -> None:
    registry.wrap_execute(lambda ctx, call_next: call_next(ctx.with_signal(cm.CancelSignal())))
    result = await registry.execute(call("t", {"k": 5}))
    assert result.text == "ran {'k': 5}" and len(ran) == 1


@pytest.mark.parametrize(
    ("returned", "text"),
    [
        (None, "ran {}"),
        ("rewritten", "rewritten"),
        ([cm.text("a"), cm.text("b")], "a\nb"),
        (cm.ToolResult(call_id="x", name="x", content=(cm.text("replaced"),)), "replaced"),
    ],
)
async def test_post_execute_transforms_content_but_meta_stays(
    registry: cm.ToolRegistry, ran: list[str], returned: Any, text: str
) -> None:
    seen: list[cm.ToolResult] = []
    registry.post_execute(lambda ctx, result: returned)
    registry.on_result(seen.append)
    result = await registry.execute(call("t"))
    assert result.text == text
    assert result.meta == {"secret": 1}
    assert result.name == "t" and result.call_id != "x"
    assert seen == [result]


async def test_post_execute_hooks_chain(registry: cm.ToolRegistry, ran: list[str]) -> None:
    registry.post_execute(lambda ctx, result: result.text.upper())
    registry.post_execute(lambda ctx, result: f"[{ctx.name}] {result.text}")
    assert (await registry.execute(call("t"))).text == "[t] RAN {}"


async def test_post_execute_returning_garbage_is_a_pipeline_error(
    registry: cm.ToolRegistry, ran: list[str]
) -> None:
    registry.post_execute(lambda ctx, result: {1, 2})
    with pytest.raises(cm.PipelineError, match="cannot be normalised"):
        await registry.execute(call("t"))


async def test_observers_see_every_final_result_including_errors(
    registry: cm.ToolRegistry, ran: list[str]
) -> None:
    seen: list[cm.ToolResult] = []
    registry.on_result(seen.append)
    registry.post_execute(lambda ctx, result: "post-processed")
    registry.guard(lambda ctx: cm.Deny("no k=2") if ctx.arguments.get("k") == 2 else None)
    results = [
        await registry.execute(call(*c))
        for c in [("t", {}), ("t", {"k": "x"}), ("t", {"k": 2}), ("nope", {})]
    ]
    assert seen == results
    assert [r.error.kind if r.error else None for r in seen] == [
        None,
        "invalid_arguments",
        "denied",
        "unknown_tool",
    ]
    assert seen[0].text == "post-processed"
    assert all(r.duration > 0 for r in seen)


async def test_a_raising_hook_propagates_as_a_host_bug(
    registry: cm.ToolRegistry, ran: list[str]
) -> None:
    def broken(ctx: cm.ExecContext) -> None:
        raise RuntimeError("policy crashed")

    registry.pre_execute(broken)
    with pytest.raises(RuntimeError, match="policy crashed"):
        await registry.execute(call("t"))
    assert ran == []
