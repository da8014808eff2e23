"""Scripts for differential tests: the string literals of existing test files that parse.

The policy, dialect and preflight tests hold hundreds of scripts (attacks, corner cases);
a test that checks one path against another (a faster walk against the plain one) runs
them all rather than a hand-picked few.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def script_literals(*files: str) -> list[str]:
    """Every non-empty string literal of ``files`` (paths under ``tests/``) that parses as
    a module, once each, in the order found."""
    found: dict[str, None] = {}
    for name in files:
        for node in ast.walk(ast.parse((TESTS / name).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value:
                try:
                    ast.parse(node.value)
                except (SyntaxError, ValueError):
                    continue
                found[node.value] = None
    return list(found)
