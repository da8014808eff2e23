"""JSON message framing between the host and a sandbox worker process.

Every message is a JSON array whose first element names its kind, sent as one
frame: a 4-byte big-endian length followed by that many bytes of UTF-8 JSON
(ASCII, except the argument text of a ``call``; see :func:`encode_call`).
JSON (never pickle) keeps the worker from handing the host anything but plain
data, and the length prefix lets a reader split a batch of frames from one
``read()`` without scanning for delimiters.

Host → worker::

    ["run", {"source": str, "tool_paths": [str], "limits": {field: value}}]
    ["reply", id, reply]                    a tool call's outcome (``CallBroker.answer``)

Worker → host::

    ["ready", pid]                          booted, runner imported
    ["call", id, name, arguments]           the script called a tool
    ["cancel", id]                          the script stopped waiting for a call
    ["done", outcome, peak_rss, retiring]   the run finished (``RunOutcome.to_json()``);
                                            ``retiring``: the worker exits now
"""

from __future__ import annotations

import json
import struct
from typing import Any, Final

from codemode.errors import WorkerProtocolError

__all__ = [
    "HEADER_SIZE",
    "MAX_FRAME",
    "FrameDecoder",
    "encode",
    "encode_call",
    "encode_strict",
]

_HEADER: Final = struct.Struct(">I")
HEADER_SIZE: Final = _HEADER.size
MAX_FRAME: Final = 64 * 1024 * 1024
"""Largest frame either side accepts; a longer length prefix is a protocol violation."""

_dumps = json.JSONEncoder(separators=(",", ":")).encode
_dumps_strict = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
_decode = json.JSONDecoder().decode


def encode(message: list[Any]) -> bytes:
    """One frame for ``message``: length prefix plus compact ASCII JSON."""
    body = _dumps(message).encode("ascii")
    if len(body) > MAX_FRAME:
        raise WorkerProtocolError(f"a message of {len(body)} bytes exceeds the frame cap")
    return _HEADER.pack(len(body)) + body


def encode_call(call_id: int, name: str, arguments: str) -> bytes:
    """The ``call`` frame, with ``arguments`` (JSON text) spliced in as it is.

    The script side already serialised the arguments to check them; splicing
    that text (a complete JSON value, so it cannot break the framing) saves
    decoding and re-encoding them on every call. Frames are UTF-8 for this.
    """
    body = f'["call",{int(call_id)},{_dumps(name)},{arguments}]'.encode()
    if len(body) > MAX_FRAME:
        raise WorkerProtocolError(f"a message of {len(body)} bytes exceeds the frame cap")
    return _HEADER.pack(len(body)) + body


def encode_strict(message: list[Any]) -> bytes:
    """:func:`encode` for data from outside the protocol (tool results): NaN and the
    infinities are not JSON, so they raise ValueError here instead of crossing."""
    body = _dumps_strict(message).encode("ascii")
    if len(body) > MAX_FRAME:
        raise WorkerProtocolError(f"a message of {len(body)} bytes exceeds the frame cap")
    return _HEADER.pack(len(body)) + body


class FrameDecoder:
    """Accumulates bytes from a stream and yields whole messages, many per ``feed``."""

    __slots__ = ("_buffer",)

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[list[Any]]:
        """Add ``data`` and return every message now complete, in order."""
        buffer = self._buffer
        buffer += data
        messages: list[list[Any]] = []
        position = 0
        available = len(buffer)
        while available - position >= HEADER_SIZE:
            (length,) = _HEADER.unpack_from(buffer, position)
            if length > MAX_FRAME:
                raise WorkerProtocolError(f"a frame of {length} bytes exceeds the frame cap")
            end = position + HEADER_SIZE + length
            if end > available:
                break
            try:
                message = _decode(buffer[position + HEADER_SIZE : end].decode("utf-8"))
            except ValueError as error:
                raise WorkerProtocolError(f"frame is not JSON: {error}") from None
            if type(message) is not list or not message or type(message[0]) is not str:
                raise WorkerProtocolError("frame is not a tagged JSON array")
            messages.append(message)
            position = end
        if position:
            del buffer[:position]
        return messages

    @property
    def pending(self) -> int:
        """Bytes received that do not yet form a whole frame."""
        return len(self._buffer)
