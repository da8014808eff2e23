"""Where the prompt cuts a long description, and what it keeps."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable

from sdk_gen._text import TRUNCATED, prompt_text, tool_text

EG = "Use a tag (e.g. v1.2) and more words here"
CJK = "查询余票信息。必须先调用接口获取车站编码，严禁直接使用中文地名。"
SENTENCES = "First sentence is here. Second one follows it. Third one is far too long to fit."


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("Short and whole.", 40, "Short and whole."),
        ("  spread\n over\tlines  ", 40, "spread over lines"),
        (SENTENCES, 60, "First sentence is here. Second one follows it." + TRUNCATED),
        ("one two three four five six seven", 20, "one two three four" + TRUNCATED),
        ("A tiny. " + "x" * 60, 40, "A tiny. " + "x" * 32 + TRUNCATED),
        (EG, 30, "Use a tag (e.g. v1.2) and more" + TRUNCATED),
        (CJK, 12, "查询余票信息。" + TRUNCATED),
        ("查" * 30, 10, "查" * 10 + TRUNCATED),
        ("exactly ten", 11, "exactly ten"),
        ("one two three four", 15, "one two three four"),
    ],
    ids=[
        "fits",
        "whitespace-collapsed",
        "cut-after-last-whole-sentence",
        "cut-after-last-whole-word",
        "sentence-too-early-falls-back-to-hard-cut",
        "e.g.-is-not-a-sentence-end",
        "cjk-sentence-end",
        "no-spaces-hard-cut",
        "at-the-limit-untouched",
        "a-little-over-kept-whole",
    ],
)
def test_prompt_text_cuts_at_a_boundary(text: str, limit: int, expected: str) -> None:
    assert prompt_text(text, limit) == expected


def test_cut_text_is_a_prefix_of_the_description() -> None:
    text = " ".join(f"Sentence number {n} says a little more." for n in range(40))
    for limit in range(20, 400, 7):
        cut = prompt_text(text, limit)
        assert cut.endswith(TRUNCATED)
        kept = cut.removesuffix(TRUNCATED)
        assert text.startswith(kept)
        assert limit // 2 <= len(kept) <= limit


def test_the_marker_is_a_space_and_an_ellipsis() -> None:
    assert TRUNCATED == " …"


def test_tool_and_key_descriptions_have_their_own_limits() -> None:
    text = "word " * 200
    # Tools are cut near 240 characters, argument (key) descriptions near 140.
    assert tool_text(text) == "word " * 47 + "word …"  # 239 characters kept
    assert prompt_text(text) == "word " * 27 + "word …"  # 139 characters kept


@pytest.mark.parametrize(
    ("words", "cut", "whole"),
    [
        pytest.param(36, prompt_text, True, id="key-179-chars-kept-whole"),
        pytest.param(37, prompt_text, False, id="key-184-chars-cut"),
        pytest.param(62, tool_text, True, id="tool-309-chars-kept-whole"),
        pytest.param(63, tool_text, False, id="tool-314-chars-cut"),
    ],
)
def test_only_descriptions_well_over_their_limit_are_cut(
    words: int, cut: Callable[[str], str], whole: bool
) -> None:
    """Up to 1.3 times the limit (182 for keys, 312 for tools) a description is kept whole."""
    text = ("word " * words).strip()
    assert (cut(text) == text) is whole
    assert cut(text).endswith(" …") is not whole
