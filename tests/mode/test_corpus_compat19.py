"""Compat round 19: more scripts as models write them for other Code Mode hosts
(smolagents' CodeAgent, Anthropic's programmatic tool calling, Cloudflare / Monty code
mode, plain scripts), against the corpus schemas of ``other_host_tools``: generators
that call tools read by ``zip``/``islice``/``chain``, ``types.SimpleNamespace``, classes
whose ``__init__``, ``__post_init__`` or property calls tools, class protocols, typing,
``match``, formatting, ``collections``, ``datetime``, ``re``, tool errors in
``try``/``except``/``else``/``finally``, ``asyncio.gather``, ``print`` to stderr.

The rows live in ``data/compat19_scripts.toml``; each runs in the sandbox on both
executors and in CPython with the same handlers (:mod:`tests.mode.compat_harness`):
value, printed output and calls per tool equal. The ``refused`` rows are forms no
rewrite can place an ``await`` in: refused before any call, saying why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.mode.compat_harness import corpus_rows, other_hosts_mode, runs_as_in_cpython

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio

ROWS, REFUSED = corpus_rows("compat19")


@pytest.mark.parametrize("row", ROWS, ids=[r["name"] for r in ROWS])
async def test_compat19_script_runs_as_in_cpython(executor: Executor,
                                                  row: dict[str, str]) -> None:
    """On both executors (conftest's ``executor``)."""
    await runs_as_in_cpython(other_hosts_mode(executor), row["script"], row)


@pytest.mark.parametrize("row", REFUSED, ids=[r["name"] for r in REFUSED])
async def test_compat19_form_no_rewrite_can_await_is_refused_first(
        executor: Executor, row: dict[str, str]) -> None:
    run = await other_hosts_mode(executor).run(row["script"])
    assert run.error is not None and run.error.type == "PreflightError"
    assert row["says"] in run.error.message, run.error.message
    assert run.calls == ()
