"""Upstreams that send what the MCP SDK's client refuses: one bad piece costs that piece,
not the upstream, and never a call's timeout.

The upstream is ``hostile_server.py`` (plain JSON-RPC); a well-behaved ``raw_server.py``
runs next to it, to show the rest keeps working.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm
from codemode.cli import main
from codemode.integrations.gateway import Gateway, load_config
from tests.integrations.raw_peer import PY, RAW

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

HOSTILE = str(Path(__file__).resolve().parent / "hostile_server.py")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _config(tmp_path: Path, mode: str) -> dict[str, Any]:
    return {"mcpServers": {
        "bad": {"command": PY, "args": [HOSTILE, mode]},
        "raw": {"command": PY, "args": [RAW, str(tmp_path / "raw.log")]},
    }}


@pytest.fixture(params=["listing"])
async def gateway(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Gateway]:
    servers = load_config(_config(tmp_path, request.param))
    async with cm.InProcessExecutor() as executor, Gateway(
        servers, executor=executor, startup_timeout=20, limits=cm.Limits(timeout=20)
    ) as gateway:
        yield gateway


async def test_listing_entries_no_tool_can_be_made_of_are_left_out_not_the_upstream(
    gateway: Gateway,
) -> None:
    """One entry the MCP schema refuses (no ``inputSchema``, a number for a name) failed
    the SDK's whole ``tools/list``, and one codemode refuses (a name listed twice, a
    300-character name) failed the registration: the upstream stayed down, reconnecting
    forever, all its tools gone. Now each such entry is left out, with why."""
    bad, raw = gateway.status()
    assert (bad.state, bad.error, raw.state) == ("up", None, "up")
    assert bad.tools == 3  # fine, surrogate, latin1
    skipped = "\n".join(bad.skipped)
    for said in ("fine: listed more than once (the first entry is registered)",
                 "no_schema: inputSchema: Field required (the MCP schema refuses it)",
                 "entry 3: name: Input should be a valid string",
                 "text_schema: inputSchema: Input should be a valid dictionary",
                 "array_root: inputSchema.type: Input should be 'object'",
                 "xxxxx: name is longer than 128 characters"):
        assert said in skipped
    assert len(bad.skipped) == 6
    run = await gateway.mode.run("[await tools.bad.fine(), await tools.raw.ok()]")
    assert run.ok, run.error
    assert run.value == ["fine", "ok: fine"]


@pytest.mark.parametrize("gateway", ["text"], indirect=True)
@pytest.mark.parametrize(("tool", "text"), [
    ("surrogate", "cut \ufffd here"),  # a JSON "\ud83d": the SDK's parser dropped the line
    ("latin1", "caf\ufffd"),  # not UTF-8: the SDK's strict decoding ended its reader
])
async def test_text_the_sdk_cannot_read_reaches_the_script_replaced(
    gateway: Gateway, tool: str, text: str
) -> None:
    """The call waited for the run's timeout (the answer was dropped, or the reader died
    and took the connection with it); now the script gets the text, with U+FFFD for
    what is no text, and the connection keeps serving."""
    run = await gateway.mode.run(f"[await tools.bad.{tool}(), await tools.bad.fine()]")
    assert run.ok, run.error
    assert run.value == [text, "fine"]
    assert [s.restarts for s in gateway.status()] == [0, 0]


async def test_tools_list_pages_that_loop_are_reported(tmp_path: Path) -> None:
    """A ``nextCursor`` that comes back again was followed until the startup timeout (the
    listing growing meanwhile): now the upstream fails at once, saying so."""
    servers = load_config(_config(tmp_path, "loop"))
    async with cm.InProcessExecutor() as executor, Gateway(
        servers, executor=executor, startup_timeout=20
    ) as looping:
        bad, raw = looping.status()
        assert bad.state == "down"
        assert bad.error == "McpListingError: tools/list pages loop (cursor 'again' came twice)"
        assert raw.state == "up"


def test_serve_startup_names_the_listed_tools_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "upstreams.json"
    config.write_text(json.dumps({"mcpServers": {"bad": {
        "command": sys.executable, "args": [HOSTILE, "listing"]}}}), encoding="utf-8")
    assert main(["serve", "--config", str(config), "--executor", "inprocess",
                 "--startup-timeout", "20", "--describe"]) == 0
    err = capsys.readouterr().err
    assert "codemode serve: upstream bad: up, 3 tools\n" in err
    assert ("codemode serve: upstream bad: left out no_schema: inputSchema: Field required"
            " (the MCP schema refuses it)\n") in err
    assert err.count("upstream bad: left out ") == 6
    assert "Traceback" not in err
