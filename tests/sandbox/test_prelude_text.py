"""The prelude line ``attach`` writes is ``json.dumps``'s compact ASCII text of the
prelude (its C encoder is built once, not per script), on one line, and reads back; a
forged line (a script's own first line) costs what it makes the run do."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.prelude import PRELUDE_MARK, Prelude, attach, detach
from codemode.sandbox.runtime.runner import run_script

PRELUDES = [
    Prelude(),
    Prelude(inputs={"x": [1, 2.5, None, True]}, modules=("json", "re"),
            names={"search": "search"}, orders={"search": ("query",), "page": None}),
    Prelude(inputs={"text": "é\n\u2028\x00\"\\", "deep": [[[{"k": [[]]}]]]},
            texts={"search": ("search", "Find things.\nLine two — dash")}),
    Prelude(inputs={"n": 10**30, "inf": math.inf}, dialects=False),
]


@pytest.mark.parametrize("prelude", PRELUDES)
def test_the_prelude_line_is_json_dumps_text(prelude: Prelude) -> None:
    head, _, body = attach("x\n", prelude).partition("\n")
    assert head == PRELUDE_MARK + json.dumps(prelude.to_json(), separators=(",", ":"))
    assert head.isascii() and body == "x\n"
    found, source = detach(attach("x\n", prelude))
    assert found is not None and source == "x\n"
    assert found.to_json() == prelude.to_json()


FORGED = [
    pytest.param({"orders": {"a": "x" * 1000}}, id="order-as-one-text"),
    pytest.param({"orders": {"a": [["x"], {"y": 1}]}}, id="order-of-non-texts"),
    pytest.param({"names": {"a": ["search"] * 1000}}, id="name-as-a-list"),
    pytest.param({"texts": {"a": [["n"] * 1000, "d"]}}, id="text-pair-of-a-list"),
]
"""A forged line's entries of the wrong type. An order given as one text was split into a
tuple of its characters (16 million: seconds of uncharged work in the run, which 'did not
stop in time'); a list was rendered with ``str()``."""


@pytest.mark.parametrize("data", FORGED)
def test_a_forged_entry_of_the_wrong_type_is_dropped(data: dict[str, Any]) -> None:
    prelude = Prelude.from_json(data)
    assert (dict(prelude.orders), dict(prelude.names), dict(prelude.texts)) == ({}, {}, {})


async def test_a_forged_line_binds_its_names_charged() -> None:
    """Each name a prelude line binds costs one operation, its clock checked: a forged line
    of 300,000 names was bound uncharged, seconds of work (in-process, 'the run did not
    stop in time' at a 3 s limit). Here 30,000 names and a budget of 20,000 operations:
    the run ends at its operation limit before the script, and no tool is called."""
    calls: list[str] = []

    async def tool(name: str, args: dict[str, Any]) -> Any:
        calls.append(name)
        return args

    limits = Limits(timeout=30.0, operations=20_000)
    names = {f"n{i}": "search" for i in range(30_000)}
    source = f"{PRELUDE_MARK}{json.dumps({'names': names})}\nawait search(q=1)"
    broker = CallBroker(tool, limits, ("search",))
    outcome = await run_script(source, call=broker.answer_json, tool_paths=("search",),
                               limits=limits)
    assert outcome.error is not None and outcome.error.limit == "operations", outcome.error
    assert calls == []
