"""The prelude line ``attach`` writes is ``json.dumps``'s compact ASCII text of the
prelude (its C encoder is built once, not per script), on one line, and reads back."""

from __future__ import annotations

import json
import math

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
