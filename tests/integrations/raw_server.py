"""An MCP server written as plain JSON-RPC over stdio (no SDK), answering the way real,
hand-written servers do: ``-32000`` for its own errors, ``-32601`` for ``ping`` (a method
it does not implement), results the MCP schema refuses, non-JSON lines on stdout.

Run: ``python raw_server.py LOG``; it appends ``initialize`` / ``ping`` / ``call NAME`` to
LOG, one line each (``initialize`` with the process id; also ``setLevel LEVEL`` and
``cancelled ID``), so a test can see how often the gateway connected and pinged.
"""

from __future__ import annotations

import json
import os
import sys

LOG = sys.argv[1]

TOOLS = ["ok", "fail", "die", "garbage", "not_a_list", "video", "progress", "long-running",
         "hang", "log", "refused", "data", "typed_text", "mute_error", "off_schema",
         "regress"]
_N = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
_OUTPUT = {"typed_text": {"outputSchema": _N}, "off_schema": {"outputSchema": _N}}
"""Tools listed with an output schema (``typed_text`` answers text only, which MCP does
not allow; ``off_schema`` structured content its schema refuses)."""


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
    elif name in ("progress", "long-running"):
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        if token is not None:
            for done, message in ((1, "half way"), (2, None)):
                note: dict[str, object] = {"progressToken": token, "progress": done, "total": 2}
                if message:
                    note["message"] = message
                _send({"jsonrpc": "2.0", "method": "notifications/progress", "params": note})
        _result(request_id, _text("progressed"))
    elif name == "regress":  # progress that goes back (MCP: it increases with each)
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        for done in (1, 3, 2, 3, 5):
            if token is not None:
                _send({"jsonrpc": "2.0", "method": "notifications/progress",
                       "params": {"progressToken": token, "progress": done, "total": 5}})
        _result(request_id, _text("regressed"))
    elif name == "hang":  # never answers (a notifications/cancelled is logged)
        pass
    elif name == "log":
        for level in ("debug", "info", "warning", "error"):
            _send({"jsonrpc": "2.0", "method": "notifications/message", "params": {
                "level": level, "logger": "raw-logger", "data": f"{level} from raw"}})
        _result(request_id, _text("logged"))
    elif name == "refused":  # a tool error with details as data (an SDK server sends one text)
        _result(request_id, {"isError": True, "structuredContent": {"code": 429, "retryAfter": 30},
                             "content": [{"type": "text", "text": "quota exceeded"},
                                         {"type": "text", "text": "retry after 30 s"}]})
    elif name == "mute_error":  # an error result with no content at all
        _result(request_id, {"isError": True, "content": []})
    elif name == "off_schema":
        _result(request_id, {"structuredContent": {"n": "many"},
                             "content": [{"type": "text", "text": "{\"n\": \"many\"}"}]})
    elif name == "data":  # structured content without an output schema (MCP allows it)
        _result(request_id, {"structuredContent": {"n": 1},
                             "content": [{"type": "text", "text": "n is 1"}]})
    else:
        _result(request_id, _text(f"{name}: fine"))


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "notifications/cancelled":
            _log(f"cancelled {message['params'].get('requestId')}")
            continue
        if request_id is None or method is None:
            continue  # a notification, or a response to nothing we asked
        if method == "initialize":
            _log(f"initialize {os.getpid()}")
            _result(request_id, {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "raw", "version": "0"},
            })
        elif method == "tools/list":
            _result(request_id, {"tools": [
                {"name": name, "inputSchema": {"type": "object"}, **_OUTPUT.get(name, {})}
                for name in TOOLS]})
        elif method == "tools/call":
            _call(request_id, message["params"])
        elif method == "logging/setLevel":
            _log(f"setLevel {message['params']['level']}")
            _result(request_id, {})
        else:  # ping included: this server does not implement it
            if method == "ping":
                _log("ping")
            _send({"jsonrpc": "2.0", "id": request_id,
                   "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
