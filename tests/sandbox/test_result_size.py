"""The runner's measure of a result is the one ``RunOutcome.to_result`` would take.

The in-process executor passes the runner's ``result_size`` on instead of encoding the
value a second time; these rows show both measures agree on every kind of value (text
past ASCII, lone surrogates made U+FFFD, sets made lists, keys made strings, floats),
that a result one byte over its limit is refused alike, and that a worker's outcome
never carries a size for the pool's host to take.
"""

from __future__ import annotations

import json
import textwrap

import pytest

from codemode.sandbox import InProcessExecutor
from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.result import RunOutcome
from codemode.sandbox.runtime.runner import run_script

LIMITS = Limits(timeout=5.0, result=4096)
ENCODE = json.JSONEncoder(ensure_ascii=False).encode


async def _never(name: str, args: dict[str, object]) -> object:
    raise AssertionError(f"no tool is called here ({name})")


async def _outcome(source: str, limits: Limits = LIMITS) -> RunOutcome:
    broker = CallBroker(_never, limits)
    return await run_script(textwrap.dedent(source), call=broker.answer_json, limits=limits)


VALUES = [
    "7",
    "None",
    "'plain'",
    "'héllo wörld ✓ 🎉'",
    "'a' + chr(0xD800) + 'b'",
    "{'k': chr(0xDFFF) * 3}",
    "{3, 1, 2}",
    "frozenset({'x'})",
    "{1: 'int key', 2.5: 'float key', True: 'bool key', None: 'none key'}",
    "[0.1, 1e300, -0.0, 2 ** 62, -(2 ** 70)]",
    "{'nested': [[{'deep': ['\\u00e9', '\\n\\t\"\\\\']}]] * 3}",
    "('tuple', ('inner',))",
    "'\\x00\\x1f\\x7f'",
]


@pytest.mark.parametrize("expression", VALUES)
async def test_the_runners_size_is_the_size_to_result_measures(expression: str) -> None:
    outcome = await _outcome(f"result = {expression}\nresult")
    assert outcome.error is None, outcome.error
    assert outcome.result_size == len(ENCODE(outcome.value).encode("utf-8", "replace"))


@pytest.mark.parametrize("expression", VALUES)
async def test_in_process_results_are_what_measuring_again_gives(expression: str) -> None:
    source = f"result = {expression}\nresult"
    outcome = await _outcome(source)
    measured_again = outcome.to_result(calls=(), time=0.0, limits=LIMITS)
    async with InProcessExecutor() as executor:
        result = await executor.run(source, call_tool=_never, limits=LIMITS)
    assert (result.value, result.error) == (measured_again.value, measured_again.error)
    assert result.value == outcome.value


@pytest.mark.parametrize(("extra", "refused"), [(0, False), (1, True)])
async def test_a_result_at_its_limit_passes_and_one_byte_more_is_refused(
        extra: int, refused: bool) -> None:
    source = f"'é' + 'x' * {LIMITS.result - 4 + extra}"  # two quotes, 'é' is two bytes
    async with InProcessExecutor() as executor:
        result = await executor.run(source, call_tool=_never, limits=LIMITS)
    if refused:
        assert result.error is not None and result.error.limit == "result"
        assert result.value is None
    else:
        assert result.error is None, result.error
        assert len(ENCODE(result.value).encode()) == LIMITS.result


async def test_a_workers_outcome_carries_no_size() -> None:
    outcome = await _outcome("'x' * 10")
    assert outcome.result_size == 12
    crossed = RunOutcome.from_json(json.loads(json.dumps(outcome.to_json())))
    assert "result_size" not in outcome.to_json()
    assert crossed.result_size is None
