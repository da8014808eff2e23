"""Compat round 27: scripts as models write them for Code Mode hosts (Cloudflare-style
``await tools.x()``, smolagents' ``final_answer``, Monty-style plain scripts, CodeAct):
typing forms, dataclass and enum features, the format mini-language, itertools, functools,
collections and statistics recipes, datetime/re/json corners, asyncio patterns, exception
chaining and groups, generators, comprehension scoping, ``match`` and walrus, and 3.12's
syntax (type statements, PEP 695 generics, f-strings reusing their quotes).

The rows live in ``data/compat27_scripts.toml``; each runs in the sandbox on both
executors and in CPython with the same handlers (:mod:`tests.mode.compat_harness`):
value, printed output and calls per tool equal. The ``refused`` rows are refused before
any call, saying what to write. A row with ``min_version`` is syntax of that CPython: on
an older one the sandbox refuses it, before any call, as CPython's own parser does, saying
``older_says`` (the 3.11 spelling of a type statement or type parameters) when given.

Found missing or wrong here: 3.12's ``type Price = float``, ``def first[T](...)`` and
``class Box[T]:`` (RestrictedPython's "TypeAlias statements are not allowed"), a dotted
case value inside a mapping, sequence or class pattern (``case {"side": Side.BUY}:``,
``case Order(side=Side.SELL):``; refused as not a literal), ``ParamSpec("P")`` (not
callable) and ``TypeVarTuple``/``TypeGuard``/``TypeIs``/``Concatenate``/``Unpack``/
``LiteralString``/``override`` (not importable), ``asyncio.BoundedSemaphore``,
``agen.aclose()``, ``math.erf``/``erfc``/``gamma``/``lgamma``/``cbrt``/``exp2``,
``datetime.UTC``, ``re.NOFLAG``, and refusals that did not say what to write:
``collections.UserDict``, ``statistics.NormalDist``, ``functools.singledispatchmethod``,
``asyncio.timeout_at``, ``asyncio.to_thread``, ``asyncio.Condition``,
``asyncio.current_task``, ``GeneratorExit``, ``BaseExceptionGroup``, a PEP 695 type
parameter read at run time.
"""

from __future__ import annotations

import ast
import sys
from typing import TYPE_CHECKING, Any

import pytest

from tests.mode.compat_harness import check_corpus_row, corpus_cases, other_hosts_mode

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio


def _too_new(row: dict[str, Any]) -> bool:
    """Whether the row's syntax is newer than this CPython."""
    needs = row.get("min_version")
    return needs is not None and sys.version_info < tuple(int(p) for p in needs.split("."))


@pytest.mark.parametrize(("row", "refused"), corpus_cases("compat27"))
async def test_compat27_row(executor: Executor, row: dict[str, Any], refused: bool) -> None:
    """On both executors (conftest's ``executor``): a row runs as in CPython, a refused
    row is refused before any call, saying why; a row of newer syntax than this CPython's
    is refused before any call as CPython's parser refuses it."""
    if not _too_new(row):
        await check_corpus_row(executor, row, refused)
        return
    with pytest.raises(SyntaxError):
        compile(row["script"], "<cpython>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                dont_inherit=True)
    run = await other_hosts_mode(executor).run(row["script"])
    assert run.error is not None and "SyntaxError" in run.error.message, run.error
    assert row.get("older_says", "") in run.error.message
    assert run.calls == ()
