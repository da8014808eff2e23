"""Round 14: nothing a run hands the interpreter's shared tables stays for later runs.

The regular-expression engine caches every pattern it compiles (500 of them, any size: a
short ``(?:[a-z]{10}x){8000}`` compiles to 15 MB) and every replacement template it
expands (500 of them, any length), in module-level dictionaries shared by every run of
the process. A run could leave 250 MB there (its memory limit) and the next run as much
again: four runs grew an in-process host by 780 MB that no run was charged for. The
facade now compiles without the engine's cache (one run keeps its own patterns) and
hands the engine templates of at most 256 characters.

``setattr``/``delattr`` intern the name they are handed, even when they then fail, and
CPython 3.12 keeps interned strings for good: 40 one-megabyte names a run stayed in the
host (40 MB more per run). A new name on an instance now goes into its ``__dict__``
directly, and a name no object could take is refused before CPython sees it."""

from __future__ import annotations

import ctypes
import gc
from typing import Any

import pytest

import codemode as cm
from codemode.sandbox import InProcessExecutor

pytestmark = pytest.mark.anyio

MiB = 1 << 20


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _no_tools(name: str, arguments: Any) -> Any:
    raise AssertionError(f"no tool is called here, got {name}")


_LIBC = ctypes.CDLL(None)


def _rss() -> int:
    """Resident bytes of memory still in use: freed heap pages the allocator kept (for
    reuse, fragmented by what other tests of this worker left) are handed back first, so
    only what is still held is counted."""
    gc.collect()
    _LIBC.malloc_trim(0)
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


SCRIPT = """
import re
run = RUN
sizes = []
for i in range(10):
    p = re.compile(f'{run}-{i}' + '(?:[a-z]{10}x){8000}')
    sizes.append(p.groups)
m = re.match('(a)', 'a')
for i in range(6):
    sizes.append(len(m.expand(f'{run}-{i}' + '\\\\1' + 'y' * 5_000_000)))
sizes
"""


async def _kept_by_the_host(script: str, value: Any) -> int:
    """Bytes the host still holds after four more runs of ``script`` (``RUN`` replaced by
    the run's number, so no two runs share a text), counted from after the first run:
    what its freed memory left in the allocator is not counted."""
    limits = cm.Limits(timeout=20, memory=512 * MiB)
    async with InProcessExecutor() as executor:
        before = 0
        for run in range(5):
            result = await executor.run(script.replace("RUN", str(run)), limits=limits,
                                        call_tool=_no_tools)
            assert result.error is None, result.error
            assert result.value == (value(run) if callable(value) else value)
            if run == 0:
                before = _rss()
        return _rss() - before


async def test_patterns_and_templates_do_not_outlive_the_run() -> None:
    grown = await _kept_by_the_host(
        SCRIPT, lambda run: [0] * 10 + [5_000_003 + len(str(run))] * 6)
    assert grown < 64 * MiB, f"the host kept {grown // MiB} MiB of four ended runs"


async def test_a_long_template_expands_as_one() -> None:
    script = r"""
import re
m = re.match(r'(?P<word>\w+) (\d+)', 'abc 42!')
t = (r'<\g<word>>' + '-' * 300 + r'\2\\\n\x41\u00e9\N{BULLET}\101' + '.' * 300) * 3
[m.expand(t) == ('<abc>' + '-' * 300 + '42\\\nA\u00e9\u2022A' + '.' * 300) * 3,
 re.sub(r'(\d)', '[' + 'x' * 300 + r'\1]', 'a1b2') == 'a[' + 'x' * 300 + '1]b[' + 'x' * 300 + '2]']
"""
    async with InProcessExecutor() as executor:
        result = await executor.run(script, limits=cm.Limits(timeout=5), call_tool=_no_tools)
    assert result.error is None, result.error
    assert result.value == [True, True]


NAMES = """
class O:
    pass
o = O()
n = 0
for i in range(40):
    name = 'a' * 1_000_000 + str(i) + 'RUN'
    setattr(o, name, 1)
    delattr(o, name)
    try:
        setattr({}, name, 1)
    except AttributeError:
        n += 1
n
"""


async def test_attribute_names_do_not_outlive_the_run() -> None:
    grown = await _kept_by_the_host(NAMES, 40)
    assert grown < 64 * MiB, f"the host kept {grown // MiB} MiB of four ended runs"
