"""The pool's polls back off when they miss (``worker.Spin``), and polling again pays."""

from __future__ import annotations

from codemode.sandbox.executors.worker import SPIN_BACKOFF, Spin


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
