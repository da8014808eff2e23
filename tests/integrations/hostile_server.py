"""An MCP server (plain JSON-RPC over stdio, no SDK) that answers the way broken servers
do: ``python hostile_server.py MODE``.

``listing``: a ``tools/list`` whose entries the MCP schema or codemode refuses next to
usable ones (a name listed twice, no ``inputSchema``, a number for a name, a schema that is
no object or has an array root, a 300-character name); ``loop``: ``tools/list`` pages whose
cursor repeats; ``text``: only the usable entries; ``lines``: ``long`` (a text result of
``n`` characters, one line), ``endless`` (a line that never ends), ``values`` (a result
holding ``n`` empty objects) and ``csv`` (a text of ``n`` comma-separated fields);
``fork PATH``: ``text``'s, with a child that holds its pipes and sleeps on after the
server exits (its pid written to PATH). Its tools answer
text the SDK's parser refuses (``surrogate``: a JSON ``"\\ud83d"``, as JavaScript servers
send a string cut inside a surrogate pair) or bytes that are no UTF-8 (``latin1``).
"""

from __future__ import annotations

import json
import os
import sys
import time

MODE = sys.argv[1]

_OBJECT = {"type": "object"}
LISTING = [
    {"name": "fine", "inputSchema": _OBJECT},
    {"name": "fine", "inputSchema": {"type": "object", "properties": {"x": {"type": "integer"}}}},
    {"name": "no_schema"},
    {"name": 5, "inputSchema": _OBJECT},
    {"name": "text_schema", "inputSchema": "string"},
    {"name": "array_root", "inputSchema": {"type": "array"}},
    {"name": "x" * 300, "inputSchema": _OBJECT},
    {"name": "surrogate", "inputSchema": _OBJECT},
    {"name": "latin1", "inputSchema": _OBJECT},
]


def _write(line: bytes) -> None:
    sys.stdout.buffer.write(line + b"\n")
    sys.stdout.buffer.flush()


def _send(message: dict[str, object]) -> None:
    _write(json.dumps(message).encode())


def _answer(request_id: object, text: bytes) -> None:
    """A text result whose JSON text is ``text`` as given (escapes, bytes)."""
    head = b'{"jsonrpc": "2.0", "id": ' + json.dumps(request_id).encode()
    _write(head + b', "result": {"content": [{"type": "text", "text": "' + text + b'"}]}}')


def main() -> None:
    if MODE == "fork":
        if (child := os.fork()) == 0:
            time.sleep(600)
            os._exit(0)
        with open(sys.argv[2], "w") as file:
            file.write(str(child))
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None or method is None:
            continue
        if method == "initialize":
            _send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "0"},
            }})
        elif method == "tools/list":
            usable = [LISTING[0], *LISTING[-2:]]
            page: dict[str, object] = {"tools": LISTING if MODE == "listing" else usable}
            if MODE == "loop":
                page = {"tools": LISTING[:1], "nextCursor": "again"}
            elif MODE == "lines":
                page = {"tools": [{"name": "long", "inputSchema": _OBJECT},
                                  {"name": "endless", "inputSchema": _OBJECT},
                                  {"name": "values", "inputSchema": _OBJECT},
                                  {"name": "csv", "inputSchema": _OBJECT}]}
            _send({"jsonrpc": "2.0", "id": request_id, "result": page})
        elif method == "tools/call":
            name = message["params"]["name"]
            if name == "surrogate":
                _answer(request_id, b"cut \\ud83d here")
            elif name == "latin1":
                _answer(request_id, "caf\u00e9".encode("latin-1"))
            elif name == "long":
                _answer(request_id, b"y" * int(message["params"]["arguments"]["n"]))
            elif name == "csv":  # one text value with a comma per field
                _send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [
                    {"type": "text", "text": ",".join(["a"] * int(
                        message["params"]["arguments"]["n"]))}]}})
            elif name == "values":
                _send({"jsonrpc": "2.0", "id": request_id, "result": {
                    "content": [{"type": "text", "text": "ok"}],
                    "many": [{}] * int(message["params"]["arguments"]["n"])}})
            elif name == "endless":
                while True:
                    sys.stdout.buffer.write(b"x" * 65536)
            else:
                _answer(request_id, name.encode())
        else:  # ping included
            _send({"jsonrpc": "2.0", "id": request_id, "result": {}})


if __name__ == "__main__":
    main()
