"""MCP from Python: ``async with codemode.mcp.connect(config) as gateway: ...``.

``connect`` starts every upstream MCP server of a config (the ``mcpServers`` file MCP
clients use, a path or a dict) and yields a ``Gateway``: its ``registry`` holds their tools
under their names as namespaces, ``mode`` runs scripts over them, no ``ClientSession`` to
manage. ``GatewayServer`` with ``serve_stdio``/``serve_http`` is ``codemode serve``. See
docs/serve.md.
"""

from __future__ import annotations

from .integrations.gateway import Gateway as Gateway
from .integrations.gateway import ServerConfig as ServerConfig
from .integrations.gateway import UpstreamStatus as UpstreamStatus
from .integrations.gateway import connect as connect
from .integrations.gateway import load_config as load_config
from .integrations.server import GatewayServer as GatewayServer
from .integrations.server import serve_http as serve_http
from .integrations.server import serve_stdio as serve_stdio

__all__ = [
    "Gateway",
    "GatewayServer",
    "ServerConfig",
    "UpstreamStatus",
    "connect",
    "load_config",
    "serve_http",
    "serve_stdio",
]
