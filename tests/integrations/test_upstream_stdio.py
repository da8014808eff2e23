"""The stdio transport to upstream MCP servers: lines found in what was just read, and a
line past the cap ends the connection (the SDK's reader re-split the whole line at every
chunk, 4.3 s of the host's loop for a 20 MB result, and kept a line that never ends)."""

from __future__ import annotations

import io
import logging
import os
import tracemalloc
from pathlib import Path

import anyio
import pytest
from mcp import Client

from codemode.cli.serve import status_handler
from codemode.integrations.upstream_stdio import (
    LineBuffer,
    LineTooLong,
    line_problem,
    parsed_line,
    stdio_transport,
)
from tests.integrations.raw_peer import PY

HOSTILE = str(Path(__file__).resolve().parent / "hostile_server.py")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(("chunks", "lines"), [
    ([b"a\nb\n"], [b"a", b"b"]),
    ([b"ab", b"c\nd", b"e\n"], [b"abc", b"de"]),
    ([b"\n\n"], [b"", b""]),
    ([b"x" * 10, b"y" * 10, b"\nz"], [b"x" * 10 + b"y" * 10]),
    ([b"one", b"", b" line", b"\n"], [b"one line"]),
])
def test_lines_are_joined_once_their_end_arrives(chunks: list[bytes],
                                                 lines: list[bytes]) -> None:
    buffer = LineBuffer(1_000)
    got = [line for chunk in chunks for line in buffer.feed(chunk)]
    assert got == lines


@pytest.mark.parametrize("chunks", [
    [b"x" * 101 + b"\n"],  # a whole line past the cap
    [b"x" * 60, b"x" * 41 + b"\n"],  # ended in a later chunk
    [b"x" * 60, b"x" * 60],  # no end yet, already past it
], ids=["whole", "joined", "unended"])
def test_a_line_past_the_cap_is_refused(chunks: list[bytes]) -> None:
    buffer = LineBuffer(100)
    with pytest.raises(LineTooLong):
        for chunk in chunks:
            buffer.feed(chunk)


def test_a_line_at_the_cap_passes() -> None:
    assert LineBuffer(100).feed(b"x" * 50 + b"\n" + b"y" * 100 + b"\n") == [b"x" * 50,
                                                                            b"y" * 100]


async def _call(tool: str, arguments: dict[str, int], max_line: int,
                max_values: int = 1 << 20) -> tuple[str, int]:
    """``tool`` of the hostile server through the transport: (what came back, server pid)."""
    transport = stdio_transport(PY, [HOSTILE, "lines"], name="bad", max_line=max_line,
                                max_values=max_values)
    async with Client(transport, mode="legacy", cache=None) as client:  # type: ignore[arg-type]
        pid = _server_pid()
        try:
            with anyio.fail_after(30):
                result = await client.session.call_tool(tool, arguments)
        except Exception as exc:  # the failure is what is checked
            return f"{type(exc).__name__}: {exc}", pid
        return str(result.content[0].text), pid  # type: ignore[union-attr]


def _server_pid(mode: str = "lines") -> int:
    """The hostile server in ``mode`` this process started last (only these tests run
    the ``lines`` and ``fork`` modes)."""
    found: list[tuple[int, int]] = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            args = cmdline.rstrip(b"\0").split(b"\0")
            script = HOSTILE.encode()
            if script in args[:-1] and args[args.index(script) + 1] == mode.encode() and int(
                    stat[1]) == os.getpid() and stat[0] != "Z":
                found.append((int(stat[19]), int(entry)))  # by start time
    assert found, "the hostile server is not running"
    return max(found)[1]


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


async def test_a_long_line_under_the_cap_arrives_whole() -> None:
    text, pid = await _call("long", {"n": 3_000_000}, max_line=8 << 20)
    assert text == "y" * 3_000_000
    assert _gone(pid)


@pytest.mark.parametrize(("tool", "said"), [
    ("long", "upstream bad sent a line longer than 65,536 bytes"),
    ("endless", "upstream bad sent a line longer than 65,536 bytes"),
])
async def test_a_line_past_the_cap_closes_the_connection_and_the_server(
    caplog: pytest.LogCaptureFixture, tool: str, said: str,
) -> None:
    """The call fails at once (not at its timeout), the warning names the upstream, and
    the server (which for ``endless`` never stops writing) is gone once the client is."""
    with caplog.at_level(logging.WARNING, logger="codemode.upstream"):
        text, pid = await _call(tool, {"n": 1_000_000}, max_line=65_536)
    assert "Connection closed" in text
    assert any(said in record.getMessage() and "its connection is closed" in
               record.getMessage() for record in caplog.records)
    assert _gone(pid)


async def test_a_line_of_too_many_values_closes_the_connection_unparsed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A 64 MiB line of ``{},`` cost the SDK's parse 7.4 GB of the host's memory and 23 s
    of its loop; past ``max_values`` the line is refused as a line past the cap is."""
    with caplog.at_level(logging.WARNING, logger="codemode.upstream"):
        text, pid = await _call("values", {"n": 5_000}, max_line=65_536, max_values=1_000)
    assert "Connection closed" in text
    assert any("upstream bad sent a line of up to 10,0" in record.getMessage() and
               "objects and arrays, at most 1,000;" in record.getMessage() and
               "its connection is closed" in record.getMessage()
               for record in caplog.records)
    assert _gone(pid)


async def test_a_result_under_the_values_cap_arrives() -> None:
    text, pid = await _call("values", {"n": 400}, max_line=65_536, max_values=1_000)
    assert text == "ok"
    assert _gone(pid)


async def test_a_child_left_by_a_server_that_exits_is_ended(tmp_path: Path) -> None:
    """A server that exits once its stdin closes needs no SIGTERM, but a child it forked
    (holding its pipes) was left running after the gateway closed."""
    pid_file = tmp_path / "child"
    transport = stdio_transport(PY, [HOSTILE, "fork", str(pid_file)], name="forks")
    async with Client(transport, mode="legacy", cache=None) as client:  # type: ignore[arg-type]
        server = _server_pid("fork")
        result = await client.session.call_tool("fine", {})
        assert result.content[0].text == "fine"  # type: ignore[union-attr]
    assert _gone(server)
    assert _gone(int(pid_file.read_text()))


def test_a_garbage_line_is_shown_without_its_whole_repr() -> None:
    """The warning's ``%.120r`` took the repr of the whole line first: 4 bytes per control
    byte of a line of up to 64 MiB, on the loop, for 120 characters shown."""
    shown = io.StringIO()
    handler = status_handler(shown)
    upstream = logging.getLogger("codemode.upstream")
    upstream.addHandler(handler)
    line = b"\x01" * (4 << 20)
    tracemalloc.start()
    try:
        parsed = parsed_line(line, "junk")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        upstream.removeHandler(handler)
    assert isinstance(parsed, ValueError)
    assert "upstream junk sent a line that is no JSON-RPC message: '\\x01\\x01" in \
        shown.getvalue()
    assert peak < 3 * len(line)


async def test_a_text_of_many_commas_is_one_value() -> None:
    """Commas in a string counted as values closed the connection on a CSV export of
    5,000 fields (``max_values`` 1,000); only what the SDK parses as values counts."""
    text, pid = await _call("csv", {"n": 20_000}, max_line=65_536, max_values=1_000)
    assert text == ",".join(["a"] * 20_000)
    assert _gone(pid)


@pytest.mark.parametrize(("line", "refused"), [
    (b'{"text": "' + b"a," * 5_000 + b'"}', False),
    (b'{"text": "' + b"[{" * 2_000 + b'"}', False),
    (rb'{"text": "\\\\\\", "more": "' + b"a," * 5_000 + rb'\""}', False),
    (b"[" + b"0," * 5_000 + b"0]", True),
    (b"[" + b"[]," * 1_500 + b"0]", True),
    (b'["' + b'a,' * 2_000 + b'", ' + b"0," * 4_100 + b"0]", True),
    (b"[" + b'"",' * 5_000 + b"0]", True),
])
def test_values_are_counted_outside_strings(line: bytes, refused: bool) -> None:
    assert (line_problem(line, 1_000) is not None) is refused
