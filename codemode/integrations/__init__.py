"""Bridges between codemode and other systems, each in its own module.

``mcp`` imports an MCP server's tools into a registry (the client side). A server,
framework adapters and telemetry belong here too; they use only the public API of
``codemode.dispatch`` and ``codemode.mode``.
"""
