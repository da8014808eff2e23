"""A tool's ``pattern`` cannot hold the host: a script controls the strings it is matched
against, and Python's ``re`` can neither be stopped nor let go of the GIL (``^(a|aa)+$``
on 40 ``a`` and a ``b`` is minutes). Patterns are searched by ``regex`` in its
``re``-compatible mode, each for at most ``PATTERN_TIMEOUT`` and all of one validation's
for at most ``PATTERN_BUDGET``; a string past that is refused, and the message says so.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import codemode as cm
from codemode.dispatch.schema import PATTERN_TIMEOUT, compile_schema

SLOW = "^(a|aa)+$"
SLOW_TEXT = "a" * 40 + "b"


def _schema(pattern: str, *, many: bool = False) -> dict[str, Any]:
    item = {"type": "string", "pattern": pattern}
    return {"type": "object", "properties": {
        "s": {"type": "array", "items": item} if many else item}}


@pytest.mark.parametrize(("pattern", "text"), [
    ("^[a-z]+$", "abc"), ("^[a-z]+$", "abC"), (r"^\d{3}-\d{4}$", "555-1234"),
    (r"\bword\b", "a word here"), ("^(a+)+$", "aaa"), (r"^\w+$", "héllo"),
    (r"^\s*$", "\u00a0"), ("(?i)^abc$", "ABC"), ("^a.c$", "a\nc"), ("x$", "x\n"),
])
def test_matches_as_re_does(pattern: str, text: str) -> None:
    compiled = compile_schema("t", _schema(pattern))
    expected = re.search(pattern, text) is not None
    assert compiled.is_valid({"s": text}) is expected
    assert (compiled.problems({"s": text}) == []) is expected


def test_a_catastrophic_pattern_refuses_the_string_and_says_why() -> None:
    compiled = compile_schema("t", _schema(SLOW))
    assert compiled.is_valid({"s": "aaaa"})
    assert not compiled.is_valid({"s": SLOW_TEXT})
    [problem] = compiled.problems({"s": SLOW_TEXT})
    assert problem.path == "$.s"
    assert problem.message.endswith(f"took more than {PATTERN_TIMEOUT} s to match {SLOW!r}")


def test_one_validation_shares_one_budget() -> None:
    """A thousand slow strings are not a thousand timeouts: past the budget each further
    search counts as timed out at once (all are reported)."""
    compiled = compile_schema("t", _schema(SLOW, many=True))
    problems = compiled.problems({"s": [SLOW_TEXT] * 1000})
    assert len(problems) == 1000
    assert all("took more than" in p.message for p in problems)
    assert compiled.problems({"s": ["aa", "a"]}) == []  # the next validation has its own


async def test_a_scripts_string_against_a_slow_pattern_fails_its_call() -> None:
    seen: list[Any] = []

    async def take(args: Any, ctx: cm.ExecContext) -> Any:
        seen.append(args)
        return "ok"

    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="take", execute=take, parameters=_schema(SLOW)))
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(registry, executor=executor)
        run = await mode.run("s = 'a' * 40 + 'b'\nawait tools.take(s=s)\n")
        fine = await mode.run("await tools.take(s='aaa')\n")
    assert run.error is not None and "took more than" in run.error.message
    assert fine.error is None and fine.value == "ok"
    assert seen == [{"s": "aaa"}]
