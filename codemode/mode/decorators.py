"""A script's own decorators whose wrapper calls the function it decorates.

``def timed(fn): def wrapper(*a, **k): ... r = fn(*a, **k) ... return wrapper`` and the
factory form ``def retry(n): def deco(fn): @functools.wraps(fn) def wrapper(*a, **k): ...
return fn(*a, **k) ... return wrapper return deco``, and a class used as one (``def
__init__(self, fn): self.fn = fn`` … ``def __call__(self, *a): return self.fn(*a)``, its
``__call__`` the wrapper; or ``def __call__(self, fn): def wrapper(...)`` … ``return
wrapper``, a factory ``@retry(3)``): when a function they decorate calls
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
from typing import TYPE_CHECKING, Final, cast

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
    held: str | None = None
    """For a class (``@Name`` makes an instance, ``wrapper`` its ``__call__``): the
    attribute its ``__init__`` keeps the function in. A decorated name may then be read
    for any other attribute (``status.calls``)."""


def wrapping_decorators(tree: ast.Module, parents: Mapping[ast.AST, ast.AST],
                        loads: Mapping[str, list[ast.Name]]) -> dict[str, WrappingDecorator]:
    """The script's decorators of the shapes above, by name (``loads``: each name's
    loads, ``parents``: node → its parent)."""
    defined = Counter(node.name for node in ast.walk(tree)
                      if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))
    found: dict[str, WrappingDecorator] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef) and defined[stmt.name] == 1:
            class_shape = _class_wrapper(stmt, parents)
            targets = None if class_shape is None else _targets(stmt.name, False, parents,
                                                                 loads)
            if class_shape is not None and targets is not None:
                wrapper, calls, held = class_shape
                found[stmt.name] = WrappingDecorator(stmt.name, False, wrapper, calls,
                                                     targets, held)
                continue
            shape = _class_factory(stmt, parents)
            targets = None if shape is None else _targets(stmt.name, True, parents, loads)
            if shape is not None and targets is not None:
                found[stmt.name] = WrappingDecorator(stmt.name, True, *shape, targets)
            continue
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


def _class_wrapper(cls: ast.ClassDef, parents: Mapping[ast.AST, ast.AST]
                   ) -> tuple[ast.FunctionDef, tuple[ast.Call, ...], str] | None:
    """(its ``__call__``, that method's calls of the function, the attribute holding it)
    for a class decorator: no base, keyword or decorator, ``def __init__(self, fn)``
    keeping ``fn`` in one attribute (``self.fn = fn``; ``fn`` otherwise only handed to
    ``update_wrapper(self, fn)`` or asked its name), a plain ``def __call__`` calling
    ``self.fn(...)`` in its own body, and that attribute read nowhere else, the instance
    never called from inside (``self(...)``)."""
    if cls.bases or cls.keywords or cls.decorator_list:
        return None
    methods = {stmt.name: stmt for stmt in cls.body
               if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)}
    init, call = methods.get("__init__"), methods.get("__call__")
    if not (isinstance(init, ast.FunctionDef) and isinstance(call, ast.FunctionDef)) or (
            len(methods) != sum(isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
                                for stmt in cls.body)) or suspends(call.body):
        return None
    args = init.args
    if len(args.args) != 2 or args.posonlyargs or args.vararg or args.kwarg or (
            args.kwonlyargs) or args.defaults:
        return None
    this, param = args.args[0].arg, args.args[1].arg
    held = _held_attribute(init, this, param, parents)
    if held is None or not call.args.args or call.args.args[0].arg != this:
        return None
    calls: list[ast.Call] = []
    for node in ast.walk(cls):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
                node.func.id == this):
            return None  # ``self(...)``: a call of __call__ no rewrite awaits
        if not (isinstance(node, ast.Attribute) and node.attr == held):
            continue
        parent = parents.get(node)
        if isinstance(node.ctx, ast.Store) and parent in init.body:
            continue
        if isinstance(parent, ast.Call) and parent.func is node and isinstance(
                node.value, ast.Name) and node.value.id == call.args.args[0].arg and (
                _directly_in(parent, call, parents)):
            calls.append(parent)
        elif not (isinstance(parent, ast.Attribute) and parent.attr in _NAMES):
            return None
    return (call, tuple(calls), held) if calls else None


def _class_factory(cls: ast.ClassDef, parents: Mapping[ast.AST, ast.AST]
                   ) -> tuple[ast.FunctionDef, tuple[ast.Call, ...]] | None:
    """(the wrapper, its calls) for a class used as a decorator factory (``@retry(3)``): no
    base, keyword or decorator, a plain ``def __call__(self, fn)`` that returns a ``def``
    of its own body calling ``fn`` (as a function decorator's body does), the instance never
    called from inside (``self(...)``)."""
    if cls.bases or cls.keywords or cls.decorator_list:
        return None
    call = next((stmt for stmt in cls.body if isinstance(stmt, ast.FunctionDef)
                 and stmt.name == "__call__"), None)
    if call is None or call.decorator_list or sum(
            isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
            and stmt.name == "__call__" for stmt in cls.body) != 1:
        return None
    this = (*call.args.posonlyargs, *call.args.args)[0].arg if (
        call.args.posonlyargs or call.args.args) else None
    if this is None or any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                           and node.func.id == this for node in ast.walk(cls)):
        return None
    return _wrapper_of(call, parents, method=True)


def _held_attribute(init: ast.FunctionDef, this: str, param: str,
                    parents: Mapping[ast.AST, ast.AST]) -> str | None:
    """The one attribute ``init`` keeps ``param`` in (``self.fn = fn``, a statement of its
    own body), ``param`` read nowhere else but as ``update_wrapper(self, param)`` or for
    its name."""
    held: list[str] = []
    for node in ast.walk(init):
        if isinstance(node, ast.arg) and node.arg == param and node is not init.args.args[1]:
            return None
        if isinstance(node, ast.Global | ast.Nonlocal) and param in node.names:
            return None
        if not (isinstance(node, ast.Name) and node.id == param):
            continue
        parent = parents.get(node)
        if not isinstance(node.ctx, ast.Load):
            return None
        target = parent.targets[0] if isinstance(parent, ast.Assign) and len(
            parent.targets) == 1 and parent in init.body else None
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and (
                target.value.id == this):
            held.append(target.attr)
        elif not (isinstance(parent, ast.Attribute) and parent.attr in _NAMES) and not (
                isinstance(parent, ast.Call) and _update_wrapper(parent)
                and parent.args[1] is node and isinstance(parent.args[0], ast.Name)
                and parent.args[0].id == this and parents.get(parent) in init.body):
            return None
    return held[0] if len(held) == 1 else None


def _returned_def(holder: ast.FunctionDef) -> ast.FunctionDef | None:
    """The plain ``def`` of ``holder``'s own body that ``holder`` ends by returning (itself,
    or ``functools.update_wrapper(it, fn)``), its name (local to ``holder``) bound and
    read nowhere else in ``holder`` but as such a call's first argument."""
    last = holder.body[-1]
    if not isinstance(last, ast.Return) or last.value is None:
        return None
    returned = last.value
    if _update_wrapper(returned):
        returned = cast("ast.Call", returned).args[0]
    if not isinstance(returned, ast.Name):
        return None
    name = returned.id
    inner = next((stmt for stmt in holder.body if isinstance(stmt, ast.FunctionDef)
                  and stmt.name == name), None)
    if inner is None:
        return None
    updated = {id(stmt.value.args[0]) for stmt in holder.body  # type: ignore[attr-defined]
               if isinstance(stmt, ast.Expr) and _update_wrapper(stmt.value)}
    for node in ast.walk(holder):
        if (isinstance(node, ast.Name) and node.id == name and node is not returned
                and id(node) not in updated) or (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and node.name == name and node is not inner) or (
                isinstance(node, ast.arg | ast.alias | ast.Global | ast.Nonlocal)
                and name in _bound(node)):
            return None
    return inner


def _update_wrapper(node: ast.expr) -> bool:
    """``functools.update_wrapper(a, b)`` or ``update_wrapper(a, b)``, two names."""
    if not (isinstance(node, ast.Call) and len(node.args) == 2 and not node.keywords
            and all(isinstance(arg, ast.Name) for arg in node.args)):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == "update_wrapper") or (
        isinstance(func, ast.Attribute) and func.attr == "update_wrapper"
        and isinstance(func.value, ast.Name) and func.value.id == "functools")


def _bound(node: ast.arg | ast.alias | ast.Global | ast.Nonlocal) -> list[str]:
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.alias):
        return [(node.asname or node.name).split(".")[0]]
    return node.names


def _wrapper_of(holder: ast.FunctionDef, parents: Mapping[ast.AST, ast.AST], *,
                method: bool = False) -> tuple[ast.FunctionDef, tuple[ast.Call, ...]] | None:
    """(the wrapper, its calls of the decorated function) when ``holder`` takes one
    parameter (after ``self`` for a ``method``), the function, and returns a ``def`` of its
    own body that calls it."""
    args = holder.args
    params = (*args.posonlyargs, *args.args)
    if len(params) != 1 + method or args.vararg or args.kwarg or args.kwonlyargs:
        return None
    wrapper = _returned_def(holder)
    if wrapper is None or suspends(wrapper.body):
        return None
    own = params[-1]
    param = own.arg
    calls: list[ast.Call] = []
    for node in ast.walk(holder):
        if isinstance(node, ast.Global | ast.Nonlocal) and param in node.names:
            return None
        if isinstance(node, ast.arg) and node.arg == param and node is not own:
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
                _wraps_argument(node, wrapper, parents)) and not (
                _update_argument(node, holder, parents)):
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


def _update_argument(node: ast.Name, holder: ast.FunctionDef,
                     parents: Mapping[ast.AST, ast.AST]) -> bool:
    """``node`` is the second argument of ``update_wrapper(wrapper, fn)``, a statement of
    ``holder``'s own body or what it returns."""
    call = parents.get(node)
    if not (isinstance(call, ast.Call) and _update_wrapper(call) and call.args[1] is node):
        return False
    stmt = parents.get(call)
    return (isinstance(stmt, ast.Expr) and stmt in holder.body) or stmt is holder.body[-1]


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

