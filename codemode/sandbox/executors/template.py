"""Worker templates: a booted, warmed-up worker that forks the pool's next workers.

A worker's boot is mostly imports and warm-up (~280 ms on a small VM); a fork of a
process that has done both is ready in a few milliseconds. So the first pool of a host
process that needs a worker boots one *template* per interpreter and runtime instead
(``python ... worker {"mode": "template"}``) and forks its workers from it. The template
imports and warms up like every worker, then, on its only thread, serves fork requests
on a Unix ``SOCK_SEQPACKET`` socket (its stdin) and nothing else:

- the host sends ``F`` with three descriptors (SCM_RIGHTS): the new worker's stdin,
  stdout and stderr pipe ends. The template forks; the child starts a session of its
  own, closes the template's socket and every pidfd the template holds, takes the three
  descriptors and carries on as a *spare* (``worker.SPARE``): it waits for its plan,
  confines itself (its own uid, Landlock, seccomp, rlimits) and serves its pipes;
- the template answers ``P`` + pid, with the child's pidfd, so the host signals that
  process and no other (a pid can be reused; a pidfd cannot);
- when a child exits the template reaps it and sends ``X`` + pid + exit status (the
  ``Popen.returncode`` convention: ``-N`` for signal N). Only a parent can collect a
  status, and the template is the parent;
- the template sends ``R`` once, when it is ready, and exits when the socket closes.

The template runs no script, holds no pipe to any worker and is never confined (as a
spare is not). As root it stages its workers' root (``confine.remember_read_paths``,
``rootfs.build``) in a mount namespace of its own that differs from the host's only in
its staging directory (``/mnt``), which each fork adopts in a copy of that namespace.
What a worker could reach of it, it could reach of the host: the same uid, the same
``/proc`` and signal rules (tests/sandbox/test_pool_template.py). Forked workers share
the template's address layout and hash seed; that matters only with a channel between
workers, and a worker's only descriptors lead to its host. Each run gets a fresh
``random.Random`` (``os.urandom`` seeded), so the shared memory image gives two workers
no common random stream.
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import signal
import socket
import subprocess
import threading
import time
from typing import IO, Final, final

__all__ = ["TEMPLATE", "ForkedProcess", "Template", "serve_forks", "supported"]

TEMPLATE: Final = "template"
"""The plan ``mode`` of a template worker."""

_FORK_TIMEOUT: Final = 0.25
"""Seconds the host waits for a fork's answer (on its loop: a fork takes ~2.5 ms) before
it gives up on the template: one that cannot answer in time (stopped, starved) is
dropped, its workers boot from scratch and a new template replaces it."""

_RECORD: Final = 16
"""Bytes a template record takes at most (kind, pid, status)."""

_LOG: Final = logging.getLogger("codemode.sandbox")


def supported() -> bool:
    """Whether this platform has what a template needs (pidfds, fd passing)."""
    return hasattr(os, "pidfd_open") and hasattr(signal, "pidfd_send_signal") and hasattr(
        socket, "send_fds") and hasattr(socket, "SOCK_SEQPACKET")


# ----------------------------------------------------------------- template side


def serve_forks(sock_fd: int) -> tuple[int, int]:
    """Serve fork requests on ``sock_fd`` until it closes (then exit). Returns only in
    a forked child: its ``(read_fd, write_fd)``, stderr already on fd 2."""
    if threading.active_count() != 1:  # fork is only sound on a single thread
        raise SystemExit(3)
    sock = socket.socket(fileno=sock_fd)
    sock.setblocking(True)
    children: dict[int, int] = {}  # pidfd -> pid
    poller = select.poll()
    poller.register(sock_fd, select.POLLIN)
    sock.send(b"R")
    while True:
        for fd, _events in poller.poll():
            if fd != sock_fd:
                pid = children.pop(fd)
                poller.unregister(fd)
                os.close(fd)
                _, status = os.waitpid(pid, 0)
                code = os.waitstatus_to_exitcode(status)
                sock.send(b"X" + pid.to_bytes(4, "big") + code.to_bytes(4, "big", signed=True))
                continue
            message, fds, _flags, _address = socket.recv_fds(sock, _RECORD, 3)
            if not message:
                raise SystemExit(0)  # the host is gone; forked workers see their own EOF
            if message != b"F" or len(fds) != 3:
                for extra in fds:
                    os.close(extra)
                sock.send(b"E" + (0).to_bytes(4, "big"))
                continue
            try:
                pid = os.fork()
            except OSError as exc:
                for extra in fds:
                    os.close(extra)
                sock.send(b"E" + (exc.errno or 0).to_bytes(4, "big"))
                continue
            if pid == 0:
                return _become_worker(sock, children, fds)
            for extra in fds:
                os.close(extra)
            pidfd = os.pidfd_open(pid)
            socket.send_fds(sock, [b"P" + pid.to_bytes(4, "big")], [pidfd])
            children[pidfd] = pid
            poller.register(pidfd, select.POLLIN)


def _become_worker(sock: socket.socket, children: dict[int, int],
                   fds: list[int]) -> tuple[int, int]:
    """In the forked child: a session of its own, nothing of the template's open."""
    os.setsid()
    sock.close()
    for pidfd in children:
        os.close(pidfd)
    read_fd, write_fd, stderr_fd = fds
    os.dup2(stderr_fd, 2)
    os.close(stderr_fd)
    return read_fd, write_fd


# ---------------------------------------------------------------------- host side


class TemplateGone(Exception):
    """The template did not answer a fork (it died, or refused)."""


@final
class Template:
    """The host's handle on one template process and its socket."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        host_end, template_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.process: subprocess.Popen[bytes] = subprocess.Popen(
                command, stdin=template_end.fileno(), stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=env, cwd="/", close_fds=True,
                start_new_session=True)
        except BaseException:
            host_end.close()
            raise
        finally:
            template_end.close()
        self._sock = host_end
        self._sock.setblocking(False)
        self._lock = threading.Lock()
        self.ready = False
        self.gone = False
        self._statuses: dict[int, int] = {}
        _LOG.debug("sandbox worker template %d started", self.process.pid)

    @property
    def pid(self) -> int:
        pid: int = self.process.pid
        return pid

    def usable(self) -> bool:
        """Ready to fork now (never blocks)."""
        if self.gone:
            return False
        with self._lock:
            self._drain()
        if self.process.poll() is not None:
            self._lose("exited")  # says its status
        return self.ready and not self.gone

    def fork(self) -> ForkedProcess:
        """A new worker process, forked from the template (a spare: it waits for its
        plan). Raises :class:`TemplateGone` when the template cannot fork."""
        made: list[int] = []
        try:
            for _ in range(3):
                made.extend(os.pipe())
        except BaseException:  # out of descriptors: the pipes made so far are closed
            for fd in made:
                os.close(fd)
            raise
        stdin_r, stdin_w, stdout_r, stdout_w, stderr_r, stderr_w = made
        theirs, ours = (stdin_r, stdout_w, stderr_w), (stdin_w, stdout_r, stderr_r)
        try:
            with self._lock:
                try:
                    socket.send_fds(self._sock, [b"F"], list(theirs))
                except OSError as exc:
                    raise TemplateGone(f"the template's socket failed: {exc}") from None
                finally:
                    for fd in theirs:
                        os.close(fd)
                pid, pidfd = self._await_fork()
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        return ForkedProcess(self, pid, pidfd, *ours)

    def status(self, pid: int, wait: float | None) -> int | None:
        """``pid``'s exit status if the template reported it (within ``wait`` seconds).
        The lock is not held while waiting: a fork on the host's loop never waits for
        another thread's wait."""
        ends = None if wait is None else time.monotonic() + wait
        while True:
            with self._lock:
                self._drain()
                found = self._statuses.pop(pid, None)
                if found is not None or self.gone:
                    return found
            left = None if ends is None else ends - time.monotonic()
            if left is not None and left <= 0:
                return None
            with contextlib.suppress(OSError, ValueError):  # closed meanwhile
                select.select([self._sock], [], [], min(left or 0.01, 0.01))

    def close(self) -> None:
        """Stop the template (its forked workers live on: each has its own pipes)."""
        self._lose("closed")
        with contextlib.suppress(OSError):
            self._sock.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=1)

    def forget(self) -> None:
        """In a process forked from the host: close this copy of the socket only (the
        template stays the host's)."""
        self.gone = True
        with contextlib.suppress(OSError):
            self._sock.close()

    def _await_fork(self) -> tuple[int, int]:
        ends = time.monotonic() + _FORK_TIMEOUT
        while True:
            left = ends - time.monotonic()
            if left <= 0 or self.gone:
                self._lose("did not answer a fork")
                raise TemplateGone("the template did not answer")
            select.select([self._sock], [], [], left)
            answer = self._drain(forking=True)
            if answer is not None:
                return answer

    def _drain(self, *, forking: bool = False) -> tuple[int, int] | None:
        """Read what the template sent (never blocks): ready, statuses, a fork's answer
        (only when ``forking``: the one a fork waits for). Holds ``_lock``."""
        while not self.gone:
            try:
                message, fds, _flags, _address = socket.recv_fds(self._sock, _RECORD, 1)
            except (BlockingIOError, InterruptedError):
                return None
            except OSError:
                self._lose("socket failed")
                return None
            if not message:
                self._lose("closed its socket")
                return None
            kind = message[:1]
            if kind == b"R":
                self.ready = True
            elif kind == b"X" and len(message) == 9:
                pid = int.from_bytes(message[1:5], "big")
                self._statuses[pid] = int.from_bytes(message[5:9], "big", signed=True)
            elif kind == b"P" and len(message) == 5 and len(fds) == 1 and forking:
                return int.from_bytes(message[1:5], "big"), fds[0]
            elif kind == b"E" and forking:
                for fd in fds:
                    os.close(fd)
                raise TemplateGone(f"the template could not fork (errno "
                                   f"{int.from_bytes(message[1:5], 'big')})")
            else:
                for fd in fds:
                    os.close(fd)
                self._lose(f"sent an unexpected record {message[:8]!r}")
        return None

    def _lose(self, why: str) -> None:
        if not self.gone:
            self.gone = True
            status = self.process.poll()
            if status is not None and why != "closed":
                why = f"exited (status {status})"
            _LOG.info("sandbox worker template %d %s; workers boot from scratch",
                      self.process.pid, why)


@final
class ForkedProcess:
    """A worker forked by a :class:`Template`: the part of ``subprocess.Popen`` a pool's
    worker uses (pid, the three pipes, poll, wait, kill)."""

    def __init__(self, template: Template, pid: int, pidfd: int, stdin_fd: int,
                 stdout_fd: int, stderr_fd: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.stdin: IO[bytes] | None = open(stdin_fd, "wb", buffering=0)  # noqa: SIM115
        self.stdout: IO[bytes] | None = open(stdout_fd, "rb", buffering=0)  # noqa: SIM115
        self.stderr: IO[bytes] | None = open(stderr_fd, "rb", buffering=0)  # noqa: SIM115
        self._template = template
        self._pidfd: int | None = pidfd
        self._killed = False

    def poll(self) -> int | None:
        """The exit status once the process ended and its template reported it."""
        if self.returncode is None and self._ended(0.0):
            self._collect(0.0)  # never waits: the template reports it within microseconds
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Block until the process ended (``subprocess.TimeoutExpired`` after ``timeout``)."""
        if self.returncode is None:
            if not self._ended(timeout):
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0.0)
            self._collect(1.0)
        assert self.returncode is not None
        return self.returncode

    def kill(self) -> None:
        """SIGKILL this process (through its pidfd: never another process's pid)."""
        if self._pidfd is not None and self.returncode is None:
            self._killed = True
            with contextlib.suppress(ProcessLookupError, OSError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def forget(self) -> None:
        """In a process forked from the host: close this copy of the pidfd."""
        if self._pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = None

    def exited(self) -> bool:
        """True once the process has ended (its status may still be on its way)."""
        return self.returncode is not None or self._ended(0.0)

    def _ended(self, timeout: float | None) -> bool:
        if self._pidfd is None:
            return True
        readable, _, _ = select.select([self._pidfd], [], [], timeout)
        return bool(readable)

    def _collect(self, wait: float) -> None:
        status = self._template.status(self.pid, wait)
        if status is None:
            if not self._template.gone:
                return  # the template reports it shortly
            # the template died first: the status is lost, say how it most likely ended
            status = -signal.SIGKILL if self._killed else 255
        self.returncode = status
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
