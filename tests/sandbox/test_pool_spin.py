"""The pool's polls back off when they miss (``worker.Spin``), and polling again pays."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from codemode.sandbox.executors import worker as worker_module
from codemode.sandbox.executors.worker import SPIN_BACKOFF, SPIN_SECONDS, Spin

if TYPE_CHECKING:
    from collections.abc import Callable

    import pytest


def _skipped(spin: Spin) -> int:
    """How many waits in a row skip their poll from now on (the poll that is due next
    is taken, not reported)."""
    skipped = 0
    while not spin.due():
        skipped += 1
    return skipped


def test_a_fresh_spin_polls_every_wait() -> None:
    spin = Spin()
    for _ in range(5):
        assert spin.due()
        spin.hit()


def test_each_miss_doubles_the_waits_that_skip_polling_up_to_the_cap() -> None:
    spin = Spin()
    seen = []
    for _ in range(10):
        assert spin.due()
        spin.miss()
        seen.append(_skipped(spin))
    assert seen == [1, 2, 4, 8, 16, 32, 64, 64, 64, 64]
    assert SPIN_BACKOFF == 64


def test_a_hit_after_misses_polls_on_every_wait_again() -> None:
    spin = Spin()
    for _ in range(4):
        spin.due()
        spin.miss()
        _skipped(spin)
    spin.hit()
    spin.miss()
    assert _skipped(spin) == 1
    spin.hit()
    assert spin.due()
    spin.hit()
    assert spin.due()


def _sleeper(seconds: float, answer: bool = True) -> Callable[[], bool]:
    """``answered`` for :meth:`Spin.poll` whose first poll takes ``seconds`` (as a yield
    that gave the core away for a time slice would), then says ``answer``."""
    polls: list[None] = []

    def answered() -> bool:
        if not polls:
            time.sleep(seconds)
        polls.append(None)
        return answer

    return answered


def test_an_answer_within_the_window_is_a_hit(monkeypatch: pytest.MonkeyPatch) -> None:
    # a clock that moves 1 µs per reading and a yield that returns at once: the answer is
    # in the window however loaded the machine is
    ticks = iter(range(10**6))
    monkeypatch.setattr(worker_module.time, "perf_counter", lambda: next(ticks) * 1e-6)
    monkeypatch.setattr(worker_module.os, "sched_yield", lambda: None)
    spin = Spin()
    spin.miss()
    _skipped(spin)
    assert spin.poll(lambda: True, lambda: False)
    spin.miss()
    assert _skipped(spin) == 1  # the hit reset the backoff


def test_an_answer_read_after_the_window_is_a_miss() -> None:
    spin = Spin()
    assert spin.poll(_sleeper(SPIN_SECONDS * 5), lambda: False)
    assert _skipped(spin) == 1
    assert spin.poll(_sleeper(SPIN_SECONDS * 5), lambda: False)
    assert _skipped(spin) == 2


def test_no_answer_in_the_window_is_a_miss_and_other_work_is_neither() -> None:
    spin = Spin()
    assert not spin.poll(lambda: False, lambda: False)
    assert _skipped(spin) == 1
    fresh = Spin()
    assert not fresh.poll(lambda: False, lambda: True)
    assert fresh.due()  # an interrupted poll leaves the backoff alone
