"""Modules CPython's C code imports for a script's operations (``facades.C_INTERNAL``).

On 3.12+, dividing big ints (``a // b``, ``divmod``) imports ``_pylong`` through the
running frame's ``__import__``: the script's guarded import refused it, so the division
failed in the sandbox. The host loads the module and the script never holds it.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest

from codemode.sandbox import InProcessExecutor, Limits, WorkerPoolExecutor
from codemode.sandbox.language.facades import guarded_import

pytestmark = pytest.mark.anyio

BIG = "a = 3 ** 60000\nb = 7 ** 14000\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _no_tool(name: str, arguments: dict[str, Any]) -> Any:
    return None


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_big_int_division_runs_as_in_cpython(kind: str) -> None:
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    async with executor:
        result = await executor.run(
            BIG + "q, r = divmod(a, b)\n[(a // b).bit_length(), q.bit_length(), r % 1000003, "
            "(a % b) % 1000003]", call_tool=_no_tool, limits=Limits(timeout=20))
    a, b = 3 ** 60000, 7 ** 14000
    assert result.error is None, result.error
    assert result.value == [(a // b).bit_length(), (a // b).bit_length(),
                            (a % b) % 1000003, (a % b) % 1000003]


@pytest.mark.parametrize("source", ["import _pylong", "from _pylong import int_divmod",
                                    "import _decimal"])
@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_a_script_still_cannot_import_them(kind: str, source: str) -> None:
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    async with executor:
        result = await executor.run(source + "\n1", call_tool=_no_tool,
                                    limits=Limits(timeout=20))
    assert result.error is not None and result.value is None, result


def test_the_c_import_gets_nothing_and_other_shapes_are_refused() -> None:
    if sys.version_info >= (3, 12):
        assert guarded_import("_pylong", {}, {}, [], 0) is None
    else:  # no such module before 3.12 (nor a C import of it)
        with pytest.raises(ModuleNotFoundError):
            guarded_import("_pylong", {}, {}, [], 0)
    for fromlist in (None, (), ("int_divmod",), ["int_divmod"]):
        with pytest.raises(ImportError):
            guarded_import("_pylong", {}, {}, fromlist, 0)
    with pytest.raises(ImportError):
        guarded_import("_pylong", {}, {}, [], 1)
