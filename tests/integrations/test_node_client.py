"""The TypeScript SDK's ``Client`` against ``codemode serve``, over stdio and over HTTP.

``node/ts_client.cjs`` (the official ``@modelcontextprotocol/sdk``, pinned in ``.ci/node``)
initializes, lists the tools, asks for debug logs, runs a script that calls upstream tools
(progress and a log message on the way), one that fails, and one it cancels at its first
progress, then prints what it saw as JSON. The upstreams are ``server-everything`` (stdio;
its streamable HTTP mode behind the HTTP serve) and ``server-memory``, so the cancelled
run's last call would leave a trace there, and ``node/changing_server.cjs`` (the SDK's
``McpServer``), whose ``grow`` tool adds a tool.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from tests.integrations.checkout import ENV
from tests.integrations.node_peers import (
    CHANGING,
    CLIENT,
    NODE_MODULES,
    everything_http,
    node_or_skip,
    peer,
)
from tests.integrations.served_http import served_http

if TYPE_CHECKING:
    from pathlib import Path

SCRIPT = """\
print("before")
done = await tools.everything.trigger_long_running_operation(duration=0.4, steps=2)
await tools.everything.toggle_simulated_logging()
await tools.everything.toggle_simulated_logging()
print("after")
{"op": done, "sum": await tools.everything.get_sum(a=1, b=2)}"""
FAILING = ('await tools.memory.add_observations(\n'
           '    observations=[{"entityName": "Nobody", "contents": ["x"]}])')
CANCELLED = """\
await tools.everything.trigger_long_running_operation(duration=1, steps=2)
await tools.memory.create_entities(
    entities=[{"name": "late", "entityType": "t", "observations": []}])
"not cancelled\""""
AFTER = """\
import asyncio
await asyncio.sleep(1.5)  # the cancelled script would have made "late" by now
await tools.memory.read_graph()"""


def _config(tmp_path: Path, everything: dict[str, Any]) -> str:
    config = tmp_path / "upstreams.json"
    config.write_text(json.dumps({"mcpServers": {
        "everything": everything,
        "changing": {"command": node_or_skip(), "args": [CHANGING, str(NODE_MODULES)]},
        "memory": {"command": peer("mcp-server-memory"),
                   "env": {"MEMORY_FILE_PATH": str(tmp_path / "graph.jsonl")}},
    }}), encoding="utf-8")
    return str(config)


def _client(node: str, spec: dict[str, Any], stderr: Path) -> dict[str, Any]:
    spec = {"nodeModules": str(NODE_MODULES), "script": SCRIPT, "failing": FAILING,
            "cancelled": CANCELLED, "after": AFTER, "grow": "await tools.changing.grow()", **spec}
    with stderr.open("w", encoding="utf-8") as err:
        done = subprocess.run([node, CLIENT, json.dumps(spec)], stdout=subprocess.PIPE,
                              stderr=err, text=True, timeout=90, check=False)
    seen: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == 0 and "crashed" not in seen, seen
    return seen


def _stdio(tmp_path: Path, node: str) -> dict[str, Any]:
    everything = {"command": peer("mcp-server-everything"), "args": ["stdio"]}
    spec = {"transport": "stdio", "command": sys.executable,
            "args": ["-m", "codemode", "serve", "--config", _config(tmp_path, everything)],
            "env": {**ENV, "PATH": os.environ["PATH"]}}
    return _client(node, spec, tmp_path / "client.stderr")


async def _http(tmp_path: Path, node: str) -> dict[str, Any]:
    with ExitStack() as stack:
        everything = {"url": stack.enter_context(everything_http())}
        async with served_http(
                [sys.executable, "-m", "codemode", "serve", "--config",
                 _config(tmp_path, everything), "--transport", "http", "--port", "0"],
                cwd=tmp_path, env={**os.environ, **ENV, "CODEMODE_SERVE_TOKEN": "secret"},
                errlog=tmp_path / "serve.stderr") as url:
            spec = {"transport": "http", "url": url, "token": "secret"}
            return _client(node, spec, tmp_path / "client.stderr")


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_typescript_client_against_serve(transport: str, tmp_path: Path) -> None:
    """One session per transport (a ``serve`` and its upstreams cost ~2 s of CPU to start),
    then what the client saw, checked aspect by aspect below."""
    node = node_or_skip()
    seen = _stdio(tmp_path, node) if transport == "stdio" else anyio.run(_http, tmp_path, node)
    seen["transport"] = transport
    seen["stderr"] = "".join(p.read_text(encoding="utf-8") for p in tmp_path.glob("*.stderr"))
    _it_initializes_and_lists_the_code_tools(seen)
    _a_run_answers_with_its_value_output_and_progress(seen)
    _an_upstream_log_message_reaches_the_client(seen)
    _a_failed_nested_call_is_an_error_result(seen)
    _a_cancelled_run_stops_and_the_session_serves_on(seen)
    _an_upstreams_new_tool_is_announced_to_the_client(seen)


def _it_initializes_and_lists_the_code_tools(seen: dict[str, Any]) -> None:
    assert seen["protocolVersion"] == "2025-11-25"  # the TypeScript SDK's newest
    assert seen["server"]["name"] == "codemode"
    assert seen["capabilities"] == {"logging": {}, "tools": {"listChanged": True}}
    assert seen["tools"] == ["describe_tools", "run_code", "search_tools"]
    assert seen["runCodeSchema"]["required"] == ["code"]
    assert "Traceback" not in seen["stderr"]


def _a_run_answers_with_its_value_output_and_progress(seen: dict[str, Any]) -> None:
    run = seen["run"]
    assert not run["isError"] and run["kinds"] == ["text"]
    value = run["text"].split("\n")[0].removeprefix("value: ")
    assert json.loads(value) == {
        "op": "Long running operation completed. Duration: 0.4 seconds, Steps: 2.",
        "sum": "The sum of 1 and 2 is 3."}
    assert "\noutput:\nbefore\nafter\n" in run["text"]
    progress = run["progress"]  # as serve sent them, all before its answer (MCP)
    assert run["afterAnswer"] == 0
    assert [p["progress"] for p in progress] == list(range(1, len(progress) + 1))
    assert [p["message"].split(" ok in ")[0] for p in progress] == [
        "output: before\n",
        "call 1: everything.trigger_long_running_operation started",
        "call 1: everything.trigger_long_running_operation reports 1/2",
        "call 1: everything.trigger_long_running_operation reports 2/2",
        "call 1: everything.trigger_long_running_operation",
        "call 2: everything.toggle_simulated_logging started",
        "call 2: everything.toggle_simulated_logging",
        "call 3: everything.toggle_simulated_logging started",
        "call 3: everything.toggle_simulated_logging",
        "output: after\n",
        "call 4: everything.get_sum started",
        "call 4: everything.get_sum",
    ]


def _an_upstream_log_message_reaches_the_client(seen: dict[str, Any]) -> None:
    """``logging/setLevel debug`` went through to server-everything, whose message (a
    random level, the level in its text) came back with the upstream as logger."""
    [log] = seen["logs"]
    assert log["logger"] == "everything"
    assert log["data"].lower().startswith(log["level"])


def _a_failed_nested_call_is_an_error_result(seen: dict[str, Any]) -> None:
    failing = seen["failing"]
    assert failing["isError"]
    assert failing["text"].startswith("error: ToolCallError at line 1: memory.add_observations:"
                                      " Entity with name Nobody not found\n")


def _a_cancelled_run_stops_and_the_session_serves_on(seen: dict[str, Any]) -> None:
    """The client aborted at the first progress: the run stopped before its second call
    (no ``late`` entity in the graph), and the next run on the same session worked. Over
    stdio a cancelled request gets no answer, as MCP says; over HTTP serve answers it
    ``-32800`` (docs/serve.md: the SDK's transport ends a POST's stream only so)."""
    cancelled = seen["cancelled"]
    assert cancelled["rejected"] and "the user pressed stop" in cancelled["error"]
    assert [p["message"] for p in cancelled["progress"]] == [
        "call 1: everything.trigger_long_running_operation started"]
    assert seen["cancelNotices"] == [{"sameId": True, "reason": "the user pressed stop"}]
    after = seen["after"]
    assert not after["isError"]
    assert after["text"].split("\n")[0] == 'value: {"entities": [], "relations": []}'
    answers = seen["answersToCancelled"]
    if seen["transport"] == "stdio":
        assert answers == []
    else:
        assert [a["error"]["code"] for a in answers] == [-32800]


def _an_upstreams_new_tool_is_announced_to_the_client(seen: dict[str, Any]) -> None:
    """The TypeScript upstream added a tool and said ``tools/list_changed``; the gateway
    re-listed it and told the client, whose next ``tools/list`` has the tool in the
    ``run_code`` SDK."""
    assert seen["grow"]["text"].startswith('value: "extra_1"')
    changed = seen["listChanged"]
    assert changed["count"] >= 1
    assert (changed["before"], changed["after"]) == ([], ["extra_1: Added tool extra_1."])
