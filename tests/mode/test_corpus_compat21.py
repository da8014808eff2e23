"""Compat round 21: a ``@contextmanager`` generator that calls tools (made an
``@asynccontextmanager`` async generator, its ``with`` statements ``async with``: the
block's error reaches it at its ``yield``) and a script's own decorator around a function
that calls tools (its wrapper made ``async def``, awaiting the call): the timing, logging,
retry and caching wrappers models write, with arguments, nested, over methods, beside
plain functions and contexts that call no tools.

The rows live in ``data/compat21_scripts.toml``; each runs in the sandbox on both
executors and in CPython with the same handlers (:mod:`tests.mode.compat_harness`):
value, printed output and calls per tool equal. The ``refused`` rows are the forms no
rewrite can await soundly (a decorator also called as a function, a context held before
its ``with``): refused before any call, saying why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.mode.compat_harness import check_corpus_row, corpus_cases

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("row", "refused"), corpus_cases("compat21"))
async def test_compat21_row(executor: Executor, row: dict[str, str], refused: bool) -> None:
    """On both executors (conftest's ``executor``): a row runs as in CPython, a refused
    row is refused before any call, saying why."""
    await check_corpus_row(executor, row, refused)
