"""``auto()`` in a plain or mixin enum takes CPython's next value (``Enum``'s default
``_generate_next_value_``, start 1) over the values so far, per version: from 3.13 the
largest + 1 or a TypeError; before, the last number found going back (a DeprecationWarning
there, which the sandbox does not print)."""

from __future__ import annotations

import enum
import warnings
from typing import Any

import pytest

from codemode.sandbox.language.facades import enum_facade
from codemode.sandbox.language.facades.enum_facade import _NextValue

VALUES: list[list[Any]] = [
    [], [1], [1, 2], [5, 1], [1, 5, 3], [2.5], [True], [1, 2.5, 2],
    ["x"], ["x", "y"], [1, "x"], ["x", 1], [3, "x", 1], [1, None], [10, 10],
]


def _cpython(values: list[Any]) -> tuple[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            return "value", enum.Enum._generate_next_value_("X", 1, len(values), list(values))
        except TypeError as exc:
            return "TypeError", str(exc)


@pytest.mark.parametrize("values", VALUES, ids=repr)
def test_the_next_value_is_cpythons(values: list[Any], monkeypatch: pytest.MonkeyPatch) -> None:
    charged: list[int] = []
    monkeypatch.setattr(enum_facade, "charge_operations", charged.append)
    kept = _NextValue()
    for value in values:
        kept.add(value)
    try:
        got: tuple[str, Any] = ("value", kept.next())
    except TypeError as exc:
        got = ("TypeError", str(exc))
    assert got == _cpython(values)
    # only the rare walk back (a last value that is not the largest) is charged, by the
    # values it sorts and walks; the usual count up is one step
    assert charged in ([], [len(values)])
    if got[0] == "value":
        assert type(got[1]) is type(_cpython(values)[1])
