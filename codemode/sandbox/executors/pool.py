"""``WorkerPoolExecutor``: scripts run in pre-started worker processes.

Each worker (``worker.py``) is a separate Python process with rlimits, a
minimal environment, its own session and nothing open but two pipes. The host
never runs script code and never blocks on a worker: pipes are non-blocking
and every wait goes through the event loop.

Tool calls are multiplexed on one worker's pipes by request id. Incoming
frames are decoded as soon as the pipe is readable and routed: a call goes to
an idle handler task (handlers are started on demand, at most
``Limits.concurrency`` per run), so the script's ``asyncio.gather`` runs its
calls concurrently on the host; ``done`` ends the run and cancels whatever the
script left in flight.

On asyncio the read end stays registered with the loop for the whole run (a
reader callback, the one direct use of asyncio here): anyio's ``wait_readable``
registers and unregisters the descriptor on every wait, about 10 µs per tool call,
a third of the per-call budget. Other backends use ``wait_readable`` in the run's task.
For ``HOST_POLL_SECONDS`` after each message it sends, the host also polls the pipe
from the loop between its other tasks, while polling pays.

A worker that hit a limit, crashed, broke the protocol, was killed on the
wall-clock deadline or was abandoned by a cancelled run is killed and replaced
by a fresh process at once (a fork of the worker template, ``template.py``, or a boot
while other workers serve); a run prefers
a worker that is already up, and a worker found dead while idle is replaced
before the run starts rather than failing it.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import functools
import itertools
import json
import logging
import math
import os
import signal
import subprocess
import sys
import time
import weakref
from collections import deque
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, Literal, Self, final

import anyio
import anyio.lowlevel
import anyio.to_thread

from codemode.errors import LimitExceeded, SandboxError, WorkerProtocolError
from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.executors.confine import (
    LAYERS,
    UID_BASE,
    Confinement,
    ConfinementMode,
)
from codemode.sandbox.executors.identity import LEASE_DIR, UidLease, UidLeases
from codemode.sandbox.executors.launch import (
    DEFAULT_RUNTIME,
    LOCK,
    TEMPLATES,
    WORKER_ENV,
    boot_plan,
    start_template,
    worker_command,
)
from codemode.sandbox.executors.protocol import (
    LARGE,
    FrameDecoder,
    decode_bounded,
    encode,
    encode_blob,
    json_size,
    new_bounded,
)
from codemode.sandbox.executors.resident import WATCH_SECONDS, Resident, budget
from codemode.sandbox.executors.sniff import library_var
from codemode.sandbox.executors.stuck import STUCK, log_abandoned, stuck_error
from codemode.sandbox.executors.template import ForkedProcess, TemplateGone, supported
from codemode.sandbox.executors.worker import EXIT_MEMORY, SPARE, Spin
from codemode.sandbox.language.compile import CODE_TAG, cached_script, export_code
from codemode.sandbox.limits import DEFAULT_LIMITS, Limits
from codemode.sandbox.runtime.prelude import split
from codemode.sandbox.runtime.result import RunOutcome, ScriptError, ScriptResult, Usage

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Coroutine
    from types import TracebackType

    from anyio.abc import TaskGroup

    from codemode.sandbox.executors.broker import CallTool

__all__ = ["DEFAULT_RUNTIME", "WorkerPoolExecutor"]

HOST_POLL_SECONDS: Final = 0.001
"""After the host sends a worker a run or a reply, its event loop polls the worker's pipe
between its other tasks for this long before leaving the wait to the selector: the next
message usually comes within it, and a wake-up from an idle selector costs about 100 µs
on small VMs. asyncio only, and only while polling pays (``worker.Spin``: polls that miss
make the next sends skip it). Without it (perf26) a cache-hit run cost the host 0.57M
instructions instead of 1.06M, but a pool call took 52-68 µs instead of 27-32 µs
(``benchmarks/sandbox.py --quick``, 4 alternating pairs at load ~1.3)."""

_BOOT_TIMEOUT: Final = 30.0
"""Seconds a new worker may take to import the runtime and announce itself."""

_READ_SIZE: Final = 1 << 20
_PIPE_SIZE: Final = 1 << 20
"""Pipe capacity asked for (Linux): big replies cross in fewer wakeups."""
_F_SETPIPE_SZ: Final = getattr(fcntl, "F_SETPIPE_SZ", 1031)

_BATCH: Final = 256
"""Most frames routed per loop turn; the rest wait for the next turn (a worker flooding
frames cannot keep the loop in one callback)."""
_RUN_SPAN: Final = 1 << 32
"""Call ids of run ``n`` lie in ``(n * _RUN_SPAN, (n + 1) * _RUN_SPAN)`` (see ``protocol``)."""
_YIELD_EVERY: Final = 4
"""Without asyncio, a handler answering queued calls back to back yields after this many."""
_TURN_BUDGET: Final = 0.002
"""Seconds of answering per loop turn, all of a session's handlers together, before they
yield (on asyncio): a flood of calls cannot hold the loop for longer."""
_run_ids = itertools.count(1)
"""Run numbers, unique in this host process (frames carry them: see ``protocol``)."""


_STDERR_TAIL: Final = 64 * 1024
"""Bytes of a worker's stderr the host keeps (the last ones) and logs."""
_TERMINAL_CONTROLS: Final = {code: f"\\x{code:02x}" for code in (
    *range(0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))}
"""Control characters a terminal acts on (all but tab and newline) -> a ``\\xNN`` escape:
what a worker writes to its stderr reaches the host's log handlers (``codemode serve``
writes warnings to its own stderr), where a compromised worker's ESC sequences erased the
line and wrote a status line of their own (``\\x1b[2K\\x1b[1Gcodemode serve: upstream
x: up``) and retitled the terminal."""
_WORKER_LOG: Final = logging.getLogger("codemode.worker")
_WORKER_LOG.addHandler(logging.NullHandler())
"""Records reach the handlers an application configured, never ``logging.lastResort``:
what a (possibly compromised) worker writes does not land on the host's stderr."""
_LOG: Final = logging.getLogger("codemode.sandbox")
_UNAVAILABLE_ENV: Final = "CODEMODE_CONFINE_UNAVAILABLE"
"""Test seam (host side): comma-separated layer names whose probe the worker makes fail."""
_LEASES: Final = UidLeases(LEASE_DIR if os.geteuid() == 0 else None)
"""This host process's uid leases (a root host's workers each run as a spare uid)."""


class _WorkerGone(Exception):
    """The worker's pipe closed: it exited or was killed."""


class _NotDelivered(Exception):
    """A run's request could not be written: the worker was gone before the run began."""


_LIVE: weakref.WeakSet[_Worker] = weakref.WeakSet()
"""Workers whose process may still run: what ``_end_at_exit`` ends."""

_SPARES: dict[tuple[str, str], _Worker] = {}
"""One warmed-up worker without a plan per (interpreter, runtime): see
:func:`spare_workers` (guarded by ``launch.LOCK``, with the templates)."""
def spare_workers() -> tuple[int, ...]:
    """Process ids of the spare workers this process keeps.

    A pool (``spare=True``, the default) keeps one spare per interpreter and runtime once
    it has a worker up: a process that warmed up but has no plan yet, so it is not
    confined and runs nothing (a fork of the worker template, see
    :func:`worker_templates`; booted from scratch where there is none). The next worker
    any pool of this process needs (a new pool's, a replacement after a failure or for
    ``recycle="every_run"``) takes it: it is sent that pool's plan, confines itself and is
    ready in milliseconds instead of a boot's few hundred, and a new spare is made after
    the pool's next run. Spares live until the process exits (a closed pool leaves its
    spare for the next pool) and are killed then."""
    return tuple(worker.process.pid for worker in _SPARES.values()
                 if worker.alive and not worker.ended())


def worker_templates() -> tuple[int, ...]:
    """Process ids of the worker templates this process keeps.

    The first pool (``spare=True``) of a process that needs a worker boots one template
    per interpreter and runtime: a worker that imported and warmed up the runtime and
    then only forks. Its workers, and every later worker and spare, are forks of it,
    ready in milliseconds, each confining itself like any worker when a pool takes it
    (``template.py`` says how). A template that dies or cannot fork is replaced;
    meanwhile workers boot from scratch. Templates live until the process exits."""
    with LOCK:
        return tuple(template.pid for template in TEMPLATES.values() if not template.gone)


def _forget_in_child() -> None:
    """A process forked from the host (``os.fork``, multiprocessing's fork) must not
    talk to the host's workers or spares: it would read their replies or kill them when it
    exits. It forgets them (their descriptors closed in the child only; ``launch`` forgets
    the templates)."""
    for worker in list(_LIVE):
        worker.forget()
    _LIVE.clear()
    _SPARES.clear()


os.register_at_fork(after_in_child=_forget_in_child)


@atexit.register
def _end_at_exit() -> None:
    """End the workers of pools nobody closed (a CodeMode the caller forgot) before the
    interpreter goes: killed, reaped and their pipes closed, so exiting prints nothing
    (no ``ResourceWarning`` under ``-X dev``, no worker writing into a closed pipe). The
    templates are stopped after this (``launch``)."""
    workers = list(_LIVE)
    for worker in workers:
        worker.kill()
    for worker in workers:  # forked workers' statuses come from their template: it goes last
        with contextlib.suppress(Exception):
            worker.process.wait(timeout=1)
        stream = worker.process.stderr
        if stream is not None and not stream.closed:
            with contextlib.suppress(OSError):
                stream.close()


@final
class _Worker:
    """One worker process and the host's non-blocking ends of its two pipes."""

    def __init__(
        self,
        python: str,
        runtime: str,
        plan: dict[str, Any] | None = None,
        admit: Callable[[Confinement], None] | None = None,
        lease: UidLease | None = None,
        forked: ForkedProcess | None = None,
    ) -> None:
        spare = plan is None
        plan = {"mode": SPARE} if plan is None else plan
        self._lease = lease
        self.process: subprocess.Popen[bytes] | ForkedProcess = forked or subprocess.Popen(
            [*worker_command(python), json.dumps(boot_plan(plan, python)), runtime],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=WORKER_ENV,
            cwd="/",
            close_fds=True,
            start_new_session=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        assert self.process.stderr is not None
        self._mode: str = plan.get("mode", "off")
        self._admit = admit
        self.confinement: Confinement | None = None
        """What the worker reported it applied (its ``ready`` frame); None until then."""
        self._stderr_fd = self.process.stderr.fileno()
        os.set_blocking(self._stderr_fd, False)
        self._stderr_tail = bytearray()
        self.read_fd = self.process.stdout.fileno()
        self._write_fd = self.process.stdin.fileno()
        for fd in (self.read_fd, self._write_fd):
            os.set_blocking(fd, False)
            with contextlib.suppress(OSError):
                fcntl.fcntl(fd, _F_SETPIPE_SZ, _PIPE_SIZE)
        self.decoder = FrameDecoder(bounded=True)
        self._outgoing: deque[memoryview] = deque()
        self.ready = False
        self.alive = True
        self._killed = False
        self.tool_paths: tuple[str, ...] | None = None
        """The tool paths the worker was last sent (it keeps them: a run sends its paths only
        when they changed, so a run's frame does not grow with the registry)."""
        self.spin = Spin()
        """Whether the host's next send should poll for the answer (see ``poll_soon``)."""
        self.memory_cap: int | None = None
        """``Limits.memory`` of the first run: a confined worker's address-space cap is a
        hard limit that cannot go back up, so a run asking for more gets another worker."""
        self.shipped: dict[str, None] = {}
        """Sources whose compiled code this worker was sent (newest last, at most
        ``_SHIPPED_SIZE``): it caches what it adopts, so a source it has seen runs without
        the blob (if the worker's own cache dropped it since, it compiles the source)."""
        self.spare = spare
        """True until :meth:`assign` sends it its plan (a spare boots without one)."""
        self._resident: Resident | None = None
        _LOG.debug("sandbox worker %d started (confinement %s)", self.process.pid, self._mode)
        _LIVE.add(self)

    def assign(self, plan: dict[str, Any], admit: Callable[[Confinement], None],
               lease: UidLease | None) -> None:
        """Send a spare its plan: it confines itself as that says, then announces ready.
        (The frame is small: a pipe that takes no bytes here belongs to a dead worker.)"""
        self.spare = False
        self._mode = plan.get("mode", "off")
        self._admit = admit
        self._lease = lease
        frame = encode(["plan", plan])
        try:
            written = os.write(self._write_fd, frame)
        except (BlockingIOError, OSError):
            written = 0
        if written != len(frame):
            self.kill()
            return
        _LOG.debug("sandbox worker %d (a spare) taken (confinement %s)", self.process.pid,
                   self._mode)

    async def boot(self) -> None:
        """Wait for the ``ready`` announcement."""
        if self.ready:
            return
        with anyio.fail_after(_BOOT_TIMEOUT):
            while not self.ready:
                self._take_ready(await self.receive())

    def poll_ready(self) -> bool:
        """True once the worker announced itself (checks the pipe without waiting)."""
        if not self.ready and self.alive:
            try:
                self._take_ready(self.read() or [])
            except (_WorkerGone, WorkerProtocolError):
                self.alive = False
        return self.ready

    def _take_ready(self, messages: list[list[Any]]) -> None:
        for message in messages:
            if message[0] is LARGE:  # a ready frame with a big report: decode it bounded
                message = decode_bounded(message[1])
            if message[0] != "ready" or self.ready:
                raise WorkerProtocolError(f"expected ready, got {message[0]!r}")
            self.ready = True
            _LOG.debug("sandbox worker %d is ready", self.process.pid)
            report = message[2] if len(message) > 2 else None
            if self._mode == "off":
                self.confinement = Confinement.off()
            else:
                self.confinement = Confinement.from_report(self._mode, report)
            self.drain_stderr()
            if self._admit is not None:
                try:
                    self._admit(self.confinement)
                except SandboxError:
                    self.ready = False
                    self.alive = False  # refused: never handed a run, discarded on checkout
                    raise

    def forget(self) -> None:
        """In a process forked from the host: close this process's copies of the pipes,
        leaving the worker to the host that started it (never signalled from here)."""
        self.alive = False
        self._killed = True
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                with contextlib.suppress(OSError):
                    stream.close()
        if isinstance(self.process, ForkedProcess):
            self.process.forget()

    def drain_stderr(self) -> None:
        """Read what the worker wrote to stderr (never blocks) and log it, bounded."""
        chunks: list[bytes] = []
        while True:
            try:
                data = os.read(self._stderr_fd, _STDERR_TAIL)
            except (BlockingIOError, OSError):
                break
            if not data:
                break
            chunks.append(data)
        if not chunks:
            return
        text = b"".join(chunks)
        self._stderr_tail += text
        del self._stderr_tail[:-_STDERR_TAIL]
        _WORKER_LOG.warning("sandbox worker %d wrote to stderr:\n%s", self.process.pid,
                            text[-_STDERR_TAIL:].decode("utf-8", "replace")
                            .translate(_TERMINAL_CONTROLS).rstrip("\n"))

    @property
    def stderr_tail(self) -> str:
        """The last ``_STDERR_TAIL`` bytes the worker wrote to stderr."""
        return self._stderr_tail.decode("utf-8", "replace").translate(_TERMINAL_CONTROLS)

    def read(self, limit: int | None = None) -> list[list[Any]] | None:
        """Messages completed by what the pipe holds now (at most ``limit``, buffered
        frames first); None if nothing was there."""
        if self.decoder.backlog:
            return self.decoder.feed(b"", limit)
        if self._killed:  # its pipes are closed: the number may name another file now
            self.alive = False
            raise _WorkerGone
        try:
            data = os.read(self.read_fd, _READ_SIZE)
        except BlockingIOError:
            return None
        if not data:
            self.alive = False
            raise _WorkerGone
        return self.decoder.feed(data, limit)

    def stray(self) -> bool:
        """True if the worker sent anything while no run was active, or its pipe closed:
        out of protocol, so it gets no (further) run."""
        if self.decoder.pending or self._killed:
            return True
        try:
            os.read(self.read_fd, 1)
        except BlockingIOError:
            return False
        except OSError:
            pass
        return True

    async def receive(self) -> list[list[Any]]:
        """Wait for at least one whole message; raises ``_WorkerGone`` on EOF."""
        while True:
            messages = self.read()
            if messages:
                return messages
            if messages is None:
                await anyio.wait_readable(self.read_fd)

    async def send(self, frame: bytes) -> None:
        """Write ``frame``; concurrent senders queue behind the first, which drains the pipe."""
        if self._outgoing:
            self._outgoing.append(memoryview(frame))
            return
        try:
            written = os.write(self._write_fd, frame)
        except BlockingIOError:
            written = 0
        except (BrokenPipeError, OSError):
            raise _WorkerGone from None
        if written == len(frame):
            return
        self._outgoing.append(memoryview(frame)[written:])
        while self._outgoing:
            await anyio.wait_writable(self._write_fd)
            head = self._outgoing[0]
            try:
                written = os.write(self._write_fd, head)
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise _WorkerGone from None
            if written == len(head):
                self._outgoing.popleft()
            else:
                self._outgoing[0] = head[written:]

    @property
    def clean(self) -> bool:
        """False while a frame is only partly written (the stream is unusable if abandoned)."""
        return not self._outgoing

    def kill(self) -> None:
        """SIGKILL the worker's session and close the host's pipe ends."""
        self.alive = False
        if not self._killed and self.process.poll() is None:
            self._killed = True
            if isinstance(self.process, ForkedProcess):
                self.process.kill()  # through its pidfd (a forked worker cannot fork)
            else:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.process.pid, signal.SIGKILL)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None and not stream.closed:
                with contextlib.suppress(OSError):
                    stream.close()

    def resident(self) -> int | None:
        """Its resident bytes, as the host reads them (``resident.py``), or None."""
        if self._resident is None:
            self._resident = Resident(self.process.pid)
        return self._resident.read()

    def finish(self) -> None:
        """After it exited: log what is left on its stderr, close it, free its uid."""
        if self._resident is not None:
            self._resident.close()
        _LOG.debug("sandbox worker %d exited (status %s)", self.process.pid,
                   self.process.returncode)
        stream = self.process.stderr
        if stream is not None and not stream.closed:
            self.drain_stderr()
            with contextlib.suppress(OSError):
                stream.close()
        if self._lease is not None:
            self._lease.release()

    def exit_status(self) -> int | None:
        """The exit status if the process has ended (never blocks)."""
        return self.process.poll()

    def ended(self) -> bool:
        """True once the process has ended, even if its status is not known yet (a forked
        worker's comes from its template, shortly after)."""
        process = self.process
        if isinstance(process, ForkedProcess):
            return process.exited()
        return process.poll() is not None


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _asyncio_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop, or None under another anyio backend."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


@final
class _Session:
    """The host side of one run on one worker: routes messages, answers calls.

    Nothing the worker sends can hold the run past its deadline or the loop for long:
    at most ``_BATCH`` frames are routed per loop turn, the session checks the deadline
    itself on every read and between answers (a flood of frames woke it on every turn,
    just before anyio's cancellation could land, and kept a 5 s run alive for 28 s),
    a frame too big or nested to decode at once is decoded on a thread
    (``protocol.decode_bounded``) while the pipe is left unread, and at most
    ``calls + concurrency`` calls may wait for replies. Frames must be this run's (see
    ``protocol``); anything else ends the run and the worker.

    On asyncio the run's own task waits on one future while a reader callback, registered
    for the whole run, routes what the worker sends; handlers are plain tasks started
    when calls arrive (at most ``Limits.concurrency``; a run without calls starts none).
    Nothing else is made per run: no task group, no events, no shielded scope unless
    tasks are left to wind down. (With a serving task, its task group, three events, a
    shielded scope and a handler started per run, and no poll, a cache-hit
    ``CodeMode.run`` cost the host 1.06M instructions without calls and 2.32M with
    three; without them 0.57M and 1.88M, callgrind, 3.11; the poll, see
    ``HOST_POLL_SECONDS``, adds what it spins.) Other backends read in the run's task with
    ``wait_readable`` and keep their handlers in a task group.
    """

    def __init__(self, worker: _Worker, broker: CallBroker, limits: Limits, run_id: int,
                 deadline: float) -> None:
        self._worker = worker
        self._broker = broker
        self._capacity = limits.concurrency
        self._inbox: deque[list[Any]] = deque()
        self._queued: set[int] = set()
        """Ids of the calls in the inbox the worker has not cancelled."""
        self._loop = _asyncio_loop()
        self._idle: list[Callable[[], None]] = []
        """How to wake each parked handler (a handler parks when the inbox is empty)."""
        self._handlers = 0
        self._in_flight: dict[int, anyio.CancelScope] = {}
        self._busy: set[anyio.CancelScope] = set()
        """Scopes of handlers answering a call, up to writing its reply (a worker that
        stops reading could hold a reply's write); cancelled when the run ends."""
        self._tasks: set[asyncio.Task[None]] = set()
        """asyncio: the run's handler and helper tasks still running."""
        self._helpers = 0
        """asyncio: helper tasks (a large frame's decode, a call's cancel, a clock frame)
        still running: the run's end waits for them."""
        self._failure: BaseException | None = None
        """What a task of the run raised (a bug): the run raises it."""
        self._waiter: asyncio.Future[None] | None = None
        """asyncio: what the run's task waits on; set when the run is finished."""
        self._read_scope: anyio.CancelScope | None = None
        """Other backends: the scope of the run's read loop, cancelled when it is finished."""
        self._tg: TaskGroup | None = None
        self._serving = False
        self._finished = False
        self._stopping = False
        self._ended = False
        self._reading = False
        self._run_id = run_id
        self._base = run_id * _RUN_SPAN
        self._last_id = self._base
        self._deadline = deadline
        """``time.perf_counter()`` value past which the run is over, whatever arrives."""
        self._ends = deadline
        """The deadline the run started with (held approvals move ``_deadline`` from it)."""
        self.clock: anyio.CancelScope | None = None
        """The executor's scope around the run (its wall-clock kill), moved with the run's
        clock (see :meth:`_on_clock`)."""
        self._clock_ends = math.inf
        broker.on_clock = self._on_clock
        self._calls = limits.calls
        self._max_pending = limits.calls + limits.concurrency
        self._decoding = False
        self._draining = False
        self._routed = 0
        self._polling = False
        self._poll_mark = 0
        self._poll_until = 0.0
        self._turn_marked = False
        self._turn_started = 0.0
        self._decoded: anyio.Event | None = None
        self._decode_scope: anyio.CancelScope | None = None
        self.outcome: list[Any] | None = None
        """The worker's ``done`` message, once it arrived."""
        self.large_outcome = False
        """True when ``done`` came as a large frame (its value is measured off the loop)."""
        self.gone = False
        """True when the worker's pipe closed mid-run."""
        self.violation: WorkerProtocolError | None = None
        """Set when the worker broke the protocol (the run fails, the worker is killed)."""
        self.overflow: LimitExceeded | None = None
        """Set when the worker sent more calls than may wait for replies at once."""
        self.timed_out = False
        """True when the session saw the deadline pass (the run fails, the worker is killed)."""
        self.memory_budget: int | None = None
        """Resident bytes past which the run fails and its worker is killed (``resident``)."""
        self.over_memory: int | None = None
        """The worker's resident bytes when the host found it past ``memory_budget``."""
        self._watch: asyncio.TimerHandle | None = None
        self.stuck: tuple[str, ...] = ()
        """Tools of calls that ignored their cancellation; the run ended without them."""
        self.on_output: Callable[[str], None] | None = None
        """Receives the run's ``output`` frames (live streaming; the run asked for them)."""
        self._output_left = limits.output
        """Characters of output the worker may still send: its kept output is at most
        ``limits.output`` bytes, so more is a protocol violation."""

    async def run(self) -> None:
        """Serve the run until the worker reports ``done``, dies or misbehaves, or the
        caller (the executor's deadline scope) cancels it.

        On asyncio a call which ignores its cancellation (``stuck.py``) holds its own
        task, not the run: ``STUCK`` seconds after the run's calls were cut, the run goes
        on without it (:attr:`stuck`)."""
        self._serving = True
        loop = self._loop
        if loop is None:
            await self._serve_elsewhere()
        else:
            library = library_var()
            token = None if library is None else library.set("asyncio")
            try:
                await self._serve_asyncio(loop)
            finally:
                if token is not None:
                    assert library is not None
                    library.reset(token)
        if self._failure is not None:
            raise self._failure

    async def _serve_asyncio(self, loop: asyncio.AbstractEventLoop) -> None:
        """The reader callback and the tasks it starts run in a copy of this context,
        with anyio's library set to asyncio: in a loop callback there is no current
        task, so sniffio (when installed) could not tell it, and anyio raised
        ``NoEventLoopError`` there for a host started with plain ``asyncio.run``."""
        fd = self._worker.read_fd
        waiter = self._waiter = loop.create_future()
        loop.add_reader(fd, self._on_readable)
        self._reading = True
        if self.memory_budget is not None:
            self._watch = loop.call_later(WATCH_SECONDS, self._watch_memory)
        try:
            if self._worker.decoder.backlog:
                self._on_readable()
            self.poll_soon()
            if not self._finished:
                await waiter
        finally:
            self._ended = True
            if self._reading:
                self._reading = False
                loop.remove_reader(fd)
            if self._watch is not None:
                self._watch.cancel()
            if self._tasks:
                await self._wind_down()

    async def _wind_down(self) -> None:
        """The run ended with tasks of its own (asyncio): calls in flight are asked to
        stop (their signals), then cut; parked handlers return. The run waits for calls
        and helpers at most ``STUCK`` seconds after the cut (shielded: it also runs when
        the run was cancelled), then leaves what is left running (:attr:`stuck`)."""
        with anyio.CancelScope(shield=True):
            await self._broker.stop_calls()
            cut = bool(self._busy)
            self._stop_handlers()
            pending = [task for task in self._tasks if not task.done()]
            if pending and (cut or self._helpers):
                await asyncio.wait(pending, timeout=STUCK)
                if any(not task.done() for task in pending):
                    self.stuck = self._broker.in_flight_tools() or ("?",)
                    log_abandoned(f"on sandbox worker {self._worker.process.pid}",
                                  self.stuck)

    async def _serve_elsewhere(self) -> None:
        """Other backends: read in this task, handlers in a task group."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            if self.memory_budget is not None:
                tg.start_soon(self._memory_loop)
            try:
                with anyio.CancelScope() as self._read_scope:
                    await self._read_loop()
            finally:
                # Handlers are shielded (see ``_handle``): however the run ended, calls in
                # flight are asked to stop (their signals) first, then cut.
                self._ended = True
                await self._broker.stop_calls()
                self._stop_handlers()
                tg.cancel_scope.cancel()

    def _spawn(self, func: Callable[..., Coroutine[Any, Any, None]], *args: Any,
               helper: bool = True) -> None:
        """Start a task of the run: a plain task on asyncio (see :meth:`_wind_down`),
        else one of the task group's."""
        loop = self._loop
        if loop is None:
            assert self._tg is not None
            self._tg.start_soon(func, *args)
            return
        task = loop.create_task(func(*args))
        self._tasks.add(task)
        if helper:
            self._helpers += 1
            task.add_done_callback(self._helper_done)
        else:
            task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled():
            failure = task.exception()
            if failure is not None and self._failure is None:
                self._failure = failure
                self._finish()

    def _helper_done(self, task: asyncio.Task[None]) -> None:
        self._helpers -= 1
        self._task_done(task)

    def _stop_handlers(self) -> None:
        """Let every handler task return: parked ones are woken, busy ones cancelled.

        Cheaper than cancelling a task group (anyio formats the cancelling task's
        repr on every ``cancel()``, ~20 µs), and most runs end with all handlers parked.
        """
        self._stopping = True
        if self._decode_scope is not None:
            self._decode_scope.cancel()
        for scope in list(self._busy):
            scope.cancel()
        idle, self._idle = self._idle, []
        for wake in idle:
            wake()

    def _on_readable(self) -> None:
        if self._decoding or self._finished or self._ended:  # a drain left for after the end
            return
        if time.perf_counter() > self._deadline:
            self.timed_out = True
            self._finish()
            return
        try:
            messages = self._worker.read(_BATCH)
        except _WorkerGone:
            self._finish(gone=True)
            return
        except WorkerProtocolError as exc:
            self._violate(exc)
            return
        if messages:
            self._route(messages)
        if self._loop is not None and self._worker.decoder.backlog and not self._decoding \
                and not self._draining and not self._finished:
            self._draining = True  # one drain chain at most, however many wake-ups
            self._loop.call_soon(self._drain)

    def _drain(self) -> None:
        """Route the next batch of buffered frames (the rest next turn, after other tasks)."""
        self._draining = False
        self._on_readable()

    def poll_soon(self) -> None:
        """Poll the pipe from the loop for ``HOST_POLL_SECONDS`` (see there)."""
        loop = self._loop
        if loop is None or self._ended or self._finished or self._decoding:
            return
        if not self._polling:
            if not self._worker.spin.due():
                return
            self._polling = True
            loop.call_soon(self._poll)
        self._poll_mark = self._routed
        self._poll_until = time.perf_counter() + HOST_POLL_SECONDS

    def _poll(self) -> None:
        over = self._ended or self._finished
        if over or self._decoding or time.perf_counter() > self._poll_until:
            self._polling = False
            if self._routed != self._poll_mark:  # something came within the window
                self._worker.spin.hit()
            elif not over:
                self._worker.spin.miss()
            return
        self._on_readable()
        assert self._loop is not None
        self._loop.call_soon(self._poll)

    async def _read_loop(self) -> None:
        if self._worker.decoder.backlog:
            self._on_readable()
        while not self._finished:
            if self._decoding:
                assert self._decoded is not None
                await self._decoded.wait()
                continue
            if self._worker.decoder.backlog:
                await anyio.lowlevel.checkpoint()
            else:
                await anyio.wait_readable(self._worker.read_fd)
            self._on_readable()

    def _watch_memory(self) -> None:
        self._watch = None
        if not self._ended and not self._finished and not self._over_budget():
            assert self._loop is not None
            self._watch = self._loop.call_later(WATCH_SECONDS, self._watch_memory)

    async def _memory_loop(self) -> None:
        while not self._finished:
            await anyio.sleep(WATCH_SECONDS)
            if self._over_budget():
                return

    def _over_budget(self) -> bool:
        """Read the worker's resident size; past the budget the run ends (and the worker
        is killed, like a run past its deadline)."""
        resident = self._worker.resident()
        if resident is None or self.memory_budget is None or resident <= self.memory_budget:
            return False
        self.over_memory = resident
        self._finish()
        return True

    def _finish(self, *, gone: bool = False) -> None:
        self.gone = self.gone or gone
        self._finished = True
        if self._waiter is not None:
            _wake(self._waiter)
        elif self._read_scope is not None:
            self._read_scope.cancel()

    def _violate(self, problem: WorkerProtocolError | str) -> None:
        if self.violation is None and self.outcome is None:
            self.violation = (problem if isinstance(problem, WorkerProtocolError)
                              else WorkerProtocolError(problem))
        self._finish()

    def _route(self, messages: list[list[Any]]) -> None:
        self._routed += 1
        last = len(messages) - 1
        for index, message in enumerate(messages):
            kind = message[0]
            if kind == "call" and len(message) == 4 and type(message[1]) is int \
                    and type(message[2]) is str:
                call_id: int = message[1]
                if not self._last_id < call_id < self._base + _RUN_SPAN:
                    self._violate(f"call id {call_id} does not belong to this run next")
                    return
                self._last_id = call_id
                if len(self._queued) + len(self._in_flight) >= self._max_pending:
                    self.overflow = LimitExceeded(
                        "calls", self._calls, f"the worker sent more than {self._max_pending} "
                        "calls without waiting for their replies")
                    self._finish()
                    return
                self._inbox.append(message)
                self._queued.add(call_id)
                if self._idle:
                    self._idle.pop()()
                elif self._handlers < self._capacity:
                    self._handlers += 1
                    self._spawn(self._handle, helper=False)
            elif kind == "cancel" and len(message) == 2 and type(message[1]) is int:
                if not self._base < message[1] <= self._last_id:
                    self._violate(f"cancel of call {message[1]}, not one of this run's")
                    return
                scope = self._in_flight.get(message[1])
                if scope is not None:
                    self._spawn(self._cancel_call, message[1], scope)
                else:
                    self._queued.discard(message[1])  # its handler skips it (or it was answered)
            elif kind == "done":
                if len(message) < 5 or type(message[4]) is not int \
                        or message[4] != self._run_id:
                    self._violate("a done message that is not this run's")
                elif index != last or self._worker.decoder.pending:
                    self._violate("a message after done")
                else:
                    self.outcome = message
                    self._finish()
                return
            elif kind is LARGE:  # always the last of its batch
                self._decode_later(message[1])
                return
            elif kind == "output" and self.on_output is not None and len(message) == 3 \
                    and message[1] == self._run_id and type(message[2]) is str:
                self._output_left -= len(message[2])
                if self._output_left < 0:
                    self._violate("the worker sent more output than the run may print")
                    return
                self.on_output(message[2])
            else:
                self._violate(f"unexpected message {_shown_kind(kind)} during a run")
                return

    def _decode_later(self, body: bytes) -> None:
        """Decode a large frame on a thread; the pipe is not read meanwhile (frames keep
        their order, and the worker waits on a full pipe)."""
        self._decoding = True
        if self._loop is None:
            self._decoded = anyio.Event()
        elif self._reading:
            self._reading = False
            self._loop.remove_reader(self._worker.read_fd)
        self._spawn(self._decode, body)

    async def _decode(self, body: bytes) -> None:
        context = new_bounded()
        with anyio.CancelScope() as scope:
            self._decode_scope = scope
            try:
                message = await anyio.to_thread.run_sync(decode_bounded, body, context,
                                                         abandon_on_cancel=True)
            except WorkerProtocolError as exc:
                self._violate(exc)
                return
            finally:
                context.cancelled = True  # an abandoned decode stops at its next value
                self._decode_scope = None
                self._decoding = False
                if self._decoded is not None:
                    self._decoded.set()
            if self._finished or self._ended:
                return
            if message[0] == "done":
                self.large_outcome = True
            self._route([message])
            loop = self._loop
            if loop is not None and not self._ended and not self._finished:
                self._reading = True
                loop.add_reader(self._worker.read_fd, self._on_readable)
                self._on_readable()

    async def _handle(self) -> None:
        """A handler task: answer queued calls, park when there are none.

        One cancel scope serves many calls (entering a scope per call costs as
        much as the rest of the host's work); when the worker cancels the call
        in progress, only that scope is cancelled and a fresh one is opened. It is
        shielded: the run's end (its caller cancelling it, its deadline) reaches a call
        in flight through :meth:`run`, which lets the broker stop calls gracefully
        before :meth:`_stop_handlers` cancels this scope.
        From its second answer in a row on, it checks the deadline and lets the loop
        run once the session's handlers together have answered for ``_TURN_BUDGET`` in
        this loop turn (asyncio; elsewhere every ``_YIELD_EVERY`` answers): answers that
        never suspend would otherwise hold the loop, 16 handlers at a time.
        """
        streak = 0
        while not self._stopping:
            with anyio.CancelScope(shield=True) as scope:
                while not self._stopping:
                    if self._inbox:
                        message = self._inbox.popleft()
                        if message[1] not in self._queued:
                            continue  # cancelled while it waited
                        self._queued.discard(message[1])
                        self._busy.add(scope)
                        try:
                            await self._answer(message, scope)
                        finally:
                            self._busy.discard(scope)
                        streak += 1
                        if streak > 1 and self._turn_spent(streak):
                            streak = 0
                            if time.perf_counter() > self._deadline:
                                self.timed_out = True
                                self._finish()
                            await anyio.lowlevel.checkpoint()
                    else:
                        streak = 0
                        await self._park()

    def _turn_spent(self, streak: int) -> bool:
        """True when this loop turn's answering budget is used up (see :meth:`_handle`)."""
        loop = self._loop
        if loop is None:
            return streak >= _YIELD_EVERY
        now = time.perf_counter()
        if not self._turn_marked:  # the first answer in a row this turn: start the clock
            self._turn_marked = True
            self._turn_started = now
            loop.call_soon(self._next_turn)
            return False
        return now - self._turn_started > _TURN_BUDGET

    def _next_turn(self) -> None:
        self._turn_marked = False

    async def _park(self) -> None:
        """Wait to be woken by :meth:`_route`. On asyncio a bare future: an ``anyio.Event``
        costs twice as much, and this runs once per tool call."""
        if self._loop is None:
            event = anyio.Event()
            self._idle.append(event.set)
            await event.wait()
            return
        future: asyncio.Future[None] = self._loop.create_future()
        self._idle.append(functools.partial(_wake, future))
        await future

    def _on_clock(self, paused: float | None) -> None:
        """The broker's clock (``None``: a call waits for its approver; else the seconds
        held so far): the session's deadline, the executor's scope and, through a
        ``clock`` frame, the worker's own deadlines stand still, then move by that much."""
        if self._ended or not self._serving:
            return
        clock = self.clock
        if clock is not None and self._clock_ends == math.inf:
            self._clock_ends = clock.deadline
        self._deadline = math.inf if paused is None else self._ends + paused
        if clock is not None:
            clock.deadline = math.inf if paused is None else self._clock_ends + paused
        self._spawn(self._send_clock, encode(["clock", self._run_id, paused]))

    async def _send_clock(self, frame: bytes) -> None:
        if self._ended:
            return
        try:
            await self._worker.send(frame)
        except _WorkerGone:
            self._finish(gone=True)

    async def _cancel_call(self, call_id: int, scope: anyio.CancelScope) -> None:
        """The worker cancelled a call in flight: its handler is asked to stop first
        (``broker.stop_calls``), then the call is cut if it is still the one ``scope``
        serves (a handler's scope serves its next call once this one ended)."""
        await self._broker.stop_calls(call_id)
        if self._in_flight.get(call_id) is scope:
            scope.cancel()

    async def _answer(self, message: list[Any], scope: anyio.CancelScope) -> None:
        call_id: int = message[1]
        self._in_flight[call_id] = scope
        try:
            frame = await self._broker.answer_frame(call_id, message[2], message[3])
        finally:
            self._in_flight.pop(call_id, None)
        if self._ended:  # answered during the run's wind-down: the worker has moved on
            return
        try:
            await self._worker.send(frame)
        except _WorkerGone:
            self._finish(gone=True)
        else:
            self.poll_soon()


@final
class WorkerPoolExecutor:
    """Runs scripts in a pool of pre-started worker processes (the default executor).

    ``size`` workers are started on first use (or by :meth:`start`); a run takes
    an idle, ready worker or waits for one, so at most ``size`` scripts run at
    once. Per run, the worker caps ``RLIMIT_AS`` at its address space plus
    ``Limits.memory`` and ``RLIMIT_CPU`` at the timeout's worth of CPU; the host
    kills it ``grace`` seconds after ``Limits.timeout`` if it has not answered
    and reports ``LimitExceeded(timeout)``. ``runtime`` (``module:function``)
    is what workers run scripts with: a host-side test seam (tests substitute a
    stand-in, e.g. one running raw Python inside a real confined worker); no script
    can reach it. ``python`` is the interpreter they are started with.

    ``confinement`` is the kernel layer (``confine.py``): each worker confines itself
    before its first script and reports what it applied. ``"auto"`` applies every
    layer the kernel offers and logs a warning naming each missing one; ``"strict"``
    refuses to run (``SandboxError`` naming the missing layers) unless all are
    active; ``"off"`` applies none. :attr:`confinement` reports what is active.

    ``recycle``: ``"on_failure"`` (default) reuses a worker across runs until one
    fails; ``"every_run"`` gives every run a fresh worker (for callers that do not
    trust each other: code that escaped the language layer in one run could stay in a
    reused worker and act in the next); the replacement is started as the run ends.

    ``spare``: take new workers from, and keep, this process's spare worker and worker
    template (see :func:`spare_workers`, :func:`worker_templates`): two more processes,
    warmed up but idle, so that a new pool or a replacement is ready at once and costs a
    fork, not a boot. ``False``: every worker boots when it is needed.
    """

    ends_stuck_calls: Final = True
    """A call that ignores its cancellation does not hold a run: ``STUCK`` seconds after
    it was cut the run ends as timed out and its worker is retired (``stuck.py``)."""

    def __init__(
        self,
        *,
        size: int = 2,
        grace: float = 0.05,
        runtime: str = DEFAULT_RUNTIME,
        python: str = sys.executable,
        confinement: ConfinementMode = "auto",
        recycle: Literal["on_failure", "every_run"] = "on_failure",
        spare: bool = True,
    ) -> None:
        if size < 1:
            raise ValueError(f"pool size must be at least 1, got {size}")
        if confinement not in ("auto", "strict", "off"):
            raise ValueError(f"confinement must be 'auto', 'strict' or 'off', "
                             f"got {confinement!r}")
        if recycle not in ("on_failure", "every_run"):
            raise ValueError(f"recycle must be 'on_failure' or 'every_run', got {recycle!r}")
        self._confinement_mode: ConfinementMode = confinement
        self._recycle = recycle
        self._spare = spare
        self._spare_planned = False
        """Set once :meth:`_spare_when_booted` was scheduled."""
        self._confinement: Confinement | None = None
        self._warned: set[tuple[str, ...]] = set()
        self._size = size
        self._grace = grace
        self._runtime = runtime
        self._python = python
        self._idle: deque[_Worker] = deque()
        self._dying: list[_Worker] = []
        self._slots = anyio.Semaphore(size)
        self._running = 0
        self._closed = False
        self._filling = False
        self._fill_due = False
        """Set while :meth:`_fill_soon` has a fill waiting for the loop."""

    @property
    def size(self) -> int:
        """How many worker processes the pool keeps."""
        return self._size

    @property
    def confinement(self) -> Confinement | None:
        """The kernel layers the pool's workers reported active (None until one booted:
        call :meth:`start` first). Each field is a layer, active or missing with why."""
        return self._confinement

    def _plan(self, uid: int) -> dict[str, Any]:
        """What the next worker is told to apply (see ``confine.apply``)."""
        unavailable = [name for name in os.environ.get(_UNAVAILABLE_ENV, "").split(",")
                       if name in LAYERS]
        return {"mode": self._confinement_mode, "uid": uid,
                "recycle": self._recycle, "unavailable": unavailable}

    def _admit(self, confinement: Confinement) -> None:
        """Check a booted worker's report: strict refuses, auto warns (once per set)."""
        self._confinement = confinement
        if confinement.mode == "off" or confinement.complete:
            return
        if confinement.mode == "strict":
            raise SandboxError(f"confinement='strict' refused to start a worker: "
                               f"missing {confinement.describe_missing()}")
        if confinement.missing not in self._warned:
            self._warned.add(confinement.missing)
            _LOG.warning("sandbox workers run without these kernel layers: %s",
                         confinement.describe_missing())

    def spawn(self) -> None:
        """Start the missing workers' processes now without waiting for them (:meth:`start`
        waits): they boot while the caller does other work (a first run's SDK and
        preflight, or waiting for a model's script). Call it from the pool's event loop
        thread. One worker (the spare, if this pool takes it) starts before it returns,
        the others from the loop right after (:meth:`_fill_soon`)."""
        if not self._closed:
            self._fill(now=1)
            if len(self._idle) + self._running < self._size:
                self._fill_when_ready()
            elif not self._spare_planned:
                loop = _asyncio_loop()
                if loop is not None:
                    self._spare_when_booted(loop)

    def _fill_when_ready(self) -> None:
        """While the template boots, ``spawn`` defers the workers to it: on an asyncio loop
        they are forked as soon as it is ready (checked from a loop timer every
        ``_TEMPLATE_POLL``), not when the first run arrives and waits for the forks. Under
        another backend (no timer without a task), the first run makes them, as before."""
        loop = _asyncio_loop()
        if loop is None or self._filling:
            return
        self._filling = True
        started = time.monotonic()

        key = (self._python, self._runtime)

        def check() -> None:
            with LOCK:
                template = TEMPLATES.get(key)
            if self._closed or len(self._idle) + self._running >= self._size:
                self._filling = False
            elif (template is not None and not template.usable() and not template.gone
                  and time.monotonic() - started < _BOOT_TIMEOUT):
                loop.call_later(_TEMPLATE_POLL, check)  # as _await_template polls it
            else:
                self._filling = False
                try:
                    self._fill(now=1)
                except Exception as exc:  # a loop callback must not raise: the first run
                    _LOG.info("sandbox workers not started ahead of the first run: %s",  # boots
                              exc)  # them again and reports what stops it
                else:
                    self._spare_when_booted(loop)

        loop.call_later(_TEMPLATE_POLL, check)

    def _spare_when_booted(self, loop: asyncio.AbstractEventLoop) -> None:
        """Once the workers ``spawn`` started are ready, make the process's spare (it took
        the last one): while the host waits for a model, not when the first run checks its
        worker in, where the fork held the loop (~2 ms) before that run's caller resumed.
        Not while a run is on: its check-in makes the spare. Once per pool."""
        if self._spare_planned or not self._spare:
            return
        self._spare_planned = True
        started = time.monotonic()

        def check() -> None:
            if self._closed or self._running:
                return
            booting = any(worker.alive and not worker.poll_ready() for worker in self._idle)
            if booting and time.monotonic() - started < _BOOT_TIMEOUT:
                loop.call_later(_TEMPLATE_POLL, check)
                return
            try:
                self._keep_spare()
            except Exception as exc:  # a loop callback must not raise: a run's check-in
                _LOG.info("no spare sandbox worker ahead of the first run: %s", exc)  # tries

        loop.call_later(_TEMPLATE_POLL, check)

    async def start(self) -> None:
        """Start every worker and wait until each one is ready (optional warm-up)."""
        if self._closed:
            raise SandboxError("the worker pool is closed")
        await self._await_template()
        self._fill(defer=False)
        for worker in list(self._idle):
            try:
                await worker.boot()
            except (_WorkerGone, WorkerProtocolError, TimeoutError) as exc:
                self._idle.remove(worker)
                self._discard(worker)
                raise SandboxError(f"a sandbox worker failed to start (exit status "
                                   f"{worker.exit_status()}; its stderr says why)") from exc
        self._keep_spare()

    async def run(
        self,
        source: str,
        *,
        call_tool: CallTool,
        tool_paths: Collection[str] = (),
        limits: Limits | None = None,
        on_output: Callable[[str], None] | None = None,
    ) -> ScriptResult:
        """Run ``source`` in a worker; see :class:`~codemode.sandbox.executors.base.Executor`."""
        if self._closed:
            raise SandboxError("the worker pool is closed")
        limits = DEFAULT_LIMITS if limits is None else limits
        broker = CallBroker(call_tool, limits, tool_paths)
        queued = 0.0
        try:
            self._slots.acquire_nowait()
            acquired = True
        except anyio.WouldBlock:  # every worker is busy: the timeout covers the wait
            entered = time.perf_counter()
            acquired = False
            with anyio.move_on_after(limits.timeout):
                await self._slots.acquire()
                acquired = True
            queued = time.perf_counter() - entered
        if not acquired:
            exc = LimitExceeded("timeout", limits.timeout,
                                f"no sandbox worker became free within the timeout "
                                f"(waited {queued:.2f} s)")
            return ScriptResult(error=ScriptError.for_limit(exc), usage=Usage(queued=queued))
        try:
            first = await self._ready_worker(limits)  # a worker's boot is not charged
            current: _Worker | None = first
            healthy = False
            try:
                try:
                    result, healthy = await self._run_on(first, broker, source, tool_paths,
                                                         limits, queued, retry=True,
                                                         on_output=on_output)
                except _NotDelivered:  # it died between runs: nothing of this run reached it
                    current = None
                    self._checkin(first, healthy=False)
                    current = second = await self._ready_worker(limits)
                    result, healthy = await self._run_on(second, broker, source, tool_paths,
                                                         limits, queued, on_output=on_output)
            finally:
                broker.close()
                if current is not None:
                    self._checkin(current, healthy)
        finally:
            self._slots.release()
        return result

    async def _ready_worker(self, limits: Limits) -> _Worker:
        """A booted worker that can give the run its whole memory limit; a worker that
        died (or spoke) while idle is replaced (once)."""
        for _ in range(2):
            await self._await_template()
            worker = self._checkout()
            while worker.memory_cap is not None and limits.memory > worker.memory_cap:
                self._checkin(worker, healthy=False)  # a fresh one takes its place
                worker = self._checkout()
            try:
                await worker.boot()
            except (_WorkerGone, WorkerProtocolError, TimeoutError) as exc:
                failure: BaseException = exc
                self._checkin(worker, healthy=False)
                continue
            except BaseException:
                self._checkin(worker, healthy=False)
                raise
            if worker.stray():
                failure = WorkerProtocolError("the worker sent a message between runs")
                self._checkin(worker, healthy=False)
                continue
            return worker
        raise SandboxError(f"a sandbox worker failed to start (exit status "
                           f"{worker.exit_status()}; its stderr says why)") from failure

    async def _run_on(
        self,
        worker: _Worker,
        broker: CallBroker,
        source: str,
        tool_paths: Collection[str],
        limits: Limits,
        queued: float = 0.0,
        *,
        retry: bool = False,
        on_output: Callable[[str], None] | None = None,
    ) -> tuple[ScriptResult, bool]:
        """Run on ``worker``; with ``retry``, a worker whose pipe is already closed raises
        :class:`_NotDelivered` (the run can go to another worker) instead of failing."""
        started = time.perf_counter()
        broker.start()
        left = limits.timeout - queued
        sent = limits if queued < 0.001 else replace(limits, timeout=max(left, 0.001))
        run_id = next(_run_ids)
        if worker.memory_cap is None:
            worker.memory_cap = limits.memory
        session = _Session(worker, broker, limits, run_id, started + left + self._grace)
        base = worker.resident()
        if base is not None:
            session.memory_budget = budget(base, limits.memory)
        request: dict[str, Any] = {"source": source, "limits": sent.to_json(), "run": run_id}
        paths = tool_paths if type(tool_paths) is tuple else tuple(tool_paths)
        if worker.tool_paths is not paths and worker.tool_paths != paths:
            request["tool_paths"] = paths  # the worker keeps them for its later runs
            worker.tool_paths = paths
        code = None if source in worker.shipped else _shipped_code(source)
        if code is not None:
            request["code"] = CODE_TAG
            if len(worker.shipped) >= _SHIPPED_SIZE:
                worker.shipped.pop(next(iter(worker.shipped)), None)
            worker.shipped[source] = None
        if on_output is not None:
            session.on_output = on_output
            request["stream"] = True
        with anyio.move_on_after(left + self._grace) as deadline:
            session.clock = deadline  # held approvals move it (see _Session._on_clock)
            try:
                frame = encode(["run", request])
                await worker.send(frame if code is None else encode_blob(code) + frame)
            except _WorkerGone:
                if retry:
                    raise _NotDelivered from None
                session.gone = True
            else:
                await session.run()
        elapsed = time.perf_counter() - started
        done = session.outcome
        error: ScriptError | None = None
        if session.stuck:
            error = stuck_error(limits.timeout, session.stuck)
        elif session.violation is not None:
            error = ScriptError(type="SandboxError", message=str(session.violation))
        elif session.overflow is not None:
            error = ScriptError.for_limit(session.overflow)
        elif session.over_memory is not None:
            error = ScriptError.for_limit(LimitExceeded(
                "memory", limits.memory, f"the worker grew to {session.over_memory} resident "
                "bytes (read and stopped by the host)"))
        elif done is None and (deadline.cancelled_caught or session.timed_out):
            error = _timeout_error(limits)
        elif done is None:
            error = await _crash_error(worker, limits)
        _log_failure(worker, session, error)
        if error is not None or done is None:
            failed = RunOutcome().to_result(calls=broker.records, time=elapsed, error=error,
                                            queued=queued)
            return failed, False
        try:
            outcome = RunOutcome.from_json(done[1])
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            error = ScriptError(type="SandboxError", message="the worker sent a malformed result")
            failed = RunOutcome().to_result(calls=broker.records, time=elapsed, error=error,
                                            queued=queued)
            return failed, False
        size: int | None = None
        if session.large_outcome and outcome.error is None:  # measured off the loop
            with anyio.CancelScope(shield=True):
                measured = await anyio.to_thread.run_sync(json_size, outcome.value,
                                                          limits.result)
            size = -1 if measured is None else measured
        peak = done[2] if len(done) > 2 and type(done[2]) is int else None
        retiring = len(done) > 3 and done[3] is not False
        healthy = not retiring and (outcome.error is None or (
            outcome.error.limit is None and outcome.error.type != "SandboxError"
        ))
        result = outcome.to_result(calls=broker.records, time=elapsed, peak_memory=peak,
                                   limits=limits, queued=queued, result_size=size)
        if result.error is not None and result.error.limit is not None:
            _LOG.info("a run hit its %s limit: %.300s", result.error.limit, result.error.message)
        return result, healthy

    def _checkout(self) -> _Worker:
        """An idle worker: a ready one if any, else the one that started first."""
        self._reap()
        for worker in list(self._idle):
            if not worker.poll_ready() and worker.alive:
                continue
            if not worker.alive or worker.exit_status() is not None:
                self._idle.remove(worker)
                self._discard(worker)
        self._fill(defer=False, now=0 if self._idle else 1)
        chosen = next((w for w in self._idle if w.ready), self._idle[0])
        self._idle.remove(chosen)
        self._running += 1
        return chosen

    def _checkin(self, worker: _Worker, healthy: bool) -> None:
        self._running -= 1
        worker.drain_stderr()
        if self._recycle == "every_run":
            healthy = False
        if healthy and worker.alive and worker.clean and not self._closed \
                and not worker.stray():
            self._idle.append(worker)
        else:
            self._discard(worker)
            if not self._closed:
                self._fill()
        loop = _asyncio_loop()
        if loop is None:
            self._keep_spare()
        else:  # after the run has returned: starting a process takes the loop for ms
            loop.call_soon(self._keep_spare)

    def _fill(self, *, defer: bool = True, now: int | None = None) -> None:
        """Start workers until the pool holds ``size`` (idle plus running): the spare
        first, if this pool takes it and it is still alive, then forks of the template.
        While the template boots (this call starts it if the process has none),
        ``defer`` leaves the rest to :meth:`_await_template`: a boot of each worker
        beside it would take the cores it needs, for the same wait. ``now``: start at
        most that many before returning, the rest from the loop's next turn
        (:meth:`_fill_soon`): a fork holds the loop ~2.5 ms (a boot's ``Popen`` more),
        which a run that already has its worker need not wait for."""
        refused = False
        added = 0
        while len(self._idle) + self._running < self._size:
            if now is not None and added >= now:
                self._fill_soon(defer=defer)
                return
            worker = None if refused else self._take_spare()
            if worker is None and defer and self._template_booting():
                return
            try:
                lease = _LEASES.claim() if self._confinement_mode != "off" else None
            except BaseException:
                if worker is not None:  # the spare it took is not lost
                    self._discard(worker)
                raise
            plan = self._plan(UID_BASE if lease is None else lease.uid)
            try:
                if worker is None:
                    worker = _Worker(self._python, self._runtime, plan, self._admit, lease)
                else:
                    worker.assign(plan, self._admit, lease)
            except BaseException as exc:
                # The uid goes back (its lock file stayed open: each failed start under
                # fd pressure kept one more descriptor, and a uid, for good).
                if lease is not None:
                    lease.release()
                if isinstance(exc, OSError):
                    raise SandboxError(f"could not start a sandbox worker: {exc}") from exc
                raise
            if not worker.alive:  # a spare that died since (its pipe took no plan): a
                self._discard(worker)  # fork or a boot takes its place
                refused = True
                continue
            self._idle.append(worker)
            added += 1

    def _fill_soon(self, *, defer: bool) -> None:
        """:meth:`_fill` from the loop's next turn, once (at once without an asyncio
        loop). A run that took its worker meanwhile waits for it there, so the forks
        overlap the worker's confinement instead of preceding the run."""
        loop = _asyncio_loop()
        if loop is None:
            self._fill(defer=defer)
        elif not self._fill_due:
            self._fill_due = True
            loop.call_soon(self._fill_later, defer)

    def _fill_later(self, defer: bool) -> None:
        self._fill_due = False
        if self._closed:
            return
        try:
            self._fill(defer=defer)
        except Exception as exc:  # a loop callback must not raise: the next run fills
            _LOG.info("sandbox workers not started: %s", exc)  # again and says what stops it

    def _template_booting(self) -> bool:
        """True while this pool's template boots (started now if the process has none
        and the pool takes spares; a template that failed is not waited for)."""
        if not self._spare or not supported():
            return False
        key = (self._python, self._runtime)
        with LOCK:
            template = TEMPLATES.get(key)
            if template is None:
                template = start_template(key)
            return template is not None and not template.gone and not template.ready

    async def _await_template(self) -> None:
        """Before workers are made: wait (up to a boot's timeout) for the template that
        :meth:`_fill` started, so they are its forks."""
        if len(self._idle) + self._running >= self._size or not self._template_booting():
            return
        key = (self._python, self._runtime)
        with LOCK:
            template = TEMPLATES.get(key)
        if template is None:
            return
        with anyio.move_on_after(_BOOT_TIMEOUT):
            # polled: pools on several loops and threads may wait for one template
            while not template.usable() and not template.gone:  # noqa: ASYNC110
                await anyio.sleep(_TEMPLATE_POLL)

    def _take_spare(self) -> _Worker | None:
        if not self._spare:
            return None
        key = (self._python, self._runtime)
        with LOCK:
            worker = _SPARES.pop(key, None)
            if worker is None:
                return _fork(key)
        if worker.alive and not worker.ended():
            return worker
        self._discard(worker)  # it died while it waited: reaped with this pool's workers
        with LOCK:
            return _fork(key)

    def _keep_spare(self) -> None:
        """Make this process's spare for the pool's interpreter and runtime if there is
        none: a fork of the template once it is ready; until then, start the template
        (where there can be none, boot the spare). After a run or :meth:`start`: never
        while the pool's own first workers boot, which a process booting beside them
        would slow down. Also when the pool closed since: the spare and the template are
        the process's, and this pool may have taken the spare."""
        if not self._spare:
            return
        key = (self._python, self._runtime)
        with LOCK:
            kept = _SPARES.get(key)
            if kept is not None and kept.alive and not kept.ended():
                return
            if kept is not None:  # it died while it waited
                del _SPARES[key]
                kept.kill()
                if kept.exit_status() is not None:
                    kept.finish()
            forked = _fork(key)
            if forked is not None:
                _SPARES[key] = forked
                return
            template = TEMPLATES.pop(key, None)
            if template is not None and not template.gone:
                TEMPLATES[key] = template
                return  # still booting: the next refill forks the spare
            if template is not None:
                template.close()
            if supported() and start_template(key) is not None:
                return
            try:
                _SPARES[key] = _Worker(self._python, self._runtime)
            except (OSError, subprocess.SubprocessError) as exc:  # optional: the pool
                _LOG.info("no spare sandbox worker: %s", exc)  # boots its next worker

    def _discard(self, worker: _Worker) -> None:
        _LOG.debug("sandbox worker %d retired", worker.process.pid)
        worker.kill()
        self._dying.append(worker)

    def _reap(self) -> None:
        """Collect exit statuses of killed workers (never blocks)."""
        dying = []
        for worker in self._dying:
            if worker.exit_status() is None:
                dying.append(worker)
            else:
                worker.finish()
        self._dying = dying

    async def aclose(self) -> None:
        """Kill every worker and wait for them to exit."""
        self._closed = True
        while self._idle:
            self._discard(self._idle.popleft())
        with anyio.CancelScope(shield=True):
            for _ in range(200):
                self._reap()
                if not self._dying:
                    return
                await anyio.sleep(0.005)
            for worker in self._dying:
                await anyio.to_thread.run_sync(worker.process.wait)
                worker.finish()
            self._dying.clear()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


_TEMPLATE_POLL: Final = 0.003
"""Seconds between checks of a booting template (its ``ready`` record)."""

_SHIPPED: dict[str, bytes] = {}
"""Recent scripts' marshalled code (see :func:`_shipped_code`), by source."""
_SHIPPED_SIZE: Final = 16
"""Few: a long script's code is about ten times its text; repeats are rare (a model sends
new scripts), and a script evicted here is still compiled by the worker."""


def _fork(key: tuple[str, str]) -> _Worker | None:
    """A spare forked from the template for ``key``, if it has one ready (never blocks
    longer than the fork; holds ``LOCK``). A template that fails is dropped and
    logged, and the caller boots a worker instead."""
    template = TEMPLATES.get(key)
    if template is None or not template.usable():
        return None
    try:
        forked = template.fork()
    except TemplateGone:
        return None
    except OSError as exc:  # out of descriptors for the pipes
        _LOG.info("no forked sandbox worker: %s", exc)
        return None
    return _Worker(*key, forked=forked)


def _shipped_code(source: str) -> bytes | None:
    """The marshalled code of a script the host already compiled (CodeMode's preflight
    did), sent as a blob frame before the run for the worker to adopt
    (``compile.adopt_code``) instead of parsing, checking and compiling it again; None
    when the host did not compile it (the worker compiles: the host never spends its loop
    compiling for a worker)."""
    shipped = _SHIPPED.get(source)
    if shipped is not None:
        return shipped
    compiled = cached_script(split(source)[1])
    if compiled is None:
        return None
    shipped = export_code(compiled)
    if len(_SHIPPED) >= _SHIPPED_SIZE:
        _SHIPPED.pop(next(iter(_SHIPPED)), None)
    _SHIPPED[source] = shipped
    return shipped


async def _crash_error(worker: _Worker, limits: Limits) -> ScriptError:
    """Why a worker died mid-run, from its exit status (waiting briefly for it to exit)."""
    status = worker.exit_status()
    for _ in range(50):
        if status is not None:
            break
        await anyio.sleep(0.002)
        status = worker.exit_status()
    process = worker.process
    if status is None and isinstance(process, ForkedProcess) and process.exited():
        for _ in range(500):  # dead: its template, perhaps descheduled, reports it shortly
            await anyio.sleep(0.002)
            status = worker.exit_status()
            if status is not None:
                break
    if status == -signal.SIGXCPU:
        return _timeout_error(limits)
    if status == EXIT_MEMORY:
        exc = LimitExceeded("memory", limits.memory, "the worker ran out of address space")
        return ScriptError.for_limit(exc)
    if status is None:  # alive, but it closed its pipe: the pool kills it
        return ScriptError(type="SandboxError",
                           message="the worker closed its pipe mid-run (it is killed)")
    return ScriptError(type="SandboxError",
                       message=f"the worker process died unexpectedly (status {status})")


_SHOWN_KIND: Final = 40
"""Characters of an unknown message kind a protocol violation shows."""


def _shown_kind(kind: Any) -> str:
    """An unexpected message's kind as the violation names it: a string's first characters,
    else only its JSON type. A worker may send any value there: a 10-million-character
    kind was rendered whole (a 40 MB ``repr`` built on the host's loop, 0.2 s, and returned
    as the run's error message)."""
    if type(kind) is str:
        return repr(kind[:_SHOWN_KIND]) + ("..." if len(kind) > _SHOWN_KIND else "")
    return f"of kind {type(kind).__name__}"


def _log_failure(worker: _Worker, session: _Session, error: ScriptError | None) -> None:
    """Say why a run failed on the host's side (worker texts clipped: a worker may be
    compromised, and nothing it sends may fill the host's logs)."""
    pid = worker.process.pid
    if session.violation is not None:
        _LOG.warning("sandbox worker %d broke the protocol and is killed: %.300s", pid,
                     session.violation)
    elif session.overflow is not None:
        _LOG.warning("sandbox worker %d sent more calls than may wait and is killed", pid)
    elif error is not None and error.limit == "timeout":
        _LOG.info("a run on sandbox worker %d timed out; the worker is killed", pid)
    elif error is not None:
        _LOG.warning("sandbox worker %d failed during a run: %.300s", pid, error.message)


def _timeout_error(limits: Limits) -> ScriptError:
    exc = LimitExceeded("timeout", limits.timeout, "the run did not stop in time")
    return ScriptError.for_limit(exc)
