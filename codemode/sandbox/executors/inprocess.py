"""In-process executor: for trusted code and tests, same results as the worker pool.

Script code never runs on the host's event loop: each executor owns a thread
running its own asyncio loop, and scripts run there (through
:func:`~codemode.sandbox.runtime.runner.run_script`). Tool calls hop back to the host
loop and go through the same
:class:`~codemode.sandbox.executors.broker.CallBroker` as the worker pool, so limits,
traces and JSON crossing are identical. On an asyncio host a call is one
``call_soon_threadsafe`` to the host (the script thread never waits for the host to take
it; on Python 3.12+ the host runs the call eagerly, in the loop turn that received it),
and the reply comes back either directly, to a script thread that had nothing else to
run and blocked briefly for it, or through the script's loop (:class:`_Reply`). Other
backends go through an anyio ``BlockingPortal``, whose ``start_task_soon`` blocks the
calling thread until the host loop has started the task: one more round trip between
the threads per call.

While runs are on, the host's loop thread and the script threads are held to one CPU
(``affinity.CpuShare``; ``share_cpu=False`` turns it off): they take turns under the GIL
anyway, and a hand-over between two CPUs costs several times one on the same CPU.

There is no memory rlimit in-process (only the size guards apply), and code
stuck in one long C call cannot be interrupted: after ``timeout`` plus a grace
period the run is reported as timed out and abandoned (the thread is retired
and a fresh one serves the next run).

The cyclic garbage collector is the interpreter's, not the run's: on CPython 3.11-3.13 a
full collection walks every tracked object of the process in one pass under the GIL,
whichever thread set it off. So a script holding many containers pauses the host's loop
for one such pass now and then, in proportion to what it holds (measured on 3.12: 200,000
nested lists, 40 ms; 1 million, 120 ms; the 3 million that the default 512 MiB allows,
330 ms). The memory limit bounds the count and so the pause. Nothing finer exists without
changing the collector for the whole host: ``gc.disable``/``freeze``/``set_threshold``
would also stop or delay the collection of the host's own cycles for as long as a run
lasts (the worker pool's frame decoder pauses it only around one decode, which makes no
cycles). Scripts that may build millions of objects belong in the worker pool, where a
collection pauses only the worker.

CPython 3.11 only (3.12 changed it): closing a generator that never started sets
``GeneratorExit``, and setting an exception walks the exception state of every generator
running on the thread, so unstarted generators freed at once in one C call (a list of
them cleared, or the rest of a chain ``it = (x for x in it)`` when its ``next()`` hits the
recursion limit) cost their count times the generators running meanwhile, up to the
interpreter's recursion limit, holding the GIL. Measured here: 400,000 chained
generator expressions read with ``next()`` held the host loop 4.9 s under the default
limits, 400,000 ``(x for x in ())`` cleared under 900 running ones 0.77 s; 3.12 and 3.13,
60 ms. The worker pool pauses only the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import math
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Final, Self, final

import anyio
from anyio.from_thread import BlockingPortal

from codemode.errors import LimitExceeded, SandboxError
from codemode.sandbox.executors.affinity import CpuShare, join_cpu
from codemode.sandbox.executors.broker import CallBroker, CallTool
from codemode.sandbox.executors.sniff import library_var
from codemode.sandbox.executors.stuck import STUCK, log_abandoned, stuck_error
from codemode.sandbox.language.meter import script_thread_stack
from codemode.sandbox.limits import DEFAULT_LIMITS, Limits
from codemode.sandbox.runtime.result import RunOutcome, ScriptError, ScriptResult
from codemode.sandbox.runtime.runner import RunControl, preload, run_script

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Coroutine
    from types import TracebackType

__all__ = ["InProcessExecutor"]

WATCH_INTERVAL: Final = 0.005
"""Seconds between the host's deadline and memory checks of a running script (see
``Meter.watch``): bounds what C calls between two chunk boundaries can allocate."""

STOP_GRACE: Final = 0.5
"""Seconds past ``timeout`` to wait for a script that does not reach a tick."""

_LOG: Final = logging.getLogger("codemode.sandbox")


@final
class _LoopThread:
    """A daemon thread running one asyncio loop for script code.

    Its C stack is ``SCRIPT_STACK`` (virtual): CPython recurses in C without a depth check
    on deeply nested data (hashing a tuple nested 400 000 deep), and on the default 8 MiB
    stack that is a segfault of the host itself; with this stack the script's memory or
    operation limit trips first.
    """

    def __init__(self, free: set[int] | None) -> None:
        self.loop = asyncio.new_event_loop()
        self.retired = False
        self.active = 0
        self.free = free
        """The CPUs the thread may run on when no run holds it to its loop thread's (the
        loop thread's own: a thread started while a run holds the loop thread would
        otherwise inherit that run's one CPU for good)."""
        self.joined: int | None = None
        """The CPU the thread was last held to (None: ``free``), so that a run on the same
        CPU as the last one makes no ``sched_setaffinity`` call."""
        self._thread = threading.Thread(target=self._main, name="codemode-sandbox-script",
                                        daemon=True)
        with script_thread_stack():
            self._thread.start()

    def _main(self) -> None:
        if self.free is not None:
            join_cpu(None, self.free)
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    def join(self, cpu: int | None) -> None:
        """On this thread: run on ``cpu`` (None: on ``free``), as ``join_cpu`` does."""
        if cpu != self.joined:
            join_cpu(cpu, self.free)
            self.joined = cpu

    def submit(self, coro: Coroutine[Any, Any, None], box: dict[str, Any]) -> None:
        """Start ``coro`` as a task of the script loop, its first step in the loop turn
        that takes it (a run that makes no call ends there), the task kept in ``box``.
        Not ``run_coroutine_threadsafe``: its ``concurrent.futures.Future`` (a condition
        variable, two chained callbacks) only told the host what ``done`` tells it."""
        self.loop.call_soon_threadsafe(_start_job, self.loop, coro, box)

    def stop(self) -> None:
        if not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.loop.stop)


def _start_job(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, None],
               box: dict[str, Any]) -> None:
    """On the script loop: the run's task, held in ``box`` (the loop keeps only a weak
    reference to a task). The callback runs in a copy of the host's context: sniffio's
    library is set to asyncio there, or under a trio host anyio would take the script's
    loop for trio (``anyio.current_time`` raised and the run failed)."""
    library = library_var()
    if library is not None:
        library.set("asyncio")
    box["task"] = _eager_task(loop, coro)


def _preload() -> None:
    """On a new script thread: the facades a first run would load (see ``preload``)."""
    try:
        preload()
    except Exception:  # the first run loads them again and reports what fails
        _LOG.debug("preloading the script facades failed", exc_info=True)


async def _set(event: anyio.Event) -> None:
    event.set()


_NO_PORTAL: Final = contextlib.nullcontext(None)


def _resolve(reply_to: asyncio.Future[dict[str, Any]], reply: dict[str, Any] | None,
             failure: BaseException | None) -> None:
    """On the script's loop: hand a call's reply (or failure) to the awaiting script."""
    if reply_to.done():
        return
    if reply is not None:
        reply_to.set_result(reply)
    elif failure is not None:
        reply_to.set_exception(failure)
    else:
        reply_to.cancel()


DIRECT_WAIT: Final = 0.005
"""Seconds a script thread with nothing else to run blocks for a call's reply before it
leaves the wait to its loop (see :class:`_Reply`)."""

YIELDS: Final = 3
"""Times a script thread held to its loop thread's CPU gives that CPU up
(``os.sched_yield``, the GIL released) for a call's reply before it blocks on the reply's
lock. The host thread, which the call woke on that CPU, answers meanwhile, and the script
thread runs again once the host waits again: one switch each way. Blocked on the lock, the
script thread was woken by the host's release of it while the host still held the GIL, ran,
found the GIL taken and switched back: 5.8 context switches a call instead of 2
(``/proc/<pid>/task/*/schedstat``, 10,000-call loop, 3.11), 25 -> 21 µs of the script
thread's CPU a call. Bounded: a call that takes longer costs a few system calls more."""

_HANDOVER: Final = threading.Lock()
"""Guards the moment a :class:`_Reply` switches from a direct answer to its future."""


@final
class _Reply:
    """Where the host puts one call's reply for the script thread.

    While the script's loop has nothing else to run (no ready callback, no timer due),
    the script thread blocks on ``lock`` for up to ``DIRECT_WAIT``, and the host answers by
    releasing it: the reply needs no wake-up of the script's loop (a self-pipe write, a
    selector wake-up and a loop turn), and the host is not interrupted mid-call by the
    script thread taking the GIL at that write. Past the wait, the script awaits
    ``future`` and the host resolves it through the loop as before.
    """

    __slots__ = ("done", "failure", "future", "lock", "reply")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lock.acquire()
        self.done = False
        self.reply: dict[str, Any] | None = None
        self.failure: BaseException | None = None
        self.future: asyncio.Future[dict[str, Any]] | None = None

    def deliver(self, reply: dict[str, Any] | None, failure: BaseException | None) -> None:
        """On the host: the call's reply, or its failure, or (both None) its cancellation."""
        with _HANDOVER:
            self.reply, self.failure, self.done = reply, failure, True
            future = self.future
        if future is None:
            self.lock.release()
            return
        with contextlib.suppress(RuntimeError):  # the script's loop is closed
            future.get_loop().call_soon_threadsafe(_resolve, future, reply, failure)

    def result(self) -> dict[str, Any]:
        """On the script thread, once ``done``: the reply, or raise as the future would."""
        if self.reply is not None:
            return self.reply
        if self.failure is not None:
            raise self.failure
        raise asyncio.CancelledError

    async def wait(self, loop: asyncio.AbstractEventLoop, yields: int = 0) -> dict[str, Any]:
        """On the script's loop (``loop``, passed in: on 3.11 ``get_running_loop`` is a
        ``getpid`` system call): the reply, directly when nothing else could run, after
        giving the CPU up ``yields`` times (see ``YIELDS``)."""
        # ``_ready``/``_scheduled`` are private, but asyncio has no public "is anything
        # else runnable, when is the next timer?" (the worker's reply spin reads them too)
        if not loop._ready:  # type: ignore[attr-defined]
            wait = DIRECT_WAIT
            scheduled = loop._scheduled  # type: ignore[attr-defined]
            if scheduled:
                wait = min(wait, scheduled[0].when() - loop.time())
            if wait > 0:
                for _ in range(yields):
                    os.sched_yield()
                    if self.done:
                        break
                if self.lock.acquire(timeout=wait):
                    if not loop._ready:  # type: ignore[attr-defined]
                        return self.result()
                    # Meanwhile another reply came through the loop (an earlier call's, as
                    # a ``_resolve`` callback): this one goes after it, in the order the
                    # host answered, as the worker pool delivers them. Taken directly, it
                    # would let this task finish first, and a TaskGroup would cancel the
                    # task whose reply (an error too, say) had already arrived.
                    self.future = loop.create_future()
                    loop.call_soon(_resolve, self.future, self.reply, self.failure)
                    return await self.future
        with _HANDOVER:
            if not self.done:
                self.future = loop.create_future()
        if self.future is None:
            return self.result()
        return await self.future


async def _cancel_all(tasks: set[asyncio.Task[None]]) -> bool:
    """Cancel the host tasks of a run that is over and wait until they have stopped
    (nothing of the run goes on after it returns), but no longer than ``STUCK``
    seconds: False when some ignored the cancel and are left running (``stuck.py``)."""
    with anyio.CancelScope(shield=True), anyio.move_on_after(STUCK):
        while tasks:
            pending = list(tasks)
            for task in pending:
                task.cancel()
            await asyncio.wait(pending)
    return not tasks


@final
class _Watcher:
    """On an asyncio host, while the host waits for the run (``waiter``): ``control.watch()``
    every ``WATCH_INTERVAL`` from a timer, and at ``ends`` (loop time; held approvals move
    it, :meth:`move`) the wait's end, the run not finished: the wall-clock kill. One timer,
    instead of a cancel scope for the deadline (``move_on_after``: ~18 µs a run) and one per
    interval (never raises)."""

    __slots__ = ("_control", "_ends", "_handle", "_loop", "_waiter")

    def __init__(self, loop: asyncio.AbstractEventLoop, control: RunControl,
                 waiter: asyncio.Future[None], ends: float) -> None:
        self._loop = loop
        self._control = control
        self._waiter = waiter
        self._ends = ends
        self._handle = loop.call_at(min(loop.time() + WATCH_INTERVAL, ends), self._tick)

    def _tick(self) -> None:
        now = self._loop.time()
        if now >= self._ends:
            _finished(self._waiter)
            return
        self._control.watch()
        self._handle = self._loop.call_at(min(now + WATCH_INTERVAL, self._ends), self._tick)

    def move(self, ends: float) -> None:
        """The run's end is now ``ends`` (``math.inf``: not while a call waits)."""
        self._ends = ends
        self._handle.cancel()
        now = self._loop.time()
        self._handle = self._loop.call_at(min(now + WATCH_INTERVAL, ends), self._tick)

    def stop(self) -> None:
        self._handle.cancel()


def _finished(waiter: asyncio.Future[None]) -> None:
    """On the host loop: end the host's wait for the run (it ended, or its time is up)."""
    if not waiter.done():
        waiter.set_result(None)


def _eager_task(loop: asyncio.AbstractEventLoop,
                coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
    """A task for ``coro`` whose first step runs now, in this loop turn, up to its first
    real wait: a call that never waits answers without a turn of its own (3.12's
    ``eager_start``). On 3.11 the step ``create_task`` scheduled is taken back and run
    here, in its task: the extra turn's ``epoll_wait`` and GIL hand-over cost 12% of the
    instructions of a call (callgrind, 10,000-call loop)."""
    if sys.version_info >= (3, 12):
        return asyncio.Task(coro, loop=loop, eager_start=True)
    # ``_ready`` and ``Handle._callback`` are private: asyncio 3.11 has no eager start
    # The script thread may append its next call's ``start`` meanwhile (before or after
    # the step): the step is looked for among what came after ``before`` (only this thread
    # takes from the left), so the calls still start in the order the script sent them.
    ready = loop._ready  # type: ignore[attr-defined]
    before = len(ready)
    task = loop.create_task(coro)
    for index in range(len(ready) - 1, before - 1, -1):
        handle = ready[index]
        if getattr(handle._callback, "__self__", None) is task:
            del ready[index]
            handle._run()
            break
    return task


def _host_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The host's running asyncio loop, or None when the host runs another backend."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # trio: no asyncio loop runs in this thread
        return None


@final
class InProcessExecutor:
    """Runs scripts in this process on a private script thread (see module docstring)."""

    ends_stuck_calls: Final = True
    """A call that ignores its cancellation does not hold a run (``stuck.py``)."""

    def __init__(self, *, stop_grace: float = STOP_GRACE, share_cpu: bool = True) -> None:
        self._stop_grace = stop_grace
        self._share_cpu = share_cpu
        self._threads: list[_LoopThread] = []
        self._lock = threading.Lock()
        self._closed = False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the script threads (a thread stuck in an abandoned run exits when it ends)."""
        self._closed = True
        with self._lock:
            threads, self._threads = self._threads, []
        for thread in threads:
            thread.stop()

    def spawn(self) -> None:
        """Start an idle script thread now, unless one waits already: a new host's first
        run then does not pay for starting a thread and its event loop (~0.5-1 ms here).
        Call it from the host's event loop thread (the thread's CPUs are that thread's)."""
        if self._closed:
            return
        with self._lock:
            if any(not thread.active and not thread.retired for thread in self._threads):
                return
        thread = _LoopThread(CpuShare.of_this_thread().own_cpus())
        thread.loop.call_soon_threadsafe(_preload)
        with self._lock:
            if self._closed:
                stop = True
            else:
                stop = False
                self._threads.append(thread)
        if stop:
            thread.stop()

    def _script_thread(self, held: CpuShare) -> _LoopThread:
        """An idle script thread (each concurrent run gets its own), marked busy; a new
        one may run on the loop thread's own CPUs (``held.own_cpus()``, asked only then)."""
        if self._closed:
            raise SandboxError("the executor is closed")
        with self._lock:
            self._threads = [t for t in self._threads if not t.retired]
            for thread in self._threads:
                if not thread.active:
                    thread.active += 1
                    return thread
            thread = _LoopThread(held.own_cpus())
            thread.active += 1
            self._threads.append(thread)
            return thread

    def _release(self, thread: _LoopThread) -> None:
        with self._lock:
            thread.active -= 1
            stop = thread.retired and not thread.active
        if stop:
            thread.stop()

    async def _wait_portal(self, done: anyio.Event, control: RunControl, broker: CallBroker,
                           limits: Limits) -> None:
        """Off asyncio: wait for ``done`` until the run's wall-clock end, watching the run
        every ``WATCH_INTERVAL``."""
        with anyio.move_on_after(limits.timeout + self._stop_grace) as clock:
            ends = clock.deadline

            def on_clock(paused: float | None) -> None:
                # a call waits for its approver (None), or answered: the run's clock
                # stands still meanwhile, here and in the script's thread
                clock.deadline = math.inf if paused is None else ends + paused
                control.hold(paused)

            broker.on_clock = on_clock
            while not done.is_set():
                with anyio.move_on_after(WATCH_INTERVAL):
                    await done.wait()
                control.watch()

    async def run(self, source: str, *, call_tool: CallTool, tool_paths: Collection[str] = (),
                  limits: Limits | None = None,
                  on_output: Callable[[str], None] | None = None) -> ScriptResult:
        """Run ``source``; never raises for script failures (see ``Executor``)."""
        limits = DEFAULT_LIMITS if limits is None else limits
        if self._closed:
            raise SandboxError("the executor is closed")
        broker = CallBroker(call_tool, limits, tool_paths)
        control = RunControl()
        box: dict[str, Any] = {}
        broker.start()
        started = time.perf_counter()
        host_loop = _host_asyncio_loop()
        # on asyncio the host waits for a future (``_Watcher``), else for an anyio event
        waiter = host_loop.create_future() if host_loop is not None else None
        done = anyio.Event() if host_loop is None else None
        host_context = contextvars.copy_context()
        """Host tasks started for the script run in the host's context, not the script's."""
        tasks: set[asyncio.Task[None]] = set()
        stuck: tuple[str, ...] = ()
        """Tools of calls that ignored their cancellation and were left running."""
        # asyncio hosts need no portal (an anyio portal is a task group and a task per run)
        async with (BlockingPortal() if host_loop is None else _NO_PORTAL) as portal:

            async def answer(name: str, text: str, reply_to: _Reply) -> None:
                reply: dict[str, Any] | None = None
                failure: BaseException | None = None
                try:
                    reply = await broker.answer_json(name, text)
                except Exception as exc:  # the script's await raises it, as with the portal
                    failure = exc
                finally:
                    reply_to.deliver(reply, failure)

            def start(work: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
                # On the host loop: tasks start in the order the script sent them. After
                # the run (the broker is closed) nothing starts: a late call is cancelled.
                assert host_loop is not None
                if broker.closed:
                    if args and isinstance(args[-1], _Reply):
                        args[-1].deliver(None, None)
                    return
                task = _eager_task(host_loop, work(*args))
                if task.done():
                    return
                tasks.add(task)
                task.add_done_callback(tasks.discard)

            async def call(name: str, text: str) -> dict[str, Any]:
                if host_loop is None:
                    assert portal is not None
                    future = portal.start_task_soon(broker.answer_json, name, text)
                    return await asyncio.wrap_future(future)
                reply_to = _Reply()
                host_loop.call_soon_threadsafe(start, answer, name, text, reply_to,
                                               context=host_context)
                return await reply_to.wait(thread.loop, 0 if cpu is None else YIELDS)

            async def deliver(text: str) -> None:
                if on_output is not None:
                    on_output(text)

            def forward(text: str) -> None:
                # The calls' FIFO hop to the host loop, so output and calls keep their order.
                with contextlib.suppress(RuntimeError):  # the host already returned
                    if portal is not None:
                        portal.start_task_soon(deliver, text)
                    elif host_loop is not None:
                        host_loop.call_soon_threadsafe(start, deliver, text,
                                                       context=host_context)

            listener = forward if on_output is not None else None

            async def job() -> None:
                if self._share_cpu:
                    thread.join(cpu)
                try:
                    box["outcome"] = await run_script(source, call=call, tool_paths=tool_paths,
                                                      limits=limits, control=control,
                                                      on_output=listener)
                except BaseException as exc:  # reported to the host task below
                    box["failure"] = exc
                finally:
                    self._release(thread)
                    box["ended"] = True
                    with contextlib.suppress(RuntimeError):  # the host already returned
                        if portal is not None:
                            assert done is not None
                            portal.start_task_soon(_set, done)
                        elif host_loop is not None and waiter is not None:
                            host_loop.call_soon_threadsafe(_finished, waiter,
                                                           context=host_context)

            held = CpuShare.of_this_thread()
            share = held if self._share_cpu else None
            cpu = share.enter() if share is not None else None
            try:
                thread = self._script_thread(held)
                thread.submit(job(), box)
            except BaseException:
                if share is not None:
                    share.leave()
                raise
            try:
                if host_loop is not None:
                    assert waiter is not None
                    ends = host_loop.time() + limits.timeout + self._stop_grace
                    watcher = _Watcher(host_loop, control, waiter, ends)

                    def on_clock(paused: float | None) -> None:
                        # a call waits for its approver (None), or answered: the run's
                        # clock stands still meanwhile, here and in the script's thread
                        watcher.move(math.inf if paused is None else ends + paused)
                        control.hold(paused)

                    broker.on_clock = on_clock
                    try:
                        await waiter
                    finally:
                        watcher.stop()
                else:
                    assert done is not None
                    await self._wait_portal(done, control, broker, limits)
            finally:
                try:
                    broker.close()
                    # a run that ended by itself gets no abort (its hop to the script loop
                    # would wake that thread for nothing)
                    if not box.get("ended"):
                        control.abort("the run was stopped by the host")
                        if "outcome" not in box:
                            thread.retired = True
                    await broker.stop_calls()  # signals first, then the hard cancel
                    if tasks and not await _cancel_all(tasks):
                        stuck = broker.in_flight_tools()
                        log_abandoned("in-process", stuck)
                    if portal is not None:
                        await portal.stop(cancel_remaining=True)
                finally:
                    if share is not None:
                        share.leave(host_loop)
        elapsed = time.perf_counter() - started
        outcome: RunOutcome | None = box.get("outcome")
        if stuck:
            return RunOutcome(error=stuck_error(limits.timeout, stuck)).to_result(
                calls=broker.records, time=elapsed, limits=limits)
        if outcome is None:
            failure = box.get("failure")
            if failure is not None:
                raise SandboxError("the sandbox runner failed") from failure
            _LOG.warning("an in-process run did not stop within its timeout; its script "
                         "thread is abandoned")
            error = ScriptError.for_limit(LimitExceeded("timeout", limits.timeout,
                                                        "the run did not stop in time"))
            return RunOutcome(error=error).to_result(calls=broker.records, time=elapsed,
                                                     limits=limits)
        result = outcome.to_result(calls=broker.records, time=elapsed, limits=limits,
                                   result_size=outcome.result_size)
        if result.error is not None and result.error.limit is not None:
            _LOG.info("a run hit its %s limit: %.300s", result.error.limit, result.error.message)
        return result
