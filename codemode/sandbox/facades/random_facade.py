"""``random`` for scripts: one private generator per process, sizes bounded."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.sizes import MAX_INT_BITS, repeat_ok
from codemode.sandbox.state import current_run

from . import Facade

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["FACADE"]

_RNG: Final = random.Random()


def choices(population: Sequence[Any], weights: Any = None, *, cum_weights: Any = None,
            k: int = 1) -> list[Any]:
    """k picks with replacement (k is bounded)."""
    repeat_ok([None], k)
    return _RNG.choices(population, weights, cum_weights=cum_weights, k=k)


def getrandbits(k: int) -> int:
    """A random int of k bits (k is bounded)."""
    if k > MAX_INT_BITS:
        current_run().too_big(f"random.getrandbits({k})", k // 8)
    return _RNG.getrandbits(k)


def seed(a: int | float | str | None = None) -> None:
    """Seed the generator (plain values only)."""
    if a is not None and not isinstance(a, int | float | str):
        raise TypeError("seed must be an int, float, str or None")
    _RNG.seed(a)


FACADE: Final = Facade("random", {
    "random": _RNG.random, "randint": _RNG.randint, "randrange": _RNG.randrange,
    "choice": _RNG.choice, "shuffle": _RNG.shuffle, "sample": _RNG.sample,
    "uniform": _RNG.uniform, "gauss": _RNG.gauss, "choices": choices,
    "getrandbits": getrandbits, "seed": seed,
})
