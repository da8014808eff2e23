"""A worker runtime that abuses the ``output`` frame of a streaming run.

Loaded by ``WorkerPoolExecutor(runtime="tests.integrations.stream_runtime:run")`` in
``test_stream.py``: it writes raw frames on the worker's pipe, as a worker whose
sandbox was broken could, so the host's checks are what is tested.
"""

from __future__ import annotations

import json
import struct
from typing import TYPE_CHECKING, Any

from codemode.sandbox.runtime.result import RunOutcome

if TYPE_CHECKING:
    from collections.abc import Collection

    from codemode.sandbox.executors.worker import ScriptCall
    from codemode.sandbox.limits import Limits


def _send(call: ScriptCall, message: list[Any]) -> None:
    channel: Any = call.__self__  # type: ignore[attr-defined]
    body = json.dumps(message).encode()
    channel._write(struct.pack(">I", len(body)) + body)


async def run(source: str, *, call: ScriptCall, tool_paths: Collection[str], limits: Limits,
              **extra: Any) -> RunOutcome:
    """``flood``: more output than the run may print; ``foreign``: output of another run;
    ``polite``: output within the limit."""
    run_id = int(call.__self__._run)  # type: ignore[attr-defined]
    if source == "flood":
        for _ in range(4):
            _send(call, ["output", run_id, "x" * limits.output])
    elif source == "foreign":
        _send(call, ["output", run_id + 1, "not mine"])
    elif source == "polite":
        _send(call, ["output", run_id, "fine"])
    return RunOutcome(value="finished")
