"""What codemode says it is to MCP peers: ``serverInfo`` to clients, ``clientInfo`` to
upstreams (MCP requires both; peers log and show them)."""

from __future__ import annotations

__all__ = ["NAME", "installed_version"]

NAME = "codemode"
"""The implementation name in ``serverInfo`` and ``clientInfo``."""


def installed_version() -> str:
    """codemode's version as installed (``0+unknown`` for a checkout used uninstalled)."""
    from importlib import metadata

    try:
        return metadata.version("codemode")
    except metadata.PackageNotFoundError:
        return "0+unknown"
