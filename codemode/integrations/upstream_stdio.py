"""An upstream MCP server over stdio, its lines bounded and found in linear time.

The MCP SDK's stdio client joins every chunk it reads to the line so far and splits the
whole again: a 20 MB line (a large result, an image) held the host's event loop for
4.3 s, and a line that never ends grew the host's memory without bound. This transport
does what the SDK's does (the server in a process group of its own, the SDK's safe
environment, the same JSON-RPC parsing, stdin closed then the group terminated on exit:
here also the children of a server that exited), but looks for line ends only in the
bytes just read, and ends the connection at a line longer than ``MAX_LINE`` bytes or of
more than ``MAX_VALUES`` JSON values: the calls in flight fail at once ("the connection
closed") instead of waiting for their timeouts, and the gateway reconnects. When the
server's stdout ends because it exited, its exit code is told (``exited``) before the
session sees the end, so the gateway's errors can say so ("exited with code 2") where
the SDK says only "Connection closed".
"""

from __future__ import annotations

import json
import logging
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any, Final, final

import anyio

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping, Sequence

    from anyio.abc import Process

__all__ = ["COMMAS_PER_VALUE", "MAX_LINE", "MAX_VALUES", "LineBuffer", "LineTooLong",
           "line_problem", "parsed_line", "stdio_transport", "too_many_values"]

_LOG = logging.getLogger("codemode.upstream")

MAX_LINE: Final = 64 << 20
"""Bytes one message from an upstream may take (base64 images and long texts included)."""
MAX_VALUES: Final = 1 << 20
"""JSON values one message may hold, counted as its ``{``, ``[`` and ``,`` bytes (strings'
too: an over-count). The SDK's parse costs the host 150-350 bytes and some 0.3 µs of its
loop per value: a 64 MiB line of ``{},`` took 7.4 GB and 23 s (a worker's frame holds at
most 500,000 values anyway)."""

_FLUSH_SECONDS: Final = 0.5
"""How long messages already accepted may take to reach the server's stdin on exit."""
_EXIT_SECONDS: Final = 2.0
"""How long the server gets to exit once its stdin closed, and after SIGTERM."""
_EOF_EXIT_SECONDS: Final = 0.5
"""How long a server whose stdout ended gets to exit before the session sees the end
without its exit code (one that closed its stdout and lives on)."""


class LineTooLong(Exception):
    """An upstream sent a line longer than the transport's cap."""


@final
class LineBuffer:
    """Bytes in, complete lines out; a line is joined once, when its end arrives."""

    __slots__ = ("_limit", "_parts", "_size")

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._parts: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines ``chunk`` completes; raises :class:`LineTooLong` past the cap."""
        lines: list[bytes] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            piece = chunk[start:end]
            if self._parts:
                self._size += len(piece)
                self._parts.append(piece)
                piece = b"".join(self._parts)
                self._parts, self._size = [], 0
            if len(piece) > self._limit:
                raise LineTooLong(f"a line of {len(piece):,} bytes (at most {self._limit:,})")
            lines.append(piece)
            start = end + 1
        if start < len(chunk):
            self._parts.append(chunk[start:])
            self._size += len(chunk) - start
            if self._size > self._limit:
                raise LineTooLong(f"a line longer than {self._limit:,} bytes")
        return lines


COMMAS_PER_VALUE: Final = 4
"""A line may hold this many commas per allowed value: only objects and arrays (``{``,
``[``) are held to ``max_values`` itself, and a flood of bare values (``0,0,0,…``: 4.4 GB
at 64 MiB) is still stopped by its commas."""

_FEW_STRINGS: Final = 1 << 17
"""Most ``"`` bytes a line over the limits may hold to be counted again outside its
strings: splitting at each costs an object per string (one line of many short strings
is over the limits by its commas anyway)."""


def too_many_values(containers: int, commas: int, max_values: int) -> str | None:
    """What is wrong with a message of ``containers`` ``{``/``[`` bytes and ``commas``
    commas: more than ``max_values`` of the first or ``COMMAS_PER_VALUE`` times as many of
    the second; else None."""
    if containers > max_values or commas > COMMAS_PER_VALUE * max_values:
        return (f"up to {containers + commas + 1:,} JSON values ({containers:,} objects and"
                f" arrays, at most {max_values:,}; {commas:,} commas, at most"
                f" {COMMAS_PER_VALUE * max_values:,})")
    return None


def line_problem(line: bytes, max_values: int) -> str | None:
    """What is wrong with the number of JSON values ``line`` holds (see
    :func:`too_many_values`), or None.

    Its bytes are counted first, all of them (C speed); a line over the limits there is
    counted again without its strings' contents, when it has few strings: the ``{``, ``[``
    and ``,`` of a text cost the SDK's parse nothing, and a CSV export of 5,000 fields
    (``max_values`` 1,000) closed the connection."""
    if len(line) <= max_values:  # a shorter line cannot hold more
        return None
    problem = too_many_values(line.count(b"{") + line.count(b"["), line.count(b","),
                              max_values)
    if problem is None or line.count(b'"') > _FEW_STRINGS:
        return problem
    if b"\\" in line:
        line = line.replace(b"\\\\", b"").replace(b'\\"', b"")  # escapes live in strings only
    outside = b"".join(line.split(b'"')[::2])
    return too_many_values(outside.count(b"{") + outside.count(b"["), outside.count(b","),
                           max_values)


def _checked(line: bytes, max_values: int) -> bytes:
    """``line``, or :class:`LineTooLong` when it holds too many values."""
    problem = line_problem(line, max_values)
    if problem is not None:
        raise LineTooLong(f"a line of {problem}")
    return line


def parsed_line(line: bytes, name: str) -> Any:
    """A line as the SDK's session takes it: a message, or the parse error as a value."""
    from mcp import types
    from mcp.shared.message import SessionMessage

    text = line.decode("utf-8", "replace")
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(text, by_name=False))
    except ValueError as exc:
        if text.strip() and not _json(text):  # JSON the SDK refuses is mended later
            # its start only: %r of the whole made a line of control bytes 4 times its size
            _LOG.warning("upstream %s sent a line that is no JSON-RPC message: %.120r", name,
                         text[:120])
        return exc


def _json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


async def _exited(process: Process, seconds: float) -> bool:
    """Whether the process ended within ``seconds`` (``returncode``, not ``wait()``: a
    child holding the pipes would make a server that exited look alive)."""
    with anyio.move_on_after(seconds):
        while process.returncode is None:  # noqa: ASYNC110 - nothing signals an exit
            await anyio.sleep(0.01)
    return process.returncode is not None


@asynccontextmanager
async def stdio_transport(
    command: str,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    *,
    name: str,
    max_line: int = MAX_LINE,
    max_values: int = MAX_VALUES,
    exited: Callable[[int], None] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Start ``command`` (the upstream ``name``, as warnings call it; its stderr is this
    process's) and yield the SDK's transport streams (read, write) to it. ``exited`` gets
    the exit code of a server whose stdout ended as it exited, before the read stream
    ends (not when this side closed the connection)."""
    from mcp.client.stdio import get_default_environment
    from mcp.os.posix.utilities import terminate_posix_process_tree

    process = await anyio.open_process(
        [command, *args], env=get_default_environment() | dict(env or {}), stderr=None,
        cwd=cwd, start_new_session=True)
    read_sender, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_receiver = anyio.create_memory_object_stream[Any](0)
    writer_done = anyio.Event()
    closing = anyio.Event()
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    told = False

    async def tell_exit() -> None:
        """``exited`` (once) when the server's end came from its exit, not from ours."""
        nonlocal told
        if exited is None or told or closing.is_set():
            return
        if await _exited(process, _EOF_EXIT_SECONDS) and not (told or closing.is_set()):
            told = True
            assert process.returncode is not None
            exited(process.returncode)

    async def read() -> None:
        lines = LineBuffer(max_line)
        try:
            async with read_sender:
                async for chunk in stdout:
                    for line in lines.feed(chunk):
                        await read_sender.send(parsed_line(_checked(line, max_values), name))
                await tell_exit()
        except LineTooLong as exc:
            _LOG.warning("upstream %s sent %s: its connection is closed", name, exc)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass  # the session or the shutdown closed a stream under the read
        finally:  # a server blocked writing its stdout could not read its stdin and exit
            with anyio.CancelScope(shield=True), suppress(
                    anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError,
                    OSError):
                while True:
                    await stdout.receive()

    async def write() -> None:
        try:
            async with write_receiver:
                async for item in write_receiver:
                    text = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send((text + "\n").encode("utf-8", "replace"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await tell_exit()  # a server that exited at once: its stdin broke first
            await read_sender.aclose()  # the server stopped reading: the session sees the end
        finally:
            writer_done.set()

    async def shutdown() -> None:
        closing.set()
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(_FLUSH_SECONDS):
            await writer_done.wait()
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await stdin.aclose()
        await _exited(process, _EXIT_SECONDS)
        # the group, also when the server exited: a child it forked may live on (a no-op
        # once every member is gone)
        await terminate_posix_process_tree(process, _EXIT_SECONDS)
        await _exited(process, _EXIT_SECONDS)
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await stdout.aclose()
        for stream in (read_stream, write_stream, read_sender, write_receiver):
            await stream.aclose()

    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        tg.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            tg.cancel_scope.cancel()
