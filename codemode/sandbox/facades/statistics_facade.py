"""``statistics`` for scripts: the descriptive functions, over counted input."""

from __future__ import annotations

import statistics
from collections import deque
from typing import TYPE_CHECKING, Any, Final, Literal

from codemode.sandbox.state import counted

from . import Facade

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["FACADE"]


def _over_list(func: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(data: Iterable[Any], *args: Any, **kwargs: Any) -> Any:
        return func(list(counted(data)), *args, **kwargs)
    wrapped.__name__ = func.__name__
    wrapped.__doc__ = func.__doc__
    return wrapped


def quantiles(data: Iterable[Any], *, n: int = 4,
              method: Literal["inclusive", "exclusive"] = "exclusive") -> list[float]:
    """Cut points; ``n`` is charged to the operation budget up front."""
    if isinstance(n, int) and n > 0:
        deque(counted(range(n)), maxlen=0)
    return statistics.quantiles(list(counted(data)), n=n, method=method)


FACADE: Final = Facade("statistics", {
    **{name: _over_list(getattr(statistics, name)) for name in (
        "mean", "fmean", "geometric_mean", "harmonic_mean", "median", "median_low",
        "median_high", "median_grouped", "mode", "multimode", "stdev", "pstdev",
        "variance", "pvariance",
    )},
    "quantiles": quantiles,
    "StatisticsError": statistics.StatisticsError,
})
