"""The tree a rewritten script compiles from, made from the script's own tree when it can.

The dialect plan keeps every line where it was; its most common rewrite only appends a
line (``result`` after a script ending in ``result = {...}``, ``main()`` after an uncalled
``main``). Parsing the whole rewritten text again, and indexing its nodes again for the
policy, made such a 15-line script's ``check()`` 36% dearer than the same script ending
in ``{...}`` (issue #18). Only the appended lines are parsed here, moved to the lines they
hold in the text, and added to the script's tree and node index: the same tree, node for
node and position for position, as parsing the whole text (tests/mode/test_rewritten.py).

The next most common rewrite puts a tool call made without ``await`` in ``(await ...)``
(bare tool names, ``_sync`` aliases): parsing the text again was a sixth of such a 15-line
script's ``check()``. When those wraps are all the plan changed within the script's
lines, their ``Await`` nodes go into the script's tree here and the columns after each
inserted text move as the text's did: again the tree parsing the text gives.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Final

from codemode.sandbox.language.parsing import parse_tree
from codemode.sandbox.language.policy import index_nodes

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from codemode.mode.dialects import ScriptPlan

__all__ = ["rewritten_tree"]

Kinds = dict[type, list[ast.AST]]


def rewritten_tree(script: str, tree: ast.Module, found: ScriptPlan
                   ) -> tuple[ast.Module, Kinds] | None:
    """(the tree of ``found.source``, its nodes by type) from ``tree``, parsed from
    ``script`` and read by the plan (``found``) and the preflight; None when only parsing
    ``found.source`` makes it (an edit inside the script's lines other than ``(await
    ...)``).

    The tree is ``tree`` itself, changed in place: the caller no longer needs it as the
    script's (compiling rewrites it anyway)."""
    if found.source is script:
        return tree, found.kinds
    source = found.source
    # Python ends a line at "\r" too; the tail's first line is counted in "\n" alone
    if found.tree_edits is None or "\r" in source:
        return None
    start = found.appended
    tail = None
    if start is not None:
        try:
            tail = parse_tree(source[start:])
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None  # parsing the whole text reports it as it always did
    kinds = dict(found.kinds)
    awaits, asyncs = found.tree_edits
    if (awaits or asyncs) and not _edited(found.nodes, found.parents, awaits, asyncs, kinds):
        return None
    if tail is None or start is None:
        return tree, kinds
    shift = source.count("\n", 0, start)
    listed, _, indexed = index_nodes(tail)
    for node in listed:  # ``ast.increment_lineno``, over the nodes already listed (half the cost)
        line = getattr(node, "lineno", None)
        if line is not None:
            node.lineno = line + shift  # type: ignore[attr-defined]
            node.end_lineno += shift  # type: ignore[attr-defined]
    for kind, nodes in indexed.items():
        if kind is not ast.Module:
            kinds[kind] = [*kinds.get(kind, ()), *nodes]
    tree.body.extend(tail.body)
    return tree, kinds


_OPENER: Final = len("(await ")
"""Bytes ``(await `` moves what follows it on its line (AST columns count UTF-8 bytes)."""
_ASYNC: Final = len("async ")

_CLOSER, _OPENS, _PREFIX = 0, 1, 2
"""What a text inserted at a column is: ``)``, ``(await `` or ``async ``."""


def _edited(nodes: Sequence[ast.AST], parents: Mapping[ast.AST, ast.AST],
            wrapped: Sequence[ast.AST], asyncs: Sequence[ast.FunctionDef], kinds: Kinds,
            ) -> bool:
    """Put each of ``wrapped`` in an ``Await`` where it stands, make each of ``asyncs`` an
    ``AsyncFunctionDef``, and move every node's columns as the text's ``(await ``, ``)``
    and ``async `` moved them (the lines stay): the tree of the edited text, as its parse
    gives it (an ``Await`` starts after its parenthesis and ends with its value; an
    ``async def`` starts at ``async``). ``nodes``: the tree's nodes; ``parents``: node →
    its parent; ``kinds``: the index of the nodes by type, brought up to date. False
    when a wrapped node is no expression or not in its parent (the tree is then the
    script's no more: the caller parses the edited text).

    At a column where a text goes in, a node's start moves past an opener only when it is
    that wrapped node or within it (the outer opener comes first), past a closer always
    and past ``async `` never (only the ``def`` starts there); its end moves past a closer
    only when the wrapped node is within it."""
    lines: dict[int, list[tuple[int, int, int, ast.AST]]] = {}
    """line → (column, bytes inserted there, which text, the node it is for)."""
    exprs: list[ast.expr] = []
    for node in wrapped:
        if not isinstance(node, ast.expr) or node.end_lineno is None or (
                node.end_col_offset is None):
            return False
        exprs.append(node)
        lines.setdefault(node.lineno, []).append((node.col_offset, _OPENER, _OPENS, node))
        lines.setdefault(node.end_lineno, []).append((node.end_col_offset, 1, _CLOSER, node))
    for func in asyncs:
        lines.setdefault(func.lineno, []).append((func.col_offset, _ASYNC, _PREFIX, func))
    for node in nodes:
        line = getattr(node, "lineno", None)
        if line is None:
            continue
        here = lines.get(line)
        if here is not None:
            column = moved = node.col_offset  # type: ignore[attr-defined]
            for at, size, text, owner in here:
                if at < column or (at == column and (text == _CLOSER or (
                        text == _OPENS and _within(node, owner, parents)))):
                    moved += size
            node.col_offset = moved  # type: ignore[attr-defined]
        here = lines.get(node.end_lineno)  # type: ignore[attr-defined]
        if here is not None:
            column = moved = node.end_col_offset  # type: ignore[attr-defined]
            for at, size, text, owner in here:
                if at < column or (at == column and text == _CLOSER and node is not owner
                                   and _within(owner, node, parents)):
                    moved += size
            node.end_col_offset = moved  # type: ignore[attr-defined]
    made: list[ast.AST] = []
    for expr in exprs:
        awaited = ast.Await(expr)
        awaited.lineno = expr.lineno
        awaited.col_offset = expr.col_offset + 1 - _OPENER
        awaited.end_lineno = expr.end_lineno
        awaited.end_col_offset = expr.end_col_offset
        if not _put(parents, expr, awaited):
            return False  # the caller parses the text (this tree is left half edited)
        made.append(awaited)
    if made:
        kinds[ast.Await] = [*kinds.get(ast.Await, ()), *made]
    if asyncs:
        made = []
        for func in asyncs:
            new = _async_def(func)
            if not _put(parents, func, new):
                return False
            made.append(new)
        gone = {id(func) for func in asyncs}
        kept = [node for node in kinds.get(ast.FunctionDef, ()) if id(node) not in gone]
        if kept:
            kinds[ast.FunctionDef] = kept
        else:
            kinds.pop(ast.FunctionDef, None)
        kinds[ast.AsyncFunctionDef] = [*kinds.get(ast.AsyncFunctionDef, ()), *made]
    return True


def _async_def(func: ast.FunctionDef) -> ast.AsyncFunctionDef:
    """``func`` as an ``async def``: its fields, its location."""
    made = ast.AsyncFunctionDef(**{name: getattr(func, name) for name in func._fields})
    made.lineno = func.lineno
    made.col_offset = func.col_offset
    made.end_lineno = func.end_lineno
    made.end_col_offset = func.end_col_offset
    return made


def _put(parents: Mapping[ast.AST, ast.AST], node: ast.AST, new: ast.AST) -> bool:
    """Put ``new`` where ``node`` stands in its parent's fields; False if it is in none."""
    parent = parents.get(node)
    for name in () if parent is None else parent._fields:
        value = getattr(parent, name, None)
        if value is node:
            setattr(parent, name, new)
            return True
        if type(value) is list:
            for index, item in enumerate(value):
                if item is node:
                    value[index] = new
                    return True
    return False


def _within(node: ast.AST | None, owner: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """``node`` is ``owner`` or below it."""
    while node is not None:
        if node is owner:
            return True
        node = parents.get(node)
    return False
