"""Everything a script may use still works inside a confined worker (issue #11).

A confined worker cannot import anything after it confined itself (Landlock allows only
what it imported, and a root host's files are unreadable to its spare uid), so every
allowlisted attribute, builtin, facade name and constant of
``tests/sandbox/test_language_allowlist.py`` runs here once more, through the real
runner in a ``confinement="strict"`` pool.
"""

from __future__ import annotations

from typing import Any

import pytest

from codemode.sandbox.executors.pool import WorkerPoolExecutor
from tests.sandbox import test_language_allowlist as table

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _scripts() -> dict[str, tuple[str, Any]]:
    """name -> (script, expected value; ``...`` for "a number, list or string")."""
    scripts: dict[str, tuple[str, Any]] = {}
    for type_name, name in table.ATTRIBUTE_ROWS:
        scripts[f"{type_name}.{name}"] = (table._attribute_script(type_name, name), "ok")
    for name in sorted(table.BUILTINS):
        scripts[f"builtin {name}"] = (f"{table.PRELUDE}{table.BUILTINS[name]}", True)
    for name in sorted(table.FACADES):
        module = name.split(".")[0]
        scripts[f"facade {name}"] = (f"{table.PRELUDE}import {module}\n{table.FACADES[name]}",
                                     True)
    for name in sorted(table.MATH):
        scripts[f"math.{name}"] = (f"import math\nmath.{name}({table.MATH[name]})", ...)
    return scripts


async def test_every_allowlisted_name_works_confined() -> None:
    async def host(name: str, arguments: dict[str, Any]) -> Any:
        return arguments

    failures: list[str] = []
    async with WorkerPoolExecutor(size=2, confinement="strict") as pool:
        await pool.start()
        assert pool.confinement is not None and pool.confinement.complete
        for label, (source, expected) in _scripts().items():
            result = await pool.run(source, call_tool=host, limits=table.LIMITS)
            if result.error is not None:
                failures.append(f"{label}: {result.error.type}: {result.error.message}")
            elif expected is ... and not isinstance(result.value, int | float | list):
                failures.append(f"{label}: {result.value!r}")
            elif expected is not ... and result.value != expected:
                failures.append(f"{label}: {result.value!r} != {expected!r}")
    assert not failures, "\n".join(failures)
