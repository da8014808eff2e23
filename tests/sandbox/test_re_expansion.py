"""The ``re`` facade sizes a pattern's counted repeats before compiling it: read off the
``regex`` engine's own parser, and bounded by the pattern's numbers where that parser is
not there (another ``regex`` release): both ways the 830 MB pattern is refused and a
small one compiles."""

from __future__ import annotations

import pytest

from codemode.sandbox.language.facades import re_facade

BIG = "(?:a{1000}[^])]){3000}"
"""A scan of the text read ``[^])]`` as ending the group: this compiled to 830 MB."""


@pytest.mark.parametrize("parser", [True, False], ids=["engine-parser", "numbers-only"])
def test_the_size_of_counted_repeats(parser: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not parser:
        monkeypatch.setattr(re_facade, "_core", None)
    assert re_facade._expansion(BIG) > re_facade.MAX_PATTERN_EXPANSION
    assert re_facade._expansion("(?x) (?: a {3 000} ) {3 000}") > re_facade.MAX_PATTERN_EXPANSION
    assert re_facade._expansion(r"\d{3}-\d{4}") <= re_facade.MAX_PATTERN_EXPANSION


def test_the_engine_parser_reads_what_a_scan_cannot() -> None:
    # exact where the numbers alone would over-count: 20 * 20 nodes, not 20 * 20 * len
    exact = re_facade._expansion("(?:[^])]{20}){20}" + "b" * 300)
    assert exact <= re_facade.MAX_PATTERN_EXPANSION
