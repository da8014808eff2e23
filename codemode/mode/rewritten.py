"""The tree a rewritten script compiles from, made from the script's own tree when it can.

The dialect plan keeps every line where it was; its most common rewrite only appends a
line (``result`` after a script ending in ``result = {...}``, ``main()`` after an uncalled
``main``). Parsing the whole rewritten text again, and indexing its nodes again for the
policy, made such a 15-line script's ``check()`` 36% dearer than the same script ending
in ``{...}`` (issue #18). Only the appended lines are parsed here, moved to the lines they
hold in the text, and added to the script's tree and node index: the same tree, node for
node and position for position, as parsing the whole text (tests/mode/test_rewritten.py).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from codemode.sandbox.language.parsing import parse_tree
from codemode.sandbox.language.policy import index_nodes

if TYPE_CHECKING:
    from codemode.mode.dialects import ScriptPlan

__all__ = ["rewritten_tree"]

Kinds = dict[type, list[ast.AST]]


def rewritten_tree(script: str, tree: ast.Module, found: ScriptPlan
                   ) -> tuple[ast.Module, Kinds] | None:
    """(the tree of ``found.source``, its nodes by type) from ``tree``, parsed from
    ``script`` and read by the plan (``found``) and the preflight; None when only parsing
    ``found.source`` makes it (an edit inside the script's lines).

    The tree is ``tree`` itself, extended in place: the caller no longer needs it as the
    script's (compiling rewrites it anyway)."""
    if found.source is script:
        return tree, found.kinds
    start = found.appended
    source = found.source
    # Python ends a line at "\r" too; the tail's first line is counted in "\n" alone
    if start is None or "\r" in source:
        return None
    try:
        tail = parse_tree(source[start:])
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # parsing the whole text reports it as it always did
    shift = source.count("\n", 0, start)
    listed, _, indexed = index_nodes(tail)
    for node in listed:  # ``ast.increment_lineno``, over the nodes already listed (half the cost)
        line = getattr(node, "lineno", None)
        if line is not None:
            node.lineno = line + shift  # type: ignore[attr-defined]
            node.end_lineno += shift  # type: ignore[attr-defined]
    kinds = dict(found.kinds)
    for kind, nodes in indexed.items():
        if kind is not ast.Module:
            kinds[kind] = [*kinds.get(kind, ()), *nodes]
    tree.body.extend(tail.body)
    return tree, kinds
