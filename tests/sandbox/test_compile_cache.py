"""The compiled-script cache is bounded in the source it holds, not only in entries: a
compiled script keeps 30-40 bytes per character of its source, and 512 distinct scripts of
the longest kind a model may send held about 2 GB of the host (r38)."""

from __future__ import annotations

import uuid

from codemode.sandbox.language.compile import MAX_SOURCE, cached_script, compile_script

BUDGET = 1_000_000
"""The characters of source the cache may hold (``compile._CACHE_CHARS``)."""


def long_script() -> str:
    """A distinct script of almost ``MAX_SOURCE`` characters, cheap to compile."""
    head = f"tag = '{uuid.uuid4().hex}'\n"
    return head + "x = '" + "a" * (MAX_SOURCE - len(head) - 16) + "'\nlen(x)\n"


def test_long_scripts_are_evicted_by_the_characters_they_hold() -> None:
    sources = [long_script() for _ in range(2 * BUDGET // MAX_SOURCE)]
    for source in sources:
        assert compile_script(source).code is not None
    held = [source for source in sources if cached_script(source) is not None]
    assert sum(map(len, held)) <= BUDGET, len(held)
    assert held == sources[-len(held):], "the oldest entries go first"
    assert cached_script(sources[-1]) is not None


def test_a_cached_script_is_used_again() -> None:
    source = long_script()
    first = compile_script(source)
    assert compile_script(source) is first
    assert cached_script(source) is first
