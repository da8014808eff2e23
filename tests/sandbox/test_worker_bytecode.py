"""A worker's boot writes the bytecode of the modules it imports exactly when the host's
own imports would (``launch.boot_plan``): in a source checkout nobody else compiles the
modules only workers import, and every boot compiled them again. After the boot nothing
in a worker writes bytecode: a template's forks and a worker that takes a plan run
with ``sys.dont_write_bytecode`` set (and confined workers cannot write the tree)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from codemode.sandbox import Limits, WorkerPoolExecutor

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def no_tool(name: str, arguments: dict[str, Any]) -> Any:
    return None


def _cached(module: str) -> Path:
    """The ``.pyc`` path of ``tests/sandbox/<module>.py``, removed if it exists."""
    cached = Path(importlib.util.cache_from_source(str(HERE / f"{module}.py")))
    cached.unlink(missing_ok=True)
    return cached


async def _writes_bytecode(pool: WorkerPoolExecutor) -> Any:
    result = await pool.run("import sys\nresult = not sys.dont_write_bytecode",
                            call_tool=no_tool, limits=Limits(timeout=10))
    assert result.error is None, result.error
    return result.value


@pytest.mark.parametrize(("module", "spare"), [("bytecode_written", True),
                                               ("bytecode_booted", False)])
async def test_a_boot_writes_its_imports_bytecode_when_the_host_would(
        module: str, spare: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # spare=True: the template boots and the pool's workers are its forks; False: the
    # worker boots by itself.
    cached = _cached(module)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    async with WorkerPoolExecutor(size=1, runtime=f"tests.sandbox.{module}:raw",
                                  confinement="off", spare=spare) as pool:
        assert await _writes_bytecode(pool) is False  # the worker serving runs does not
    assert cached.is_file()


async def test_a_boot_writes_no_bytecode_when_the_host_does_not(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cached = _cached("bytecode_unwritten")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    async with WorkerPoolExecutor(size=1, runtime="tests.sandbox.bytecode_unwritten:raw",
                                  confinement="off") as pool:
        assert await _writes_bytecode(pool) is False
    assert not cached.exists()
