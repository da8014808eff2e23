"""A sandbox worker process: runs one script at a time for the host's pool.

Started by :class:`~codemode.sandbox.executors.pool.WorkerPoolExecutor` as
``python -I -B -c <bootstrap> <package root> <plan JSON> <runtime>`` with a minimal
environment, no inherited descriptors but its pipes (stdin, stdout; stderr is a pipe
the host reads, bounded, into ``logging``), and its own session. It pre-imports (and
warms up: a few scripts through the real runner) the script runtime so a warm run
starts in microseconds, then confines itself as the plan says (``confine.apply``, on
its only thread: the kernel layer), announces ``["ready", pid, report]`` (the report:
layer -> ``[active, detail]``) and then serves ``run`` messages (see ``protocol.py``)
until its pipe closes.

Per run it caps ``RLIMIT_AS`` at its current address space plus
``Limits.memory`` and ``RLIMIT_CPU`` at the CPU time the timeout allows (confined:
as hard limits, see ``_Proc.limit_run``); the host's wall-clock kill is the backstop
for code the runner cannot interrupt.
Whatever the script left running is cancelled (and its event loop replaced)
before ``done`` is sent, so nothing a script started can act during a later
run. A worker that could not clean up, ran out
of memory or whose runner failed says so in ``done`` and exits.

The script-side runtime is async and uses asyncio directly (the one place in
codemode that does): the script's ``asyncio`` facade needs a real asyncio
loop, and the worker owns its whole process.

Tool calls are answered over the same pipes. While the script waits for one
reply and nothing else is runnable, the worker polls the pipe for a few hundred
microseconds (yielding the CPU between polls) before sleeping in the selector:
on small VMs a cross-core wakeup costs more than the round trip itself. It polls
only while polling pays (:class:`Spin`): on busy cores it would take the CPU the
host needs to answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import json
import math
import os
import resource
import select
import signal
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import replace
from typing import Any, Final, Protocol

from codemode.errors import LimitExceeded, WorkerProtocolError
from codemode.sandbox.executors import confine
from codemode.sandbox.executors.lost_error import lost_at_cap, memory_error
from codemode.sandbox.executors.protocol import (
    BLOB,
    BOUNDS_TEXT,
    HEADER_SIZE,
    MAX_FRAME,
    FrameDecoder,
    FrameTooLarge,
    arguments_problem,
    encode,
    encode_call,
    may_break_bounds,
)
from codemode.sandbox.executors.template import TEMPLATE, serve_forks
from codemode.sandbox.language.compile import CODE_TAG, adopt_code, cached_script
from codemode.sandbox.language.meter import script_thread_stack
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.prelude import split
from codemode.sandbox.runtime.replies import RUN_ENDED
from codemode.sandbox.runtime.result import RunOutcome, ScriptError

__all__ = ["EXIT_MEMORY", "SPARE", "ScriptCall", "ScriptRuntime", "Spin", "main"]

ScriptCall = Callable[[str, str], Awaitable[dict[str, Any]]]
"""Script side of a tool call: (tool path, arguments as JSON text) -> broker reply."""

EXIT_MEMORY: Final = 75
"""Exit status when the worker itself ran out of memory outside the script."""

SPARE: Final = "spare"
"""The plan ``mode`` of a spare: it boots and warms up, then waits for its real plan (the
first frame its host sends, ``["plan", {...}]``) before it confines itself (see
``pool.spare_workers``)."""

SPIN_SECONDS: Final = 0.0003
"""How long a waiting script polls the pipe before the loop sleeps in the selector."""

SPIN_BACKOFF: Final = 64
"""After polls that missed, the worker skips polling for up to this many calls (see
:class:`Spin`)."""

_OPEN_FILES: Final = 32
"""RLIMIT_NOFILE for the worker: its pipes, the loop's selector, nothing else."""

_PAGE_SIZE: Final = os.sysconf("SC_PAGE_SIZE")

_SETTLE_SECONDS: Final = 0.05
"""How long tasks a script left running get to honour cancellation after the run."""

_RESERVE_BYTES: Final = 1 << 20
"""Memory set aside at boot and released to report a MemoryError."""

_CPU_BUDGET_RUNS: Final = 16
"""A reused confined worker's hard CPU limit: this many runs' timeouts past its first run."""

_AS_CAP: Final = 1 << 62
"""The largest address-space limit set: a run's huge ``memory`` (``Limits(memory=2**63)``)
is "no limit" for the kernel, not an ``OverflowError`` that killed the worker before the
run."""

_CPU_CAP: Final = 1 << 33
"""The largest CPU limit set, in seconds (272 years): the kernel compares the hard limit
times 10**9 with the CPU time in nanoseconds, in 64 bits, so a limit of 2**62 s wrapped
to 0 and the worker was SIGKILLed mid-run (``Limits(timeout=1e30)``, now and then)."""


def _capped(limit: int, cap: int = _CPU_CAP) -> int:
    return min(limit, cap)


OUTPUT_CHUNK: Final = 4096
"""Characters of printed text a streaming run sends in one ``output`` frame at most (the
runner already coalesced what it hands over: see ``runner.OUTPUT_DELAY``)."""

_AS_TOLERANCE: Final = 16 << 20
"""How much less address space than asked a later run on a confined worker may get
(the worker's own growth) before the worker retires after that run."""


class ScriptRuntime(Protocol):
    """The process-agnostic runner the worker calls for each run."""

    def __call__(
        self, source: str, *, call: ScriptCall, tool_paths: Collection[str], limits: Limits
    ) -> Awaitable[RunOutcome]:
        """Run ``source`` to completion and describe what happened."""
        ...


class Spin:
    """Whether a wait should poll first: only while polling pays.

    Polling wins when the other side answers within the poll (an idle machine: a
    cross-core wakeup costs more than the round trip). When it does not (the cores are
    busy with other processes, or the answer takes longer: a slow tool, a script that
    computes between calls), every poll burns its whole window on a CPU the other side
    needs: at a load of 5 on 2 cores the pool's calls took 3 to 4 times longer with it.
    So each poll that misses doubles the number of waits that skip polling (up to
    ``SPIN_BACKOFF``), and one that hits polls on every wait again.
    """

    __slots__ = ("_backoff", "_skip")

    def __init__(self) -> None:
        self._skip = 0
        self._backoff = 1

    def due(self) -> bool:
        """True when this wait should poll (then report it: :meth:`hit` or :meth:`miss`)."""
        if self._skip:
            self._skip -= 1
            return False
        return True

    def poll(self, answered: Callable[[], bool], interrupted: Callable[[], bool]) -> bool:
        """Poll for up to ``SPIN_SECONDS``, yielding the CPU between polls; True once
        ``answered()`` (it reads the pipe). ``interrupted()``: other work became runnable,
        so stop polling (neither a hit nor a miss).

        Only an answer read within the window is a hit. On a loaded machine a yield can
        give the core away for a whole time slice, and an answer read after it came late:
        counted as a hit, it kept the worker polling (and oversleeping) on every call."""
        deadline = time.perf_counter() + SPIN_SECONDS
        while time.perf_counter() < deadline:
            os.sched_yield()
            if answered():
                if time.perf_counter() <= deadline:
                    self.hit()
                else:
                    self.miss()
                return True
            if interrupted():
                return False
        self.miss()
        return False

    def hit(self) -> None:
        """The poll caught the answer."""
        self._backoff = 1

    def miss(self) -> None:
        """The poll ran out: skip the next few waits' polls, more after each miss."""
        self._skip = self._backoff
        self._backoff = min(2 * self._backoff, SPIN_BACKOFF)


class _Channel:
    """The worker's end of the pipes: blocking writes, replies routed to waiting calls."""

    def __init__(self, read_fd: int, write_fd: int) -> None:
        self._read_fd = read_fd
        self._write_fd = write_fd
        self._decoder = FrameDecoder(blobs=True)
        self._code: bytes | None = None
        """The last blob frame: the compiled code of the run that follows it."""
        self._inbox: list[list[Any]] = []
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._early: dict[int, dict[str, Any]] = {}
        self._next_id = 0
        self._serving = False
        self._run = 0
        self._tool_paths: tuple[str, ...] = ()
        self.control_type: Callable[[], Any] | None = None
        """``RunControl`` when the runtime takes a ``control`` (the real runner does): the
        host's ``clock`` frames reach the running script through it."""
        self._control: Any = None
        self._spin = Spin()
        os.set_blocking(read_fd, False)

    def send(self, message: list[Any]) -> None:
        """Write one frame, blocking until the pipe took all of it."""
        self._write(encode(message))

    def _write(self, frame: bytes) -> None:
        view = memoryview(frame)
        while view:
            written = os.write(self._write_fd, view)
            view = view[written:]

    def receive(self) -> list[Any]:
        """Block until the next message between runs; exits the process on EOF."""
        while not self._inbox:
            select.select([self._read_fd], [], [])
            if not self._pump():
                raise SystemExit(0)
        return self._inbox.pop(0)

    def _pump(self) -> bool:
        """Read what is available and route it; False on EOF."""
        try:
            data = os.read(self._read_fd, 1 << 20)
        except BlockingIOError:
            return True
        if not data:
            return False
        for message in self._decoder.feed(data):
            if message[0] is BLOB:
                self._code = message[1]
                continue
            if message[0] == "clock":  # ["clock", run, None | seconds held so far]
                self._clock(message)
                continue
            if message[0] != "reply":
                self._inbox.append(message)
                continue
            call_id, reply = message[1], message[2]
            future = self._waiting.pop(call_id, None)
            if future is None:
                self._early[call_id] = reply
            elif not future.done():
                future.set_result(reply)
        return True

    def _clock(self, message: list[Any]) -> None:
        """The host stopped the run's clock (``None``: a call waits for its approver) or
        restarted it with the seconds held so far: the run's deadline moves by them. A
        clock frame of another run (one that just ended) is dropped."""
        held = message[2] if len(message) == 3 else False
        if self._serving and self._control is not None and message[1] == self._run and (
                held is None or type(held) in (int, float)):
            self._control.hold(held)

    def _on_readable(self) -> None:
        if not self._pump():
            os._exit(0)

    async def call(self, name: str, arguments: str) -> dict[str, Any]:
        """Send one tool call and wait for its reply (the ``ScriptCall`` the runner uses).

        Outside a run (script code still running while the worker cleans up)
        the call is refused like the broker's closed gate refuses it.
        """
        if not self._serving:
            return {"error": {"tool": name, "message": RUN_ENDED, "path": None}}
        self._next_id += 1
        call_id = self._next_id
        try:
            frame = encode_call(call_id, name, arguments)
        except FrameTooLarge as exc:
            return {"error": {"tool": name, "path": None, "message": (
                f"the arguments are {exc.size} bytes of JSON, more than a call may carry "
                f"({MAX_FRAME} bytes)")}}
        if len(arguments) >= BOUNDS_TEXT and may_break_bounds(arguments):
            # the host would take this frame for a protocol violation and end the run:
            # refused here as the in-process broker refuses it, a ToolCallError the
            # script can catch (an argument nested 99 deep ended the run before)
            problem = arguments_problem(name, arguments)
            if problem is not None:
                return {"error": {"tool": name, "path": None, "message": problem}}
        self._write(frame)
        loop = asyncio.get_running_loop()
        # ``_ready`` (callbacks due this turn) is private, but asyncio has no public
        # "is anything else runnable?" check; spinning while other tasks could run
        # would delay them (``asyncio.gather``), so the poll happens only when idle.
        if not loop._ready and self._spin.due():  # type: ignore[attr-defined]

            def answered() -> bool:
                self._on_readable()
                return call_id in self._early

            self._spin.poll(answered, lambda: bool(loop._ready))  # type: ignore[attr-defined]
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        if call_id in self._early:
            reply = self._early.pop(call_id)
            if not loop._ready:  # type: ignore[attr-defined]
                return reply
            # The same read may have answered an earlier call, whose task now waits in
            # the loop to resume: this reply goes after it, in the order the host
            # answered (taken at once, it let this task finish first, and a TaskGroup
            # cancelled the task whose reply had already arrived). Nothing to cancel
            # on the host: the reply is here.
            loop.call_soon(_arrived, future, reply)
            return await future
        self._waiting[call_id] = future
        try:
            return await future
        except asyncio.CancelledError:
            if self._waiting.pop(call_id, None) is not None:
                self.send(["cancel", call_id])
            raise

    def output(self, text: str) -> None:
        """Send printed text of a streaming run as ``["output", run, text]`` frames."""
        if not self._serving:
            return
        for begin in range(0, len(text), OUTPUT_CHUNK):
            self.send(["output", self._run, text[begin:begin + OUTPUT_CHUNK]])

    async def serve(
        self, runtime: ScriptRuntime, payload: dict[str, Any], limits: Limits
    ) -> RunOutcome:
        """One run with replies routed by the loop's reader callback."""
        loop = asyncio.get_running_loop()
        loop.add_reader(self._read_fd, self._on_readable)
        self._serving = True
        self._run = int(payload.get("run", 0))  # call ids of run n: n << 32 + 1, + 2 …
        self._next_id = self._run << 32
        extra: dict[str, Any] = {"on_output": self.output} if payload.get("stream") else {}
        if "tool_paths" in payload:  # sent when they changed; kept for the next runs
            self._tool_paths = tuple(payload["tool_paths"])
        source = str(payload["source"])
        code, self._code = self._code, None
        if code is not None and payload.get("code") == CODE_TAG:
            _adopt(source, code)
        if self.control_type is not None:
            self._control = extra["control"] = self.control_type()
        try:
            return await runtime(
                source,
                call=self.call,
                tool_paths=self._tool_paths,
                limits=limits,
                **extra,
            )
        finally:
            self._serving = False
            self._control = None
            loop.remove_reader(self._read_fd)
            self._waiting.clear()
            self._early.clear()


def _arrived(future: asyncio.Future[dict[str, Any]], reply: dict[str, Any]) -> None:
    """Resolve ``future`` with a reply that is already here, unless it was cancelled."""
    if not future.done():
        future.set_result(reply)


def _adopt(source: str, code: bytes) -> None:
    """Take the code the host compiled for ``source`` (the blob before the run, marshalled
    by an interpreter whose tag is ``["code"]`` of the run: this one's), unless this worker
    already has it; see ``compile.adopt_code`` for why that is sound."""
    body = split(source)[1]
    if cached_script(body) is None:
        adopt_code(body, code)


def _load_runtime(spec: str) -> ScriptRuntime:
    """Import ``module:function`` and run the module's ``warm_up()`` if it has one."""
    module_name, _, attribute = spec.partition(":")
    module = importlib.import_module(module_name)
    warm_up = getattr(module, "warm_up", None)
    if callable(warm_up):
        warm_up()
    runtime: ScriptRuntime = getattr(module, attribute)
    return runtime


class _Proc:
    """The ``/proc/self`` files read around every run, opened once at boot.

    procfs regenerates a file's text on every read at offset 0, so ``pread`` on
    a kept descriptor gives a fresh reading without the open/close pair, which
    was most of the worker's fixed cost per run.
    """

    def __init__(self) -> None:
        self.hard = False
        """Confined: the run's caps are *hard* limits (see :meth:`limit_run`)."""
        self.every_run = False
        """Confined and every run gets a fresh worker (``recycle="every_run"``)."""
        self.retire = False
        """Set when a later run could not get its full caps under the hard limits."""
        self._statm = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
        self._status = os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)
        try:
            self._clear_refs: int | None = os.open("/proc/self/clear_refs",
                                                   os.O_WRONLY | os.O_CLOEXEC)
        except OSError:
            self._clear_refs = None
        self._as_hard = resource.getrlimit(resource.RLIMIT_AS)[1]
        self._cpu_hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        self.cap: int | None = None
        """The last run's ``RLIMIT_AS`` cap in bytes."""

    def address_space(self) -> int:
        """The worker's current virtual memory size in bytes."""
        return int(os.pread(self._statm, 64, 0).split()[0]) * _PAGE_SIZE

    def limit_run(self, limits: Limits) -> None:
        """Lower the soft rlimits for one run (the hard limits stay, so they can be restored).

        ``RLIMIT_AS`` becomes the address space the worker already uses plus
        ``Limits.memory``: the interpreter and the pre-imported runner take tens of
        megabytes before the script allocates anything.

        Confined (``hard``), nothing in the process may raise a limit past the run's cap,
        and no process without ``CAP_SYS_RESOURCE`` can raise a hard limit again, so
        the hard limits only go down: ``RLIMIT_AS`` hard = soft = the first run's cap
        (a later run gets the same cap, or retires the worker when its own would not
        fit); ``RLIMIT_CPU`` hard = soft + 1 s when every run gets a fresh worker, else
        a budget of ``_CPU_BUDGET_RUNS`` timeouts, the worker retiring when the next
        run's soft limit would not fit under it (the host's wall-clock kill bounds each
        run either way).
        """
        if self.hard:
            self._limit_hard(limits)
            return
        cpu_used = resource.getrusage(resource.RUSAGE_SELF)
        spent = cpu_used.ru_utime + cpu_used.ru_stime
        resource.setrlimit(resource.RLIMIT_CPU,
                           (_capped(math.ceil(spent + limits.timeout) + 1), self._cpu_hard))
        self.cap = _capped(self.address_space() + limits.memory, _AS_CAP)
        resource.setrlimit(resource.RLIMIT_AS, (self.cap, self._as_hard))

    def _limit_hard(self, limits: Limits) -> None:
        cpu_used = resource.getrusage(resource.RUSAGE_SELF)
        spent = cpu_used.ru_utime + cpu_used.ru_stime
        cpu = _capped(math.ceil(spent + limits.timeout) + 1)
        if self._cpu_hard == resource.RLIM_INFINITY:
            budget = 1 if self.every_run else _CPU_BUDGET_RUNS * math.ceil(limits.timeout + 1)
            self._cpu_hard = _capped(cpu + budget)
        if cpu > self._cpu_hard:
            cpu = self._cpu_hard
            self.retire = True
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, self._cpu_hard))
        memory = _capped(self.address_space() + limits.memory, _AS_CAP)
        if self._as_hard == resource.RLIM_INFINITY:
            self._as_hard = memory
        elif memory > self._as_hard + _AS_TOLERANCE:
            self.retire = True
        self.cap = min(memory, self._as_hard)
        resource.setrlimit(resource.RLIMIT_AS, (self.cap, self._as_hard))
        if self._cpu_hard - cpu < math.ceil(limits.timeout) + 2:
            self.retire = True

    def unlimit_run(self) -> None:
        """Back to the hard limits, so the worker's own bookkeeping cannot trip them."""
        resource.setrlimit(resource.RLIMIT_AS, (self._as_hard, self._as_hard))
        resource.setrlimit(resource.RLIMIT_CPU, (self._cpu_hard, self._cpu_hard))

    def reset_peak_memory(self) -> bool:
        """Reset the kernel's resident-set high-water mark, so the next reading is this run's."""
        if self._clear_refs is None:
            return False
        try:
            os.write(self._clear_refs, b"5")
        except OSError:
            return False
        return True

    def peak_memory(self) -> int | None:
        """Peak resident bytes since the last reset (``VmHWM``), or None where unknown."""
        return self._status_bytes(b"VmHWM:")

    def peak_address_space(self) -> int | None:
        """The process's peak virtual memory size (``VmPeak``), or None where unknown."""
        return self._status_bytes(b"VmPeak:")

    def _status_bytes(self, field: bytes) -> int | None:
        try:
            text = os.pread(self._status, 4096, 0)
            start = text.index(field) + len(field)
            return int(text[start : text.index(b"kB", start)]) * 1024
        except (OSError, ValueError):
            return None


def _memory_outcome(limits: Limits) -> RunOutcome:
    error = LimitExceeded("memory", limits.memory, "the worker ran out of address space")
    return RunOutcome(error=ScriptError.for_limit(error))


def _settle(loop: asyncio.AbstractEventLoop) -> asyncio.AbstractEventLoop | None:
    """Stop what the script left behind; the loop for the next run, or None if stuck.

    Runs before ``done`` is sent, still under the run's rlimits and the host's
    deadline: a leftover task or an async generator's ``finally`` that spins
    is charged to this run and never reaches the next one. A loop the script
    left nothing on is reused; otherwise it is closed and replaced.
    """
    leftovers = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in leftovers:
        task.cancel()
    if leftovers:
        loop.run_until_complete(asyncio.wait(leftovers, timeout=_SETTLE_SECONDS))
        if not all(task.done() for task in leftovers):
            return None
    # ``_asyncgens`` is private; if asyncio ever drops it, always start afresh.
    if not leftovers and not getattr(loop, "_asyncgens", True):
        return loop
    try:
        loop.run_until_complete(asyncio.wait_for(loop.shutdown_asyncgens(), _SETTLE_SECONDS))
    except TimeoutError:
        return None
    loop.close()
    return asyncio.new_event_loop()


def _runner_failure() -> RunOutcome:
    return RunOutcome(error=ScriptError(type="SandboxError",
                                        message="the sandbox runner failed"))


def _serve_forever(channel: _Channel, runtime: ScriptRuntime, proc: _Proc) -> None:
    loop = asyncio.new_event_loop()
    reserve: bytearray | None = bytearray(_RESERVE_BYTES)
    limits_json: Any = None
    limits = Limits()
    while True:
        message = channel.receive()
        if message[0] != "run" or type(message[1]) is not dict:
            raise WorkerProtocolError(f"expected a run message, got {message[0]!r}")
        payload: dict[str, Any] = message[1]
        if payload.get("limits", {}) != limits_json:  # most runs repeat the last limits
            limits = Limits.from_json(payload.get("limits", {}))
            limits_json = payload.get("limits", {})
        next_loop: asyncio.AbstractEventLoop | None = None
        measured = proc.reset_peak_memory()
        proc.limit_run(limits)
        try:
            outcome = loop.run_until_complete(channel.serve(runtime, payload, limits))
            next_loop = _settle(loop)
        except MemoryError:
            reserve = None
            outcome = _memory_outcome(limits)
        except Exception:
            outcome = _runner_failure()
        finally:
            proc.unlimit_run()
        if outcome.error is not None and outcome.error.type == "MemoryError":
            outcome = _memory_outcome(limits)
        elif outcome.error is not None and lost_at_cap(
                outcome.error, peak=proc.peak_address_space(), cap=proc.cap):
            outcome = replace(outcome, error=memory_error(outcome.error, limits))
        peak = proc.peak_memory() if measured else None
        retiring = reserve is None or next_loop is None or proc.retire
        channel.send(["done", outcome.to_json(), peak, retiring, payload.get("run")])
        if retiring or next_loop is None:
            raise SystemExit(0)
        loop = next_loop


_WARM_RUNTIME: Final = "codemode.sandbox.runtime.runner"
_WARM_SCRIPTS: Final = (
    "import asyncio\nawait asyncio.sleep(0)\nx = [i for i in range(3)]\nx",
    "1 / 0",
    "try:\n    x = await tools.warm(n=1)\nexcept Exception as e:\n    x = str(e)\nx",
    "".join(f"'x'.encode('{codec}')\n" for codec in (
        "utf-8", "ascii", "latin-1", "utf-16", "utf-32", "utf-16-le", "utf-16-be",
        "utf-32-le", "utf-32-be", "utf-8-sig")) + "None",
)
"""Scripts the worker runs through the real runner before it confines itself: the first
await loads anyio's asyncio backend, an error loads the traceback machinery, a tool call
(answered "the run ended") walks the call path, the codecs scripts may use load their
modules. Under Landlock nothing can be imported later."""


async def _no_call(name: str, arguments: str) -> dict[str, Any]:
    return {"error": {"tool": name, "message": RUN_ENDED, "path": None}}


def _warm(runtime: ScriptRuntime, module: str) -> None:
    """Run the warm-up scripts (the real runner only; a stand-in runtime is left alone)."""
    if module != _WARM_RUNTIME:
        return
    loop = asyncio.new_event_loop()
    try:
        for source in _WARM_SCRIPTS:
            loop.run_until_complete(runtime(source, call=_no_call, tool_paths=("warm",),
                                            limits=Limits()))
    finally:
        loop.close()


def _read_exactly(fd: int, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:  # the host closed the pipe: a spare nobody took
            raise SystemExit(0)
        data += chunk
    return bytes(data)


def _await_plan(read_fd: int) -> dict[str, Any]:
    """A spare's plan: exactly its host's first frame (nothing after it is read here)."""
    head = _read_exactly(read_fd, HEADER_SIZE)
    length = int.from_bytes(head, "big")
    if length > MAX_FRAME:
        raise WorkerProtocolError("a spare worker expected its plan")
    messages = FrameDecoder().feed(head + _read_exactly(read_fd, length))
    if len(messages) != 1 or messages[0][0] != "plan" or type(messages[0][1]) is not dict \
            or messages[0][1].get("mode") == SPARE:
        raise WorkerProtocolError("a spare worker expected its plan")
    plan: dict[str, Any] = messages[0][1]
    return plan


def _plan(args: list[str]) -> dict[str, Any]:
    """The confinement plan the host put before the runtime spec (``off`` if none)."""
    if len(args) >= 3 and args[-2].startswith("{"):
        plan = json.loads(args[-2])
        if isinstance(plan, dict):
            return plan
    return {"mode": "off"}


def main(argv: list[str] | None = None) -> None:
    """Worker entry point: ``argv`` is ``[_, plan JSON, runtime spec]``.

    The runtime spec is ``module:function``; the plan says how to confine the worker
    (``confine.apply``). Everything is imported and warmed up first (a spare then waits
    for its plan; a template serves forks, and each forked child goes on as a spare:
    ``template.serve_forks``), then the worker confines itself on its only thread, starts
    the script thread, blocks every signal on its own, and only then announces
    ``["ready", pid, report]`` (what it applied).
    """
    args = sys.argv if argv is None else argv
    read_fd, write_fd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    with contextlib.suppress(OSError):
        os.set_blocking(2, False)  # the host reads it bounded; a full pipe drops, never blocks
    plan = _plan(args)
    # The boot's imports write their bytecode only when the host's would (``launch.boot_plan``).
    sys.dont_write_bytecode = plan.get("bytecode") is not True
    runtime = _load_runtime(args[-1])
    _warm(runtime, args[-1].partition(":")[0])
    sys.dont_write_bytecode = True
    if plan.get("mode") == TEMPLATE:  # returns in each forked worker: a spare
        confine.remember_read_paths()  # the same for every fork: walked once, here
        # What forked workers share stays shared (no collection writes to it). The collector
        # stays off here: the fork loop makes no cycles, and each fork turns it on once booted.
        gc.freeze()
        template_out = write_fd
        read_fd, write_fd = serve_forks(read_fd)
        os.close(template_out)
        with contextlib.suppress(OSError):
            os.set_blocking(2, False)  # its own stderr pipe now: as bounded as a booted one's
        plan = {"mode": SPARE}
        # Again in the fork, while it waits for its plan: a fork shares the template's
        # memory until it writes to it, and the first run wrote to much of it (reference
        # counts), page by page; now that is done before a pool takes this spare (4-12 ms
        # a pool taking it waited for after its plan), not in a model's run.
        _warm(runtime, args[-1].partition(":")[0])
    if plan.get("mode") == SPARE:
        confine.prepare()  # what confinement can do before the plan says how: while idle
        plan = _await_plan(read_fd)
    control_type: Callable[[], Any] | None = None
    code = getattr(runtime, "__code__", None)
    if code is not None and "control" in code.co_varnames[
            :code.co_argcount + code.co_kwonlyargcount]:  # the real runner: before Landlock
        from codemode.sandbox.runtime.runner import RunControl
        control_type = RunControl
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (_OPEN_FILES, _OPEN_FILES))
    proc = _Proc()  # its /proc/self files are opened while the worker may still open them
    report = confine.apply(plan)
    proc.hard = report["rlimits"][0]
    proc.every_run = plan.get("recycle") == "every_run"
    # Boot's objects go to the permanent generation, so no later collection scans them. No
    # full collection first: it finds the boot's ~600 objects of garbage (~130 KB: the
    # collector was off during the boot, see the bootstrap in ``launch``) and costs 10-30 ms.
    gc.freeze()
    gc.enable()  # scripts' cycles are collected (the bootstrap turned it off)
    channel = _Channel(read_fd, write_fd)
    channel.control_type = control_type
    failure: list[BaseException] = []

    def serve() -> None:
        try:
            _serve_forever(channel, runtime, proc)
        except MemoryError:
            os._exit(EXIT_MEMORY)
        except SystemExit:
            pass
        except BaseException as exc:  # re-raised on the main thread: exit status 1
            failure.append(exc)

    # Scripts run on a thread with a ``SCRIPT_STACK`` C stack, started before any run's
    # RLIMIT_AS (the reservation is part of the address space each run's cap adds to):
    # C code that recurses per nesting level of script data then hits a limit, not the
    # end of an 8 MiB main-thread stack (SIGSEGV).
    with script_thread_stack():
        thread = threading.Thread(target=serve, name="codemode-worker-script")
        thread.start()
    # Signals sent to the process (SIGXCPU from RLIMIT_CPU, a kill) then reach the script
    # thread, which is running, rather than this one, parked in ``join``: the process
    # stops at once instead of after the script thread reported the run done.
    signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    # Ready only now: a run sent earlier could raise a signal at the process (a script's
    # ``os.kill(getpid, ...)``, SIGXCPU) while this thread still took it, and its default
    # action ended the worker (SIGRTMIN to a fresh worker under load: status -34).
    channel.send(["ready", os.getpid(), report])
    thread.join()
    if failure:
        raise failure[0]


if __name__ == "__main__":
    main()
