"""``random`` for scripts: one generator per run (a seed never leaks into the next run)."""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded, refuse
from codemode.sandbox.language.sizes import MAX_INT_BITS, charge_operations, ensure_size, repeat_ok
from codemode.sandbox.language.state import counted, current_run

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["FACADE"]


def _rng() -> random.Random:
    run = current_run()
    rng: random.Random | None = run.extras.get("random")
    if rng is None:
        rng = run.extras["random"] = random.Random()
    return rng


def _method(name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(_rng(), name)(*args, **kwargs)
    call.__name__ = name
    return call


_PLAIN: Final = ("random", "randint", "randrange", "choice", "uniform", "gauss")
"""Methods whose cost does not depend on their arguments."""


def _numbers(values: Any, what: str) -> Any:
    """``values`` as a counted list of numbers (None passes).

    The stdlib runs ``itertools.accumulate`` over weights and counts before checking
    them: strings or lists there are concatenated into a quadratic pile of copies.
    """
    if values is None:
        return None
    items = list(counted(values))
    if not all(type(item) in (int, float, bool) for item in items):
        raise TypeError(f"{what} must be numbers")
    return items


def _choices(rng: random.Random | None, population: Sequence[Any], weights: Any = None, *,
             cum_weights: Any = None, k: int = 1) -> list[Any]:
    """k picks with replacement (k is bounded and charged: the loop is Python without ticks)."""
    repeat_ok([None], k)
    charge_operations(k)
    return (rng or _rng()).choices(population, _numbers(weights, "weights"),
                                   cum_weights=_numbers(cum_weights, "cum_weights"), k=k)


def _sample(rng: random.Random | None, population: Sequence[Any], k: int, *,
            counts: Any = None) -> list[Any]:
    """k picks without replacement (k is bounded and charged; with ``counts`` the population
    is virtual, so k is not bounded by anything the script built)."""
    if isinstance(k, int):
        ensure_size(int(k) * 8, f"random.sample(k={k})")
    charge_operations(k)
    return (rng or _rng()).sample(population, k, counts=_numbers(counts, "counts"))


def _shuffle(rng: random.Random | None, x: list[Any]) -> None:
    """Shuffle in place (charged per item: a Python loop without ticks)."""
    if hasattr(x, "__len__"):
        charge_operations(len(x))
    (rng or _rng()).shuffle(x)


def _getrandbits(rng: random.Random | None, k: int) -> int:
    """A random int of k bits (k is bounded)."""
    if k > MAX_INT_BITS:
        current_run().too_big(f"random.getrandbits({k})", k // 8)
    return (rng or _rng()).getrandbits(k)


def _seed(rng: random.Random | None, a: int | float | str | None = None) -> None:
    """Seed this run's generator (plain values only)."""
    if a is not None and not isinstance(a, int | float | str):
        raise TypeError("seed must be an int, float, str or None")
    (rng or _rng()).seed(a)


_CHARGED: Final[dict[str, Callable[..., Any]]] = {
    "choices": _choices, "sample": _sample, "shuffle": _shuffle, "getrandbits": _getrandbits,
    "seed": _seed}
"""Methods that check or charge their arguments; ``rng`` None is the run's generator."""


def _bound(name: str, impl: Callable[..., Any], rng: random.Random | None) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        return impl(rng, *args, **kwargs)
    call.__name__ = name
    return call


@final
class Random(SelfGuarded):
    """``random.Random(seed)``: a generator of the script's own, with the module's methods
    (the same checks and charges); its state never reaches another run."""

    __slots__ = ("_rng",)

    def __init__(self, x: int | float | str | None = None) -> None:
        self._rng = random.Random()
        _seed(self._rng, x)

    def __repr__(self) -> str:
        return "<random.Random object>"

    def sandbox_getattr(self, name: str) -> Any:
        if name in _PLAIN:
            return getattr(self._rng, name)
        charged = _CHARGED.get(name)
        if charged is None:
            raise refuse(self, name)
        return _bound(name, charged, self._rng)


FACADE: Final = Facade("random", {
    **{name: _method(name) for name in _PLAIN},
    **{name: _bound(name, impl, None) for name, impl in _CHARGED.items()},
    "Random": Random,
})
