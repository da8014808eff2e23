"""Compat round 23: scripts as models write them for Code Mode hosts (dataclasses with
``field(default_factory=...)``, ``match`` on tool results, walrus in comprehensions,
f-string specs, ``sorted``/``groupby``/``batched``, ``Counter``/``deque``, ``json.dumps``
options, ``datetime`` arithmetic, ``re`` named groups, ``try``/``else``/``finally``,
``asyncio.gather``/``TaskGroup``/``Queue``, retries with ``asyncio.sleep``, pagination,
printed tables), and the forms found missing: ``class P(Protocol, TypedDict)`` (CPython's
TypeError), ``class F(Flag, boundary=KEEP)`` (and ``STRICT``/``CONFORM``/``EJECT``), a
method named like a library method (``get``) that calls tools, a ``partial`` of an
``@lru_cache`` function that calls tools, mapping, sequence and ``|`` sub-patterns in a
class pattern (``case Resp(status=200, body={"items": [first, *_]}):``), a generator
expression whose only tool call is its first iterable (``next((s for s in tool() if c),
None)``: a plain generator, that iterable read where the expression stands).

The rows live in ``data/compat23_scripts.toml``; each runs in the sandbox on both
executors and in CPython with the same handlers (:mod:`tests.mode.compat_harness`):
value, printed output and calls per tool equal. The ``refused`` rows are refused before
any call, saying what to write. A row with ``min_version`` needs that CPython
(``itertools.batched``: 3.12) to run as written: on an older one, CPython runs the row's
``older_cpython`` text (the docs' recipe) in place of its first line, and the sandbox (whose
facade has ``batched`` on every version) runs the script as written.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import pytest

from tests.mode.compat_harness import check_corpus_row, corpus_rows

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _cases() -> list[Any]:
    rows, refused = corpus_rows("compat23")
    cases = [pytest.param(row, False, id=row["name"]) for row in rows]
    return cases + [pytest.param(row, True, id=f"refused-{row['name']}") for row in refused]


def _reference(row: dict[str, str]) -> str | None:
    """What CPython runs for ``row`` when this CPython is older than the row needs: the
    script with its first line (the import) replaced by the row's ``older_cpython``."""
    needs = row.get("min_version")
    if needs is None or sys.version_info >= _version(needs):
        return None
    first, rest = row["script"].lstrip("\n").split("\n", 1)
    assert first.startswith("from itertools import ")
    return "from itertools import islice\n" + row["older_cpython"] + rest


@pytest.mark.parametrize(("row", "refused"), _cases())
async def test_compat23_row(executor: Executor, row: dict[str, str], refused: bool) -> None:
    """On both executors (conftest's ``executor``): a row runs as in CPython, a refused
    row is refused before any call, saying why."""
    await check_corpus_row(executor, row, refused, reference=_reference(row))
