"""A worker's long JSON string literal is read a piece at a time (``jsonstrings``), with
the C scanner's answers and errors: one C call over 16 million escaped quotes held the
host loop 0.15-0.27 s per tool call (r40)."""

from __future__ import annotations

import json
import json.decoder
from typing import Any

import pytest

from codemode.sandbox.executors.jsonstrings import PIECE, scan_string
from codemode.sandbox.executors.protocol import decode_text_bounded

C_SCAN: Any = getattr(json.decoder, "scanstring")  # noqa: B009 (untyped in typeshed)

LONG = PIECE + 3
VALUES = [
    pytest.param("", id="empty"),
    pytest.param("plain", id="plain"),
    pytest.param("y" * LONG, id="plain-past-a-piece"),
    pytest.param('"' * LONG, id="escaped-quotes"),
    pytest.param("\\" * LONG, id="escaped-backslashes"),
    pytest.param("\x00" * LONG, id="control-escapes"),
    pytest.param("\U0001f600" * LONG, id="surrogate-pairs"),
    pytest.param("\ud800" * LONG, id="lone-surrogates"),
    pytest.param("a" * (PIECE - 7) + "\U0001f600" * 3, id="pair-at-the-cut"),
    pytest.param("a" * (PIECE - 1) + '"' + "b" * 9, id="escape-at-the-cut"),
    pytest.param("\u00e9\n/\\\"" * (LONG // 5), id="mixed"),
]


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("ascii", [True, False])
def test_same_string_as_the_c_scanner(value: str, ascii: bool) -> None:
    text = f"[{json.dumps(value, ensure_ascii=ascii)}, 1]"
    assert scan_string(text, 2) == C_SCAN(text, 2, True)


@pytest.mark.parametrize("body", [
    pytest.param("abc", id="unterminated"),
    pytest.param("a" * LONG, id="unterminated-long"),
    pytest.param("a" * LONG + "\\", id="ends-in-a-backslash"),
    pytest.param("ab\\x\"", id="bad-escape"),
    pytest.param("a" * LONG + "\\q\"", id="bad-escape-late"),
    pytest.param("a" * LONG + "\\ud83d\\ude0\"", id="bad-unicode-escape-late"),
    pytest.param("\\\"" * LONG + "\x02\"", id="control-character-late"),
])
def test_same_error_as_the_c_scanner(body: str) -> None:
    text = '"' + body
    with pytest.raises(json.JSONDecodeError) as expected:
        C_SCAN(text, 1, True)
    with pytest.raises(json.JSONDecodeError) as got:
        scan_string(text, 1)
    assert (got.value.msg, got.value.pos) == (expected.value.msg, expected.value.pos)


@pytest.mark.parametrize("value", ['"' * (3 * PIECE), "\U0001f600" * PIECE, "z" * (3 * PIECE)])
def test_each_c_call_reads_one_piece(value: str) -> None:
    read: list[int] = []

    def scan(text: str, end: int, strict: bool) -> tuple[str, int]:
        read.append(len(text) - end)
        return C_SCAN(text, end, strict)  # type: ignore[no-any-return]

    text = json.dumps([value])
    assert scan_string(text, 2, scan=scan)[0] == value
    assert len(read) > 1 and max(read) <= PIECE + 1, (len(read), max(read))


def test_the_bounded_decoder_reads_long_literals_in_pieces() -> None:
    value = {"q": '"' * (2 * PIECE), "e": "\u00e9" * PIECE}
    assert decode_text_bounded(json.dumps(value)) == value
