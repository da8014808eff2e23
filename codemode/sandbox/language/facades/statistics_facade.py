"""``statistics`` for scripts: the descriptive functions, over counted input."""

from __future__ import annotations

import statistics
from collections import Counter, deque
from typing import TYPE_CHECKING, Any, Final, Literal

from codemode.sandbox.language.compare import charge_sort
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.facades.collections_facade import namedtuple
from codemode.sandbox.language.sizes import capped_int, charge_operations
from codemode.sandbox.language.state import counted

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["FACADE"]


_BIG_INT_UNIT: Final = 1024
"""Bits of an int item that cost one extra operation (squared: exact arithmetic on it)."""


def _materialise(data: Iterable[Any]) -> list[Any]:
    """The items, counted; big ints are charged extra up front.

    ``statistics`` is pure Python stdlib code without operation ticks, and its exact
    (Fraction) arithmetic on huge ints costs seconds that no tick would interrupt.
    """
    items = list(counted(data))
    extra = sum((x.bit_length() // _BIG_INT_UNIT) ** 2 for x in items if type(x) is int)
    charge_operations(extra)
    return items


_NUMBERS: Final = (int, float, bool)


def _numeric(items: list[Any], what: str) -> list[Any]:
    """``items`` if they are all numbers: the stdlib multiplies data by weights
    (``fmean``) before checking types, and ``120 * ('a' * 10**7)`` is a 1.2 GB string."""
    if not all(type(item) in _NUMBERS for item in items):
        raise TypeError(f"statistics: {what} must be numbers")
    return items


def _over_list(func: Callable[..., Any], *, numeric: bool = False) -> Callable[..., Any]:
    def wrapped(data: Iterable[Any], *args: Any, **kwargs: Any) -> Any:
        items = _materialise(data)
        if numeric:
            _numeric(items, "data")
            # ``variance(data, xbar)``, ``pstdev(data, mu)``: the stdlib subtracts and
            # squares the big int against every item, exactly (5,000 items against a
            # 131,000-bit ``xbar`` ran on for seconds past the run's end, uncharged).
            for value in (*args, *kwargs.values()):
                if type(value) is int:
                    charge_operations(len(items) * (value.bit_length() // _BIG_INT_UNIT) ** 2)
            if args and args[0] is not None and func in _WEIGHTED:
                args = (_numeric(_materialise(args[0]), "weights"), *args[1:])
            if kwargs.get("weights") is not None:
                kwargs["weights"] = _numeric(_materialise(kwargs["weights"]), "weights")
        else:
            charge_sort(items)  # the median functions sort: nested items compare in C
        return capped_int(func(items, *args, **kwargs))
    wrapped.__name__ = func.__name__
    wrapped.__doc__ = func.__doc__
    return wrapped


_WEIGHTED: Final = (statistics.fmean, statistics.harmonic_mean)


def quantiles(data: Iterable[Any], *, n: int = 4,
              method: Literal["inclusive", "exclusive"] = "exclusive") -> list[float]:
    """Cut points; ``n`` is charged to the operation budget up front."""
    if isinstance(n, int) and n > 0:
        deque(counted(range(n)), maxlen=0)
    return statistics.quantiles(_numeric(_materialise(data), "data"), n=n, method=method)


def _counts(data: Iterable[Any]) -> Counter[Any]:
    """Occurrences, inserted through the operation counter (colliding int keys make each
    insert linear: ``statistics.mode`` of 25 000 of them was one 6-second C call)."""
    items = _materialise(data)
    charge_sort(items, rounds=1)  # each item is hashed and compared once (nested tuples)
    counts: Counter[Any] = Counter()
    counts.update(counted(items))
    return counts


def mode(data: Iterable[Any]) -> Any:
    """The most common value (the first one seen on ties), like ``statistics.mode``."""
    pairs = _counts(data).most_common(1)
    if not pairs:
        raise statistics.StatisticsError("no mode for empty data")
    return pairs[0][0]


def multimode(data: Iterable[Any]) -> list[Any]:
    """Every most common value, in first-seen order, like ``statistics.multimode``."""
    counts = _counts(data)
    if not counts:
        return []
    top = max(counts.values())
    return [value for value, count in counts.items() if count == top]


def _paired(func: Callable[..., Any]) -> Callable[..., Any]:
    """``correlation``, ``covariance``, ``linear_regression``: two lists of numbers."""
    def wrapped(x: Iterable[Any], y: Iterable[Any], /, *args: Any, **kwargs: Any) -> Any:
        result = func(_numeric(_materialise(x), "x"), _numeric(_materialise(y), "y"),
                      *args, **kwargs)
        if func is statistics.linear_regression:
            # the stdlib's named tuple is a host class: a script-visible one of this run's
            return namedtuple("LinearRegression", "slope intercept")(*result)
        return result
    wrapped.__name__ = func.__name__
    wrapped.__doc__ = func.__doc__
    return wrapped


FACADE: Final = Facade("statistics", {
    **{name: _over_list(getattr(statistics, name)) for name in (
        "median", "median_low", "median_high",
    )},
    **{name: _over_list(getattr(statistics, name), numeric=True) for name in (
        "mean", "fmean", "geometric_mean", "harmonic_mean", "median_grouped", "stdev",
        "pstdev", "variance", "pvariance",
    )},
    **{name: _paired(getattr(statistics, name)) for name in (
        "correlation", "covariance", "linear_regression",
    )},
    "mode": mode,
    "multimode": multimode,
    "quantiles": quantiles,
    "StatisticsError": statistics.StatisticsError,
})
