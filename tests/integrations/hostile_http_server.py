"""An MCP server over streamable HTTP (plain JSON-RPC on the standard library's HTTP
server, no SDK) whose answers no upstream should send: ``python hostile_http_server.py``
(it binds a free port of 127.0.0.1 and prints it as its first line).

Tools: ``fine`` (a JSON answer, ``ok``), ``sse_values``/``json_values`` (a result holding
``n`` empty objects, as an SSE event or a JSON body), ``sse_commas`` (a text of ``n``
comma-separated fields: one value, many commas), ``endless`` (a JSON body that never
ends), ``gzip`` (a gzip-compressed JSON answer, though identity was asked for),
``end_session`` (answers, then ends the caller's session: its next request gets 404, as
MCP says, and a client must initialize again), ``client_info`` (the ``clientInfo`` of the
caller's ``initialize``, as JSON).
"""

from __future__ import annotations

import gzip
import itertools
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOOLS = ["fine", "sse_values", "json_values", "sse_commas", "endless", "gzip", "end_session",
         "client_info"]
SESSIONS: dict[str, Any] = {}
"""The live sessions (``initialize`` starts one: ``s1``, ``s2`` ...) and their clientInfo."""
_NUMBERS = itertools.count(1)


def _result(name: str, n: int, session: str | None) -> dict[str, Any]:
    if name == "client_info":
        return {"content": [{"type": "text", "text": json.dumps(SESSIONS.get(session or ""))}]}
    if name.endswith("_values"):
        return {"content": [{"type": "text", "text": "ok"}], "many": [{}] * n}
    if name == "sse_commas":
        return {"content": [{"type": "text", "text": ",".join(["a"] * n)}]}
    return {"content": [{"type": "text", "text": "ok"}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # each body ends when the connection closes

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", kind: str = "application/json",
              extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self._send(405)

    def do_DELETE(self) -> None:
        self._send(200)

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, request_id = message.get("method"), message.get("id")
        session = self.headers.get("Mcp-Session-Id")
        if session is not None and session not in SESSIONS:
            self._send(404)
            return
        if request_id is None:
            self._send(202)
            return
        if method == "initialize":
            session = f"s{next(_NUMBERS)}"
            SESSIONS[session] = message["params"].get("clientInfo")
            result: dict[str, Any] = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "hostile", "version": "0"}}
            self._send(200, json.dumps({"jsonrpc": "2.0", "id": request_id,
                                        "result": result}).encode(),
                       extra={"Mcp-Session-Id": session})
            return
        elif method == "tools/list":
            result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in TOOLS]}
        elif method == "tools/call":
            name = message["params"]["name"]
            n = int((message["params"].get("arguments") or {}).get("n", 0))
            if name == "end_session" and session is not None:
                del SESSIONS[session]
            if name == "endless":
                self._send(200)
                while True:
                    self.wfile.write(b" " * 65536)
            answer = json.dumps({"jsonrpc": "2.0", "id": request_id,
                                 "result": _result(name, n, session)}).encode()
            if name.startswith("sse_"):
                self._send(200, b"event: message\r\ndata: " + answer + b"\r\n\r\n",
                           kind="text/event-stream")
            elif name == "gzip":
                self._send(200, gzip.compress(answer), extra={"Content-Encoding": "gzip"})
            else:
                self._send(200, answer)
            return
        else:
            result = {}
        self._send(200, json.dumps({"jsonrpc": "2.0", "id": request_id,
                                    "result": result}).encode())


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
