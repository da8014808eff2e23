"""A script runtime that behaves like a worker whose sandbox was already broken.

Loaded by ``WorkerPoolExecutor(runtime="tests.sandbox.attacks.compromised_worker:run")``
in the red-team tests: the host must not trust anything a worker says (defence in depth).
The script source selects the misbehaviour.

``raw`` is the kernel-layer seam (``tests/sandbox/test_confinement.py``): loaded with
``WorkerPoolExecutor(runtime="tests.sandbox.attacks.compromised_worker:raw")`` it runs
the source as plain, unrestricted Python (top-level ``await`` allowed, ``call`` is the
worker's tool-call function) inside a real, confined worker: the language layer is
assumed broken and only the kernel layer stands. A runtime is chosen by the host when it
builds the pool; no script can select one.
"""

from __future__ import annotations

import ast
import asyncio
import fcntl
import inspect
import os
import stat
from typing import TYPE_CHECKING, Any

from codemode.sandbox.executors.protocol import encode
from codemode.sandbox.runtime.result import RunOutcome, ScriptError

if TYPE_CHECKING:
    from collections.abc import Collection

    from codemode.sandbox.executors.worker import ScriptCall
    from codemode.sandbox.limits import Limits


async def run(
    source: str, *, call: ScriptCall, tool_paths: Collection[str], limits: Limits
) -> RunOutcome:
    """Misbehave as ``source`` asks; report what the host answered in ``value``."""
    if source == "call-unlisted-tool":
        reply = await call("not_exposed", "{}")
        return RunOutcome(value=reply)
    if source == "call-flood":
        replies = [await call("echo", f"{{\"i\": {i}}}") for i in range(limits.calls + 10)]
        return RunOutcome(value=len(replies))
    if source == "oversized-outcome":
        return RunOutcome(
            value="v" * (limits.result * 4), output="o" * (limits.output * 4), output_bytes=1
        )
    if source == "forged-limit":
        error: Any = ScriptError(
            type="LimitExceeded", message="limit exceeded: nonsense=1", limit="nonsense"
        )
        return RunOutcome(error=error)
    if source == "oversized-error":
        huge = ScriptError(
            type="E" * 10**5, message="m" * 10**6, traceback="t" * 10**6, line=-5, column=10**9
        )
        return RunOutcome(error=huge)
    if source == "huge-unknown-message":
        _write_frame(encode(["\x00" * 10**7]))  # a 60 MB frame of an unknown kind
        await asyncio.sleep(3600)
    if source == "hang":
        await asyncio.sleep(3600)
    if source == "spin":
        while True:
            pass
    return RunOutcome(value="unknown mode")


def _write_frame(frame: bytes) -> None:
    """Write ``frame`` on the worker's protocol pipe: its one write-only pipe past fd 2."""
    pipes = [fd for fd in range(3, 64) if _is_write_pipe(fd)]
    os.set_blocking(pipes[-1], True)
    view = memoryview(frame)
    while view:
        view = view[os.write(pipes[-1], view):]


def _is_write_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY


async def raw(
    source: str, *, call: ScriptCall, tool_paths: Collection[str], limits: Limits
) -> RunOutcome:
    """Run ``source`` as unrestricted Python; ``value`` is its global ``result``.

    An exception the payload did not catch comes back as ``{"raised": type, "errno":
    errno, "message": text}`` so a test can assert the exact refusal.
    """
    namespace: dict[str, Any] = {"__name__": "__payload__", "call": call, "limits": limits}
    try:
        code = compile(source, "<payload>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        awaitable = eval(code, namespace)
        if inspect.isawaitable(awaitable):
            await awaitable
    except BaseException as exc:  # the payload's own failure is its report
        return RunOutcome(value={"raised": type(exc).__name__,
                                 "errno": getattr(exc, "errno", None),
                                 "message": str(exc)[:500]})
    return RunOutcome(value=namespace.get("result"))
