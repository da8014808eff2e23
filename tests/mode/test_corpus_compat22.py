"""Compat round 22: scripts as models write them for Code Mode hosts (dataclasses,
typing, retries, semaphores, pagination, ``asyncio.run(main())``, tables printed,
json/re/datetime/collections/itertools/math), and the forms found missing: tools in a
literal table a loop unpacks (``for fn, kw in [(get_user, {...}), ...]``, also
``tools.x``), ``contextlib.ExitStack``/``AsyncExitStack``, ``functools.update_wrapper``
(a wrapper function, a class-based decorator), class keywords (``total=False``,
``metaclass=ABCMeta``; others CPython's TypeError, never dropped), a plain ``def
__aexit__`` in an ``async with`` that is cancelled.

The rows live in ``data/compat22_scripts.toml``; each runs in the sandbox on both
executors and in CPython with the same handlers (:mod:`tests.mode.compat_harness`):
value, printed output and calls per tool equal. The ``refused`` rows are refused before
any call, saying why. The ``unawaited`` rows call ``tools.x`` from a literal table
without ``await`` (the sandbox awaits them, as it does a named tool's call): their value
and output are CPython's for the same script with the ``await`` written.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.mode.compat_harness import check_corpus_row, corpus_cases, other_hosts_mode
from tests.mode.cpython_side import run_with_tools
from tests.mode.other_host_tools import FUNCTIONS

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio

UNAWAITED: list[dict[str, Any]] = tomllib.loads(
    (Path(__file__).parent / "data" / "compat22_scripts.toml").read_text(encoding="utf-8")
)["unawaited"]


@pytest.mark.parametrize(("row", "refused"), corpus_cases("compat22"))
async def test_compat22_row(executor: Executor, row: dict[str, str], refused: bool) -> None:
    """On both executors (conftest's ``executor``): a row runs as in CPython, a refused
    row is refused before any call, saying why."""
    await check_corpus_row(executor, row, refused)


@pytest.mark.parametrize("row", UNAWAITED, ids=[r["name"] for r in UNAWAITED])
async def test_compat22_unawaited_tool_from_a_literal_table_is_awaited(
        executor: Executor, row: dict[str, str]) -> None:
    run = await other_hosts_mode(executor).run(row["script"])
    assert run.error is None, run.error
    assert run.calls
    expected = run_with_tools(row["cpython"], row["style"], FUNCTIONS)
    assert (json.loads(json.dumps(run.value)), run.output) == expected
