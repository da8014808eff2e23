"""A script's own decorators whose wrapper calls the function it decorates.

``def timed(fn): def wrapper(*a, **k): ... r = fn(*a, **k) ... return wrapper`` and the
factory form ``def retry(n): def deco(fn): @functools.wraps(fn) def wrapper(*a, **k): ...
return fn(*a, **k) ... return wrapper return deco``: when a function they decorate calls
tools, the dialects make the wrapper an ``async def`` that awaits ``fn(...)`` (and every
function the decorator decorates async, its calls awaited). That is sound only for the
shapes read here: the decorator is used as a decorator only, the wrapper only returned,
and ``fn`` only called in the wrapper's own body (or handed to ``wraps``, or asked its
name), so no caller ever holds the wrapper's coroutine un-awaited.
"""

from __future__ import annotations

import ast
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from codemode.sandbox.language.policy import suspends

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ["WrappingDecorator", "wrapping_decorators"]

_NAMES: Final = frozenset({"__name__", "__qualname__", "__doc__", "__module__"})
"""What a wrapper may read of ``fn`` besides calling it."""
_BETWEEN: Final = (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                   ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)
"""What may not stand between the wrapper and its call of ``fn``: an ``await`` there
would be in another scope (or make a generator expression an async one)."""


@dataclass(frozen=True)
class WrappingDecorator:
    """A top-level decorator ``name`` (``@name``, or ``@name(...)`` when ``factory``)
    whose ``wrapper`` calls the decorated function at ``calls``; ``targets`` are the
    functions it decorates."""

    name: str
    factory: bool
    wrapper: ast.FunctionDef
    calls: tuple[ast.Call, ...]
    targets: tuple[ast.FunctionDef, ...]


def wrapping_decorators(tree: ast.Module, parents: Mapping[ast.AST, ast.AST],
                        loads: Mapping[str, list[ast.Name]]) -> dict[str, WrappingDecorator]:
    """The script's decorators of the shapes above, by name (``loads``: each name's
    loads, ``parents``: node → its parent)."""
    defined = Counter(node.name for node in ast.walk(tree)
                      if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))
    found: dict[str, WrappingDecorator] = {}
    for stmt in tree.body:
        if not isinstance(stmt, ast.FunctionDef) or stmt.decorator_list or (
                defined[stmt.name] != 1):
            continue
        shape = _wrapper_of(stmt, parents)
        factory = False
        if shape is None:
            inner = _returned_def(stmt)
            shape = None if inner is None else _wrapper_of(inner, parents)
            factory = True
        if shape is None:
            continue
        targets = _targets(stmt.name, factory, parents, loads)
        if targets is not None:
            found[stmt.name] = WrappingDecorator(stmt.name, factory, *shape, targets)
    return found


def _returned_def(holder: ast.FunctionDef) -> ast.FunctionDef | None:
    """The plain ``def`` of ``holder``'s own body that ``holder`` ends by returning, its
    name (local to ``holder``) bound and read nowhere else in ``holder``."""
    last = holder.body[-1]
    if not (isinstance(last, ast.Return) and isinstance(last.value, ast.Name)):
        return None
    name = last.value.id
    inner = next((stmt for stmt in holder.body if isinstance(stmt, ast.FunctionDef)
                  and stmt.name == name), None)
    if inner is None:
        return None
    for node in ast.walk(holder):
        if (isinstance(node, ast.Name) and node.id == name and node is not last.value) or (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and node.name == name and node is not inner) or (
                isinstance(node, ast.arg | ast.alias | ast.Global | ast.Nonlocal)
                and name in _bound(node)):
            return None
    return inner


def _bound(node: ast.arg | ast.alias | ast.Global | ast.Nonlocal) -> list[str]:
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [(node.asname or node.name).split(".")[0]]
    return node.names


def _wrapper_of(holder: ast.FunctionDef, parents: Mapping[ast.AST, ast.AST]
                ) -> tuple[ast.FunctionDef, tuple[ast.Call, ...]] | None:
    """(the wrapper, its calls of the decorated function) when ``holder`` takes one
    parameter, the function, and returns a ``def`` of its own body that calls it."""
    args = holder.args
    if len(args.posonlyargs) + len(args.args) != 1 or args.vararg or args.kwarg or (
            args.kwonlyargs):
        return None
    wrapper = _returned_def(holder)
    if wrapper is None or suspends(wrapper.body):
        return None
    param = (*args.posonlyargs, *args.args)[0].arg
    calls: list[ast.Call] = []
    for node in ast.walk(holder):
        if isinstance(node, ast.Global | ast.Nonlocal) and param in node.names:
            return None
        if isinstance(node, ast.arg) and node.arg == param and node is not (
                *args.posonlyargs, *args.args)[0]:
            return None  # a parameter of a nested function shadows it
        if not (isinstance(node, ast.Name) and node.id == param):
            continue
        parent = parents.get(node)
        if not isinstance(node.ctx, ast.Load):
            return None
        if isinstance(parent, ast.Call) and parent.func is node and _directly_in(
                parent, wrapper, parents):
            calls.append(parent)
        elif not (isinstance(parent, ast.Attribute) and parent.attr in _NAMES) and not (
                _wraps_argument(node, wrapper, parents)):
            return None
    return (wrapper, tuple(calls)) if calls else None


def _directly_in(node: ast.AST, function: ast.FunctionDef,
                 parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Whether ``node`` is in ``function``'s own body, no nested scope or comprehension
    between."""
    parent = parents.get(node)
    while parent is not None and parent is not function:
        if isinstance(parent, _BETWEEN):
            return False
        parent = parents.get(parent)
    return parent is function and node not in function.decorator_list


def _wraps_argument(node: ast.Name, wrapper: ast.FunctionDef,
                    parents: Mapping[ast.AST, ast.AST]) -> bool:
    """``@wraps(fn)`` / ``@functools.wraps(fn)`` over the wrapper, ``node`` its argument."""
    call = parents.get(node)
    if not (isinstance(call, ast.Call) and call in wrapper.decorator_list
            and call.args == [node] and not call.keywords):
        return False
    func = call.func
    return (isinstance(func, ast.Name) and func.id == "wraps") or (
        isinstance(func, ast.Attribute) and func.attr == "wraps"
        and isinstance(func.value, ast.Name) and func.value.id == "functools")


def _targets(name: str, factory: bool, parents: Mapping[ast.AST, ast.AST],
             loads: Mapping[str, list[ast.Name]]) -> tuple[ast.FunctionDef, ...] | None:
    """The plain ``def`` statements ``name`` decorates, when every read of ``name`` is
    one of their decorators (``@name``, or ``@name(...)`` for a factory); None else."""
    targets: list[ast.FunctionDef] = []
    for load in loads.get(name, ()):
        decorator: ast.AST = load
        if factory:
            decorator = parents.get(load)  # type: ignore[assignment]
            if not (isinstance(decorator, ast.Call) and decorator.func is load):
                return None
        target = parents.get(decorator)
        if not (isinstance(target, ast.FunctionDef) and decorator in target.decorator_list):
            return None
        targets.append(target)
    return tuple(targets) or None

