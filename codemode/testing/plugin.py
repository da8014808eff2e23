"""The ``codemode`` pytest plugin: fixtures for testing tools and scripts in CI.

Registered through the ``pytest11`` entry point ``codemode``, so installing
codemode makes these fixtures available in any test suite:

- ``tool_registry``: a fresh ``ToolRegistry`` per test.
- ``tool_events``: a ``ToolEvents`` recording that registry's events.
- ``scripted_tools``: a ``ScriptedTools`` kit over it; a queue that ran dry
  fails the test at teardown even if the script caught the error.
- ``code_mode_limits``: the ``Limits`` for ``code_mode`` (override it in a conftest).
- ``code_mode``: a ``CodeMode`` over the registry with an in-process executor.
- ``run_code``: the ``run_code`` tool registered in the registry, as an async
  callable ``await run_code(script) -> ToolResult`` dispatched like a model's call.

An ``async def`` test that asks for one of these fixtures runs under anyio's pytest
plugin, on asyncio, without the suite setting ``anyio_mode = "auto"`` or marking it; a
test marked ``anyio``/``asyncio``/``trio`` (or in an ``anyio``-marked class or module, or
owned by pytest-asyncio's auto mode) is left as it is.

Heavy imports (the sandbox, the SDK generator) happen inside the fixtures, so
loading the plugin never breaks an unrelated test session.
"""

from __future__ import annotations

import inspect
import threading
from typing import TYPE_CHECKING

import anyio
import pytest

from codemode.dispatch.registry import ToolRegistry
from codemode.testing._events import ToolEvents
from codemode.testing._run import RunCode
from codemode.testing._scripted import ScriptedTools

if TYPE_CHECKING:
    from collections.abc import Iterator

    from codemode.mode.code_mode import CodeMode
    from codemode.sandbox import InProcessExecutor, Limits

__all__ = [
    "code_mode",
    "code_mode_limits",
    "run_code",
    "scripted_tools",
    "tool_events",
    "tool_registry",
]


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> None:
    """Mark ``async def`` tests using these fixtures ``anyio`` on asyncio (what
    ``anyio_mode = "auto"`` would do for them); ``None`` lets pytest collect them as usual."""
    if not (collector.istestfunction(obj, name) and inspect.iscoroutinefunction(obj)):
        return
    try:
        wanted = set(inspect.signature(obj).parameters) & set(__all__)
    except (TypeError, ValueError):
        return
    own = {mark.name for mark in getattr(obj, "pytestmark", ())}
    if not wanted or own & {"anyio", "asyncio", "trio"} or _asyncio_owns(collector):
        return
    if collector.get_closest_marker("anyio") or collector.get_closest_marker("asyncio"):
        return
    pytest.mark.anyio(obj)
    pytest.mark.parametrize("anyio_backend", ["asyncio"])(obj)  # executors bridge via asyncio


def _asyncio_owns(collector: pytest.Module | pytest.Class) -> bool:
    """pytest-asyncio in auto mode runs every coroutine test itself."""
    if not collector.config.pluginmanager.has_plugin("asyncio"):
        return False
    try:
        return str(collector.config.getini("asyncio_mode")) == "auto"
    except ValueError:
        return False


@pytest.fixture
def tool_registry() -> ToolRegistry:
    """A fresh, empty tool registry."""
    return ToolRegistry()


@pytest.fixture
def tool_events(tool_registry: ToolRegistry) -> Iterator[ToolEvents]:
    """Every ``tool/*`` event of ``tool_registry`` during the test, with assertion helpers."""
    events = ToolEvents(tool_registry)
    yield events
    events.close()


@pytest.fixture
def scripted_tools(tool_registry: ToolRegistry) -> Iterator[ScriptedTools]:
    """Fake tools answering canned results; fails the test if any queue ran dry."""
    kit = ScriptedTools(tool_registry)
    yield kit
    kit.check()


@pytest.fixture
def code_mode_limits() -> Limits:
    """Limits for the ``code_mode`` fixture: defaults with a 10 s wall time."""
    from codemode.sandbox import Limits

    return Limits(timeout=10.0)


@pytest.fixture
def code_mode(tool_registry: ToolRegistry, code_mode_limits: Limits) -> Iterator[CodeMode]:
    """``CodeMode`` over ``tool_registry``, running scripts in-process (fast, same results)."""
    from codemode.mode.code_mode import CodeMode
    from codemode.sandbox import InProcessExecutor

    executor = InProcessExecutor()
    yield CodeMode(tool_registry, limits=code_mode_limits, executor=executor)
    _close(executor)


def _close(executor: InProcessExecutor) -> None:
    """Close the executor from a sync teardown.

    A sync fixture serves sync and async tests alike (and any async plugin);
    the executor's ``aclose`` only signals its script threads, so running it on
    a private event loop in a helper thread is safe whatever loop the test used.
    """
    closer = threading.Thread(target=anyio.run, args=(executor.aclose,),
                              name="codemode-testing-close")
    closer.start()
    closer.join()


@pytest.fixture
def run_code(code_mode: CodeMode, tool_registry: ToolRegistry) -> Iterator[RunCode]:
    """``run_code`` registered in ``tool_registry``; ``await run_code(script)`` dispatches it."""
    registration = tool_registry.register(code_mode.as_tool())
    yield RunCode(tool_registry, tool_name=code_mode.tool_name)
    registration.dispose()
