"""A tool or hook raising a ``BaseException`` never ends the host: only cancellation propagates.

argparse and click raise ``SystemExit``; a generator's ``close()`` raises ``GeneratorExit``;
a host's own ``KeyboardInterrupt`` subclass or a bare ``BaseException`` subclass can come
from any library a handler uses. Each is a failed call (``is_error``) or, from a hook, a
``PipelineError`` the caller can catch.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import anyio
import pytest

import codemode as cm

from .support import call


class Custom(BaseException):
    """A BaseException subclass some library might raise."""


def _argparse_exit() -> None:
    parser = argparse.ArgumentParser(prog="tool", add_help=False, exit_on_error=True)
    parser.add_argument("--n", type=int, required=True)
    with pytest.MonkeyPatch.context() as patch:  # keep argparse's usage text off stderr
        patch.setattr(parser, "print_usage", lambda *a: None)
        patch.setattr(parser, "exit", lambda status=0, message=None: (_ for _ in ()).throw(
            SystemExit(status)))
        parser.parse_args([])


RAISERS: list[tuple[str, Any]] = [
    ("SystemExit", lambda: (_ for _ in ()).throw(SystemExit(2))),
    ("SystemExit", _argparse_exit),
    ("KeyboardInterrupt", lambda: (_ for _ in ()).throw(KeyboardInterrupt())),
    ("GeneratorExit", lambda: (_ for _ in ()).throw(GeneratorExit())),
    ("Custom", lambda: (_ for _ in ()).throw(Custom("odd"))),
    # a cancellation nobody asked for: a library leaking one from an inner task
    ("CancelledError", lambda: (_ for _ in ()).throw(asyncio.CancelledError())),
]


def _registry(execute: Any, **options: Any) -> cm.ToolRegistry:
    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="t", execute=execute, **options))
    return registry


@pytest.mark.parametrize(("name", "raise_"), RAISERS)
@pytest.mark.parametrize("kind", ["async", "sync", "threaded", "deadline"])
async def test_handler_base_exception_is_an_error_result(name: str, raise_: Any,
                                                         kind: str) -> None:
    async def async_handler(args: Any) -> Any:
        raise_()

    def sync_handler(args: Any) -> Any:
        raise_()

    registry = _registry(async_handler if kind in ("async", "deadline") else sync_handler,
                         threaded=kind == "threaded")
    if kind == "deadline":  # the handler runs under a wrapper's deadline scope

        @registry.wrap_execute
        async def deadline(ctx: cm.ExecContext, call_next: Any) -> Any:
            return await call_next(ctx.with_deadline(30))

    result = await registry.execute(call("t"))
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "handler_error"
    assert result.error.message.startswith(name)


async def test_handler_base_exception_under_a_signal_is_not_a_group() -> None:
    async def handler(args: Any) -> Any:
        raise SystemExit(1)

    registry = _registry(handler)
    signal = cm.CancelSignal()

    @registry.wrap_execute
    async def with_signal(ctx: cm.ExecContext, call_next: Any) -> Any:
        return await call_next(ctx.with_signal(signal))

    result = await registry.execute(call("t"))
    assert result.is_error
    assert result.error is not None and result.error.message.startswith("SystemExit")


async def test_prepare_arguments_system_exit_is_invalid_arguments() -> None:
    def prepare(args: Any) -> Any:
        raise SystemExit(2)

    async def handler(args: Any) -> Any:
        return "never"

    registry = _registry(handler, prepare_arguments=prepare)
    result = await registry.execute(call("t"))
    assert result.is_error
    assert result.error is not None and result.error.kind == "invalid_arguments"
    assert "SystemExit" in result.error.message


@pytest.mark.parametrize("raised", [KeyboardInterrupt, asyncio.CancelledError])
@pytest.mark.parametrize("stage", ["pre", "guard", "post", "observer", "subscriber"])
async def test_hook_base_exception_raises_pipeline_error(stage: str,
                                                         raised: type[BaseException]) -> None:
    async def handler(args: Any) -> Any:
        return "ok"

    registry = _registry(handler)

    def hook(*args: Any) -> Any:
        raise raised

    {"pre": registry.pre_execute, "guard": registry.guard, "post": registry.post_execute,
     "observer": registry.on_result, "subscriber": registry.subscribe}[stage](hook)
    with pytest.raises(cm.PipelineError, match=raised.__name__):
        await registry.execute(call("t"))


async def test_cancellation_still_propagates() -> None:
    started = anyio.Event()

    async def handler(args: Any) -> Any:
        started.set()
        await anyio.sleep(30)

    registry = _registry(handler)
    finished = False
    async with anyio.create_task_group() as tg:

        async def go() -> None:
            nonlocal finished
            await registry.execute(call("t"))
            finished = True

        tg.start_soon(go)
        await started.wait()
        tg.cancel_scope.cancel()
    assert not finished


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("how", ["wait_for", "task.cancel", "raised again"])
async def test_an_asyncio_cancellation_still_propagates(how: str) -> None:
    """Cancelled by ``Task.cancel()`` (no anyio scope is cancelled): still a cancellation,
    also when the handler catches it and raises a new one."""
    started = anyio.Event()

    async def handler(args: Any) -> Any:
        started.set()
        try:
            await anyio.sleep(30)
        except asyncio.CancelledError:
            if how == "raised again":
                raise asyncio.CancelledError("mine") from None
            raise

    registry = _registry(handler)
    if how == "wait_for":
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(registry.execute(call("t")), 0.05)
        return
    task = asyncio.ensure_future(registry.execute(call("t")))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
