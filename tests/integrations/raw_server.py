"""An MCP server written as plain JSON-RPC over stdio (no SDK), answering the way real,
hand-written servers do: ``-32000`` for its own errors, ``-32601`` for ``ping`` (a method
it does not implement), results the MCP schema refuses, non-JSON lines on stdout.

Run: ``python raw_server.py LOG``; it appends ``initialize`` / ``ping`` / ``call NAME`` to
LOG, one line each (``initialize`` with the process id), so a test can see how often the
gateway connected and pinged.
"""

from __future__ import annotations

import json
import os
import sys

LOG = sys.argv[1]

TOOLS = ["ok", "fail", "die", "garbage", "not_a_list", "video", "progress"]


def _log(line: str) -> None:
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(line + "\n")


def _send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _result(request_id: object, result: dict[str, object]) -> None:
    _send({"jsonrpc": "2.0", "id": request_id, "result": result})


def _text(text: str) -> dict[str, object]:
    return {"content": [{"type": "text", "text": text}]}


def _call(request_id: object, params: dict[str, object]) -> None:
    name = params["name"]
    _log(f"call {name}")
    if name == "fail":  # the JSON-RPC "server error" code, which the SDK also uses
        _send({"jsonrpc": "2.0", "id": request_id,
               "error": {"code": -32000, "message": "the database is locked"}})
    elif name == "die":
        os._exit(3)
    elif name == "garbage":
        sys.stdout.write("debug: this line is not JSON-RPC\n")
        _result(request_id, _text("after the stray line"))
    elif name == "not_a_list":
        _result(request_id, {"content": "plain text where a list belongs"})
    elif name == "video":
        _result(request_id, {"content": [{"type": "text", "text": "a"},
                                         {"type": "video", "url": "file:///v.mp4"}]})
    elif name == "progress":
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is not None:
            for done, message in ((1, "half way"), (2, None)):
                note: dict[str, object] = {"progressToken": token, "progress": done, "total": 2}
                if message:
                    note["message"] = message
                _send({"jsonrpc": "2.0", "method": "notifications/progress", "params": note})
        _result(request_id, _text("progressed"))
    else:
        _result(request_id, _text(f"{name}: fine"))


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None or method is None:
            continue  # a notification, or a response to nothing we asked
        if method == "initialize":
            _log(f"initialize {os.getpid()}")
            _result(request_id, {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "0"},
            })
        elif method == "tools/list":
            _result(request_id, {"tools": [
                {"name": name, "inputSchema": {"type": "object"}} for name in TOOLS]})
        elif method == "tools/call":
            _call(request_id, message["params"])
        else:  # ping included: this server does not implement it
            if method == "ping":
                _log("ping")
            _send({"jsonrpc": "2.0", "id": request_id,
                   "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
