"""Red-team round r47: a method of the script's own named like a library method (``get``,
``update``, ``count``) that calls tools, beside the dicts, lists and texts whose methods of
that name the script also calls (generator expressions, a walrus among the arguments, a
class body, ``asyncio`` rebound). The rows live in ``data/r47_scripts.toml``; each runs
in the sandbox on both executors and in CPython with the same handlers
(:mod:`tests.mode.compat_harness`): value, printed output and calls per tool equal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.mode.compat_harness import check_corpus_row, corpus_cases

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("row", "refused"), corpus_cases("r47"))
async def test_r47_row(executor: Executor, row: dict[str, Any], refused: bool) -> None:
    """On both executors (conftest's ``executor``): a row runs as in CPython."""
    await check_corpus_row(executor, row, refused)
