"""JSON message framing between the host and a sandbox worker process.

Every message is a JSON array whose first element names its kind, sent as one
frame: a 4-byte big-endian length followed by that many bytes of UTF-8 JSON
(ASCII, except the argument text of a ``call``; see :func:`encode_call`).
JSON (never pickle) keeps the worker from handing the host anything but plain
data, and the length prefix lets a reader split a batch of frames from one
``read()`` without scanning for delimiters.

The host trusts nothing a worker sends, so its decoder (``FrameDecoder(bounded=True)``)
bounds what a frame may decode to, not only its bytes: at most ``MAX_VALUES`` values
and ``MAX_DEPTH`` levels of nesting. A small frame with little nesting (the common
call, a few hundred bytes) is decoded at once; any other frame is handed back undecoded
(``[LARGE, body]``) for :func:`decode_bounded` on a worker thread, a decoder written in
Python over the C string scanner that counts values and depth as it goes, so it stops
at the first value over a bound and lets the host loop run between its steps (C
``json.loads`` holds the GIL for the whole document: 5 million empty lists froze the
loop for 2 s). Large replies are encoded the same way (:func:`encode_large_strict`).

Host → worker::

    ["run", {"source": str, "tool_paths": [str], "limits": {field: value}, "run": n,
             "code": tag}]
                                            ``tool_paths`` only when they changed since
                                            this worker's last run (it keeps them);
                                            ``code``: the host's compiled code for the
                                            source follows (``compile.adopt_code``) as
                                            the blob frame just before this one
    ["reply", id, reply]                    a tool call's outcome (``CallBroker.answer``)

A blob frame (:func:`encode_blob`: the length's top bit set, then raw bytes) carries the
marshalled code, host to worker only: base64 inside JSON cost more than the rest of a long
script's run frame on both sides. Only a worker's decoder takes one
(``FrameDecoder(blobs=True)``); to the host's, its length is past ``MAX_FRAME``.

Worker → host::

    ["ready", pid, confinement]             booted, runner imported
    ["call", id, name, arguments]           the script called a tool
    ["cancel", id]                          the script stopped waiting for a call
    ["output", n, text]                     printed text of run ``n``, only when its
                                            ``run`` asked (``"stream": true``); at most
                                            ``limits.output`` characters in all
    ["done", outcome, peak_rss, retiring, n]
                                            the run finished (``RunOutcome.to_json()``);
                                            ``retiring``: the worker exits now

Frames belong to a run: run ``n``'s call ids are ``n << 32`` plus 1, 2, … (increasing)
and its ``done`` names ``n``; a frame of another run, one after ``done``, or any frame
while no run is active is a protocol violation (the host kills the worker).
"""

from __future__ import annotations

import codecs
import gc
import json
import json.decoder
import json.encoder
import json.scanner
import struct
import threading
from typing import Any, Final

from codemode.errors import WorkerProtocolError
from codemode.jsontext import (
    STRING_CHUNK,
    JsonSteps,
    TextTooLong,
    compact_encoder,
    is_small,
    loads,
)
from codemode.sandbox.executors.jsonstrings import scan_string
from codemode.sandbox.limits import FRAME_DEPTH, FRAME_VALUES

__all__ = [
    "BLOB",
    "BOUNDS_TEXT",
    "HEADER_SIZE",
    "INLINE_FRAME",
    "LARGE",
    "MAX_DEPTH",
    "MAX_FRAME",
    "MAX_VALUES",
    "FrameDecoder",
    "FrameTooLarge",
    "arguments_message",
    "arguments_problem",
    "decode_bounded",
    "decode_text_bounded",
    "encode",
    "encode_blob",
    "encode_call",
    "encode_large_strict",
    "encode_strict",
    "is_small",
    "json_size",
    "may_break_bounds",
    "new_bounded",
    "new_call_bounded",
]

_HEADER: Final = struct.Struct(">I")
HEADER_SIZE: Final = _HEADER.size
MAX_FRAME: Final = 64 * 1024 * 1024
"""Largest frame either side accepts; a longer length prefix is a protocol violation."""
MAX_VALUES: Final = FRAME_VALUES
"""Most JSON values (containers, scalars, object members) one frame from a worker may hold."""
MAX_DEPTH: Final = FRAME_DEPTH
"""Deepest nesting of arrays and objects one frame from a worker may hold."""
INLINE_FRAME: Final = 64 * 1024
"""Frames up to this many bytes with at most ``MAX_DEPTH`` brackets are decoded at once
(at most ~32k values: a few ms); the rest go through :func:`decode_bounded`."""

LARGE: Final[Any] = object()
"""First element of ``[LARGE, body]``: a frame the bounded decoder left for
:func:`decode_bounded` (no JSON value can be this object)."""
BLOB: Final[Any] = object()
"""First element of ``[BLOB, data]``: a blob frame's bytes (:func:`encode_blob`)."""
_BLOB_FLAG: Final = 1 << 31


class FrameTooLarge(WorkerProtocolError):
    """A message to send encodes to more than ``MAX_FRAME`` bytes."""

    def __init__(self, size: int | None = None) -> None:
        self.size = size
        what = f"{size} bytes" if size is not None else f"more than {MAX_FRAME} bytes"
        super().__init__(f"a message of {what} exceeds the frame cap")

_dumps = compact_encoder(ascii=True, allow_nan=True)
_dumps_strict = compact_encoder(ascii=True, allow_nan=False)
_decode = loads


def encode(message: list[Any]) -> bytes:
    """One frame for ``message``: length prefix plus compact ASCII JSON."""
    body = _dumps(message).encode("ascii")
    if len(body) > MAX_FRAME:
        raise FrameTooLarge(len(body))
    return _HEADER.pack(len(body)) + body


def encode_call(call_id: int, name: str, arguments: str) -> bytes:
    """The ``call`` frame, with ``arguments`` (JSON text) spliced in as it is.

    The script side already serialised the arguments to check them; splicing
    that text (a complete JSON value, so it cannot break the framing) saves
    decoding and re-encoding them on every call. Frames are UTF-8 for this.
    """
    body = f'["call",{int(call_id)},{_dumps(name)},{arguments}]'.encode()
    if len(body) > MAX_FRAME:
        raise FrameTooLarge(len(body))
    return _HEADER.pack(len(body)) + body


def encode_blob(data: bytes) -> bytes:
    """A blob frame: ``data`` as it is, no JSON (for a worker's decoder only, see above)."""
    if len(data) > MAX_FRAME:
        raise FrameTooLarge(len(data))
    return _HEADER.pack(_BLOB_FLAG | len(data)) + data


def encode_strict(message: list[Any]) -> bytes:
    """:func:`encode` for data from outside the protocol (tool results): NaN and the
    infinities are not JSON, so they raise ValueError here instead of crossing."""
    body = _dumps_strict(message).encode("ascii")
    if len(body) > MAX_FRAME:
        raise FrameTooLarge(len(body))
    return _HEADER.pack(len(body)) + body


def json_size(value: Any, cap: int) -> int | None:
    """Bytes of ``value`` as UTF-8 JSON (``ensure_ascii=False``, ``json.dumps``' spacing, as
    ``RunOutcome.to_result`` counts them), or None past ``cap``; for a worker thread, like
    :func:`encode_large_strict` (stops at the cap)."""
    steps = JsonSteps(ascii=False, compact=False, allow_nan=True, keep=False, utf8=True,
                      cap=cap)
    try:
        steps.value(value)
    except TextTooLong:
        return None
    return steps.size


def encode_large_strict(message: list[Any]) -> bytes:
    """:func:`encode_strict` for big messages, meant for a worker thread: the text is
    built from many short C calls (the GIL passes to the host loop between them), and
    encoding stops as soon as it passes ``MAX_FRAME`` instead of building all of it."""
    steps = JsonSteps(ascii=True, compact=True, cap=MAX_FRAME)
    try:
        steps.value(message)
    except TextTooLong:
        raise FrameTooLarge() from None
    body = steps.text().encode("ascii")
    return _HEADER.pack(len(body)) + body


_JSONArray: Any = getattr(json.decoder, "JSONArray")  # noqa: B009
_JSONObject: Any = getattr(json.decoder, "JSONObject")  # noqa: B009
_WHITESPACE: Any = getattr(json.decoder, "WHITESPACE")  # noqa: B009
_WS_MATCH: Any = _WHITESPACE.match
_py_make_scanner: Any = getattr(json.scanner, "py_make_scanner")  # noqa: B009


class _Bounded:
    """Parse context for ``json.scanner.py_make_scanner`` that counts as it parses."""

    def __init__(self) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = None
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = _CONSTANTS.__getitem__
        self.parse_string = scan_string
        self.memo: dict[str, str] = {}
        self.values = 0
        self.depth = 0
        self.cancelled = False
        """Set from another thread to stop the decode at its next value."""
        self._inner: Any = None
        self.made: list[Any] = []
        """Every container made so far, parents first (to free a refused frame gently)."""

    def _count(self, text: str, index: int) -> Any:
        self.values += 1
        if self.values > MAX_VALUES:
            raise WorkerProtocolError(f"a frame holds more than {MAX_VALUES} JSON values")
        if self.cancelled:
            raise WorkerProtocolError("decoding was abandoned")
        return self._inner(text, index)

    def _enter(self, inner: Any) -> None:
        self._inner = inner
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise WorkerProtocolError(f"a frame nests deeper than {MAX_DEPTH} levels")

    def parse_array(self, s_and_end: tuple[str, int], scan_once: Any,
                    _w: Any = _WS_MATCH, _ws: str = " \t\n\r") -> Any:
        """``json.decoder.JSONArray``, counting, its list registered before it fills."""
        self._enter(scan_once)
        try:
            text, end = s_and_end
            values: list[Any] = []
            self.made.append(values)
            nextchar = text[end : end + 1]
            if nextchar in _ws:
                end = _w(text, end + 1).end()
                nextchar = text[end : end + 1]
            if nextchar == "]":
                return values, end + 1
            append = values.append
            count = self._count
            while True:
                try:
                    value, end = count(text, end)
                except StopIteration as err:
                    raise json.JSONDecodeError("Expecting value", text, err.value) from None
                append(value)
                nextchar = text[end : end + 1]
                if nextchar in _ws:
                    end = _w(text, end + 1).end()
                    nextchar = text[end : end + 1]
                end += 1
                if nextchar == "]":
                    return values, end
                if nextchar != ",":
                    raise json.JSONDecodeError("Expecting ',' delimiter", text, end - 1)
                if text[end : end + 1] in _ws:
                    end = _w(text, end + 1).end()
        finally:
            self.depth -= 1

    def parse_object(self, s_and_end: tuple[str, int], strict: bool, scan_once: Any,
                     object_hook: Any, object_pairs_hook: Any, memo: Any = None) -> Any:
        self._enter(scan_once)
        try:
            result = _JSONObject(s_and_end, strict, self._count, object_hook,
                                 object_pairs_hook, memo)
            self.made.append(result[0])
            return result
        finally:
            self.depth -= 1


_FREE_STEP: Final = 2048

_CONSTANTS: Final = {"NaN": float("nan"), "Infinity": float("inf"),
                     "-Infinity": float("-inf")}


def decode_bounded(body: bytes, context: _Bounded | None = None) -> list[Any]:
    """Decode a frame body under ``MAX_VALUES`` and ``MAX_DEPTH`` (for a worker thread).

    Raises ``WorkerProtocolError`` at the first value past a bound, on bad JSON, and on
    anything that is not a tagged array; ``context.cancelled`` stops it early.
    """
    try:
        text = _utf8(body)
    except ValueError as error:
        raise WorkerProtocolError(f"frame is not JSON: {error}") from None
    return _tagged(decode_text_bounded(text, context))


def decode_text_bounded(text: str, context: _Bounded | None = None) -> Any:
    """:func:`decode_bounded` for JSON text, any value (the in-process executor's big
    call arguments: ``json.loads`` of them held the host loop as long as it took)."""
    bounded = context if context is not None else _Bounded()
    _pause_gc()
    try:
        scan = _py_make_scanner(bounded)
        start = _WHITESPACE.match(text, 0).end()
        try:
            message, end = scan(text, start)
        except StopIteration as stop:
            raise json.JSONDecodeError("Expecting value", text, stop.value) from None
        end = _WHITESPACE.match(text, end).end()
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
    except RecursionError:
        _release(bounded)
        raise WorkerProtocolError("a frame nests too deeply") from None
    except ValueError as error:
        _release(bounded)
        raise WorkerProtocolError(f"frame is not JSON: {error}") from None
    except WorkerProtocolError:
        _release(bounded)
        raise
    finally:
        _resume_gc()
    bounded.made = []
    return message


def _utf8(body: bytes) -> str:
    """``body.decode()`` in 1 MiB steps (15 MB at once held the GIL for 30 ms)."""
    if len(body) <= STRING_CHUNK:
        return body.decode("utf-8")
    decoder = codecs.getincrementaldecoder("utf-8")()
    parts = [decoder.decode(body[i : i + STRING_CHUNK])
             for i in range(0, len(body), STRING_CHUNK)]
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)


def _release(bounded: _Bounded) -> None:
    """Free a refused frame's half-built value in small steps (freeing 500k lists at once
    held the GIL, and so the host loop, for 80 ms): each container is emptied a slice
    at a time, parents first, so no single step frees much."""
    made, bounded.made = bounded.made, []
    for container in made:
        if type(container) is list:
            while container:
                del container[-_FREE_STEP:]
        else:
            container.clear()
    while made:
        del made[-_FREE_STEP:]


_gc_lock = threading.Lock()
_gc_paused = [0, False]
"""Decodes in progress, and whether the collector was enabled before the first."""


def _pause_gc() -> None:
    """Hold off the cyclic collector while a big frame decodes: its thousands of new
    containers would set off full collections, each holding the GIL (and so the host's
    loop) for the whole heap's time; a decode makes no cycles."""
    with _gc_lock:
        if _gc_paused[0] == 0:
            _gc_paused[1] = gc.isenabled()
            gc.disable()
        _gc_paused[0] += 1


def _resume_gc() -> None:
    with _gc_lock:
        _gc_paused[0] -= 1
        if _gc_paused[0] == 0 and _gc_paused[1]:
            gc.enable()


def new_bounded() -> _Bounded:
    """A fresh context for :func:`decode_bounded` (keep it to cancel the decode)."""
    return _Bounded()


_CALL_VALUES: Final = 4
"""Values a ``call`` frame counts besides its arguments' own: its four elements."""


def new_call_bounded() -> _Bounded:
    """A context that counts a call's arguments text, decoded alone, as the ``call`` frame
    around it would (its four elements, one level deeper): what the host refuses in a
    frame is what the in-process broker and the worker's own check refuse."""
    bounded = _Bounded()
    bounded.values = _CALL_VALUES
    bounded.depth = 1
    return bounded


BOUNDS_TEXT: Final = MAX_DEPTH
"""Arguments texts shorter than this are never :func:`may_break_bounds` (too few
characters for its brackets or commas): callers skip the call, which costs more than the
counting (most calls' arguments are a few dozen characters)."""


def may_break_bounds(arguments: str) -> bool:
    """Whether a call's arguments text could hold more values or levels than a frame may
    (then checked by decoding); False is sure: a level takes a bracket, and a value is
    the first in its container (a bracket) or follows a comma (counted in C, so a big
    text of few values is not decoded again)."""
    brackets = arguments.count("[") + arguments.count("{")
    return brackets >= MAX_DEPTH or (
        brackets + arguments.count(",") >= MAX_VALUES - _CALL_VALUES)


def arguments_problem(name: str, text: str, context: _Bounded | None = None) -> str | None:
    """Why the host would refuse a call's arguments ``text`` (its values, its depth, not
    JSON), worded for the script; None if it would not. Decodes the text: call it only
    when :func:`may_break_bounds`, off the host's loop."""
    try:
        decode_text_bounded(text, context if context is not None else new_call_bounded())
    except WorkerProtocolError as exc:
        return arguments_message(exc.problem)
    return None


def arguments_message(problem: str) -> str:
    """A frame's decoding problem as the script reads it about its call's arguments."""
    bad_json = "frame is not JSON"
    if problem.startswith(bad_json):
        return f"arguments are not JSON data{problem.removeprefix(bad_json)}"
    return f"arguments refused: {problem.replace('a frame ', 'the text ')}"


def _tagged(message: Any) -> list[Any]:
    if type(message) is not list or not message or type(message[0]) is not str:
        raise WorkerProtocolError("frame is not a tagged JSON array")
    return message


class FrameDecoder:
    """Accumulates bytes from a stream and yields whole messages, many per ``feed``.

    ``bounded`` (the host's decoder for a worker's frames): frames that are not small
    and flat come back undecoded as ``[LARGE, body]``, for :func:`decode_bounded`, and
    ``feed`` stops after one (what follows stays buffered, in order).
    """

    __slots__ = ("_blobs", "_bounded", "_buffer")

    def __init__(self, *, bounded: bool = False, blobs: bool = False) -> None:
        self._buffer = bytearray()
        self._bounded = bounded
        self._blobs = blobs and not bounded
        """Blob frames come back as ``[BLOB, data]`` (a worker's decoder, reading its host)."""

    def feed(self, data: bytes, limit: int | None = None) -> list[list[Any]]:
        """Add ``data`` and return the messages now complete, in order: all of them, or
        at most ``limit`` (the rest stay buffered: see :attr:`backlog`)."""
        buffer = self._buffer
        buffer += data
        messages: list[list[Any]] = []
        position = 0
        available = len(buffer)
        while available - position >= HEADER_SIZE:
            (length,) = _HEADER.unpack_from(buffer, position)
            blob = self._blobs and length & _BLOB_FLAG
            if blob:
                length ^= _BLOB_FLAG
            if length > MAX_FRAME:
                raise WorkerProtocolError(f"a frame of {length} bytes exceeds the frame cap")
            end = position + HEADER_SIZE + length
            if end > available:
                break
            if blob:
                messages.append([BLOB, bytes(buffer[position + HEADER_SIZE : end])])
                position = end
                continue
            if self._bounded and length > INLINE_FRAME:
                with memoryview(buffer) as view:  # one copy of the body, not two
                    messages.append([LARGE, bytes(view[position + HEADER_SIZE : end])])
                position = end
                break
            body = buffer[position + HEADER_SIZE : end]
            position = end
            # not small and flat enough to decode on the spot (``INLINE_FRAME``); the
            # length is at most that here, and a frame shorter than ``MAX_DEPTH`` cannot
            # hold more brackets (most calls: the counts are skipped)
            if self._bounded and length > MAX_DEPTH \
                    and body.count(b"[") + body.count(b"{") > MAX_DEPTH:
                messages.append([LARGE, bytes(body)])
                break
            try:
                message = _decode(body.decode("utf-8"))
            except RecursionError:
                raise WorkerProtocolError("a frame nests too deeply") from None
            except ValueError as error:
                raise WorkerProtocolError(f"frame is not JSON: {error}") from None
            messages.append(_tagged(message))
            if limit is not None and len(messages) >= limit:
                break
        if position:
            del buffer[:position]
        return messages

    @property
    def backlog(self) -> bool:
        """True when a whole frame is buffered (``feed`` stopped at its limit or a large one)."""
        buffer = self._buffer
        if len(buffer) < HEADER_SIZE:
            return False
        (length,) = _HEADER.unpack_from(buffer, 0)
        if self._blobs:
            length &= ~_BLOB_FLAG
        return len(buffer) >= HEADER_SIZE + int(length)

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a whole frame."""
        return len(self._buffer)
