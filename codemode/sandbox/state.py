"""Per-run state reachable from guards, builtins and facades.

Builtins and facades are shared objects, so they find the run they serve
through a ContextVar (each run executes in its own task, hence its own
context). Guards that are hot (the ticker) are bound per run instead.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from codemode.errors import LimitExceeded

from .meter import Meter

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from .limits import Limits

__all__ = ["CURRENT_RUN", "OutputBuffer", "RunState", "counted", "current_run"]

_GET: Final[Callable[[Any, Any], Any]] = {}.get
"""``_GET(None, x) is x``: the C-level identity used to thread items through ``map``."""


@final
class OutputBuffer:
    """One bounded print buffer per run; past the cap text is dropped, not an error."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._parts: list[str] = []
        self._kept = 0
        self.total = 0
        """Bytes the script tried to print."""

    def write(self, text: str) -> None:
        """Append ``text``, keeping at most ``cap`` bytes overall."""
        size = len(text.encode("utf-8", "surrogatepass"))
        self.total += size
        room = self.cap - self._kept
        if room <= 0:
            return
        if size > room:
            text = text.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore")
            size = room
        self._parts.append(text)
        self._kept += size

    @property
    def truncated(self) -> bool:
        """True when some printed text was dropped."""
        return self.total > self._kept

    def getvalue(self) -> str:
        """The kept text, with the truncation marker when text was dropped."""
        text = "".join(self._parts)
        if self.truncated:
            text += f"\n…[output truncated at {self.cap} bytes]"
        return text


@final
class RunState:
    """What one run's guards, builtins and facades share."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.meter = Meter(operations=limits.operations, timeout=limits.timeout)
        self.output = OutputBuffer(limits.output)
        self.depth = 0

    def counted(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """``iterable`` with one operation charged per item, at C speed."""
        return map(_GET, self.meter.ticker, iterable)

    def too_big(self, what: str, size: int) -> NoReturn:
        """The memory-limit error for an allocation of ``size`` bytes, tripped."""
        self.meter.trip(LimitExceeded(
            "memory", self.limits.memory, f"{what} would need about {size} bytes"))


CURRENT_RUN: Final[ContextVar[RunState]] = ContextVar("codemode_sandbox_run")


def current_run() -> RunState:
    """The run the calling script code belongs to."""
    return CURRENT_RUN.get()


def counted(iterable: Iterable[Any]) -> Iterator[Any]:
    """``iterable`` charged to the current run's operation budget."""
    return map(_GET, CURRENT_RUN.get().meter.ticker, iterable)
