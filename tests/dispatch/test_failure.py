"""``failure_text``: a user's exception as text, even when its ``__str__`` raises."""

from __future__ import annotations

import pytest

from codemode.dispatch.failure import failure_text


class _TextRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


class _TextInterrupts(Exception):
    def __str__(self) -> str:
        raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        (ValueError("bad input"), "ValueError: bad input"),
        (KeyError("k"), "KeyError: 'k'"),
        (RuntimeError(), "RuntimeError: "),
        (_TextRaises(), "_TextRaises: <unprintable _TextRaises>"),
    ],
)
def test_failure_text(exc: BaseException, text: str) -> None:
    assert failure_text(exc) == text


def test_only_exceptions_of_str_are_swallowed() -> None:
    with pytest.raises(KeyboardInterrupt):
        failure_text(_TextInterrupts())
