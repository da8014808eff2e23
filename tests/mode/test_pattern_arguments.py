"""A tool whose *arguments* are partly ``patternProperties`` (``{"a": ..., "^x_": int}``).

Before: the prompt and SDK offered only ``a``, and the preflight refused
``tools.t(a=1, x_b=2)`` ("has no argument 'x_b'") though the schema accepts it.
"""

from __future__ import annotations

from typing import Any

import pytest

import codemode as cm
from codemode.sandbox import InProcessExecutor

pytestmark = pytest.mark.anyio

PARAMS = {"type": "object", "properties": {"a": {"type": "integer"}},
          "patternProperties": {"^x_": {"type": "integer"}}, "additionalProperties": False}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _mode(seen: list[dict[str, Any]]) -> cm.CodeMode:
    async def execute(args: dict[str, Any], ctx: cm.ExecContext) -> dict[str, Any]:
        seen.append(args)
        return args

    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="t", description="T.", parameters=PARAMS,
                                     execute=execute))
    return cm.CodeMode(registry, executor=InProcessExecutor())


def test_the_prompt_and_sdk_offer_the_pattern_keys() -> None:
    mode = _mode([])
    lines = mode.prompt().splitlines()
    at = lines.index("t: T.")
    assert lines[at + 1:at + 3] == [" a?: int", " **extra_arguments: int # (keys match ^x_)"]
    assert "    **extra_arguments: int,\n" in mode.sdk().module_source


async def test_a_matching_key_is_sent_and_others_are_refused_before_running() -> None:
    seen: list[dict[str, Any]] = []
    mode = _mode(seen)
    async with mode:
        assert mode.check("await tools.t(a=1, x_b=2)") == []
        result = await mode.run("await tools.t(a=1, x_b=2)")
        assert result.error is None
        assert result.value == {"a": 1, "x_b": 2}
        problems = mode.check("await tools.t(a=1, y=2)")
        assert [p.message for p in problems] == [
            "tools.t has no argument 'y' (accepts: a, and keys matching '^x_')"]
        refused = await mode.run("await tools.t(a=1, y=2)")
        assert refused.error is not None and refused.error.type == "PreflightError"
        wrong = await mode.run("await tools.t(a=1, x_b='s')")
        assert wrong.error is not None
        assert "$.x_b: 's' is not of type 'integer'" in wrong.error.message
    assert seen == [{"a": 1, "x_b": 2}]
