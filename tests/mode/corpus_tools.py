"""Tools registered from the corpus's published listings, answered by plain functions.

The corpus rows run the same handlers in the sandbox (through these registrations, so
every call is validated against the server's own schema) and in CPython (called
directly); a wire name the SDK respells (``search-problems``) maps to the function of
its Python spelling.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tool_corpus import corpus_or_skip

import codemode as cm

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping


def listings(files: Mapping[str, Iterable[str]]) -> dict[str, dict[str, Any]]:
    """Wire name → its listing (the first of that name in its file), for the names
    wanted from each corpus file."""
    folder = corpus_or_skip()
    found: dict[str, dict[str, Any]] = {}
    for file, names in files.items():
        wanted = set(names)
        for item in json.loads((folder / file).read_text(encoding="utf-8")):
            if item["name"] in wanted and item["name"] not in found:
                found[item["name"]] = item
    return found


def registry(specs: Mapping[str, Mapping[str, Any]],
             functions: Mapping[str, Callable[..., Any]]) -> cm.ToolRegistry:
    """Each listing registered with its schema; ``functions`` (by Python spelling)
    answer the calls."""
    reg = cm.ToolRegistry()
    for name, spec in specs.items():
        handler = functions[name.replace("-", "_")]

        def execute(args: Any, ctx: cm.ExecContext, fn: Callable[..., Any] = handler) -> Any:
            return fn(**args)
        reg.register(cm.define_tool(name=name, description=spec["description"] or name,
                                    parameters=spec["inputSchema"], execute=execute))
    return reg
