"""The meter paces its operation chunks (``meter.PACE``): a chunk that took long makes the
next ones smaller, so a C call fed counted items that grow costly (keys sharing a hash)
keeps letting go of the GIL; the results are those of plain CPython, as the C calls are
the same. The host-loop side is in test_attacks' STALLERS (``hash-collision-long-ints-*``).
"""

from __future__ import annotations

import textwrap
import types
from operator import length_hint
from typing import Any

import pytest

from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.language import meter as meter_module
from codemode.sandbox.language.meter import CHUNK, PACE, SLOW_START, Meter
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.runner import run_script


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The meter's clock, set by the test (``clock[0]``)."""
    now = [1000.0]
    monkeypatch.setattr(meter_module, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    return now


def _grant(meter: Meter, clock: list[float], took: float) -> int:
    """Size of the chunk granted after the last one took ``took`` seconds."""
    clock[0] += took
    return length_hint(next(meter))


def test_a_slow_chunk_shrinks_the_next_and_fast_ones_grow_them_back(clock: list[float]) -> None:
    meter = Meter(operations=10**9, timeout=10**6)
    assert _grant(meter, clock, 0.0001) == CHUNK
    assert _grant(meter, clock, 10 * PACE) == CHUNK // 10
    assert _grant(meter, clock, 1000 * PACE) == 1
    sizes = [_grant(meter, clock, PACE / 2) for _ in range(11)]
    assert sizes == [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 1024]
    assert meter.granted == CHUNK + CHUNK // 10 + 1 + sum(sizes)


def test_slow_start_refunds_the_chunk_and_grants_a_small_one(clock: list[float]) -> None:
    meter = Meter(operations=10**9, timeout=10**6)
    chunk = next(meter)
    for _ in range(10):
        next(chunk)
    assert meter.used == 10
    meter.slow_start()
    assert length_hint(chunk) == 0 and meter.used == 10 and meter.granted == 10
    assert _grant(meter, clock, PACE / 2) == SLOW_START


def test_a_paced_chunk_never_grants_past_the_budget(clock: list[float]) -> None:
    meter = Meter(operations=CHUNK + 3, timeout=10**6)
    assert _grant(meter, clock, 0) == CHUNK
    assert _grant(meter, clock, 0) == 3


LEGIT = [
    pytest.param("rows = [{'a': i % 100, 'b': i % 7} for i in range(30000)]",
                 "list(set((r['a'], r['b']) for r in rows))", id="duplicate-tuples-set"),
    pytest.param("xs = [i * 7919 % 5003 for i in range(30000)]",
                 "list(frozenset(xs))", id="duplicate-ints-frozenset"),
    pytest.param("import collections\nws = [str(i % 977) for i in range(30000)]",
                 "collections.Counter(ws).most_common(5)", id="duplicate-texts-counter"),
    pytest.param("xs = [(i % 300, -i % 11) for i in range(30000)]",
                 "list(dict.fromkeys(xs))[-5:]", id="duplicate-tuples-fromkeys"),
    pytest.param("s = set(range(5000))\nys = [i * 3 % 9001 for i in range(20000)]",
                 "s.update(ys)\nlist(s)[-20:]", id="update-of-a-big-set"),
    pytest.param("m = 2**61 - 1\nks = [i * m for i in range(1500)] * 2",
                 "list(set(ks))[-5:] + list(dict.fromkeys(ks))[-5:]", id="keys-sharing-a-hash"),
    pytest.param("import collections\nm = 2**61 - 1\nks = [i * m for i in range(1200)]\n"
                 "c = collections.Counter(ks[:600])",
                 "c.update(ks)\nlist(c.items())[-5:]", id="counter-update-sharing-a-hash"),
]


@pytest.mark.anyio
@pytest.mark.parametrize(("setup", "expression"), LEGIT)
async def test_bulk_builds_make_what_cpython_makes(setup: str, expression: str) -> None:
    *statements, last = expression.split("\n")
    expected: dict[str, Any] = {}
    exec("\n".join([setup, *statements]), expected)  # plain CPython, for comparison
    limits = Limits(timeout=30, operations=10**8)

    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    outcome = await run_script(textwrap.dedent(f"{setup}\n{expression[:-len(last)]}"
                                               f"repr({last})"),
                               call=CallBroker(host, limits).answer_json, tool_paths=[],
                               limits=limits)
    assert outcome.error is None, outcome.error
    assert outcome.value == repr(eval(last, expected))

