"""A script generator whose finalization fails never reaches the host's stderr, while
the host's own unraisable exceptions still reach whatever hook the host installed."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from codemode.sandbox import InProcessExecutor
from codemode.sandbox.runtime import unraisable

pytestmark = pytest.mark.anyio

DROPPED = """\
def g():
    try:
        yield 1
    finally:
        yield 2
it = g()
next(it)
it = None
'done'
"""


async def _no_tools(path: str, kwargs: dict[str, Any]) -> Any:
    raise AssertionError(f"no tool call expected, got {path}")


async def test_the_default_hook_prints_nothing_for_a_script_generator(
        capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "unraisablehook", sys.__unraisablehook__)
    async with InProcessExecutor() as executor:
        result = await executor.run(DROPPED, call_tool=_no_tools)
    assert result.error is None and result.value == "done"
    err = capfd.readouterr().err
    assert "GeneratorExit" not in err and "Traceback" not in err, err


def test_host_unraisables_still_reach_the_hook_the_host_set(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: seen.append(info))
    unraisable.install()
    unraisable.install()  # idempotent: one wrapper, not two

    def host_generator() -> Any:
        try:
            yield 1
        finally:
            raise ValueError("the host's own finalizer error")

    it = host_generator()
    next(it)
    del it
    assert [type(info.exc_value) for info in seen] == [ValueError]
    assert sys.unraisablehook.wrapped.__name__ == "<lambda>"  # type: ignore[attr-defined]


def test_only_script_compiled_generators_are_script_objects() -> None:
    def host_generator() -> Any:
        yield 1

    host = host_generator()
    namespace: dict[str, Any] = {}
    exec(compile("def g():\n    yield 1\n", "<script>", "exec"), namespace)
    script = namespace["g"]()
    assert unraisable.is_script_object(script)
    assert not unraisable.is_script_object(host)
    assert not unraisable.is_script_object(object())
    host.close()
    script.close()
