"""What a run hands back: plain, JSON-compatible values.

``RunOutcome`` is what the script-side runner produces (inside a worker or a
thread); it crosses processes as JSON. The executor adds what only the host
knows (the call trace, wall time, peak memory) and builds a ``ScriptResult``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from codemode.errors import LimitExceeded
from codemode.sandbox.limits import LIMIT_NAMES, Limits

__all__ = ["CallRecord", "RunOutcome", "ScriptError", "ScriptResult", "Usage", "call_record"]

_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
"""``json.dumps(..., ensure_ascii=False)`` without a new encoder per run."""


def _cap_output(output: str, cap: int) -> str:
    """Keep at most ``cap`` bytes of printed text (plus the truncation marker)."""
    marker = f"\n…[output truncated at {cap} bytes]"
    body = output[: -len(marker)] if output.endswith(marker) else output
    data = body.encode("utf-8", "replace")
    if len(data) <= cap:
        return output
    return data[:cap].decode("utf-8", "ignore") + marker


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptError:
    """Why a run failed, located in the model's own script."""

    type: str
    """Exception type name as the script sees it ("ToolCallError", "LimitExceeded" …)."""
    message: str
    """Human-readable message (never contains host paths or host objects)."""
    line: int | None = None
    """1-based line in the model's script, when known."""
    column: int | None = None
    """1-based column in the model's script, when known."""
    traceback: str = ""
    """Short traceback over script frames only."""
    limit: str | None = None
    """The ``Limits`` field name when a limit tripped, else None."""

    @classmethod
    def for_limit(cls, exc: LimitExceeded, *, line: int | None = None,
                  column: int | None = None, traceback: str = "") -> ScriptError:
        """The error reported for a tripped limit."""
        return cls(type="LimitExceeded", message=str(exc), line=line, column=column,
                   traceback=traceback, limit=exc.limit)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON object."""
        return {"type": self.type, "message": self.message, "line": self.line,
                "column": self.column, "traceback": self.traceback, "limit": self.limit}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScriptError:
        """Inverse of :meth:`to_json`; a limit name that is not a ``Limits`` field is dropped
        (the data may come from a compromised worker)."""
        fields = dict(data)
        if fields.get("limit") not in LIMIT_NAMES:
            fields["limit"] = None
        return cls(**fields)


@dataclass(frozen=True, kw_only=True, slots=True)
class CallRecord:
    """One tool call the script made, as the host saw it."""

    index: int
    """0-based position in call order."""
    name: str
    """Tool path as the script wrote it ("search", "github.get_issue")."""
    arguments: dict[str, Any]
    """Keyword arguments as JSON data; arguments bigger than about 64 kB of JSON are not
    kept (the host holds the trace as long as the result): then the one key is
    ``"(not kept)"``, saying so."""
    started: float
    """Seconds since the run started."""
    duration: float
    """Seconds the host took to answer."""
    ok: bool
    """True when the call returned a value."""
    error: str | None = None
    """The error message the script saw, when not ok."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON object."""
        return {"index": self.index, "name": self.name, "arguments": self.arguments,
                "started": self.started, "duration": self.duration, "ok": self.ok,
                "error": self.error}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CallRecord:
        """Inverse of :meth:`to_json`."""
        return cls(**data)


_NEW: Any = object.__new__
_SETTERS: tuple[Any, ...] = tuple(vars(CallRecord)[name].__set__ for name in (
    "index", "name", "arguments", "started", "duration", "ok", "error"))
"""The slots' own setters (what ``__init__`` sets, one by one)."""


def call_record(index: int, name: str, arguments: dict[str, Any], started: float,
                duration: float, error: str | None) -> CallRecord:
    """``CallRecord(index=..., ..., ok=error is None, error=error)``, built without
    ``__init__``: a frozen dataclass's parses seven keywords and sets each field through
    ``object.__setattr__``, and a run's trace builds one record per call (2.2 -> 0.9 µs a
    record; ~8% of the host's instructions per call of a 10,000-call loop)."""
    record: CallRecord = _NEW(CallRecord)
    s_index, s_name, s_arguments, s_started, s_duration, s_ok, s_error = _SETTERS
    s_index(record, index)
    s_name(record, name)
    s_arguments(record, arguments)
    s_started(record, started)
    s_duration(record, duration)
    s_ok(record, error is None)
    s_error(record, error)
    return record


@dataclass(frozen=True, kw_only=True, slots=True)
class Usage:
    """What the run consumed, per limit."""

    time: float = 0.0
    """Wall-clock seconds."""
    operations: int = 0
    """Operations counted (loop iterations, function entries, items iterated by builtins)."""
    peak_memory: int | None = None
    """Peak resident bytes of the worker, when the executor can know it."""
    calls: int = 0
    """Tool calls made."""
    output_bytes: int = 0
    """Bytes the script tried to print (including any truncated part)."""
    queued: float = 0.0
    """Wall-clock seconds the run waited for a free worker before it started (not part of
    ``time``; the timeout covers both, see ``Limits.timeout``)."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON object."""
        return {"time": self.time, "operations": self.operations,
                "peak_memory": self.peak_memory, "calls": self.calls,
                "output_bytes": self.output_bytes, "queued": self.queued}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Usage:
        """Inverse of :meth:`to_json`."""
        return cls(**data)


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptResult:
    """Everything one run produced."""

    value: Any = None
    """JSON value of the script's last expression statement (None otherwise)."""
    output: str = ""
    """Captured ``print`` text, truncated with a marker past ``Limits.output``."""
    error: ScriptError | None = None
    """Why the run failed, or None."""
    calls: tuple[CallRecord, ...] = ()
    """Trace of the tool calls the script made, in start order."""
    usage: Usage = field(default_factory=Usage)
    """What the run consumed."""
    attachments: tuple[Any, ...] = ()
    """Non-text content blocks (images, audio, resources) tool calls returned; the script
    saw placeholders, the blocks travel up to the caller (e.g. the ``run_code`` result)."""

    @property
    def ok(self) -> bool:
        """True when the run finished without an error."""
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON object."""
        return {"value": self.value, "output": self.output,
                "error": None if self.error is None else self.error.to_json(),
                "calls": [c.to_json() for c in self.calls], "usage": self.usage.to_json(),
                "attachments": [dict(a) for a in self.attachments]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ScriptResult:
        """Inverse of :meth:`to_json`."""
        error = data.get("error")
        return cls(value=data.get("value"), output=data.get("output", ""),
                   error=None if error is None else ScriptError.from_json(error),
                   calls=tuple(CallRecord.from_json(c) for c in data.get("calls", ())),
                   usage=Usage.from_json(data.get("usage", {})),
                   attachments=tuple(data.get("attachments", ())))


@dataclass(frozen=True, kw_only=True, slots=True)
class RunOutcome:
    """What the script-side runner produced; the executor turns it into a ScriptResult."""

    value: Any = None
    """JSON value of the last expression statement (already size-checked)."""
    output: str = ""
    """Captured print text (already truncated)."""
    output_bytes: int = 0
    """Bytes the script tried to print."""
    error: ScriptError | None = None
    """Why the script failed, or None."""
    operations: int = 0
    """Operations counted."""
    result_size: int | None = None
    """Bytes of ``value``'s JSON as the runner measured them (what :meth:`to_result`
    measures: the same encoder's text), or None. The in-process executor, whose runner is
    the host's own code, passes it on instead of encoding the value again; it never
    crosses the worker protocol (:meth:`to_json` leaves it out): a worker's word on a
    size is not taken."""

    def to_json(self) -> dict[str, Any]:
        """Plain JSON object (for the worker protocol)."""
        return {"value": self.value, "output": self.output, "output_bytes": self.output_bytes,
                "error": None if self.error is None else self.error.to_json(),
                "operations": self.operations}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunOutcome:
        """Inverse of :meth:`to_json`."""
        error = data.get("error")
        return cls(value=data.get("value"), output=data.get("output", ""),
                   output_bytes=data.get("output_bytes", 0),
                   error=None if error is None else ScriptError.from_json(error),
                   operations=data.get("operations", 0))

    def to_result(self, *, calls: tuple[CallRecord, ...], time: float,
                  peak_memory: int | None = None, error: ScriptError | None = None,
                  limits: Limits | None = None, queued: float = 0.0,
                  result_size: int | None = None) -> ScriptResult:
        """Combine with the host's view; ``error`` (e.g. a host-side timeout) wins if given.

        With ``limits`` the host re-applies the output cap and the result size itself
        instead of trusting the script side (a worker may be compromised);
        ``result_size``, when the caller measured it already (off its event loop: a big
        value takes long to encode), is the value's size in bytes of JSON, or ``-1``
        for "more than ``limits.result``".
        """
        final_error = error if error is not None else self.error
        output = self.output
        value = self.value
        if limits is not None:
            output = _cap_output(output, limits.output)
            if final_error is not None:
                final_error = _bounded(final_error)
            if final_error is None:
                size = result_size if result_size is not None else len(
                    _ENCODE(value).encode("utf-8", "replace"))
                if size > limits.result or size < 0:
                    what = f"{size} bytes" if size >= 0 else f"more than {limits.result} bytes"
                    final_error = ScriptError.for_limit(LimitExceeded(
                        "result", limits.result, f"the result is {what} of JSON"))
        return ScriptResult(
            value=None if final_error is not None else value,
            output=output, error=final_error, calls=calls,
            usage=Usage(time=time, operations=self.operations, peak_memory=peak_memory,
                        calls=len(calls), output_bytes=self.output_bytes, queued=queued))


_MAX_TYPE, _MAX_MESSAGE, _MAX_TRACEBACK = 200, 4096, 8192


def _clip(text: object, cap: int) -> str:
    text = str(text)
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _bounded(error: ScriptError) -> ScriptError:
    """An error report with every field bounded (a worker's report is not trusted)."""
    line = error.line if type(error.line) is int else None
    column = error.column if type(error.column) is int else None
    limit = _clip(error.limit, _MAX_TYPE) if error.limit is not None else None
    return ScriptError(type=_clip(error.type, _MAX_TYPE),
                       message=_clip(error.message, _MAX_MESSAGE),
                       line=line, column=column, traceback=_clip(error.traceback, _MAX_TRACEBACK),
                       limit=limit)
