"""Compat round 18: scripts as models write them for other Code Mode hosts (smolagents'
CodeAgent, Anthropic's programmatic tool calling, Monty / pydantic-ai code mode, plain
"write a script with these tools"), against the corpus schemas of ``other_host_tools``.

The rows live in ``data/compat18_scripts.toml``: each runs in the sandbox on both
executors and in CPython with the same handlers as plain functions (``smol``: bare
names sync; ``async``: bare names and ``tools.x`` awaited); value and printed output
must be equal, and so must the calls made (by tool, in any order: a lazy read makes no
call CPython would not). A row with ``stderr = true`` logs: its CPython side runs in a
fresh process with stderr as output too (the run's output holds both), and a traceback
there is compared as the sandbox prints it: the script's frames (its file
``<script>``), not the CPython side's own (the tool stubs), the exception's class by
its name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

import codemode as cm
from tests.mode.compat_harness import corpus_rows, runs_as_in_cpython
from tests.mode.corpus_tools import registry
from tests.mode.other_host_tools import FUNCTIONS, specs

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio

ROWS, _ = corpus_rows("compat18")


@pytest.fixture
def mode(executor: Executor) -> cm.CodeMode:
    """Both executors (conftest's ``executor``)."""
    return cm.CodeMode(registry(specs(), FUNCTIONS), executor=executor)


@pytest.mark.parametrize("row", ROWS, ids=[r["name"] for r in ROWS])
async def test_compat18_script_runs_as_in_cpython(mode: cm.CodeMode, row: dict[str, str]) -> None:
    await runs_as_in_cpython(mode, row["script"], row)
