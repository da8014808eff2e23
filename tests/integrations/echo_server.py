"""An MCP server (plain JSON-RPC over stdio, no SDK) that lists the tools of a JSON file
(``python echo_server.py TOOLS.json``: a list of ``{name, description, inputSchema}``) and
answers each call with the name and arguments it received, as JSON text: real servers'
schemas, served over a real transport, with what the server was sent visible."""

from __future__ import annotations

import json
import sys


def _send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        tools = json.load(f)
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            continue
        if method == "initialize":
            result: dict[str, object] = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "echo", "version": "0"}}
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            said = {"tool": message["params"]["name"],
                    "args": message["params"].get("arguments")}
            result = {"content": [{"type": "text", "text": json.dumps(said)}]}
        else:
            result = {}
        _send({"jsonrpc": "2.0", "id": request_id, "result": result})


if __name__ == "__main__":
    main()
