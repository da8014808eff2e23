"""Per-run state reachable from guards, builtins and facades.

Builtins and facades are shared objects, so they find the run they serve
through a ContextVar (each run executes in its own task, hence its own
context). Guards that are hot (the ticker) are bound per run instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import re
import sys
import time
import weakref
from contextvars import ContextVar
from itertools import compress
from types import CodeType, FunctionType
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

import anyio

from codemode.errors import LimitExceeded
from codemode.sandbox.language.leftovers import close_async_generator, hold_if_suspended
from codemode.sandbox.language.meter import SCRIPT_FILENAME, Meter, ScriptStop, Tripped

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Generator, Iterable, Iterator
    from types import FrameType, TracebackType

    from codemode.sandbox.limits import Limits

__all__ = [
    "ASYNC_SCRIPT_FUNCTIONS",
    "CURRENT_RUN",
    "SCRIPT_FUNCTION_WRAPPERS",
    "OutputBuffer",
    "Place",
    "RunState",
    "ScriptCoroutine",
    "clean_text",
    "coroutine_name",
    "counted",
    "current_run",
    "hold_unawaited",
    "host_raised",
    "install_asyncgen_hooks",
    "is_async_script_function",
    "is_script_function",
    "line_at",
    "script_line",
    "script_place",
    "tracked",
    "wrap_result",
]



_SURROGATES: Final = re.compile("[\ud800-\udfff]")


_CLEAN_STEP: Final = 1 << 20


def clean_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD, so any UTF-8 writer can take it.

    Searched a megabyte at a time (a surrogate is one code point, so no slice splits one):
    in-process the regex engine holds the GIL, and one search of a 50-million-character
    argument held the host loop 0.25 s."""
    if text.isascii():
        return text
    search, step = _SURROGATES.search, _CLEAN_STEP
    if not any(search(text, start, start + step) for start in range(0, len(text), step)):
        return text
    return "".join(_SURROGATES.sub("\ufffd", text[start : start + step])
                   for start in range(0, len(text), step))


@final
class OutputBuffer:
    """One bounded print buffer per run; past the cap text is dropped, not an error."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._parts: list[str] = []
        self._kept = 0
        self.total = 0
        """Bytes the script tried to print."""
        self.listener: Callable[[str], None] | None = None
        """Host callback handed each piece of kept text as it is printed (live streaming):
        an exact ``str``, never more than ``cap`` bytes in all."""

    def write(self, text: str) -> None:
        """Append ``text``, keeping at most ``cap`` bytes overall."""
        text = clean_text(text)
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
        if self.listener is not None and text:
            self.listener(text if type(text) is str else str.__str__(text))

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
        self.meter = Meter(operations=limits.operations, timeout=limits.timeout,
                           memory=limits.memory)
        self.output = OutputBuffer(limits.output)
        self._tracked: list[weakref.ref[Any]] = []
        self.extras: dict[str, Any] = {}
        """Per-run state of facades (e.g. the ``random`` generator)."""
        self._owned: list[Any] = []
        """Async generators the script iterated, held until the run closes them (see
        ``install_asyncgen_hooks``)."""
        self._closing: Any = None
        """The async generator :meth:`close_tracked` is closing after the run's end."""
        install_asyncgen_hooks()
        self.tasks: list[asyncio.Task[Any]] = []
        """Tasks the script started (``asyncio.create_task``); those still running when
        the script ends are cancelled with it (:meth:`close_owned`)."""
        self.cancellers: dict[int, Any] = {}
        """``asyncio.timeout()`` blocks and task groups entered and not exited yet, by id:
        each cancels the task that entered it (expired; a task of its failed), and only
        its own exit takes that back. One left open (suspended in a generator, entered on
        an exit stack never closed) is the script's: see :meth:`cancelled_by_script`."""
        self.gathered = 0
        """Tasks of the ``asyncio.gather`` calls going on now, all nesting levels: with
        :attr:`tasks` what the run's next task is sized against (``TASK_BYTES`` each)."""
        self.compared: dict[int, Any] = {}
        """Operands of the script's comparisons that answered ``NotImplemented``, by id,
        held until the run ends (see ``guards._within_run``)."""
        self.host_errors: dict[int, BaseException] = {}
        """Exceptions the host raised into the script (a failed tool call, a ``wait_for``
        timeout), by id (held, so an id is not reused): the runner tells a script's own
        ``raise ToolCallError(...)`` apart from these."""
        self.stopped: ScriptStop | None = None
        """The first ``exit()``/``final_answer()`` one of the script's tasks raised: it ends
        the run as if the script had raised it (CPython's ``SystemExit`` in any task leaves
        the event loop at once); before, a task nobody awaited dropped it silently."""
        self.stopped_at: TracebackType | None = None
        """Where :attr:`stopped` was raised (raised again elsewhere, it gets a new one)."""
        self.on_stop: Callable[[], None] | None = None
        """Stops the script's main code (the runner's cancel scope) once :attr:`stopped`
        is set; None before and after that code runs."""
        self.unawaited: dict[int, tuple[Any, Place | None]] = {}
        """Tool calls made and not awaited yet (nor handed to a task), by id, in the order
        made, each with where in the script (:func:`line_at` reads its line): one left when
        the script ends never ran, and the run fails naming it instead of losing it
        silently."""

    @property
    def ended(self) -> bool:
        """True once the run is over."""
        return self.meter.ended

    def stop(self, stop: ScriptStop) -> None:
        """A task of the script raised ``stop``: the first one ends the run."""
        if self.stopped is not None or self.on_stop is None:
            return  # one raised as the run's end cancels its tasks: the run is over
        self.stopped = stop
        self.stopped_at = stop.__traceback__
        self.meter.stopping = stop
        self.on_stop()

    def cancelled_by_script(self) -> bool:
        """Whether a block the script left open cancelled the run's task (its
        ``cancelled_its_task()``)."""
        return any(block.cancelled_its_task() for block in self.cancellers.values())

    def left_open(self) -> bool:
        """Whether the script left anything for the run's end to close (a task still
        running, an async generator it iterated, a generator or coroutine it made): without
        any, :meth:`close_owned` and :meth:`close_tracked` run no script code and never
        suspend."""
        return bool(self._tracked or self._owned
                    or any(not task.done() for task in self.tasks))

    def track(self, obj: Any) -> Any:
        """Remember a script generator/coroutine so the run can close it when it ends."""
        tracked = self._tracked
        if len(tracked) >= 4096 and len(tracked) & 4095 == 0:
            tracked[:] = [ref for ref in tracked if ref() is not None]
        tracked.append(weakref.ref(obj))
        return obj

    def own_async_generator(self, agen: Any) -> None:
        """Hold ``agen`` (first iterated by this run's script) until the run closes it."""
        if self.meter.ended:
            if agen is self._closing:
                # the run's own aclose() of one never iterated: it runs no script code
                # (refused, the generator stayed unstarted, held for the process's life
                # with its arguments: an in-process host grew by each run's leftovers)
                return
            raise GeneratorExit  # script code iterating after the run: it stops here
        self._owned.append(agen)

    async def close_owned(self) -> None:
        """Close the async generators the script iterated, while the run is still live: a
        ``finally`` there runs as part of the run (metered, printing to the run's output),
        bounded by the time the run has left; asyncio never finalizes them later. First
        the tasks the script started and left running are cancelled, and waited for as
        long as the run has left: none of their code runs after the run."""
        await self._cancel_tasks()
        owned, self._owned = self._owned, []
        for agen in owned:
            left = max(0.0, self.meter.deadline - time.monotonic())
            try:
                with anyio.move_on_after(left) as scope:
                    await close_async_generator(agen)
            except (Exception, GeneratorExit, Tripped, ScriptStop):
                continue
            finally:
                if agen.ag_frame is not None:  # it yielded again: closed once more at the end
                    self._owned.append(agen)
            if scope.cancelled_caught and self.meter.tripped is None:
                self.meter.tripped = LimitExceeded(
                    "timeout", self.limits.timeout,
                    "an async generator's finally block outlasted the run")

    async def _cancel_tasks(self) -> None:
        """Cancel the script's tasks still running and wait for them, as long as the run
        has left; a task a cancelled one starts (in its ``except CancelledError``) is
        cancelled in the next round, and every round costs the run's time."""
        while True:
            pending = [task for task in self.tasks if not task.done()]
            self.tasks = []
            if not pending:
                return
            for task in pending:
                task.cancel()
            left = max(0.0, self.meter.deadline - time.monotonic())
            with anyio.CancelScope(shield=True), anyio.move_on_after(left) as waited:
                await asyncio.wait(pending)
            # Kept: a task that caught its cancellation is still pending (it was dropped
            # here, and stayed on the loop after the run); ``close_tracked`` cancels it
            # again once the run has ended.
            self.tasks = [task for task in pending if not task.done()] + self.tasks
            if self.tasks and waited.cancelled_caught and self.meter.tripped is None:
                # A task that caught its cancellation held the run (and its worker) for the
                # whole timeout: that is the timeout, not a success, on both executors (the
                # in-process watcher tripped it at the task's next tick; a worker has none).
                self.meter.tripped = LimitExceeded("timeout", self.limits.timeout,
                                                   "the run took too long")
            if left <= 0:  # out of time: the last round, once creating a task stops
                for task in self.tasks:
                    task.cancel()
                return

    async def close_tracked(self) -> None:
        """Close every generator, coroutine and async generator the script left open."""
        for ref in self._tracked:
            obj = ref()
            if obj is None:
                continue
            try:
                if inspect.isasyncgen(obj):
                    self._closing = obj
                    await obj.aclose()
                else:
                    obj.close()
            except (Exception, GeneratorExit, Tripped, ScriptStop):
                pass
            self._closing = None
            hold_if_suspended(obj)
        self._tracked.clear()
        for agen in self._owned:  # iterated again by a finally: closed without it running
            with contextlib.suppress(Exception, GeneratorExit, Tripped, ScriptStop):
                await agen.aclose()
            hold_if_suspended(agen)
        self._owned.clear()
        # Tasks an async generator's ``finally`` started while it was closed, and tasks
        # that caught every cancellation until the run's time was up (``while True: try:
        # await sleep(1000) except CancelledError: pass``): left pending, such a task kept
        # its frame (and every object it referenced) on the loop after the run, run after
        # run, and woke up later, inside another run's time. The run is over now: at its
        # first tick or await the task's code stops, so one more cancellation ends it.
        pending = [task for task in self.tasks if not task.done()]
        self.tasks = []
        for task in pending:
            task.cancel()
        if pending:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_AFTER_END_GRACE):
                await asyncio.wait(pending)

    def counted(self, iterable: Iterable[Any]) -> Iterator[Any]:
        """``iterable`` with one operation charged per item, at C speed."""
        return compress(iterable, self.meter.ticker)

    def too_big(self, what: str, size: int) -> NoReturn:
        """The memory-limit error for an allocation of ``size`` bytes, tripped."""
        self.meter.trip(LimitExceeded(
            "memory", self.limits.memory, f"{what} would need about {size} bytes"))


_AFTER_END_GRACE: Final = 0.1
"""Seconds the run waits, after it ended, for its tasks' last cancellation to land."""

CURRENT_RUN: Final[ContextVar[RunState]] = ContextVar("codemode_sandbox_run")


def _of_script(agen: Any) -> bool:
    """Whether ``agen`` is an async generator of script code."""
    code = getattr(agen, "ag_code", None)
    return code is not None and code.co_filename == SCRIPT_FILENAME


def install_asyncgen_hooks() -> None:
    """Make this thread's async-generator hooks hand script generators to their run.

    asyncio finalizes an async generator dropped unfinished (``async for … break``) by
    scheduling its ``aclose()`` on the loop, later: its ``finally`` ran after the run had
    returned, outside the meter, and its error was logged to the host's stderr ("Task
    exception was never retrieved", with script-chosen text). These hooks wrap the
    thread's (asyncio's) hooks: an async generator of script code first iterated inside a
    run is held by the run (``RunState.own_async_generator``) and closed by it before the
    run returns; the finalizer never schedules one. Other generators go to the wrapped
    hooks. Idempotent; asyncio sets its hooks again whenever a loop starts running.
    """
    current = sys.get_asyncgen_hooks()
    if getattr(current.firstiter, "codemode_hook", False):
        return
    outer_firstiter, outer_finalizer = current.firstiter, current.finalizer

    def firstiter(agen: Any) -> None:
        run = CURRENT_RUN.get(None)
        if run is not None and _of_script(agen):
            run.own_async_generator(agen)
            return
        if outer_firstiter is not None:
            outer_firstiter(agen)

    def finalizer(agen: Any) -> None:
        # A script's generator is dropped with its frame unresumed: its run closed it (one
        # the close left suspended is held, see ``leftovers``) or it never ran. A weak set
        # of them could not tell: weak references are cleared before finalizers run.
        if _of_script(agen):
            return
        if outer_finalizer is not None:
            outer_finalizer(agen)

    firstiter.codemode_hook = True  # type: ignore[attr-defined]
    sys.set_asyncgen_hooks(firstiter=firstiter, finalizer=finalizer)


def host_raised(error: BaseException) -> BaseException:
    """Mark ``error`` as raised by the host into the current run (see
    ``RunState.host_errors``) and return it."""
    run = CURRENT_RUN.get(None)
    if run is not None and len(run.host_errors) < _MAX_HOST_ERRORS:
        run.host_errors[id(error)] = error
    return error


_MAX_HOST_ERRORS: Final = 1 << 16


def current_run() -> RunState:
    """The run the calling script code belongs to (GeneratorExit once it has ended)."""
    run = CURRENT_RUN.get(None)
    if run is None or run.meter.ended:
        raise GeneratorExit
    return run


def counted(iterable: Iterable[Any]) -> Iterator[Any]:
    """``iterable`` charged to the current run's operation budget."""
    return compress(iterable, current_run().meter.ticker)


class CoroutineLike:
    """What CPython would give the script as a coroutine object (``asyncio.iscoroutine``):
    its own coroutines and its un-awaited tool calls."""

    __slots__ = ()


@final
class ScriptCoroutine(CoroutineLike):
    """A script's coroutine as the script holds it: awaitable, nothing else.

    Hides ``send``/``throw``/``cr_frame`` (driving a coroutine by hand leaks
    host futures) and closes the coroutine when dropped, so a coroutine the
    script never awaited is discarded quietly inside the run instead of warning
    later from a finalizer.
    """

    __slots__ = ("__weakref__", "_closer", "_coro", "_handed_out")

    def __init__(self, coro: Coroutine[Any, Any, Any]) -> None:
        self._coro = coro
        self._handed_out = False
        self._closer: weakref.finalize[Any, Any] | None = None

    def close_when_dropped(self) -> None:
        """Close the coroutine the moment this wrapper is dropped, even in a reference
        cycle, where ``__del__`` comes too late: the collector finalizes the coroutine
        (made first) before its wrapper, and CPython warned 'coroutine ... was never
        awaited' on the host's stderr. A weak reference's callback runs before any
        finalizer of the garbage, and holds the coroutine out of it."""
        closer = weakref.finalize(self, self._coro.close)
        closer.atexit = False
        self._closer = closer

    def __await__(self) -> Generator[Any, None, Any]:
        self._handed_out = True
        if self._closer is not None:
            self._closer.detach()
        run = CURRENT_RUN.get(None)
        if run is not None:
            run.unawaited.pop(id(self), None)
        return self._coro.__await__()

    def close(self) -> None:
        """Discard the coroutine if nobody awaits it (host side only)."""
        if not self._handed_out:
            self._coro.close()

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<coroutine {getattr(self._coro, '__qualname__', '?')}>"


def wrap_result(run: RunState, obj: Any) -> Any:
    """What a script gets from calling one of its async/generator functions (a coroutine
    is one of the run's :attr:`RunState.unawaited` until awaited or made a task)."""
    if inspect.iscoroutine(obj):
        coroutine = ScriptCoroutine(obj)
        hold_unawaited(run, coroutine)
        return coroutine
    return run.track(obj)


MAX_WAITING: Final = 4096
"""Calls a run holds made and not awaited yet (at least twice ``Limits.calls``): each is
kept until awaited, to name it if it never is. Held without a bound, 30 MB of them took a
worker to its address limit, where it hung instead of reporting the operations limit;
past the bound a call is not held (a gather of 40 000 coroutines still runs, and is
sized by ``asyncio.gather`` itself), so one lost there is not reported."""


def hold_unawaited(run: RunState, call: Any) -> None:
    """Keep ``call`` (a tool call or a script coroutine) in :attr:`RunState.unawaited`
    until it is awaited or made a task (while fewer than ``MAX_WAITING`` are held)."""
    if len(run.unawaited) < max(MAX_WAITING, 2 * run.limits.calls):
        run.unawaited[id(call)] = (call, script_place())
    elif isinstance(call, ScriptCoroutine):
        call.close_when_dropped()  # not closed with the run's held ones


def coroutine_name(coroutine: ScriptCoroutine) -> str:
    """The qualified name of the script function whose call made ``coroutine``."""
    name = getattr(coroutine._coro, "__qualname__", "?")
    return name if type(name) is str else "?"


Place = tuple[CodeType, int]
"""A script frame's code and the byte offset of its current instruction (``f_lasti``)."""


def script_place() -> Place | None:
    """Where the innermost script frame calling is, for :func:`line_at` to read the line
    of only when it is shown: ``f_lineno`` decodes the code's line table from its start
    (~20 µs at line 300 of a script), and every tool call records its place."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != SCRIPT_FILENAME:
        frame = frame.f_back
    return None if frame is None else (frame.f_code, frame.f_lasti)


def line_at(place: Place | None) -> int | None:
    """The line of ``place`` (what ``f_lineno`` said there), or None."""
    if place is None:
        return None
    code, offset = place
    for start, end, line in code.co_lines():
        if start <= offset < end:
            return line
    return None


def script_line() -> int | None:
    """The line of the innermost script frame calling (where a call never awaited was
    made)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != SCRIPT_FILENAME:
        frame = frame.f_back
    return None if frame is None else frame.f_lineno


SCRIPT_FUNCTION_WRAPPERS: Final[set[Any]] = set()
"""Code of the host closures a script's own generator/async ``def`` becomes (the runner's
``_track_`` wrapper): one closure per definition, so as much the script's as a plain def."""


ASYNC_SCRIPT_FUNCTIONS: Final[weakref.WeakSet[Any]] = weakref.WeakSet()
"""The ``_track_`` wrappers of the script's ``async def``s (a wrapper is a plain function:
``inspect.iscoroutinefunction`` cannot tell)."""


def is_async_script_function(obj: Any) -> bool:
    """Whether ``obj`` is one of the script's ``async def``s (not an async generator)."""
    try:
        return obj in ASYNC_SCRIPT_FUNCTIONS
    except TypeError:  # unhashable
        return False


def is_script_function(obj: Any) -> bool:
    """Whether ``obj`` is a function the script defined (a plain ``def``/``lambda``, or the
    runner's per-definition wrapper of a generator/async one), never a host function
    (a facade's, a builtin's) that every run shares."""
    if not isinstance(obj, FunctionType):
        return False
    code = obj.__code__
    return code.co_filename == SCRIPT_FILENAME or code in SCRIPT_FUNCTION_WRAPPERS


def tracked(func: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a coroutine/generator function so the current run controls what it returns."""
    def call(*args: Any, **kwargs: Any) -> Any:
        return wrap_result(current_run(), func(*args, **kwargs))
    call.__name__ = getattr(func, "__name__", "function")
    call.__qualname__ = getattr(func, "__qualname__", call.__name__)
    return call
