"""Compat round 20: more scripts as models write them for other Code Mode hosts
(smolagents' CodeAgent, Anthropic's programmatic tool calling, Cloudflare / Monty code
mode, plain scripts), against the corpus schemas of ``other_host_tools``: generators
that call tools in ``contextlib.contextmanager`` / ``ExitStack`` /
``asynccontextmanager``, ``functools`` (``partial``, ``cache``, ``singledispatch``,
``cmp_to_key``), ``abc``, ``__init_subclass__``, ``match`` mapping / sequence / class
patterns, dataclass ``InitVar`` / ``slots`` / ``unsafe_hash``, ``itertools``,
``collections``, ``heapq``, ``bisect``, ``statistics``, ``json`` encoders, ``re``,
``datetime`` offsets, ``except*``, ``asyncio`` timeouts, locks, queues and async
iterators, ``csv`` / ``urllib.parse`` / ``hashlib`` / ``random``, and the mistakes
models make that CPython tolerates (shadowed builtins, mutable defaults, bare except).

The rows live in ``data/compat20_scripts.toml``; each runs in the sandbox on both
executors and in CPython with the same handlers (:mod:`tests.mode.compat_harness`):
value, printed output and calls per tool equal. The ``refused`` rows are forms the
sandbox does not run (no rewrite can place their ``await``, or they reach what scripts
are not handed): refused before any call, saying why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.mode.compat_harness import (
    corpus_rows,
    other_hosts_mode,
    refused_before_any_call,
    runs_as_in_cpython,
)

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio

ROWS, REFUSED = corpus_rows("compat20")
CASES = ([pytest.param(row, False, id=row["name"]) for row in ROWS]
         + [pytest.param(row, True, id=f"refused-{row['name']}") for row in REFUSED])


@pytest.mark.parametrize(("row", "refused"), CASES)
async def test_compat20_row(executor: Executor, row: dict[str, str], refused: bool) -> None:
    """On both executors (conftest's ``executor``): a row runs as in CPython, a refused
    row is refused before any call, saying why."""
    mode = other_hosts_mode(executor)
    if refused:
        await refused_before_any_call(mode, row)
    else:
        await runs_as_in_cpython(mode, row["script"], row)
