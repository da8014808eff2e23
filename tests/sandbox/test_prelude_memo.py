"""A run's prelude line is parsed once per text and remembered; every run gets the same.

Each row's line is new to the process (its own ``texts`` entry), so its first run parses
the line and the second finds it remembered: both must end alike (value, output,
error, operations). A line with inputs is parsed afresh every run: a script that
changes an input list must not hand the change to the next run.
"""

from __future__ import annotations

import itertools
import json
from typing import TYPE_CHECKING, Any

import pytest

from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.prelude import PRELUDE_MARK, Prelude, attach
from codemode.sandbox.runtime.runner import run_script

if TYPE_CHECKING:
    from codemode.sandbox.runtime.result import RunOutcome

LIMITS = Limits(timeout=5.0)
PATHS = ("search", "ns.get")
_rows = itertools.count()


async def _echo(name: str, args: dict[str, Any]) -> Any:
    return {"tool": name, "args": args}


async def _outcome(source: str) -> RunOutcome:
    broker = CallBroker(_echo, LIMITS, PATHS)
    return await run_script(source, call=broker.answer_json, tool_paths=PATHS, limits=LIMITS)


def _seen(outcome: RunOutcome) -> tuple[Any, ...]:
    return outcome.value, outcome.output, outcome.error, outcome.operations


PRELUDES = [
    (Prelude(), "[1, 2]"),
    (Prelude(names={"find": "search"}, orders={"search": ("q",)}),
     "r = await find('x')\nr['args']"),
    (Prelude(modules=("json", "re"), names={"get": "ns.get"}),
     "print(json.dumps([1]))\nr = await get(k=2)\n[r['tool'], re.escape('a.b')]"),
    (Prelude(dialects=False, modules=("math",)), "math.floor(2.5)"),
    (Prelude(names={"find": "search"}, orders={"search": None}),
     "final_answer(await find(q='y'))"),
]


@pytest.mark.parametrize(("prelude", "script"), PRELUDES)
async def test_a_remembered_prelude_runs_as_a_parsed_one(prelude: Prelude, script: str) -> None:
    row = Prelude(inputs=prelude.inputs, modules=prelude.modules, names=prelude.names,
                  orders=prelude.orders, dialects=prelude.dialects,
                  texts={**prelude.texts, f"row{next(_rows)}": ("n", "d")})
    source = attach(script, row)
    first = await _outcome(source)
    again = await _outcome(source)
    assert first.error is None, first.error
    assert _seen(again) == _seen(first)


@pytest.mark.parametrize("line", [
    "not json",
    "[1, 2]",
    json.dumps({"names": {"find": "search"}, "dialects": "yes"}),
])
async def test_a_line_that_is_no_prelude_runs_alike_every_time(line: str) -> None:
    source = f"{PRELUDE_MARK}{line} \n'ok'" + " " * next(_rows)
    first = await _outcome(source)
    again = await _outcome(source)
    assert _seen(again) == _seen(first)


async def test_inputs_are_fresh_every_run() -> None:
    source = attach("items.append(len(items))\nitems",
                    Prelude(inputs={"items": [0]}, texts={f"row{next(_rows)}": ("n", "d")}))
    first = await _outcome(source)
    again = await _outcome(source)
    assert first.value == again.value == [0, 1]
