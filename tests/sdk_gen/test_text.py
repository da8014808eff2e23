"""Where the prompt cuts a long description, and what it keeps."""

from __future__ import annotations

import pytest

from sdk_gen._text import KEY_LIMIT, SLACK, TOOL_LIMIT, TRUNCATED, prompt_text, tool_text

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


def test_tool_and_key_descriptions_have_their_own_limits() -> None:
    text = "word " * 200
    assert len(tool_text(text).removesuffix(TRUNCATED)) <= TOOL_LIMIT
    assert len(prompt_text(text).removesuffix(TRUNCATED)) <= KEY_LIMIT
    assert TOOL_LIMIT > KEY_LIMIT


def test_only_descriptions_well_over_their_limit_are_cut() -> None:
    slightly = "word " * int(KEY_LIMIT * SLACK / 5)
    assert prompt_text(slightly) == slightly.strip()
    assert prompt_text(slightly + "more words here").endswith(TRUNCATED)
