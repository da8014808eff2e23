"""``codemode serve``'s inputs and text: the config reader, the CLI's usage errors, the
help and the configs shown in docs/serve.md, the size budget, the search ranking, and
``codemode.mcp.connect`` (with a real mcp-server-time)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

import codemode as cm
import codemode.mcp
from codemode.cli import main
from codemode.cli.serve import serve_parser
from codemode.integrations.discovery import ToolIndex, estimate_tokens, tokenize
from codemode.integrations.gateway import Gateway, ServerConfig, load_config

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "serve.md").read_text(encoding="utf-8")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_reads_claude_cursor_and_vscode_shapes() -> None:
    servers = load_config({"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "docs": {"url": "https://example.com/mcp", "headers": {"X-Key": "k"}},
        "off": {"command": "x", "disabled": True},
    }})
    assert servers == (
        ServerConfig(name="time", command="uvx", args=("mcp-server-time",), env={"TZ": "UTC"}),
        ServerConfig(name="docs", url="https://example.com/mcp", headers={"X-Key": "k"}),
    )
    assert [s.transport for s in servers] == ["stdio", "http"]
    vscode = load_config({"servers": {"t": {"type": "stdio", "command": "uvx"}}})
    assert vscode == (ServerConfig(name="t", command="uvx"),)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ([], "must be a JSON object with 'mcpServers'"),
        ({"tools": {}}, "has no 'mcpServers'"),
        ({"mcpServers": []}, "must be an object of servers by name"),
        ({"mcpServers": {"a": {}}}, "needs exactly one of 'command' (stdio) or 'url' (http)"),
        ({"mcpServers": {"a": {"command": "x", "url": "http://h"}}}, "needs exactly one of"),
        ({"mcpServers": {"a": {"command": "x", "argz": []}}}, "unknown key(s) 'argz'"),
        ({"mcpServers": {"a": {"command": "x", "args": "-v"}}}, "'args' must be a list"),
        ({"mcpServers": {"a": {"command": "x", "env": {"N": 1}}}}, "'env' must be an object"),
        ({"mcpServers": {"a": {"url": "ftp://h"}}}, "must be an http:// or https:// URL"),
        ({"mcpServers": {"a": {"url": "http://h", "args": []}}}, "'args' belongs to a 'command'"),
        ({"mcpServers": {"a": {"command": "x", "type": "sse"}}}, "type 'sse' is not served"),
        ({"mcpServers": {"search": {"command": "x"}}}, "not a discovery tool's name"),
    ],
)
def test_bad_configs_name_the_entry_and_the_problem(config: Any, message: str) -> None:
    with pytest.raises(cm.GatewayConfigError) as caught:
        load_config(config)
    assert message in str(caught.value)


def test_config_file_errors_name_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "mcp.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(cm.GatewayConfigError, match=r"mcp\.json: not JSON"):
        load_config(broken)
    with pytest.raises(cm.GatewayConfigError, match="cannot read"):
        load_config(tmp_path / "missing.json")


def test_cli_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "mcp.json"
    bad.write_text(json.dumps({"mcpServers": {"git": {"args": []}}}), encoding="utf-8")
    assert main(["serve", "--config", str(bad)]) == 2
    assert f"invalid config: {bad}: mcpServers.git: needs exactly one of" in capsys.readouterr().err
    assert main(["serve", "--tools", "no_such_module_xyz:registry"]) == 3
    assert "cannot import module 'no_such_module_xyz'" in capsys.readouterr().err
    for argv, message in (
        (["serve"], "nothing to serve"),
        (["serve", "--tools", "m:o", "--token", "t"], "--token protects the HTTP transport"),
        (["serve", "--tools", "m:o", "--transport", "http", "--host", "0.0.0.0"],
         "is not loopback: give --token"),
    ):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
        assert message in capsys.readouterr().err


def test_help_in_the_docs_is_the_real_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    shown = DOC.split("## `codemode serve --help`\n\n```text\n", 1)[1].split("```", 1)[0]
    assert shown == serve_parser().format_help()


def test_every_config_in_the_docs_is_read() -> None:
    configs = [json.loads(b) for b in re.findall(r"^```json\n(.*?)^```", DOC, re.S | re.M)]
    assert len(configs) == 3
    upstreams, claude_and_cursor, vscode = configs
    assert [s.name for s in load_config(upstreams)] == ["time", "git", "fetch"]
    for client in (claude_and_cursor, vscode):
        (entry,) = load_config(client)
        assert entry.command == "codemode" and entry.args[0] == "serve"
        serve_parser().parse_args(list(entry.args[1:]))  # flags the CLI accepts


def _tool(name: str, description: str, **props: str) -> cm.Tool:
    async def run(args: Any) -> str:
        return name

    return cm.define_tool(
        name=name, description=description, execute=run,
        parameters={"type": "object", "properties": {k: {"type": "string", "description": v}
                                                      for k, v in props.items()}},
    )


def test_search_ranks_by_name_arguments_and_description() -> None:
    tools = [
        _tool("get_issue", "Get details of an issue in a GitHub repository.", owner="Owner"),
        _tool("list_pulls", "List pull requests of a repository.", state="open or closed"),
        _tool("weather_now", "Current weather for a city.", city="City name"),
        _tool("翻译", "将文本翻译成英文", text="要翻译的文本"),
    ]
    index = ToolIndex(t.spec for t in tools)
    assert [h.name for h in index.search("weather in a city")][:1] == ["weather_now"]
    assert [h.name for h in index.search("pull requests")][:1] == ["list_pulls"]
    assert [h.name for h in index.search("issue details")][:1] == ["get_issue"]
    assert [h.name for h in index.search("翻译文本")][:1] == ["翻译"]
    assert index.search("zebra") == []
    assert tokenize("getIssueComments") == ["get", "issue", "comment"]


async def test_description_switches_to_index_past_the_budget() -> None:
    registry = cm.ToolRegistry()
    for i in range(40):
        registry.register(_tool(f"tool_{i}", f"Does thing number {i} to a record.", key="k"))
    async with Gateway(registry=registry, executor=cm.InProcessExecutor()) as small:
        whole = small.run_code_description()
        assert "tool_39" in whole and "tools.search(" not in whole
        assert estimate_tokens(whole) <= 4000
    async with Gateway(registry=registry, executor=cm.InProcessExecutor(),
                       budget_tokens=900) as tight:
        index = tight.run_code_description()
        assert "tools.search(" in index and "search_tools" in index
        assert "- (top level) (40 tools): tool_0, tool_1, tool_10" in index
        assert estimate_tokens(index) <= 900
        run = await tight.mode.run("(await tools.search(query='thing number 7'))['matches'][0]")
        assert run.ok, run.error
        assert run.value["tool"] == "tool_7"


async def test_connect_runs_scripts_and_reports_a_failed_upstream(tmp_path: Path) -> None:
    time = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    config = {"mcpServers": {"time": time, "gone": {"command": str(tmp_path / "nothing")}}}
    with pytest.raises(ConnectionError, match=r"failed to start: gone: FileNotFoundError"):
        async with codemode.mcp.connect(config, executor=cm.InProcessExecutor()):
            pass
    del config["mcpServers"]["gone"]
    async with codemode.mcp.connect(config, executor=cm.InProcessExecutor()) as gateway:
        (status,) = gateway.status()
        assert (status.name, status.state, status.tools) == ("time", "up", 2)
        described = await gateway.mode.run("await tools.describe(names=['time.nope'])")
        assert described.error is not None
        assert "no such tool: 'time.nope'" in described.error.message


async def test_an_upstream_that_never_answers_is_reported_not_waited_for() -> None:
    # reads its stdin and never answers the handshake; exits when the gateway closes it
    hung = {"command": sys.executable, "args": ["-c", "import sys; sys.stdin.read()"]}
    with pytest.raises(ConnectionError, match=r"hung: did not start within 3 s"):
        async with codemode.mcp.connect({"mcpServers": {"hung": hung}}, startup_timeout=3,
                                        executor=cm.InProcessExecutor()):
            pass


async def test_an_upstream_that_hangs_past_startup_is_not_left_running(tmp_path: Path) -> None:
    # ignores its stdin closing: only the SDK's SIGTERM/SIGKILL escalation stops it; each
    # attempt (the gateway retries) appends its pid before Python starts
    pids = tmp_path / "pids"
    hung = {"command": "/bin/sh", "args": [
        "-c", f'echo $$ >> {pids}; exec "{sys.executable}" -c "import time; time.sleep(600)"']}
    with pytest.raises(ConnectionError, match=r"hung: did not start within 4 s"):
        async with codemode.mcp.connect({"mcpServers": {"hung": hung}}, startup_timeout=4,
                                        executor=cm.InProcessExecutor()):
            pass
    started = [int(line) for line in pids.read_text().split()]
    assert started
    for _ in range(200):  # a kill still in flight lands; a leaked one sleeps 600 s
        if not _running(started):
            break
        await anyio.sleep(0.05)
    assert _running(started) == []


def _running(pids: list[int]) -> list[int]:
    return [pid for pid in pids if Path(f"/proc/{pid}").exists()]


def test_describe_prints_the_run_code_description(capsys: pytest.CaptureFixture[str]) -> None:
    tools = f"{Path(__file__).resolve().parent / 'serve_tools.py'}:registry"
    assert main(["serve", "--tools", tools, "--executor", "inprocess", "--describe"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("Run a short async Python script in a sandbox")
    assert "shout: Upper-case a text." in captured.out
    assert "codemode serve: 3 tools; run_code description" in captured.err
