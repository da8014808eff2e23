"""The prelude line ``attach`` writes is ``json.dumps``'s compact ASCII text of the
prelude (its C encoder is built once, not per script), on one line, and reads back."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from codemode.sandbox.runtime.prelude import PRELUDE_MARK, Prelude, attach, detach

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
