"""The compat rounds' comparison: a row run in the sandbox and in CPython with the same
handlers (:data:`other_host_tools.FUNCTIONS`), value, output and calls per tool equal.

A row with ``stderr = true`` logs: its CPython side runs in a fresh process with stderr
as output too (the run's output holds both), and a traceback there is compared as the
sandbox prints it: the script's frames (its file ``<script>``), not the CPython side's
own (the tool stubs), the exception's class by its name.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm
from tests.mode.corpus_tools import registry
from tests.mode.cpython_side import run_in_fresh_cpython, run_with_tools
from tests.mode.other_host_tools import FUNCTIONS, specs

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from codemode.sandbox import Executor


_HOST_FRAME = re.compile(r'  File "(?!<cpython>)[^"]*", line \d+, in \w+\n(?:    .*\n)*')


def _as_the_sandbox_prints(output: str) -> str:
    """CPython's traceback with the CPython side's own frames (the stubs) left out."""
    output = _HOST_FRAME.sub("", output).replace('"<cpython>"', '"<script>"')
    return output.replace("tests.mode.cpython_side.", "")


def corpus_rows(name: str) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(the rows that run, the ``refused`` rows) of ``data/<name>_scripts.toml``."""
    data = tomllib.loads((Path(__file__).parent / "data" / f"{name}_scripts.toml")
                         .read_text(encoding="utf-8"))
    return data["row"], data.get("refused", [])


def corpus_cases(name: str) -> list[Any]:
    """``data/<name>_scripts.toml`` as ``(row, refused)`` parameters, one per row."""
    rows, refused = corpus_rows(name)
    return ([pytest.param(row, False, id=row["name"]) for row in rows]
            + [pytest.param(row, True, id=f"refused-{row['name']}") for row in refused])


def corpus_test(name: str) -> Callable[..., Any]:
    """The test of a round whose rows all run as written: ``data/<name>_scripts.toml``, each
    row on both executors (conftest's ``executor``) as in CPython, each refused row
    refused before any call, saying why."""
    @pytest.mark.parametrize(("row", "refused"), corpus_cases(name))
    async def test(executor: Executor, row: dict[str, Any], refused: bool) -> None:
        await check_corpus_row(executor, row, refused)
    return test


async def check_corpus_row(executor: Executor, row: Mapping[str, Any], refused: bool, *,
                           reference: str | None = None) -> None:
    """A row runs as in CPython, a refused row is refused before any call, saying why;
    ``reference`` is what CPython runs instead of the row's script (see
    :func:`runs_as_in_cpython`)."""
    mode = other_hosts_mode(executor)
    if refused:
        await refused_before_any_call(mode, row)
    else:
        await runs_as_in_cpython(mode, row["script"], row, reference=reference)


def other_hosts_mode(executor: Executor) -> cm.CodeMode:
    """CodeMode over the corpus tools of :mod:`tests.mode.other_host_tools`."""
    return cm.CodeMode(registry(specs(), FUNCTIONS), executor=executor)


async def runs_as_in_cpython(mode: cm.CodeMode, script: str, row: Mapping[str, Any], *,
                             reference: str | None = None) -> None:
    """``script`` (a row's, or its fix) runs in the sandbox as in CPython; CPython runs
    ``reference`` instead when given: the same script written for an older CPython than
    the sandbox's facades follow (``itertools.batched`` as the docs' recipe on 3.11)."""
    run = await mode.run(script)
    script = script if reference is None else reference
    assert run.error is None, run.error
    assert run.calls
    if row.get("stderr"):
        value, output = run_in_fresh_cpython(script, row["style"],
                                             "tests.mode.other_host_tools")
        expected = (value, _as_the_sandbox_prints(output))
    else:
        made: list[str] = []
        expected = run_with_tools(script, row["style"], _logged(made))
        # the same calls (concurrent ones may finish in another order): a lazy read
        # (``any``, ``next``, ``break``) makes no call CPython would not
        assert Counter(c.name.replace("-", "_") for c in run.calls) == Counter(made)
    assert (json.loads(json.dumps(run.value)), run.output) == expected


def _logged(made: list[str]) -> dict[str, Callable[..., Any]]:
    """:data:`FUNCTIONS`, each noting its name in ``made`` when called."""
    def note(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            made.append(name)
            return fn(*args, **kwargs)
        return call
    return {name: note(name, fn) for name, fn in FUNCTIONS.items()}


async def refused_before_any_call(mode: cm.CodeMode, row: Mapping[str, Any]) -> None:
    """A ``refused`` row: a PreflightError saying ``row["says"]``, no call made."""
    run = await mode.run(row["script"])
    assert run.error is not None and run.error.type == "PreflightError"
    assert row["says"] in run.error.message, run.error.message
    assert run.calls == ()
