"""Scripts as models write them: the common dialects, rewritten to the canonical form.

The prompt teaches one form (``await tools.x(a=...)``, the last expression is
the result). Models trained on other hosts also write bare tool names
(``search(...)``, ``gdrive.get_sheet(...)``), positional arguments or one dict
of arguments, calls without ``await``, ``final_answer(x)``, a top-level
``return``, a script ending in an assignment, an ``async def main()`` that is
never called or run with ``asyncio.run(main())``, modules used without an
import, ``<tool>_sync`` aliases, a LangChain tool's ``x.invoke({...})``/``x.run("...")``
and Cloudflare's ``codemode.x({...})``. :func:`plan` reads the script once (the
preflight's tree) and produces:

- small text edits that keep every line where it was (``(await ...)`` around a
  call whose value is used, ``async `` before a plain ``def`` that calls tools (a
  method too, when every ``x.name(...)`` of its name can only be it: named unlike any
  dict/list/str/stdlib method and never read as a value),
  ``final_answer((...))`` for a top-level ``return``, ``True`` for an
  ``if __name__ == "__main__":`` test, a lambda that calls tools as what it meant:
  ``f = lambda x: ...`` an ``async def``, ``map(lambda ...)``/``filter(lambda ...)`` (or
  ``map(f, ...)``, ``f`` a plain ``def`` made async or a tool) a list comprehension
  where the iterator is read to its end (``list(...)``, ``*``, a list comprehension),
  ``key=lambda ...`` (or ``key=f``, ``f`` a plain ``def`` made async) keys awaited
  first; a plain generator that calls tools an async generator, read with ``async for``
  where it is called (``next``/``any``/``all`` with ``anext``, ``enumerate``/``zip`` as
  an async generator expression); and appended lines for the result);
- a :class:`~codemode.sandbox.runtime.prelude.Prelude`: the bare names, the
  modules and the positional orders the runtime binds (host inputs too);
- the problems no rewrite can settle, each with its one-line fix.

Nothing here grants anything: every form still calls the same ``tools`` proxy,
so every call is validated and dispatched exactly like the canonical one.
Calls handed to ``asyncio.gather`` (directly, or through a list later gathered)
are left un-awaited, so they still run concurrently; so are calls stored in a name
(or a container) whose value the script awaits itself later (``t = tools.x()`` …
``await t``, ``await pending[k]``, ``for t in tasks: await t``), and calls passed to
the script's own ``async def`` for a parameter it awaits (``await safe(tools.x())``: its
``try`` sees the call's error); likewise a lambda whose body is one tool call handed to
the script's own function that only calls it (``attempt("p", lambda: get_price(...))``):
the lambda returns the call, which the function, made async, awaits where it calls it.
Calling an async
generator (an ``async def`` that yields) gives no awaitable: it is never awaited.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections import Counter
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from codemode.mode.decorators import WrappingDecorator, wrapping_decorators
from codemode.mode.preflight import (
    RUNNABLE,
    Problem,
    parameter_names,
    runnable_input,
    runnable_options,
)
from codemode.sandbox.language.builtins import SAFE_BUILTINS
from codemode.sandbox.language.facades import FACADE_NAMES
from codemode.sandbox.language.policy import POST_INIT, child_fields, index_nodes, suspends
from codemode.sandbox.runtime.prelude import Prelude

if TYPE_CHECKING:
    from codemode.dispatch.spec import ToolSpec

__all__ = ["SANDBOX_GLOBALS", "ScriptPlan", "plan", "positional_order"]

SANDBOX_GLOBALS: Final = frozenset({"tools", "asyncio"})
"""Globals every run has (besides the builtins)."""

_CONCURRENT: Final = frozenset({"gather", "wait", "wait_for", "create_task", "ensure_future",
                                "shield", "as_completed"})
"""``asyncio`` functions that take awaitables: calls handed to them stay un-awaited."""
_AWAITABLE_ASYNCIO: Final = frozenset({"gather", "sleep", "wait_for"})
"""``asyncio`` functions whose result must be awaited."""
_SUGGESTIONS: Final = 5
_SUGGESTION_CHOICES: Final = 750
_SUGGESTION_LENGTH: Final = 40
"""``did you mean``: for the first names a script never defined, among at most this many
names, of at most this length (CPython's own limits): difflib is Python, and a script of
4 000 undefined names each compared with 4 000 defined ones took 94 s to prepare."""
_WRAPPER_FIX: Final = {
    "enumerate": "keep the count yourself: `i = 0`, then `for x in {name}(...):` whose "
                 "body ends with `i += 1`",
    "zip": "read it into a list first, `zip(list({name}(...)), other)`, or loop over it "
           "and take the other items with `next(other_iterator)`",
    "islice": "take the items in a loop that stops: `items = []`, then `for x in "
              "{name}(...):` with `items.append(x)` and `if len(items) == n: break`",
}
"""What to write when a generator that calls tools is handed to one of these."""
_STOPPING_FIX: Final = {
    "any": "for any(), the loop that stops as it does: `found = False`, then `for x in "
           "{name}(...):` with `if <test>:` `found = True` and `break`",
    "all": "for all(), the loop that stops as it does: `ok = True`, then `for x in "
           "{name}(...):` with `if not <test>:` `ok = False` and `break`",
}
_CODE: Final = "no files, processes or code from text: use the tools"
_SDK: Final = "the SDK in the prompt lists the tools and their arguments"
_BYTES: Final = "write a literal (`b'...'`) or encode text (`text.encode()`)"
_REMOVED: Final[Mapping[str, str]] = MappingProxyType({
    "open": _CODE, "exec": _CODE, "eval": _CODE, "compile": _CODE,
    "globals": "keep shared values in a dict of your own",
    "locals": "keep shared values in a dict of your own",
    "input": "a script cannot ask for input: the values come from the tools or the run's "
             "inputs",
    "breakpoint": "there is no debugger: print() what you need to see",
    "help": _SDK,
    "id": "compare objects with `is`, or key them by a value of their own",
    "bytearray": _BYTES, "memoryview": _BYTES,
    "BaseException": "catch `Exception`, which every error a script or a tool raises is; "
                     "the run's own stop signals are not for a script to catch; "
                     "`isinstance(x, BaseException)` works",
    "GeneratorExit": "clean up in the generator's `finally:` block, which runs when it is "
                     "closed; the run's own stop signals are not for a script to catch",
    "BaseExceptionGroup": "catch `ExceptionGroup` and test `isinstance(e, ExceptionGroup)`: "
                          "every group a script or a tool raises is one",
})
"""Python builtins a script does not have (a NameError at run time) → what to do instead."""
_NO_ARGUMENT: Final[Mapping[str, str]] = MappingProxyType({
    "dir": f"{_SDK}; `dir(obj)` lists an object of the script's own",
    "vars": "keep shared values in a dict of your own; `vars(obj)` copies an object of the "
            "script's own",
})
"""Builtins a script has with an argument only (without one they would list its
variables) → what to write instead."""
_NUMBER_METHODS: Final = frozenset({
    "quantize", "normalize", "compare", "sqrt", "exp", "ln", "log10", "max", "min",
    "adjusted", "limit_denominator", "to_integral_value", "copy_sign", "wait", "is_set"})
"""Methods of ``Decimal``/``Fraction`` (their modules are not imported for this list) and
of ``asyncio.Event``."""


@functools.cache
def _library_methods() -> frozenset[str]:
    """Method names of the builtin and stdlib objects a script holds: a method of the
    script's own named like one (``get``, ``append``, ``put``) is not made async, since
    ``x.get(...)`` could as well be a dict's. Made at the first script with a method that
    calls tools."""
    import asyncio
    import collections
    import datetime
    import io
    import string
    kinds: tuple[Any, ...] = (
        object, type, BaseException, dict, list, str, bytes, set, frozenset, tuple, int,
        float, complex, range, collections.Counter, collections.deque,
        collections.OrderedDict, collections.defaultdict, io.StringIO, re.Pattern,
        re.Match, datetime.datetime, datetime.date, datetime.time, datetime.timedelta,
        asyncio.Queue, asyncio.Task, asyncio.Semaphore, asyncio.TaskGroup, string.Template,
        type((lambda: (yield))()))
    return frozenset(name for kind in kinds for name in dir(kind)) | _NUMBER_METHODS


_AWAITED_IF_ASYNC: Final = (("(await codemode_awaited(", ")"), ("", ")"))
"""Around ``x.get`` and the end of the call ``x.get(...)`` when the script's own ``get`` was
made async: ``(await codemode_awaited(x.get)(...))``, the call awaited when ``x.get`` is an
async function of the script's (its method), else its value as it is (a dict's ``get``,
even when that value is a coroutine the script keeps to gather). A call of the run's
``codemode_awaited``, not a comprehension around the call: a walrus among the arguments
stays legal, a generator expression holding it is told by its ``(await`` (made a list, or
read with the async forms), and no name the script may bind (``asyncio``) is read."""

_CALLED_IF_PLAIN: Final = ("codemode_called(", ")")
"""Around ``x.get`` where no ``await`` can stand (a plain function Python calls, a class
body): ``codemode_called(x.get)(...)`` calls a dict's ``get`` as written and refuses, with
the fix, the script's own ``get`` made async (its coroutine is no value)."""


TOOL_TEXTS: Final = frozenset({"name", "description"})
"""A LangChain tool's attributes a script reads (``search.description``)."""
_METHOD_DECORATORS: Final = frozenset({"staticmethod", "classmethod", "abstractmethod"})
"""Decorators a method made async may have (``abc.abstractmethod`` too): each hands the
function on, an ``async def`` as a ``def``."""
_ENTRY_NAMES: Final = frozenset({"main", "amain", "async_main", "run", "run_task", "solve"})
_RUN: Final = frozenset({"run"})
# Type tuples for the ``isinstance`` checks made per node or per call: ``ast.A | ast.B``
# builds a new union object each time it is evaluated.
_NAMED: Final = (ast.Name, ast.Attribute)
_SCOPES: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_PASSING: Final = (ast.List, ast.Tuple, ast.Set, ast.Starred, ast.keyword)
_ELEMENT_COMPREHENSIONS: Final = (ast.ListComp, ast.GeneratorExp, ast.SetComp)
_ASSIGNS: Final = (ast.Assign, ast.AnnAssign, ast.AugAssign)
_LOOPS: Final = frozenset({"get_event_loop", "new_event_loop"})
"""``asyncio`` functions whose loop's ``run_until_complete(main())`` is ``asyncio.run``."""
_KNOWN: Final = frozenset(SAFE_BUILTINS) | SANDBOX_GLOBALS
_DECORATED_HINT: Final = (
    "; its decorator's wrapper calls it where no call can be awaited: leave it undecorated "
    "and do what the decorator does (retry, log, time) in a loop or a try around its calls "
    "(a top-level decorator of the script's own is made async with it when it is only ever "
    "applied as `@name` or `@name(...)` to plain functions, its wrapper only returned and "
    "calling the function in the wrapper's own body)")
"""Why a decorated function that calls tools is refused (``@functools.cache`` is not)."""
_FUNCTION_NAMES: Final = frozenset({"__name__", "__qualname__"})
"""What a script reads of a function (``f.__name__`` in a log line) without calling it:
the ``async def`` the dialects make of it has the same."""
_BY_NAME: Final = frozenset({"call_tool", "call"})
"""Methods an MCP client (``session.call_tool("name", {...})``) calls a tool by name with."""
_DATA_ITSELF: Final = ("; it returns the tool's data itself (a dict, list or text), not an "
                       "MCP result: there is no `.content[0].text` to read")
_MCP_RESULT: Final = frozenset({"content", "structuredContent", "structured_content",
                                "isError", "is_error"})
"""Attributes of an MCP ``CallToolResult``: a script reading them expects that object, not
the tool's data, so its by-name calls are refused (with the fix), not rewritten."""
"""Names every run has."""
_TOOLS_ALIASES: Final = frozenset({"codemode"})
_CONSUMERS: Final = frozenset({"list", "tuple", "set", "frozenset", "sorted", "sum", "min",
                               "max", "dict"})
"""Builtins that read an iterable to its end: ``map``/``filter`` made an (eager) list
there calls the tools Python's lazy iterator would have called, no more."""
_QUIET: Final = (ast.Constant, ast.Name, ast.Load, ast.UnaryOp, ast.unaryop, ast.BoolOp,
                 ast.boolop)
"""What a ``sorted(..., reverse=R)`` keyword may hold for the keys to be computed first:
reading it runs no code, so when it is read does not matter."""
"""What other hosts call their tools object (Cloudflare's ``codemode.x({...})``): a name
the script never binds is ``tools``."""
_PARTIAL_NAMES: Final = frozenset({"partial", "functools"})
"""The names a call of ``functools.partial`` reads."""
_N = TypeVar("_N", bound=ast.AST)
_NOT_IDENTIFIER: Final = re.compile(r"\W")

_Names = tuple[frozenset[str], frozenset[str], dict[str, str], frozenset[str], int]
_T = TypeVar("_T")
_registry_cache: list[tuple[Mapping[str, str], dict[Callable[..., Any], Any]]] = []
"""The last registry's read-only tool mapping and what was derived from it, by the function
that derives it (see :func:`_per_registry`)."""


def _per_registry(tools: Mapping[str, str], make: Callable[[Mapping[str, str]], _T]) -> _T:
    """``make(tools)``; for an SDK's read-only mapping made once, not at every run: a run's
    cost does not grow with the registry."""
    if not isinstance(tools, MappingProxyType):
        return make(tools)
    cached = _registry_cache[0] if _registry_cache else None
    if cached is None or cached[0] is not tools:
        cached = (tools, {})
        _registry_cache[:] = [cached]  # immutable: safe to keep
    found: _T | None = cached[1].get(make)
    if found is None:
        found = cached[1][make] = make(tools)
    return found


def _registry_names(tools: Mapping[str, str]) -> _Names:
    """(first parts of the tool paths, namespaces that are not tools, wire name → path of
    top-level tools, first parts of the dotted wire names of top-level tools: ``weather``
    of ``weather.get_by_city`` spelled ``weather_get_by_city``, the most parts of a tool
    path plus one); see :func:`_per_registry` (the most parts, counted at every run, cost
    a check 0.64M instructions with 500 tools)."""
    return _per_registry(tools, _names_of)


def _names_of(tools: Mapping[str, str]) -> _Names:
    top = frozenset(path.split(".")[0] for path in tools)
    namespaces = frozenset(path.split(".")[0] for path in tools if "." in path) - set(tools)
    renamed = {wire: path for path, wire in tools.items() if "." not in path}
    dotted = frozenset(wire.split(".")[0] for wire in renamed if "." in wire) - top
    return (top, namespaces, renamed, dotted,
            max((path.count(".") for path in tools), default=0) + 1)


def _wire_paths(tools: Mapping[str, str]) -> dict[str, str]:
    """Wire name → tool path (:meth:`_Planner.named`)."""
    return {wire: path for path, wire in tools.items()}


def positional_order(spec: ToolSpec | None, argmap: Mapping[str, str]) -> Sequence[str] | None:
    """The Python parameter names positional arguments fill, in order; None when unclear.

    The order is the schema's ``properties`` order when every required parameter
    comes before every optional one (a Python signature's order); with required
    parameters after optional ones, only a single required parameter can be filled
    positionally; otherwise the order is unclear.
    """
    if spec is None:
        return None
    props = spec.parameters.get("properties")
    if not isinstance(props, Mapping) or not props:
        return None
    wire_to_py = {w: p for p, w in argmap.items()}
    names = [wire_to_py.get(w, w) for w in props if isinstance(w, str)]
    required = {wire_to_py.get(w, w) for w in spec.parameters.get("required") or ()
                if isinstance(w, str)}
    flags = [name in required for name in names]
    if flags == sorted(flags, reverse=True):
        return tuple(names)
    if len(required) == 1:
        return tuple(required)
    return None


_ORDERS_SIZE: Final = 4096
_orders: dict[int, tuple[ToolSpec, Mapping[str, str], Sequence[str] | None]] = {}
""":func:`positional_order` answers by ``id(spec)`` (see :func:`_order_of`)."""


def _order_of(spec: ToolSpec | None, argmap: Mapping[str, str]) -> Sequence[str] | None:
    """:func:`positional_order`, remembered per spec: specs are frozen and a registry hands
    out the same objects until a tool changes (the SDK's cache rests on that too), and an
    SDK's argument names are a read-only mapping per tool; a changed tool is a new spec
    and a new SDK new mappings, so an answer is only ever reused for the same pair."""
    if spec is None:
        return None
    found = _orders.get(id(spec))
    if found is not None and found[0] is spec and found[1] is argmap:
        return found[2]
    order = positional_order(spec, argmap)
    if isinstance(argmap, MappingProxyType):
        if len(_orders) >= _ORDERS_SIZE:
            _orders.clear()
        _orders[id(spec)] = (spec, argmap, order)
    return order


@dataclass(frozen=True, kw_only=True, slots=True)
class ScriptPlan:
    """What :func:`plan` found: the source to run, its prelude, its problems."""

    source: str
    """The script with the dialect rewrites applied (same lines, maybe more at the end)."""
    prelude: Prelude
    """Bare names, modules, positional orders and inputs the runtime binds."""
    problems: list[Problem] = field(default_factory=list)
    """What no rewrite settles; the run must not start while there are any."""
    dialects: tuple[str, ...] = ()
    """The dialects the script used (for traces and tests), in first-use order."""
    tool_of: Callable[[ast.expr], str | None] | None = None
    """Resolves a call's function to a tool path the way the dialects do (preflight)."""
    nodes: list[ast.AST] = field(default_factory=list)
    """The script's nodes, flattened once (the preflight reads them too)."""
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)
    """Node → its parent node."""
    kinds: dict[type, list[ast.AST]] = field(default_factory=dict)
    """Node type → the nodes of exactly that type, in ``nodes`` order (the policy reads
    its binding sites from them)."""
    appended: int | None = None
    """Where ``source`` goes on past the script's (edited) lines with the lines the plan
    appended; None when it appended none."""
    tree_edits: tuple[tuple[ast.AST, ...], tuple[ast.FunctionDef, ...]] | None = ((), ())
    """(the script's nodes the plan put in ``(await ...)``, its ``def`` statements made
    ``async def``) when those were its only edits within the script's lines
    (:mod:`codemode.mode.rewritten` makes the same edits to the tree instead of parsing
    the text again); None after any other edit."""


def _root(node: ast.expr) -> tuple[str | None, list[str]]:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, list(reversed(parts))
    return None, []


def _deeper(node: ast.AST, links: int) -> bool:
    """Whether ``node`` is an attribute chain of more than ``links`` attributes (read at
    most ``links + 1`` deep)."""
    for _ in range(links + 1):
        if not isinstance(node, ast.Attribute):
            return False
        node = node.value
    return True


def _bound_names(kinds: Mapping[type, Sequence[ast.AST]],
                 stored: set[str]) -> tuple[set[str], set[str]]:
    """(every name the script binds anywhere, the names bound only by ``def``/``class``);
    ``kinds``: node type → the script's nodes of that type, ``stored``: the names its
    ``Name`` nodes store or delete."""
    defs: set[str] = set()
    other = set(stored)
    for kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        defs.update(node.name for node in kinds.get(kind, ()))  # type: ignore[attr-defined]
    other.update(node.arg for node in kinds.get(ast.arg, ()))  # type: ignore[attr-defined]
    other.update((node.asname or node.name).split(".")[0]  # type: ignore[attr-defined]
                 for node in kinds.get(ast.alias, ()))
    for named in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
        other.update(node.name for node in kinds.get(named, ())  # type: ignore[attr-defined]
                     if node.name)  # type: ignore[attr-defined]
    other.update(node.rest for node in kinds.get(ast.MatchMapping, ())  # type: ignore[attr-defined]
                 if node.rest)  # type: ignore[attr-defined]
    return defs | other, defs - other


_DRAWING: Final = frozenset({"enumerate", "zip", "reversed", "list", "tuple", "sorted",
                             "iter"})
"""Builtins whose items are the items of their arguments (``for i, t in enumerate(ts)``)."""


def _sources(node: ast.expr) -> set[str]:
    """The names whose items a loop over ``node`` draws: ``ts``, ``ts[k]``,
    ``ts.values()``, ``ts.items()``, ``enumerate(ts)``, ``zip(a, ts)`` …"""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return {node.id}
    if not isinstance(node, ast.Call):
        return set()
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in ("values", "items") and not node.args:
        return _sources(func.value)
    if isinstance(func, ast.Name) and func.id in _DRAWING:
        return set().union(*(_sources(arg) for arg in node.args))
    return set()


_TYPE_PARAMS: Final = tuple(getattr(ast, name) for name in (
    "TypeVar", "ParamSpec", "TypeVarTuple") if hasattr(ast, name))
"""3.12's type parameters (``def first[T: Hashable]``)."""
_TYPE_SYNTAX: Final = _TYPE_PARAMS + tuple(
    getattr(ast, name) for name in ("TypeAlias",) if hasattr(ast, name))
"""3.12's type statement (its value is what counts) and type parameters (their bounds)."""


def _annotation_names(kinds: Mapping[type, Sequence[ast.AST]]) -> set[ast.AST]:
    """The ``Name`` nodes inside annotations (arguments, returns, ``x: T``): the policy
    drops annotations unevaluated, so a name there need not be defined."""
    roots: list[ast.AST] = [node.annotation for node in kinds.get(ast.arg, ())  # type: ignore[attr-defined]
                            if node.annotation is not None]  # type: ignore[attr-defined]
    roots += [node.annotation for node in kinds.get(ast.AnnAssign, ())]  # type: ignore[attr-defined]
    for kind in (ast.FunctionDef, ast.AsyncFunctionDef):
        roots += [node.returns for node in kinds.get(kind, ())  # type: ignore[attr-defined]
                  if node.returns is not None]  # type: ignore[attr-defined]
    # 3.12: ``type Pair[T] = tuple[T, T]`` and ``def f[T: Hashable]``, evaluated lazily by
    # CPython and never by the sandbox (the policy binds a placeholder, drops the params)
    roots += [getattr(node, "value", node) for kind in _TYPE_SYNTAX
              for node in kinds.get(kind, ())]
    return {node for root in roots for node in ast.walk(root) if isinstance(node, ast.Name)}


def _reduce_loop(node: ast.AST | None, call: ast.AST | None) -> str | None:
    """For ``reduce(lambda acc, x: B, items[, initial])`` (``functools.reduce``): the loop
    that computes it, in one line's words; else None."""
    if not (isinstance(node, ast.Lambda) and isinstance(call, ast.Call) and call.args
            and call.args[0] is node and 2 <= len(call.args) <= 3 and not call.keywords
            and len(node.args.args) == 2 and not (node.args.posonlyargs or node.args.vararg)):
        return None
    func = call.func
    if not ((isinstance(func, ast.Name) and func.id == "reduce") or (
            isinstance(func, ast.Attribute) and func.attr == "reduce"
            and isinstance(func.value, ast.Name) and func.value.id == "functools")):
        return None
    acc, item = (a.arg for a in node.args.args)
    items, body = ast.unparse(call.args[1]), ast.unparse(node.body)
    if len(call.args) == 3:
        return (f"`{acc} = {ast.unparse(call.args[2])}` then "
                f"`for {item} in {items}: {acc} = {body}`")
    return f"`{acc}, *rest = {items}` then `for {item} in rest: {acc} = {body}`"


def _is_main_guard(node: ast.stmt) -> bool:
    if not isinstance(node, ast.If) or node.orelse:
        return False
    test = node.test
    return (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__" and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _record_places(value: ast.expr | None, tool_of: Callable[[ast.expr], str | None]
                   ) -> tuple[int, frozenset[int]]:
    """A list or tuple literal of tuples of one width whose items at some places are all
    tools (``[(get_price, {"symbol": "A"}), (get_news, {})]``) → (the width, those places;
    none for any other value): a loop unpacking it (``for fn, args in ...``) binds tools
    there."""
    if not isinstance(value, ast.List | ast.Tuple) or not value.elts or not all(
            isinstance(row, ast.Tuple) for row in value.elts):
        return 0, frozenset()
    rows = cast("list[ast.Tuple]", value.elts)
    width = len(rows[0].elts)
    if any(len(row.elts) != width or any(isinstance(item, ast.Starred) for item in row.elts)
           for row in rows):
        return 0, frozenset()
    return width, frozenset(place for place in range(width)
                            if all(tool_of(row.elts[place]) is not None for row in rows))


def _assigned_name(node: ast.stmt) -> str | None:
    """``name = value`` (or ``name: T = value``) → ``name``; anything else → None."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(
            node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(
            node.target, ast.Name):
        return node.target.id
    return None


class _Edits:
    """Text edits at AST positions (UTF-8 byte columns) that keep lines in place."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._data: bytes | None = None
        self._starts: list[int] | None = None
        self.items: list[tuple[int, int, int, int, bytes]] = []
        """(start, end, order, span, text): replace data[start:end] with text."""
        self.tail: list[str] = []
        self.appended: int | None = None
        """Where :meth:`apply`'s text goes on with the appended ``tail`` (None without)."""
        self.awaits: list[ast.AST] = []
        """The nodes :meth:`wrap` put in ``(await ...)``, in order: when they are all the
        in-line edits, the rewritten text's tree is the script's with those ``Await`` nodes
        (:mod:`codemode.mode.rewritten`)."""
        self.asyncs: list[ast.FunctionDef] = []
        """The ``def`` statements :meth:`make_async` made ``async def``, in order."""

    @property
    def data(self) -> bytes:
        """The source as UTF-8 (AST columns count bytes); made at the first edit only."""
        if self._data is None:
            self._data = self.source.encode("utf-8", "surrogatepass")
        return self._data

    def at(self, line: int, col: int) -> int:
        starts = self._starts
        if starts is None:
            data, starts = self.data, [0]
            found = data.find(b"\n")
            while found >= 0:
                starts.append(found + 1)
                found = data.find(b"\n", found + 1)
            self._starts = starts
        return starts[line - 1] + col

    def start(self, node: ast.AST) -> int:
        return self.at(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self.at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def segment(self, node: ast.AST) -> str | None:
        """``ast.get_source_segment(source, node)`` from the line offsets found once (that
        function splits the whole source into lines at each call: 360 calls in a script of
        45 000 characters were 35 s)."""
        if "\r" in self.source:  # a line ends another way: CPython's split, as before
            return ast.get_source_segment(self.source, node)
        return self.data[self.start(node):self.end(node)].decode("utf-8", "surrogatepass")

    def wrap(self, node: ast.AST, before: str, after: str) -> None:
        start, end = self.start(node), self.end(node)
        span = end - start
        if before == "(await " and after == ")":
            self.awaits.append(node)
        self.items.append((start, start, 1, -span, before.encode()))
        self.items.append((end, end, 0, span, after.encode()))

    def replace(self, start: int, end: int, text: str) -> None:
        self.items.append((start, end, 2, 0, text.encode()))

    def make_async(self, node: ast.FunctionDef) -> None:
        """``async `` before ``def``."""
        self.asyncs.append(node)
        start = self.start(node)
        self.replace(start, start, "async ")

    def apply(self) -> str:
        if not self.items:
            out = self.source
            if self.tail:
                if out and not out.endswith("\n"):
                    out += "\n"
                self.appended = len(out)
                out += "\n".join(self.tail) + "\n"
            return out
        data = self.data
        # Same position: closers (inner first) before openers (outer first).
        for start, end, _, _, text in sorted(self.items, key=lambda e: (e[0], e[2], e[3]),
                                             reverse=True):
            data = data[:start] + text + data[end:]
        out = data.decode("utf-8", "surrogatepass")
        if self.tail:
            if out and not out.endswith("\n"):
                out += "\n"
            self.appended = len(out)
            out += "\n".join(self.tail) + "\n"
        return out

    def tree_edits(self) -> tuple[tuple[ast.AST, ...], tuple[ast.FunctionDef, ...]] | None:
        """(the nodes put in ``(await ...)``, the ``def`` statements made ``async def``)
        when those are the only in-line edits (each node once); None when another edit
        changed the text."""
        awaits, asyncs = self.awaits, self.asyncs
        if len(self.items) != 2 * len(awaits) + len(asyncs) or len(
                {id(node) for node in [*awaits, *asyncs]}) != len(awaits) + len(asyncs):
            return None
        return tuple(awaits), tuple(asyncs)


def _implicit_call(node: ast.FunctionDef) -> str | None:
    """How Python calls a method of a class for the script (so its tool calls cannot be
    awaited): a special method or a property; None for a plain method."""
    name = node.name
    if name.startswith("__") and name.endswith("__"):
        return ("Python calls it for you (`for`, `len()`, `print()` …)"
                if name not in ("__init__", "__post_init__")
                else "Python calls it for you in `Cls(...)`")
    if any((isinstance(d, ast.Name) and d.id in ("property", "cached_property")) or (
            isinstance(d, ast.Attribute) and d.attr == "setter") for d in node.decorator_list):
        return "a property is read without a call"
    return None


@dataclass
class _Scope:
    kind: str
    """module, async, sync, lambda or class."""
    node: ast.AST | None = None


_PLANNER_VISITS: dict[type, Callable[[_Planner, Any], Any]] = {}
"""Node type -> the ``_Planner`` method that visits it (filled on use)."""


class _Planner(ast.NodeVisitor):
    skips = True
    """Whether a pass the node-type index shows can find nothing is skipped (tests set it
    False and compare: the plan is the same either way)."""

    def __init__(self, tree: ast.Module, *, tools: Mapping[str, str],
                 arguments: Mapping[str, Mapping[str, str]], specs: Mapping[str, ToolSpec],
                 inputs: Mapping[str, Any], strict: bool, edits: _Edits) -> None:
        self.tree = tree
        self.tools = tools
        self.arguments = arguments
        self.specs = specs
        self.inputs = inputs
        self.strict = strict
        self.wires: Mapping[str, str] | None = None
        """Wire name → tool path, made when a script names a tool by text."""
        self.edits = edits
        self.problems: list[Problem] = []
        self.used: list[str] = []
        self.roots: dict[ast.expr, tuple[str | None, list[str]]] = {}
        self.paths: dict[ast.expr, str | None] = {}
        """Node → its root / tool path: both depend on the node alone once ``bare`` is
        known (the end of ``__init__``); nodes hash by identity."""
        # One traversal; every later look at "all nodes" (or all nodes of a kind) reads
        # these lists.
        self.nodes, self.parents, self.kinds = index_nodes(tree)
        """``kinds``: node type → the nodes of exactly that type, in ``nodes`` order."""
        kinds = self.kinds
        self.loads: list[ast.Name] = []
        """The names the script reads, but in annotations (never evaluated)."""
        stored: set[str] = set()
        stores: dict[str, int] = {}
        annotated = _annotation_names(kinds)
        for name_node in cast("list[ast.Name]", kinds.get(ast.Name, [])):
            if type(name_node.ctx) is ast.Load:
                if name_node not in annotated:
                    self.loads.append(name_node)
            else:
                stored.add(name_node.id)
                stores[name_node.id] = stores.get(name_node.id, 0) + 1
        self.loads_of: dict[str, list[ast.Name]] = {}
        """``loads`` by name, in order (a pass that asks about each function's uses read
        every load once per function: quadratic in a script of many functions)."""
        for name_node in self.loads:
            self.loads_of.setdefault(name_node.id, []).append(name_node)
        self.bound, self.def_only = _bound_names(kinds, stored)
        self.type_params = {getattr(node, "name", "") for kind in _TYPE_PARAMS
                            for node in kinds.get(kind, ())}
        """3.12's type parameter names (``def first[T]``): bound in annotations only."""
        self.stores = stores
        """Name → how many times the script binds it (a plain name target)."""
        top, self.namespaces, renamed, dotted, self.most_parts = _registry_names(tools)
        """``most_parts``: the most parts (``a.b`` two) a tool path has, plus one."""
        self.bare: dict[str, str] = {}
        """Bare global → tool path / namespace, for the names this script reads."""
        self.refused_bare: dict[str, tuple[str, str]] = {}
        """Bare name → (why it is not the tool: builtin or variable, the tool's path)."""
        reads = {n.id for n in self.loads}
        self.reads = reads
        for name in sorted(reads):
            target = None
            if name in top or name in dotted:  # ``weather.get_by_city(...)``: see named()
                target = name
            elif name.endswith("_sync") and name[:-5] in tools:
                target = name[:-5]
            elif name in renamed and name in SAFE_BUILTINS:
                self.refused_bare[name] = ("builtin", renamed[name])  # `filter` → filter_
                continue
            if target is None:
                continue
            if name in SAFE_BUILTINS or name in SANDBOX_GLOBALS or name in FACADE_NAMES or (
                    name in inputs or name == "final_answer"):
                self.refused_bare[name] = ("builtin", target)
            elif name in self.bound and name not in self.def_only:
                self.refused_bare[name] = ("variable", target)
            elif name in self.bound:
                continue  # the script's own function of that name
            else:
                self.bare[name] = target
        self.partials: set[str] = set()
        """Names bound once, at the top level, to ``functools.partial(<tool>, ...)``: a
        call of one is a tool call (awaited like one)."""
        self.partial_targets: dict[str, ast.Name] = {}
        """The same for ``partial(f, ...)``, ``f`` a name: a call of it is awaited when
        ``f`` is an ``async def`` (maybe made one), and ``f`` read there is no value use."""
        self.tool_tables: set[str] = set()
        """Names bound once (in the whole script) to a list, tuple or dict literal of tools
        (``fs = [tools.a, b]``): ``fs[i](...)`` is a tool call (awaited like one)."""
        self.tool_loops: set[str] = set()
        """Loop variables bound only over such a table (``for f in fs``, ``for k, f in
        d.items()``), and names bound once to an item of one (``fn = {"a": a}[k]``):
        ``f(...)`` is a tool call."""
        self.table_lambdas: set[int] = set()
        """ids of the lambdas that call tools in such a table (``{"price": lambda s:
        get_stock_info(symbol=s)["price"]}``): each returns an awaitable of its value,
        ``lambda s: anext(((await ...)["price"] for once in [None]))``."""
        if not strict:
            values = not self.skips or self._tools_as_values()
            if values or not _PARTIAL_NAMES.isdisjoint(reads):
                self._tool_variables(stores)
            if values or self.bare or ast.Lambda in kinds:
                self._tool_tables(stores)
        self.aliases = frozenset() if strict else frozenset(
            name for name in _TOOLS_ALIASES & reads if name not in self.bound
            and name not in inputs and name not in top and name not in self.namespaces
            and name not in FACADE_NAMES)
        """Unbound names that stand for ``tools`` (:data:`_TOOLS_ALIASES`)."""
        self.async_funcs: set[str] = set()
        self.async_classes: set[str] = set()
        """Names of the script's classes whose ``__init__``/``__post_init__`` calls tools,
        made ``async def``: each ``Cls(...)`` is awaited (:meth:`_async_construction`)."""
        self.factories: dict[int, list[str]] = {}
        """id of a ``def`` a top-level factory returns → the names bound to the factory's
        calls (:meth:`_plan_factories`)."""
        self.factory_returns: set[int] = set()
        """ids of the names those factories return (no value use: their calls are
        awaited through the bound names)."""
        self.async_stack_imported = False
        """Whether ``AsyncExitStack`` was added beside the import of ``ExitStack``."""
        self.async_contexts: set[str] = set()
        """Names of the script's classes whose ``__enter__``/``__exit__`` calls tools: made
        ``__aenter__``/``__aexit__``, each ``with Cls(...)`` an ``async with``."""
        self.generator_contexts: set[int] = set()
        """ids of the script's ``@contextmanager`` generators made ``@asynccontextmanager``
        async generators (calling tools, or in a ``with`` beside one that does): their
        names are in :attr:`async_contexts` (:meth:`_generator_context`)."""
        self.imported_only: dict[str, tuple[str, str | None] | None] = {}
        """Answers of :meth:`_imported_only`, by name."""
        self.wrappers: dict[str, WrappingDecorator] = {}
        """The script's decorators whose wrapper calls the function they decorate
        (:mod:`codemode.mode.decorators`), by name."""
        self.async_wrappers: set[str] = set()
        """Those whose wrapper is made ``async def``, awaiting the function it calls."""
        self.refused_wrappers: set[str] = set()
        """Those whose wrapper cannot be made async (a function they decorate cannot be)."""
        self.wrapper_calls: set[int] = set()
        """ids of the async wrappers' calls of the function they decorate: awaited."""
        self.async_gen_methods: set[str] = set()
        """Names of the script's generator methods that call tools, made async generators:
        each ``x.name(...)`` is read as a generator function's call is."""
        self.async_properties: set[str] = set()
        """Names of the script's ``@property`` getters that call tools, made ``async def``:
        each ``x.name`` read is awaited (:meth:`_async_property`)."""
        self.async_methods: set[str] = set()
        """Names of the script's methods made async (``x.name(...)`` calls are awaited)."""
        self.shared_names: set[str] = set()
        """Those also named like a library method (``get``, ``update``): ``x.name(...)``
        may be a dict's, so each call is awaited only if ``x.name`` is the script's async function
        (:data:`_AWAITED_IF_ASYNC`)."""
        self.converted: set[int] = set()
        self.async_gens: set[str] = set()
        """Names of the script's plain generators that call tools, made async generators:
        their calls are iterated with ``async for`` (:meth:`_plan_generators`)."""
        self.gen_comprehensions: set[int] = set()
        """ids of generator expressions over one of them, already made lists."""
        self.async_readers: set[int] = set()
        """ids of ``zip``/``islice``/``chain`` calls over one of them, made async readers
        (:meth:`_async_reader`)."""
        self.itertools_names = frozenset(
            alias.name for node in cast("list[ast.ImportFrom]", kinds.get(ast.ImportFrom, []))
            if node.module == "itertools" and node.level == 0
            for alias in node.names if alias.asname is None)
        """``islice``, ``chain`` … imported by their own name from ``itertools``."""
        self.awaited: set[int] = set()
        self.task_names: set[str] = set()
        self.modules: list[str] = []
        self.scopes: list[_Scope] = [_Scope("module")]
        self.by_name: dict[int, str] = {}
        """id of a by-name call's function (``mcp.call_tool``) → the tool it names, for
        the calls rewritten to ``tools.<path>(**args)``."""
        self.by_name_roots: set[str] = set()
        """Unbound names (``mcp``, ``session``) only ever used for such calls."""
        self.thunk_calls: set[int] = set()
        """ids of ``fn()`` calls in the script's own function of a parameter every call of
        it hands a tool-calling lambda (``_handed_thunks``): awaited there."""
        self.key_functions: set[int] = set()
        """ids of the names of plain functions made async handed to ``key=`` whose keys
        are awaited first (``_plan_key_functions``), or to ``map`` (``_plan_mapped_functions``)."""
        self.lambdas: dict[int, str] = {}
        """id of a lambda that calls tools → how it was rewritten: ``async`` (``f = lambda
        x: ...`` became an ``async def``), ``map``/``filter`` (``map(lambda ...)``, a list
        comprehension) or ``key`` (``key=lambda ...``, keys computed first); the last two
        run their calls in the enclosing scope."""

    def _tools_as_values(self) -> bool:
        """Whether the script may read a tool as a value (a bare tool name, or a ``tools.x``
        chain that is not a call's function): without one, and without ``partial`` and
        lambdas, no name or table can hold a tool and the two passes below find nothing."""
        if self.bare:
            return True
        parents = self.parents
        for load in self.loads_of.get("tools", ()):
            node: ast.AST = load
            parent = parents.get(node)
            while type(parent) is ast.Attribute:
                node, parent = parent, parents.get(parent)
            if type(parent) is not ast.Call or parent.func is not node:
                return True
        return False

    def _tool_variables(self, stores: Mapping[str, int]) -> None:
        """``x = search`` or ``x = tools.search`` (a script's one binding of ``x``, at the
        top level): ``x`` is the tool, as a bare name is (``x.invoke({...})``,
        ``x(query=...)``); its assignment hands on the same tool object."""
        params = {node.arg for node in self.kinds.get(ast.arg, ())}  # type: ignore[attr-defined]
        for stmt in self.tree.body:
            name = _assigned_name(stmt)
            value = getattr(stmt, "value", None)
            if name is None or stores.get(name) != 1 or name in params or name in self.def_only:
                continue
            if isinstance(value, ast.Call) and _is_partial(value.func) and value.args:
                if self._tool_value(value.args[0]) is not None or self._partial(value.args[0]):
                    self.partials.add(name)  # ``partial(partial(tool, a), b)`` too
                elif isinstance(value.args[0], ast.Name):
                    self.partial_targets[name] = value.args[0]
                continue
            if self._partial(value):  # ``q = quote``: the same partial
                self.partials.add(name)
                continue
            if not isinstance(value, _NAMED):
                continue
            path = self._tool_value(value)
            if path is not None and name not in self.bound - stores.keys():
                self.bare[name] = path

    def _tool_tables(self, stores: Mapping[str, int]) -> None:
        """Fill :attr:`tool_tables` and :attr:`tool_loops` (see there)."""
        params = {node.arg for node in self.kinds.get(ast.arg, ())}  # type: ignore[attr-defined]

        def single(name: str, bindings: int = 1) -> bool:
            return (stores.get(name) == bindings and name not in params
                    and name not in self.def_only and name not in self.bare)
        picked: list[tuple[str, ast.expr]] = []
        records: dict[str, tuple[int, frozenset[int]]] = {}
        for stmt in [*self.kinds.get(ast.Assign, ()), *self.kinds.get(ast.AnnAssign, ())]:
            name = _assigned_name(stmt)
            value = getattr(stmt, "value", None)
            if name is None or not single(name) or value is None:
                continue
            if isinstance(value, ast.Subscript):  # ``fn = {"a": a, "b": b}[k]``
                picked.append((name, value.value))
            elif self._table_get(value) is not None:  # ``fn = table.get(k)``
                picked.append((name, cast("ast.Attribute", cast("ast.Call", value).func).value))
            elif self._table_literal(value):
                self.tool_tables.add(name)
            elif (record := _record_places(value, self._tool_value))[1]:
                records[name] = record
        for name, literal in picked:
            if (isinstance(literal, ast.Name) and literal.id in self.tool_tables) or (
                    self._table_literal(literal)):
                self.tool_loops.add(name)
        loops: dict[str, int] = {}
        for node in [*self.kinds.get(ast.For, ()), *self.kinds.get(ast.comprehension, ())]:
            target, source = node.target, node.iter
            # ``for fn, args in calls`` or over the literal itself (``in [(tool, {}), ...]``)
            width, places = (records.get(source.id, (0, frozenset()))
                             if isinstance(source, ast.Name)
                             else _record_places(source, self._tool_value))
            if places:
                if isinstance(target, ast.Tuple) and len(target.elts) == width:
                    for place in places:
                        if isinstance(bound := target.elts[place], ast.Name):
                            loops[bound.id] = loops.get(bound.id, 0) + 1
                continue
            if isinstance(source, ast.Call) and not source.args and isinstance(
                    source.func, ast.Attribute):
                table, method = source.func.value, source.func.attr
            else:
                table, method = source, None
            # a table by its name, or the literal itself (``for f in [tools.a, b]``)
            if not (self.tool_tables and isinstance(table, ast.Name)
                    and table.id in self.tool_tables) and not self._table_literal(table):
                continue
            if method == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
                target = target.elts[1]
            elif method not in (None, "values"):
                continue
            if isinstance(target, ast.Name):
                loops[target.id] = loops.get(target.id, 0) + 1
        self.tool_loops.update(name for name, n in loops.items()  # every binding such a loop
                               if name not in self.tool_tables and single(name, n))

    def _table_literal(self, value: ast.expr) -> bool:
        """A list, tuple or dict literal of tools and of lambdas that call tools (those
        lambdas noted in :attr:`table_lambdas`)."""
        items = (value.elts if isinstance(value, ast.List | ast.Tuple)
                 else value.values if isinstance(value, ast.Dict) and None not in value.keys
                 else [])
        lambdas = [item for item in items if isinstance(item, ast.Lambda)
                   and self._lambda_calls_a_tool(item)]
        if not items or not all(self._tool_value(item) is not None or item in lambdas
                                for item in items):
            return False
        self.table_lambdas.update(id(item) for item in lambdas)
        return True

    def _lambda_calls_a_tool(self, node: ast.Lambda) -> bool:
        """A tool call in the lambda's body (not in a function or lambda inside it)."""
        stack: list[ast.AST] = [node.body]
        while stack:
            child = stack.pop()
            if isinstance(child, ast.Lambda | ast.comprehension):
                return False  # its own scope: the rewrite would not reach it
            if isinstance(child, ast.Call) and self._tool_value(child.func) is not None:
                return True
            stack.extend(ast.iter_child_nodes(child))
        return False

    @staticmethod
    def _table_get(value: ast.expr) -> str | None:
        """``d.get(k)`` (one argument: no default that may be no tool) → ``d``."""
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and value.func.attr == "get" and isinstance(value.func.value, ast.Name)
                and len(value.args) == 1 and not value.keywords):
            return value.func.value.id
        return None

    def _tool_callee(self, func: ast.expr) -> bool:
        """Whether calling ``func`` always calls a tool although it names none: an item of
        a table of tools, its loop variable, ``getattr(tools, name)``, or ``a if c else b``
        of those (the call is awaited, as a named tool's is)."""
        if isinstance(func, ast.Subscript):
            return isinstance(func.value, ast.Name) and func.value.id in self.tool_tables
        if self._table_get(func) in self.tool_tables:
            return True
        if isinstance(func, ast.Name):
            return func.id in self.tool_loops
        if isinstance(func, ast.IfExp):
            return all(self.tool_of(side) in self.tools or self._tool_callee(side)
                       for side in (func.body, func.orelse))
        return (isinstance(func, ast.Call) and isinstance(func.func, ast.Name)
                and func.func.id == "getattr" and "getattr" not in self.bound
                and len(func.args) == 2 and not func.keywords
                and isinstance(func.args[0], ast.Name) and func.args[0].id == "tools"
                and "tools" not in self.bound)

    def _partial(self, value: ast.expr | None) -> bool:
        """Whether ``value`` names a partial of a tool bound before it."""
        return isinstance(value, ast.Name) and value.id in self.partials

    def _tool_value(self, value: ast.expr) -> str | None:
        """The tool a bare name or ``tools.x`` read as a value is, if it is one."""
        if isinstance(value, ast.Name):
            path = self.bare.get(value.id)
        elif isinstance(value, ast.Attribute):
            root, parts = _root(value)
            path = ".".join(parts) if root == "tools" and parts else None
        else:
            return None
        return path if path is not None and path in self.tools else None

    # -- helpers --------------------------------------------------------------------------

    def add(self, node: ast.AST, message: str) -> None:
        self.problems.append(Problem(line=getattr(node, "lineno", 1),
                                     column=getattr(node, "col_offset", 0) + 1, message=message))

    def note(self, dialect: str) -> None:
        if dialect not in self.used:
            self.used.append(dialect)

    def root_of(self, node: ast.expr) -> tuple[str | None, list[str]]:
        """:func:`_root`, once per node (the passes ask about the same calls again)."""
        found = self.roots.get(node)
        if found is None:
            found = _root(node)
            if found[0] in self.aliases:
                found = ("tools", found[1])
            self.roots[node] = found
        return found

    def tool_of(self, func: ast.expr) -> str | None:
        """The tool path a call's function names (``tools.x``, a bare name, an alias)."""
        if type(func) is ast.Name and func.id not in self.bare and self.skips:
            return None  # what ``_tool_of`` finds for a name that is no bare tool
        paths = self.paths
        if func in paths:
            return paths[func]
        path = paths[func] = self._tool_of(func)
        return path

    def _tool_of(self, func: ast.expr) -> str | None:
        if isinstance(func, ast.Subscript):  # ``tools["list-repos"]``: the tool by its name
            if (not self.strict and isinstance(func.value, ast.Name)
                    and func.value.id == "tools" and isinstance(func.slice, ast.Constant)
                    and isinstance(func.slice.value, str)):
                return self.named(func.slice.value)
            return None
        root, parts = self.root_of(func)
        if root is None:
            return None
        if root == "tools" and parts:
            path = ".".join(parts)
        elif not self.strict and root in self.bare:
            path = ".".join([self.bare[root], *parts])
        else:
            return None
        if path in self.tools or self.strict:
            return path
        if path.endswith("_sync") and path[:-5] in self.tools:
            return path[:-5]
        head, _, method = path.rpartition(".")
        if method in RUNNABLE and head in self.tools and not self.strict:
            return head  # ``search.invoke({...})``: see _plan_runnables()
        names = path.split(".")
        if not self.strict and any(names[i] in TOOL_TEXTS and ".".join(names[:i]) in self.tools
                                   for i in range(1, len(names))):
            # ``search.description`` (``.upper()``, ``.__class__``): a LangChain tool's
            # text, read at run time
            return None
        # ``tools.weather.get_by_city_date`` for the tool ``weather.get_by_city_date``
        # (``tools.weather_get_by_city_date``): the runtime reads it the same way
        return self.named(path) or path

    def named(self, name: str) -> str | None:
        """The tool path a tool's name as text stands for: its path, its wire name (or a
        dotted path in it), or its Python spelling (``list-repos`` → ``list_repos``)."""
        if name in self.tools:
            return name
        wires = self.wires
        if wires is None:
            # made per registry: a script naming a namespace (``tools.ns.x``) asks here
            wires = self.wires = _per_registry(self.tools, _wire_paths)
        if name in wires:
            return wires[name]
        spelled = _NOT_IDENTIFIER.sub("_", name)
        return spelled if spelled in self.tools else None

    def _asyncio_call(self, func: ast.expr, names: frozenset[str]) -> bool:
        """Whether ``func`` is ``asyncio.<one of names>`` (or the loop or task group forms
        below). Only an attribute can be: the plan asks this of every call, most of them
        plain names, so those are answered before the root is looked up."""
        if not isinstance(func, ast.Attribute):
            return False
        if func.attr in names:
            root, parts = self.root_of(func)
            if root == "asyncio" and len(parts) == 1:
                return True
        if names is _RUN and (
                func.attr == "run_until_complete") and isinstance(func.value, ast.Call) and not (
                func.value.args or func.value.keywords):
            # ``asyncio.get_event_loop().run_until_complete(main())``: ``asyncio.run``
            return self._asyncio_call(func.value.func, _LOOPS)
        # ``tg.create_task(...)`` of a TaskGroup (``loop.create_task`` alike): not a tool
        return (names is _CONCURRENT and isinstance(func, ast.Attribute)
                and func.attr == "create_task" and self.tool_of(func) is None)

    def partial_call(self, name: str) -> bool:
        """Whether ``name(...)`` calls a partial of a tool or of an ``async def``."""
        target = self.partial_targets.get(name)
        return name in self.partials or (target is not None and target.id in self.async_funcs
                                         and target.id in self.def_only)

    def awaitable(self, node: ast.Call) -> bool:
        """A call whose value is an awaitable the script means to use as its result."""
        if id(node) in self.thunk_calls or id(node) in self.wrapper_calls:
            return True
        if self.tool_of(node.func) is not None:
            path = self.tool_of(node.func)
            return path in self.tools
        if not self.strict and self._tool_callee(node.func):
            return True
        if isinstance(node.func, ast.Name) and (node.func.id in self.async_funcs
                                                or self.partial_call(node.func.id)):
            return True
        if isinstance(node.func, ast.Attribute) and node.func.attr in self.async_methods:
            root, _ = self.root_of(node.func)
            return root is None or not (root in FACADE_NAMES or root in SANDBOX_GLOBALS
                                        or root in self.bare)
        return self._asyncio_call(node.func, _AWAITABLE_ASYNCIO)

    def concurrent(self, node: ast.AST) -> bool:
        """Whether ``node`` is handed (maybe through a list) to ``asyncio.gather`` & co."""
        child = node
        parent = self.parents.get(child)
        while parent is not None:
            if isinstance(parent, _PASSING):
                pass
            elif isinstance(parent, _ELEMENT_COMPREHENSIONS):
                if child is not parent.elt:
                    return False
            elif isinstance(parent, ast.DictComp):
                if child is not parent.value:
                    return False
            elif isinstance(parent, ast.Dict):
                if child not in parent.values:
                    return False
            elif isinstance(parent, ast.Lambda):
                # ``gather(*map(lambda x: tools.get(x), xs))``: a list of the calls
                if self.lambdas.get(id(parent)) != "map" or child is not parent.body:
                    return False
                child = self.parents[parent]
                parent = self.parents.get(child)
                continue
            elif isinstance(parent, ast.Call):
                if child is parent.func:
                    return False
                if self._asyncio_call(parent.func, _CONCURRENT):
                    return True
                root, parts = self.root_of(parent.func)
                return parts == ["append"] and root in self.task_names
            elif isinstance(parent, _ASSIGNS):
                targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
                for target in targets:
                    root, _ = self.root_of(target) if not isinstance(
                        target, ast.Subscript) else self.root_of(target.value)
                    if root in self.task_names:
                        return True
                return False
            else:
                return False
            child, parent = parent, self.parents.get(parent)
        return False

    def scope_of_await(self) -> _Scope:
        for scope in reversed(self.scopes):
            if scope.kind != "comprehension":
                return scope
        return self.scopes[0]

    # -- first passes ---------------------------------------------------------------------

    def of(self, kind: type[_N]) -> list[_N]:
        """The script's nodes of type ``kind`` (exactly), in traversal order."""
        return self.kinds.get(kind, [])  # type: ignore[return-value]

    def prepare(self) -> None:
        if not self.strict:
            self._plan_aliases()
            self._plan_by_name()
        # An async generator's call is an async iterator, not an awaitable.
        self.async_funcs.update(node.name for node in self.of(ast.AsyncFunctionDef)
                                if not suspends(node.body))
        self.awaited.update(id(node.value) for node in self.of(ast.Await))
        for node in self.of(ast.Call):
            if self._asyncio_call(node.func, _CONCURRENT):
                for arg in node.args:
                    # gather(*tasks), gather(task), gather(*tasks.values()): tasks holds
                    # awaitables the call runs concurrently
                    item = arg.value if isinstance(arg, ast.Starred) else arg
                    if isinstance(item, ast.Call) and not item.args:
                        item = item.func.value if isinstance(item.func, ast.Attribute) else (
                            item)
                    if isinstance(item, ast.Name):
                        self.task_names.add(item.id)
            if node.args and self._asyncio_call(node.func, _RUN):
                self.awaited.add(id(node.args[0]))
        self._awaited_later()
        self._handed_to_own_functions()
        if not self.strict:
            self._handed_thunks()
        # Plain functions that call tools (or other such functions) become async.
        if self.strict:
            return
        self._plan_factories()
        functions = self.of(ast.FunctionDef)
        if any(f.decorator_list for f in functions):
            self.wrappers = wrapping_decorators(self.tree, self.parents, self.loads_of)
        methods = self._convertible_methods()
        self._convert_functions(functions, methods)
        while self._plan_wrappers(functions, methods) | self._plan_context_partners():
            self._convert_functions(functions, methods)  # their callers, made async too
        self._plan_generators()
        self._plan_lambdas()
        self._plan_key_functions()
        self._plan_mapped_functions()

    def _convert_functions(self, functions: Sequence[ast.FunctionDef],
                           methods: set[int]) -> None:
        """Mark the plain functions that call tools (or other such functions) async.

        As if the functions were scanned in order, again and again until a whole scan
        converts none: each scan converts every function that needs it by then. Each body
        is read once: a conversion only re-checks the calls of the name it made async (a
        chain of 800 functions, each calling the next, was 320 000 body walks, 10 s)."""
        needy: list[int] = []
        calls: dict[str, list[tuple[int, ast.expr]]] = {}
        for index, func in enumerate(functions):
            if self._needs_async(func, calls, index):
                needy.append(index)
        queued = set(needy)
        position = 0
        while needy:
            at = bisect.bisect_left(needy, position)
            index = needy.pop(at if at < len(needy) else 0)
            queued.discard(index)
            func = functions[index]
            position = index + 1
            if id(func) in self.converted or (
                    func.name in self.async_funcs and id(func) not in methods):
                continue
            self.converted.add(id(func))
            name = func.name
            if id(func) not in methods:
                owner = self.parents.get(func)
                if isinstance(owner, ast.ClassDef):
                    if suspends(func.body):
                        if not self._async_gen_method(func):
                            continue
                        self.async_gen_methods.add(name)  # ``x.name(...)`` read async
                    elif self._async_context(owner, func):
                        name = owner.name  # ``with Cls(...)`` becomes ``async with``
                        self.async_contexts.add(name)
                    elif self._async_property(func):
                        self.async_properties.add(name)  # each ``x.name`` read awaited
                    elif self._async_construction(owner, func):
                        # ``Cls(...)`` is awaited as an ``async def``'s call is
                        name = owner.name
                        self.async_classes.add(name)
                        self.async_funcs.add(name)
                    else:
                        continue
                elif _context_decorated(func) and self._generator_context(func):
                    self.generator_contexts.add(id(func))
                    self.async_contexts.add(name)  # each ``with f(...)`` an ``async with``
                elif suspends(func.body) and not _context_decorated(func):
                    self.async_gens.add(func.name)
                elif self._used_as_value(name) and self._only_shared_calls(func):
                    # ``def norm(r): return r.get("x")`` in ``{"n": norm}``: a dict's
                    # ``get`` as likely as the script's; its call is checked when made
                    self.converted.discard(id(func))
                    continue
                else:
                    self.async_funcs.add(func.name)
                    made = self.factories.get(id(func))
                    if made is not None:  # ``get = make_fetcher()``: ``get(...)`` awaited
                        self.async_funcs.update(made)
                        for bound in made:
                            self._requeue(calls.get(bound, ()), functions, needy, queued)
            else:
                # every method of that name: ``x.name(...)`` is awaited wherever it is
                self.async_methods.add(func.name)
                self.converted.update(id(f) for f in functions if f.name == func.name)
            self._requeue(calls.get(name, ()), functions, needy, queued)

    def _only_shared_calls(self, func: ast.FunctionDef) -> bool:
        """Whether the only calls that would make ``func`` async are ``x.get(...)`` of a
        method made async named like a library method (``x`` may as well be a dict)."""
        shared = False
        for node in _own_nodes(func):
            if isinstance(node, ast.Await) or (
                    isinstance(node, ast.Attribute) and self._property_read(node)):
                return False
            if isinstance(node, ast.Call):
                if self._shared_method_call(node):
                    shared = True
                elif self._awaits_call(node) or self._asyncio_call(node.func, _RUN):
                    return False
        return shared

    def _requeue(self, calls: Sequence[tuple[int, ast.expr]],
                 functions: Sequence[ast.FunctionDef], needy: list[int],
                 queued: set[int]) -> None:
        """Queue the functions making ``calls`` that a conversion made async."""
        for caller, call in calls:
            if id(functions[caller]) not in self.converted and (
                    caller not in queued) and self._makes_async(call):
                bisect.insort(needy, caller)
                queued.add(caller)

    def _plan_factories(self) -> None:
        """``def make_fetcher(): ... def fetch(sym): ... return fetch`` (a top-level
        function ending by returning a ``def`` of its own body) whose every call is a
        top-level ``get = make_fetcher(...)``, ``get`` bound only there and only called:
        when ``fetch`` calls tools it becomes async, and so each ``get(...)`` is awaited
        (:attr:`factories`)."""
        for factory in self.of(ast.FunctionDef):
            last = factory.body[-1]
            if self.parents.get(factory) is not self.tree or not (
                    isinstance(last, ast.Return) and isinstance(last.value, ast.Name)) or (
                    factory.name not in self.def_only or self._definitions(factory.name) != 1):
                continue
            returned = last.value
            inner = next((stmt for stmt in factory.body if isinstance(stmt, ast.FunctionDef)
                          and stmt.name == returned.id), None)
            if inner is None or inner.decorator_list or suspends(inner.body) or any(
                    isinstance(node, ast.Name) and node.id == inner.name and node is not returned
                    for node in ast.walk(factory)):
                continue
            bound = [self._factory_binding(load, returned)
                     for load in self.loads_of.get(factory.name, ())]
            if bound and all(bound):
                self.factories[id(inner)] = cast("list[str]", bound)
                self.factory_returns.add(id(returned))

    def _factory_binding(self, load: ast.Name, returned: ast.Name) -> str | None:
        """``g`` for ``g = make(...)`` at the top level, ``g`` bound only there and only
        ever called (``returned``, the factory's ``return g``, aside); None for any other
        use of ``make``."""
        call = self.parents.get(load)
        assign = self.parents.get(call) if isinstance(call, ast.Call) else None
        if not (isinstance(call, ast.Call) and call.func is load and isinstance(assign, ast.Assign)
                and self.parents.get(assign) is self.tree and len(assign.targets) == 1
                and isinstance(assign.targets[0], ast.Name)):
            return None
        name = assign.targets[0].id
        uses = [use for use in self.loads_of.get(name, []) if use is not returned]
        if self.stores.get(name) != 1 or name in self.def_only or not uses or not all(
                isinstance(p := self.parents.get(use), ast.Call) and p.func is use
                for use in uses):
            return None
        return name

    def _async_construction(self, cls: ast.ClassDef, func: ast.FunctionDef) -> bool:
        """Whether ``cls``'s ``__init__`` (or a dataclass's ``__post_init__``) that calls
        tools, ``func``, can be an ``async def`` with each ``Cls(...)`` awaited (the
        sandbox's class then makes its instances awaitably, ``AsyncInitMeta``): a class at
        the top level, its name's one binding, no base of another class, constructed by
        its name only (not by ``cls(...)`` in its methods) and otherwise only read for its
        attributes, ``isinstance`` or a comparison."""
        name = cls.name
        if func.name == "__post_init__":
            if not any(_decorator_name(d) == "dataclass" for d in cls.decorator_list) or any(
                    isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef)
                    and stmt.name == "__init__" for stmt in cls.body) or (
                    "replace" in self.loads_of or any(
                        node.attr == "replace" and self.root_of(node)[0] == "dataclasses"
                        for node in self.of(ast.Attribute))):
                return False  # ``replace(obj, ...)`` would build one without an await
        elif func.name != "__init__" or suspends(func.body):
            return False
        if self.parents.get(cls) is not self.tree or name not in self.def_only or (
                self._definitions(name) != 1):
            return False
        if any(isinstance(base, ast.Name) and base.id == name
               for other in self.of(ast.ClassDef) for base in other.bases):
            return False
        if any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
               and node.func.id == "cls" for node in ast.walk(cls)):
            return False
        for load in self.loads_of.get(name, ()):
            parent = self.parents.get(load)
            if isinstance(parent, ast.Call) and (parent.func is load or (
                    self._builtin(parent, "isinstance", "issubclass") and load in parent.args)
                    or self._dataclass_query(parent, load)):
                continue
            if not isinstance(parent, ast.Attribute | ast.Compare | ast.Tuple):
                return False
            if isinstance(parent, ast.Tuple) and not (
                    (call := self.parents.get(parent)) is not None
                    and self._builtin(call, "isinstance", "issubclass")):
                return False
        return True

    def _dataclass_query(self, call: ast.Call, load: ast.Name) -> bool:
        """Whether ``call`` reads the class ``load`` names without making one:
        ``fields(Cls)``, ``is_dataclass(Cls)`` or the same under ``dataclasses.``, each
        name bound by its import alone."""
        func = call.func
        if call.args != [load] or call.keywords:
            return False
        if isinstance(func, ast.Attribute):
            imported = self._imported_only(func.value.id) if isinstance(
                func.value, ast.Name) else None
            return func.attr in _DATACLASS_QUERIES and imported == ("dataclasses", None)
        return isinstance(func, ast.Name) and self._imported_only(func.id) in {
            ("dataclasses", query) for query in _DATACLASS_QUERIES}

    def _imported_only(self, name: str) -> tuple[str, str | None] | None:
        """(module, the name imported from it; None for ``import module``) when one import
        statement binds ``name`` and nothing else does; else None. Kept per name: each
        ``fields(Cls)`` asked it, a walk over every import, argument and handler of the
        script (4,000 of each, 67 kB: 2.1 s of the host's CPU for one check)."""
        if name not in self.imported_only:
            self.imported_only[name] = self._find_imported_only(name)
        return self.imported_only[name]

    def _find_imported_only(self, name: str) -> tuple[str, str | None] | None:
        sites = [a for a in self.of(ast.alias) if (a.asname or a.name).split(".")[0] == name]
        if len(sites) != 1 or self.stores.get(name, 0) or self._definitions(name) or any(
                a.arg == name for a in self.of(ast.arg)) or any(
                getattr(node, "name", None) == name or getattr(node, "rest", None) == name
                for kind in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping)
                for node in self.of(kind)):
            return None
        alias, statement = sites[0], self.parents.get(sites[0])
        if isinstance(statement, ast.Import):
            return (alias.name if alias.asname else alias.name.partition(".")[0]), None
        if isinstance(statement, ast.ImportFrom) and not statement.level and statement.module:
            return statement.module, alias.name
        return None

    def _async_property(self, func: ast.FunctionDef) -> bool:
        """Whether ``func``, a ``@property`` getter that calls tools, can be an ``async
        def`` with each ``x.name`` read awaited: a name of its own (no other definition,
        no library method's name, never stored, deleted or called as ``x.name(...)``)."""
        name = func.name
        if name.startswith("_") or name in _library_methods() or suspends(func.body) or [
                _decorator_name(d) for d in func.decorator_list] != ["property"]:
            return False
        if self._definitions(name) != 1:
            return False
        if name not in self.def_only or any(
                isinstance(node, ast.Constant) and node.value == name
                for node in self.of(ast.Constant)) or any(  # ``getattr(x, "name")``
                node.arg == name for node in self.of(ast.keyword)) or any(
                name in node.kwd_attrs for node in self.of(ast.MatchClass)):
            return False  # ``SimpleNamespace(name=...)``, ``case Cls(name=v)``: not it
        for node in self.of(ast.Attribute):
            if node.attr == name and (type(node.ctx) is not ast.Load or (
                    isinstance(call := self.parents.get(node), ast.Call)
                    and call.func is node)):
                return False
        return True

    def _async_context(self, cls: ast.ClassDef, func: ast.FunctionDef) -> bool:
        """Whether ``cls``'s ``__enter__``/``__exit__`` that calls tools, ``func``, can be
        ``async def __aenter__``/``__aexit__`` with each ``with Cls(...)`` an ``async
        with``: a class at the top level defining both, its name's one binding, no base of
        another class, and only ever constructed as a ``with`` statement's one item."""
        name = cls.name
        methods = {stmt.name for stmt in cls.body if isinstance(stmt, ast.FunctionDef)}
        if func.name not in ("__enter__", "__exit__") or not {
                "__enter__", "__exit__"} <= methods or {"__aenter__", "__aexit__"} & methods:
            return False
        if self.parents.get(cls) is not self.tree or name not in self.def_only or (
                self._definitions(name) != 1) or any(
                isinstance(base, ast.Name) and base.id == name
                for other in self.of(ast.ClassDef) for base in other.bases):
            return False
        for load in self.loads_of.get(name, ()):
            call = self.parents.get(load)
            item = self.parents.get(call) if isinstance(call, ast.Call) else None
            statement = self.parents.get(item) if isinstance(item, ast.withitem) else None
            if not (isinstance(call, ast.Call) and call.func is load and (
                    (isinstance(statement, ast.With) and len(statement.items) == 1)
                    or self._stack_entry(call) is not None)):
                return False
        return True

    def _async_gen_method(self, func: ast.FunctionDef) -> bool:
        """Whether ``func``, a generator method that calls tools, can be an async generator
        read where it is called: a plain method, a name of its own (no other definition,
        no library method's name), every ``x.name`` read a call (planned as a generator
        function's call is)."""
        name = func.name
        if name.startswith("_") or name in _library_methods() or func.decorator_list or (
                self._definitions(name) != 1) or name in self.bound - self.def_only:
            return False
        return all(isinstance(call := self.parents.get(node), ast.Call) and call.func is node
                   for node in self.of(ast.Attribute) if node.attr == name)

    def _wrapping(self, decorator: ast.expr) -> str | None:
        """The name of the wrapping decorator ``decorator`` applies (``@timed``,
        ``@retry(3)``), or None."""
        found = self.wrappers.get(_decorator_name(decorator) or "")
        if found is None or found.factory != isinstance(decorator, ast.Call) or not (
                isinstance(decorator.func if isinstance(decorator, ast.Call) else decorator,
                           ast.Name)):
            return None
        return found.name

    def _plan_wrappers(self, functions: Sequence[ast.FunctionDef], methods: set[int]) -> bool:
        """Make async the wrapping decorators (:mod:`codemode.mode.decorators`) over a
        function made async, or whose wrapper calls tools itself: the wrapper an ``async
        def`` awaiting its call of the function, and every function the decorator
        decorates async (its calls awaited), when each can be: a plain ``def`` under
        wrapping decorators only, never used as a value, or a method made async. Whether
        any was made async (their callers are then looked at again)."""
        changed = False
        for decorator in self.wrappers.values():
            name = decorator.name
            if name in self.async_wrappers or name in self.refused_wrappers or not (
                    id(decorator.wrapper) in self.converted
                    or any(id(t) in self.converted for t in decorator.targets)
                    or self._needs_async(decorator.wrapper, {}, 0)):
                continue
            if not all(self._wrappable(target, methods) for target in decorator.targets):
                self.refused_wrappers.add(name)
                continue
            self.note("decorator calling tools")
            self.async_wrappers.add(name)
            self.wrapper_calls.update(id(call) for call in decorator.calls)
            self.converted.add(id(decorator.wrapper))
            for target in decorator.targets:
                if id(target) in self.converted:
                    continue
                if id(target) in methods:
                    self.async_methods.add(target.name)
                    self.converted.update(id(f) for f in functions if f.name == target.name)
                else:
                    self.async_funcs.add(target.name)
                    self.converted.add(id(target))
            changed = True
        return changed

    def _wrappable(self, target: ast.FunctionDef, methods: set[int]) -> bool:
        """Whether ``target``, under a wrapping decorator, can be made async with it (a
        generator cannot: the wrapper would await the generator it returns)."""
        if id(target) in methods:
            return True
        wrapping = [self._wrapping(d) for d in target.decorator_list]
        # under a class decorator the name is its instance: any attribute but the one
        # holding the function may be read (``status.calls``)
        held = {self.wrappers[name].held for name in wrapping if name is not None}
        return not isinstance(self.parents.get(target), ast.ClassDef) and all(
            name is not None for name in wrapping) and not (
            suspends(target.body)) and (
            target.name in self.def_only and self._definitions(target.name) == 1
            and self._value_use(target.name, frozenset(held - {None})  # type: ignore[arg-type]
                                if held - {None} else None) is None)

    def _generator_context(self, func: ast.FunctionDef) -> bool:
        """Whether ``func``, a ``@contextmanager`` generator, can be an
        ``@asynccontextmanager`` async generator with each ``with func(...)`` an ``async
        with``: its one decorator contextlib's, ``asynccontextmanager`` not a name of the
        script's own, not a method, its name's one binding, no ``yield from`` or ``return
        <value>`` (an async generator has neither), and every read of it a call that is a
        ``with`` statement's item."""
        name = func.name
        if len(func.decorator_list) != 1 or not self._contextlib_decorator(
                func.decorator_list[0]) or isinstance(self.parents.get(func), ast.ClassDef) or (
                name not in self.def_only or self._definitions(name) != 1) or not (
                self._from_contextlib("asynccontextmanager")):
            return False
        stack: list[ast.AST] = list(func.body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.YieldFrom) or (
                    isinstance(node, ast.Return) and node.value is not None):
                return False
            if not isinstance(node, _SCOPES):
                stack.extend(ast.iter_child_nodes(node))
        for load in self.loads_of.get(name, ()):
            call = self.parents.get(load)
            item = self.parents.get(call) if isinstance(call, ast.Call) else None
            if not (isinstance(call, ast.Call) and call.func is load and (
                    (isinstance(item, ast.withitem) and item.context_expr is call
                     and isinstance(self.parents.get(item), ast.With))
                    or self._stack_entry(call) is not None)):
                return False
        return True

    def _contextlib_decorator(self, decorator: ast.expr) -> bool:
        """``@contextlib.contextmanager`` (``contextlib`` imported, or no name of the
        script's) or ``@contextmanager`` imported by that name from ``contextlib``."""
        return self._contextlib_name(decorator, "contextmanager")

    def _contextlib_name(self, node: ast.expr, name: str) -> bool:
        """``contextlib.<name>`` (``contextlib`` imported, or no name of the script's) or
        ``<name>`` imported by that name from ``contextlib``."""
        if isinstance(node, ast.Attribute):
            return isinstance(node.value, ast.Name) and (
                node.value.id == "contextlib") and node.attr == name and (
                "contextlib" not in self.stores and "contextlib" not in self.def_only
                and all(alias.name == "contextlib" for alias in self._imports("contextlib")))
        return isinstance(node, ast.Name) and node.id == name and (
            self._imports(name) != [] and self._from_contextlib(name))

    def _stack_entry(self, call: ast.AST | None) -> ast.Call | None:
        """``stack.enter_context(call)`` (its one argument) on an exit stack
        (:meth:`_exit_stack`) in the same function as its ``with``: the entry an
        ``AsyncExitStack`` awaits (``await stack.enter_async_context(call)``)."""
        entry = self.parents.get(call) if call is not None else None
        if not (isinstance(entry, ast.Call) and entry.args == [call] and not entry.keywords
                and isinstance(entry.func, ast.Attribute)
                and entry.func.attr == "enter_context"
                and isinstance(entry.func.value, ast.Name)):
            return None
        statement = self._exit_stack(entry.func.value.id)
        if statement is None or self._owner(entry) is not self._owner(statement):
            return None
        return entry

    def _exit_stack(self, name: str) -> ast.With | None:
        """The ``with ExitStack() as name:`` statement (contextlib's, its one item, the
        name's one binding) when every read of ``name`` is a call of its
        ``enter_context``, ``callback`` or ``push``: it can be an ``async with
        AsyncExitStack()``, which has those too."""
        if self.stores.get(name) != 1 or name in self.def_only:
            return None
        found = [stmt for stmt in self.of(ast.With) if len(stmt.items) == 1
                 and isinstance(target := stmt.items[0].optional_vars, ast.Name)
                 and target.id == name]
        if len(found) != 1:
            return None
        made = found[0].items[0].context_expr
        if not (isinstance(made, ast.Call) and not made.args and not made.keywords
                and self._contextlib_name(made.func, "ExitStack")):
            return None
        for load in self.loads_of.get(name, ()):
            attr = self.parents.get(load)
            if not (isinstance(attr, ast.Attribute)
                    and attr.attr in ("enter_context", "callback", "push")
                    and isinstance(call := self.parents.get(attr), ast.Call)
                    and call.func is attr):
                return None
        return found[0]

    def _async_stack_entries(self, node: ast.With) -> list[ast.Call]:
        """The ``enter_context`` calls of the exit stack ``node`` binds that enter a
        context made async."""
        target = node.items[0].optional_vars if len(node.items) == 1 else None
        if not isinstance(target, ast.Name) or self._exit_stack(target.id) is not node:
            return []
        entries = []
        for load in self.loads_of.get(target.id, ()):
            call = self.parents.get(self.parents.get(load))  # type: ignore[arg-type]
            if isinstance(call, ast.Call) and self._stack_entry(call.args[0] if len(
                    call.args) == 1 else None) is call and self._async_item(
                    ast.withitem(call.args[0])):
                entries.append(call)
        return entries

    def _to_async_stack(self, node: ast.With, entries: list[ast.Call]) -> None:
        """``with ExitStack() as s:`` → ``async with AsyncExitStack() as s:`` (imported
        beside ``ExitStack``, or ``contextlib.AsyncExitStack``), each of ``entries``
        ``(await s.enter_async_context(...))``."""
        edits = self.edits
        made = cast("ast.Call", node.items[0].context_expr).func
        edits.replace(edits.start(made), edits.end(made),
                      "contextlib.AsyncExitStack" if isinstance(made, ast.Attribute)
                      else "AsyncExitStack")
        if isinstance(made, ast.Name) and not self.async_stack_imported:
            self.async_stack_imported = True
            for alias in self._imports("ExitStack"):
                end = edits.end(alias)
                edits.replace(end, end, ", AsyncExitStack")
        start = edits.start(node)
        edits.replace(start, start, "async ")
        for entry in entries:
            end = edits.end(entry.func)
            edits.replace(end - len("enter_context"), end, "enter_async_context")
            edits.wrap(entry, "(await ", ")")

    def _from_contextlib(self, name: str) -> bool:
        """Whether ``name`` is bound, if at all, only by ``from contextlib import name``."""
        return name not in self.stores and name not in self.def_only and all(
            isinstance(importer := self.parents.get(alias), ast.ImportFrom)
            and importer.module == "contextlib" and alias.name == name
            for alias in self._imports(name))

    def _imports(self, name: str) -> list[ast.alias]:
        """The imports that bind ``name``."""
        return [alias for alias in self.of(ast.alias)
                if (alias.asname or alias.name).split(".")[0] == name]

    def _plan_context_partners(self) -> bool:
        """A ``with a(), b():`` where ``a`` is a generator context made async: ``b``, a
        ``@contextmanager`` generator that calls no tools, is made one too (the statement
        is an ``async with``), when it can be. Whether any was."""
        if not self.generator_contexts:
            return False
        generators = {func.name: func for func in self.of(ast.FunctionDef)
                      if _context_decorated(func) and id(func) not in self.converted}
        changed = False
        for statement in self.of(ast.With):
            if len(statement.items) < 2 or not any(
                    self._async_item(item) for item in statement.items):
                continue
            for item in statement.items:
                call = item.context_expr
                func = generators.get(call.func.id) if isinstance(call, ast.Call) and (
                    isinstance(call.func, ast.Name)) else None
                if func is not None and id(func) not in self.converted and (
                        self._generator_context(func)):
                    self.converted.add(id(func))
                    self.generator_contexts.add(id(func))
                    self.async_contexts.add(func.name)
                    changed = True
        return changed

    def _async_item(self, item: ast.withitem) -> bool:
        """A ``with`` item that calls a context made async (``async with`` it)."""
        call = item.context_expr
        return isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and (
            call.func.id in self.async_contexts)

    def _property_read(self, node: ast.AST) -> bool:
        """``x.name`` read, ``name`` a property made async."""
        return isinstance(node, ast.Attribute) and node.attr in self.async_properties and (
            type(node.ctx) is ast.Load)

    def _makes_async(self, node: ast.expr) -> bool:
        """Whether a call or read :meth:`_needs_async` noted makes its function async."""
        return self._awaits_call(node) if isinstance(node, ast.Call) else (
            self._property_read(node))

    def _definitions(self, name: str) -> int:
        """How many ``def``/``class`` statements bind ``name``."""
        defined: list[ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef] = [
            *self.of(ast.ClassDef), *self.of(ast.FunctionDef), *self.of(ast.AsyncFunctionDef)]
        return sum(node.name == name for node in defined)

    def _plan_generators(self) -> None:
        """Plain generators that call tools become async generators, iterated where they
        are called: ``for`` → ``async for``, a comprehension over one → an async one,
        ``list(g(...))`` (and the other builtins that read an iterator to its end) → the
        same over ``[v async for v in g(...)]``, ``yield from x`` → ``for v in x: yield v``
        (``async for`` when ``x`` is such a generator). Each rewrite reads the generator
        as lazily as CPython would (the same calls, in the same order); any other use is
        refused with what to write."""
        if not self.async_gens and not self.async_gen_methods:
            return
        defs = [f for f in self.of(ast.FunctionDef) if f.name in self.async_gens]
        taken = self.reads | self.bound
        item = next(n for n in (f"yielded{i or ''}" for i in range(len(taken) + 1))
                    if n not in taken)
        defined = Counter(f.name for f in defs)
        for func in defs:
            name = func.name
            if name not in self.def_only or defined[name] != 1:
                self.add(func, f"{name}() is a generator that calls tools and its name is "
                         "bound more than once: give it a name of its own")
                continue
            self._plan_generator_body(func, item)
        for method in self.of(ast.FunctionDef):
            if method.name in self.async_gen_methods:
                self._plan_generator_body(method, item)
        for attribute in self.of(ast.Attribute):
            if attribute.attr in self.async_gen_methods:
                self._plan_generator_use(self.parents[attribute], attribute.attr,  # type: ignore[arg-type]
                                         item)
        for load in self.loads:
            if load.id in self.async_gens:
                call = self.parents.get(load)
                if isinstance(call, ast.Call) and call.func is load:
                    held = self._held_generator(call)
                    if held is None:
                        self._plan_generator_use(call, load.id, item)
                        continue
                    for use in self.loads_of.get(held, ()):
                        self._plan_generator_use(use, load.id, item)

    def _plan_generator_body(self, func: ast.FunctionDef, item: str) -> None:
        data = self.edits.data
        stack: list[ast.AST] = list(func.body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda |
                          ast.ClassDef):
                continue
            stack.extend(ast.iter_child_nodes(node))
            if isinstance(node, ast.Return) and node.value is not None:
                self.add(node, f"{func.name}() is a generator that calls tools, so it runs "
                         "as an async generator, which cannot `return` a value: end it with "
                         "a bare `return` (yield the value first if it is needed)")
            elif isinstance(node, ast.Try | ast.TryStar | ast.With) and suspends(
                    [node]) and (not isinstance(node, ast.Try | ast.TryStar)
                                 or node.finalbody):
                self.add(node, f"{func.name}() is a generator that calls tools and yields "
                         "inside a `with` or `try`/`finally`, whose closing would not run "
                         "when a loop stops early: yield outside the block, or collect the "
                         "results in a list and return it")
            elif isinstance(node, ast.YieldFrom):
                statement = self.parents.get(node)
                start, end = self.edits.start(node), self.edits.end(node)
                line_start = data.rfind(b"\n", 0, start) + 1
                line_end = data.find(b"\n", end)
                rest = data[end:line_end if line_end >= 0 else len(data)].strip()
                if not isinstance(statement, ast.Expr) or data[line_start:start].strip() or (
                        rest and not rest.startswith(b"#")):
                    self.add(node, f"{func.name}() is a generator that calls tools, so "
                             "`yield from` becomes a loop: write it on a line of its own "
                             "as `for x in ...: yield x` (its value is not available)")
                    continue
                inner = node.value
                nested = isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and (
                    inner.func.id in self.async_gens)
                loop = "async for" if nested else "for"
                self.edits.replace(start, self.edits.start(inner), f"{loop} {item} in ")
                self.edits.replace(end, end, f": yield {item}")

    def _held_generator(self, call: ast.Call) -> str | None:
        """``g = pages(...)`` at the top level, the script's one binding of ``g``, every
        read of ``g`` at the top level too: ``g`` holds the async generator, and each
        read is planned as the call would be (``next(g)``, ``for x in g``)."""
        parent = self.parents.get(call)
        if not (isinstance(parent, ast.Assign) and parent.value is call
                and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)
                and self.parents.get(parent) is self.tree):
            return None
        name = parent.targets[0].id
        if self.stores.get(name) != 1 or name in self.def_only or name in self.async_gens:
            return None
        uses = self.loads_of.get(name, [])
        if not uses or any(self._owner(use) is not None for use in uses):
            return None
        return name

    def _fresh(self, item: str, count: int) -> list[str] | None:
        """``count`` names for a rewrite's own variables (None if the script has one)."""
        names = [f"{item}_{k}" for k in range(count)]
        return None if set(names) & (self.reads | self.bound) else names

    def _builtin(self, node: ast.AST | None, *names: str) -> str | None:
        """The name of the builtin ``node`` calls, if it is one of ``names`` (and the
        script binds none of the names the rewrites of it use)."""
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in names):
            return None
        used = {node.func.id, "anext", "iter", "int", "next", "enumerate"}
        return None if used & self.bound else node.func.id

    def _stopping(self, reader: ast.Call, read: ast.expr, test: ast.expr | None,
                  item: str) -> bool:
        """``any(G)``, ``all(G)``, ``any(T for x in G)``: the first item that decides it
        taken with ``anext`` from an async generator expression, as lazily as ``any`` and
        ``all`` read (the calls after it are not made). ``read`` is the generator's call
        (or the generator expression over it, ``test`` its element)."""
        kind = self._builtin(reader, "any", "all")
        if kind is None or reader.args != [read] or reader.keywords:
            return False
        found, default = ("True", "False") if kind == "any" else ("False", "True")
        negate = "" if kind == "any" else "not "
        func = reader.func
        self.edits.replace(self.edits.start(func), self.edits.end(func), "(await anext")
        if test is None:
            self.edits.wrap(read, f"({found} async for {item} in ",
                            f" if {negate}{item}), {default}")
            self.edits.wrap(reader, "", ")")
        else:  # the generator expression's parentheses are the call's
            self.edits.wrap(read, f"(({found} async for {item} in ",
                            f" if {negate}{item}), {default})")
            self.edits.wrap(reader, "", ")")
        self.note("generator calling tools")
        return True

    def _next_of_expression(self, reader: ast.Call, comp: ast.GeneratorExp) -> bool:
        """``next(T for x in G if C, default)``: ``(await anext(<the same, async>,
        default))``, reading ``G`` as far as ``next`` does. Without a default the end is
        StopAsyncIteration: only where the script catches no StopIteration."""
        if not (self._builtin(reader, "next") and reader.args and reader.args[0] is comp
                and len(reader.args) <= 2 and not reader.keywords) or (
                len(reader.args) == 1 and self._catches_stop_iteration()):
            return False
        self.edits.replace(self.edits.start(reader.func), self.edits.end(reader.func),
                           "(await anext")
        self.edits.wrap(reader, "", ")")
        if len(reader.args) == 1:  # the generator expression's parentheses are the call's
            self.edits.wrap(comp, "(", ")")
        self.note("generator calling tools")
        return True

    def _wrapped(self, node: ast.expr, wrapper: ast.Call, item: str) -> bool:
        """``enumerate(G, start)`` and ``zip(xs, G)`` iterated by a ``for`` or a
        comprehension: an async generator expression that reads ``G`` as they would
        (``zip`` reads ``xs`` first and stops at its end without another call of ``G``;
        ``xs`` makes no calls and may be read on after ``G`` ends, as a list is)."""
        kind = self._builtin(wrapper, "enumerate", "zip")
        holder = self.parents.get(wrapper)
        if kind is None or (wrapper.keywords and kind == "zip") or not (
                isinstance(holder, ast.For | ast.comprehension) and holder.iter is wrapper
        ) or isinstance(self.parents.get(holder), ast.GeneratorExp):
            return False
        names = self._fresh(item, 4)
        if names is None:
            return False
        c, v, s, g = names
        edits = self.edits
        if kind == "enumerate":
            start = [k.value for k in wrapper.keywords if k.arg == "start"]
            rest = wrapper.args[1:] + start
            if wrapper.args[0] is not node or len(rest) > 1 or len(
                    wrapper.keywords) > len(start) or (rest and not self._plain(rest[0])):
                return False
            first = edits.segment(rest[0]) if rest else "0"
            edits.replace(edits.start(wrapper), edits.start(node),
                          f"((next({c})[0], {v}) for {c} in [enumerate(iter(int, 1), "
                          f"{first})] async for {v} in ")
            edits.replace(edits.end(node), edits.end(wrapper), ")")
        else:
            moved = [] if not isinstance(node, ast.Call) else [
                *node.args, *(k.value for k in node.keywords)]
            if len(wrapper.args) != 2 or wrapper.args[1] is not node or not all(
                    self._plain(part) for part in [wrapper.args[0], *moved]):
                return False
            items, gen = edits.segment(wrapper.args[0]), edits.segment(node)
            edits.replace(edits.start(wrapper), edits.end(wrapper),
                          f"(({c}, {v}) for {g} in [{gen}] for {s} in [[]] for {c} in "
                          f"{items} for {v} in [await anext({g}, {s})] if {v} is not {s})")
        self._iterate_async(holder)
        self.note("generator calling tools")
        return True

    def _reader_kind(self, call: ast.Call) -> str | None:
        """``zip``, ``islice`` or ``chain`` when ``call`` calls the builtin or the
        ``itertools`` function (``itertools.islice``, or its name from ``from itertools
        import islice``) with positional arguments only."""
        if call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        func = call.func
        if isinstance(func, ast.Name):
            if func.id == "zip":
                return None if "zip" in self.bound else "zip"
            if func.id in ("islice", "chain") and self.stores.get(func.id) is None and (
                    func.id in self.itertools_names):
                return func.id
            return None
        root, parts = self.root_of(func)
        if root == "itertools" and parts in (["islice"], ["chain"]) and (
                "itertools" not in self.stores):
            return parts[0]
        return None

    def _async_reader(self, node: ast.expr, reader: ast.Call, item: str) -> bool:
        """``zip(G, xs)``, ``islice(G, n)``, ``chain(G, xs)`` (``G`` a generator that
        calls tools, among the arguments; the first of ``islice``'s) iterated by a ``for``
        or a comprehension, or read to its end (``list(...)``): the sandbox's reader of
        that name reads the async generator in CPython's order, and is iterated with
        ``async for``."""
        kind = self._reader_kind(reader)
        if kind is None or node not in reader.args or (
                kind == "islice" and reader.args[0] is not node):
            return False
        if id(reader) in self.async_readers:
            return True  # another generator of the same reader planned it
        holder = self.parents.get(reader)
        if isinstance(holder, ast.For | ast.comprehension) and holder.iter is reader:
            comp = self.parents.get(holder)
            if isinstance(comp, ast.GeneratorExp):
                if not self._read_to_end(comp):
                    return False
                self.gen_comprehensions.add(id(comp))
                start, end = self.edits.start(comp), self.edits.end(comp)
                self.edits.replace(start + 1, start + 1, "[")
                self.edits.replace(end - 1, end - 1, "]")
            self._iterate_async(holder)
        elif isinstance(holder, ast.Call) and holder.args and holder.args[0] is reader and (
                self._reads_to_end(holder)):
            self.edits.wrap(reader, f"[{item} async for {item} in ", "]")
        else:
            return False
        self.async_readers.add(id(reader))
        self.note("generator calling tools")
        return True

    def _plain(self, node: ast.expr) -> bool:
        """An expression a rewrite may move or read again: names, literals, attributes,
        subscripts and operators of them, calls of ``range`` or a dict's views."""
        for part in ast.walk(node):
            if isinstance(part, ast.Call):
                func = part.func
                if not ((isinstance(func, ast.Name) and func.id == "range"
                         and "range" not in self.bound) or (
                        isinstance(func, ast.Attribute) and not part.args
                        and func.attr in ("items", "keys", "values"))):
                    return False
            elif not isinstance(part, ast.Name | ast.Constant | ast.List | ast.Tuple |
                                ast.Attribute | ast.Subscript | ast.BinOp | ast.UnaryOp |
                                ast.Slice | ast.expr_context | ast.operator |
                                ast.unaryop | ast.keyword):
                return False
        return True

    def _iterate_async(self, holder: ast.For | ast.comprehension) -> None:
        """``async`` before the ``for`` of ``holder``."""
        if isinstance(holder, ast.For):
            start = self.edits.start(holder)
        else:
            start = self.edits.data.rfind(b"for", 0, self.edits.start(holder.target))
        self.edits.replace(start, start, "async ")

    def _next_call(self, call: ast.expr, name: str) -> bool:
        """``next(G)``/``next(G, default)`` → ``(await anext(G, ...))``. Without a default
        the end is StopAsyncIteration, not StopIteration: refused where the script
        catches StopIteration."""
        parent = self.parents.get(call)
        if not (self._builtin(parent, "next") and parent.args  # type: ignore[union-attr]
                and parent.args[0] is call and len(parent.args) <= 2  # type: ignore[union-attr]
                and not parent.keywords):  # type: ignore[union-attr]
            return False
        assert isinstance(parent, ast.Call)
        if len(parent.args) == 1 and self._catches_stop_iteration():
            self.add(call, f"{name}() is a generator that calls tools, so it runs as an "
                     "async generator, which `next()` reads as `await anext(...)`: its end "
                     "raises StopAsyncIteration, not the StopIteration this script "
                     f"catches: give next() a default, `next({name}(...), None)`")
            return True
        self.edits.replace(self.edits.start(parent.func), self.edits.end(parent.func),
                           "(await anext")
        self.edits.wrap(parent, "", ")")
        self.note("generator calling tools")
        return True

    def _plan_generator_use(self, call: ast.expr, name: str, item: str) -> None:
        parent = self.parents.get(call)
        owner = self._owner(call)
        if isinstance(owner, ast.Lambda):
            self.add(call, f"{name}() is a generator that calls tools, so it is read with "
                     "`async for`, which a lambda cannot hold: use a `def`")
            return
        if isinstance(parent, ast.For) and parent.iter is call:
            start = self.edits.start(parent)
            self.edits.replace(start, start, "async ")
            return
        if isinstance(parent, ast.YieldFrom) and parent.value is call:
            return  # ``async for`` in the generator that yields from it
        if isinstance(parent, ast.comprehension) and parent.iter is call:
            comp = self.parents[parent]
            if isinstance(comp, ast.GeneratorExp) and not self._read_to_end(comp):
                reader = self.parents.get(comp)
                if isinstance(reader, ast.Call) and (
                        self._stopping(reader, comp, comp.elt, item)
                        or self._next_of_expression(reader, comp)):
                    self.gen_comprehensions.add(id(comp))
                    self._iterate_async(parent)
                    return
                stops = (isinstance(reader, ast.Call) and isinstance(reader.func, ast.Name)
                         and reader.func.id in ("any", "all"))
                self.add(call, f"{name}() is a generator that calls tools, so a generator "
                         "expression over it can only be read to its end here (in `list()`, "
                         "`sorted()`, `sum()`, `set()`, `dict()`, `min()`, `max()` or "
                         "`''.join()`): " + (
                             _STOPPING_FIX[reader.func.id].format(  # type: ignore[union-attr]
                                 name=name) if stops else
                             f"write a `for` loop over it, e.g. `for x in {name}(...):`"))
                return
            found = self.edits.data.rfind(b"for", 0, self.edits.start(parent.target))
            self.edits.replace(found, found, "async ")
            if isinstance(comp, ast.GeneratorExp):
                self.gen_comprehensions.add(id(comp))
                start, end = self.edits.start(comp), self.edits.end(comp)
                self.edits.replace(start + 1, start + 1, "[")
                self.edits.replace(end - 1, end - 1, "]")
            return
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is call and (
                self._reads_to_end(parent)):
            self.edits.wrap(call, f"[{item} async for {item} in ", "]")
            return
        if self._next_call(call, name):
            return
        if isinstance(parent, ast.Call) and (self._stopping(parent, call, None, item)
                                             or self._wrapped(call, parent, item)
                                             or self._async_reader(call, parent, item)):
            return
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and (
                parent.func.id == "next" and parent.func.id not in self.bound):
            self.add(call, f"{name}() is a generator that calls tools, so it runs as an "
                     "async generator, and `next()` cannot read one (the sandbox has no "
                     f"`anext`): take the first item with a loop, `for first in "
                     f"{name}(...): break`")
            return
        wrapper = self._iterator_wrapper(parent)
        if wrapper is not None:
            self.add(call, f"{name}() is a generator that calls tools, so it runs as an "
                     f"async generator, which {wrapper}() cannot read: " + _WRAPPER_FIX[
                         wrapper].format(name=name))
            return
        self.add(call, f"{name}() is a generator that calls tools, so it runs as an async "
                 "generator, read only where it is called: iterate the call itself "
                 f"(`for x in {name}(...):`, `[x for x in {name}(...)]`, `list({name}(...))`);"
                 " it cannot be stored, returned, passed to another function or sent "
                 "values (`.send()`/`.throw()`)")

    def _iterator_wrapper(self, parent: ast.AST | None) -> str | None:
        """``enumerate``, ``zip`` or ``islice`` when ``parent`` is a call of one."""
        if not isinstance(parent, ast.Call):
            return None
        root, parts = self.root_of(parent.func)
        name = parts[-1] if parts else root
        if name in _WRAPPER_FIX and (not parts or (root == "itertools" and len(parts) == 1)):
            return name
        return None

    def _read_to_end(self, comp: ast.GeneratorExp) -> bool:
        """A generator expression that is the one iterable of a builtin reading it to its
        end (made a list in place: the same values, the same calls)."""
        parent = self.parents.get(comp)
        return isinstance(parent, ast.Call) and parent.args == [comp] and (
            self._reads_to_end(parent))

    def _reads_to_end(self, call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Name):
            return func.id in _READS_TO_END and func.id not in self.bound and (
                len(call.args) == 1 or func.id == "sum")
        return isinstance(func, ast.Attribute) and func.attr == "join" and isinstance(
            func.value, ast.Constant) and isinstance(func.value.value, str)

    def _convertible_methods(self) -> set[int]:
        """ids of the methods a plain ``x.name(...)`` call can await when they call tools:
        plain (or static/class) methods, named unlike any library method and like no
        function, whose every ``.name`` read is a call, none of them a generator."""
        by_name: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        defs: list[ast.FunctionDef | ast.AsyncFunctionDef] = [*self.of(ast.FunctionDef)]
        defs += self.of(ast.AsyncFunctionDef)
        for func in defs:
            by_name.setdefault(func.name, []).append(func)
        methods = {name: funcs for name, funcs in by_name.items() if not name.startswith("_")
                   and all(isinstance(self.parents.get(f), ast.ClassDef) for f in funcs)}
        if not methods:
            return set()
        values = {node.attr for node in self.of(ast.Attribute)
                  if not (isinstance(call := self.parents.get(node), ast.Call)
                          and call.func is node)}
        values.update(name for name in methods if self._class_body_value(name) is not None)
        found: set[int] = set()
        for name, funcs in methods.items():
            if name in values or any(
                    _implicit_call(f) is not None  # type: ignore[arg-type]
                    or any(not ((isinstance(d, ast.Name) and d.id in _METHOD_DECORATORS)
                                or (isinstance(d, ast.Attribute) and d.attr == "abstractmethod"
                                    and isinstance(d.value, ast.Name) and d.value.id == "abc")
                                or self._wrapping(d) is not None)
                           for d in f.decorator_list)
                    or any(isinstance(n, ast.Yield | ast.YieldFrom) for n in ast.walk(f))
                    for f in funcs):
                continue
            if name in _library_methods():
                self.shared_names.add(name)
            found.update(id(f) for f in funcs if isinstance(f, ast.FunctionDef))
        return found

    def _plan_aliases(self) -> None:
        """``codemode.x({...})`` → ``tools.x({...})``; ``search.invoke({...})``,
        ``tools.search.run("x")`` → ``search({...})``, ``tools.search("x")`` (the method
        on the tool's line: the edit keeps every line where it was)."""
        for name in self.loads if self.aliases else ():
            if name.id in self.aliases:
                self.note("tools under another name")
                self.edits.replace(self.edits.start(name), self.edits.end(name), "tools")
        for call in self.of(ast.Call):
            func = call.func
            if (isinstance(func, ast.Attribute) and func.attr in RUNNABLE
                    and func.value.end_lineno == func.end_lineno
                    and (path := self.tool_of(func)) is not None
                    and path == self.tool_of(func.value) and path in self.tools):
                self.note("LangChain tool methods")
                self.edits.replace(self.edits.end(func.value), self.edits.end(func), "")
                self._drop_options(call)
                single = runnable_input(call)
                if single is not None:  # ``invoke(input={...})``: the one argument
                    given = next(k for k in call.keywords if k.value is single)
                    self.edits.replace(self.edits.start(given), self.edits.start(single), "")

    def _drop_options(self, call: ast.Call) -> None:
        """``x.invoke({...}, config=config)``: LangChain's own keywords go, with their
        commas (their lines stay, as line breaks inside the call's parentheses)."""
        options = runnable_options(call)
        if not options:
            return
        parts: list[ast.expr | ast.keyword] = sorted(
            [*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))
        kept = [p for p in parts if p not in options]
        if len(kept) != 1:
            return  # other keywords too: the preflight names them
        at = parts.index(kept[0])
        self.note("LangChain tool options")
        if at > 0:  # ``invoke(config=c, input={...})``: up to the argument
            self.edits.replace(self.edits.start(parts[0]), self.edits.start(kept[0]),
                               "\n" * (kept[0].lineno - parts[0].lineno))
        if at < len(parts) - 1:  # ``invoke({...}, config=c)``: from the argument on
            self.edits.replace(self.edits.end(kept[0]), self.edits.end(parts[-1]),
                               "\n" * ((parts[-1].end_lineno or 0) - (kept[0].end_lineno or 0)))

    def _by_name_target(self, call: ast.Call) -> tuple[str, ast.expr | None] | None:
        """(the tool, the arguments' node) of ``X.call_tool("name", args)`` naming a tool on
        one line, args positional or ``arguments=``; else None."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr in _BY_NAME
                and isinstance(func.value, ast.Name) and call.args
                and isinstance(call.args[0], ast.Constant)
                and isinstance(call.args[0].value, str)
                and not any(isinstance(a, ast.Starred) for a in call.args)):
            return None
        if func.value.id == "tools" and func.attr in self.tools:
            return None  # a tool named ``call``
        path = self.named(call.args[0].value)
        keywords = [k for k in call.keywords if k.arg == "arguments"]
        if path is None or len(call.args) + len(keywords) > 2 or (
                len(keywords) != len(call.keywords)):
            return None
        value = call.args[1] if len(call.args) == 2 else keywords[0].value if keywords else None
        if func.lineno != (value if value is not None else call.args[0]).end_lineno:
            return None  # the edit keeps every line where it was
        return path, value

    def _plan_by_name(self) -> None:
        """``await mcp.call_tool("get_issue", {"number": 1})`` → ``await
        tools.get_issue(**{"number": 1})``: when every use of ``mcp`` (a name the script
        never binds, or ``tools``) is such a call and the script reads no MCP result
        attribute (``.content``, ``.structuredContent`` …: it would expect that object)."""
        calls = [c for c in self.of(ast.Call) if isinstance(c.func, ast.Attribute)
                 and c.func.attr in _BY_NAME and isinstance(c.func.value, ast.Name)]
        if not calls or any(a.attr in _MCP_RESULT for a in self.of(ast.Attribute)):
            return
        found: dict[str, list[tuple[ast.Call, str, ast.expr | None]]] = {}
        refused: set[str] = set()
        for call in calls:
            assert isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
            root = call.func.value.id
            target = self._by_name_target(call)
            if target is None:
                refused.add(root)
            else:
                found.setdefault(root, []).append((call, *target))
        for root, items in found.items():
            if root in refused:
                continue
            if root != "tools":
                unbound = root not in self.bound and root not in _KNOWN and (
                    root not in self.inputs and root not in self.bare
                    and root not in FACADE_NAMES and root not in self.refused_bare)
                uses = len(self.loads_of.get(root, ()))
                if not unbound or uses != len(items):
                    continue
                self.by_name_roots.add(root)
            for call, path, value in items:
                self.note("tools called by name")
                self.by_name[id(call.func)] = path
                self.paths[call.func] = path
                start = self.edits.start(call.func)
                if value is None:
                    self.edits.replace(start, self.edits.end(call.args[0]), f"tools.{path}(")
                else:
                    self.edits.replace(start, self.edits.start(value), f"tools.{path}(**")

    def plan_tool_of(self, func: ast.expr) -> str | None:
        """:meth:`tool_of` for the preflight: a by-name call is checked when it runs (its
        arguments are one mapping, not the call's own)."""
        return None if id(func) in self.by_name else self.tool_of(func)

    def _calls_tools(self, node: ast.Lambda) -> bool:
        stack: list[ast.AST] = [node.body]
        while stack:
            child = stack.pop()
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            if (isinstance(child, ast.Call) and self.awaitable(child) and (
                    id(child) not in self.awaited)) or self._property_read(child):
                return True
            stack.extend(ast.iter_child_nodes(child))
        return False

    def _await_scope(self, node: ast.AST) -> str | None:
        """The kind of the scope an ``await`` at ``node`` would be in (comprehensions see
        through), or None for a scope that cannot await."""
        parent = self.parents.get(node)
        while parent is not None:
            if isinstance(parent, ast.AsyncFunctionDef):
                return "async"
            if isinstance(parent, ast.FunctionDef | ast.Lambda | ast.ClassDef):
                return None
            parent = self.parents.get(parent)
        return "module"

    def _one_line(self, *nodes: ast.AST) -> bool:
        return all(n.lineno == n.end_lineno for n in nodes)  # type: ignore[attr-defined]

    def _plan_lambdas(self) -> None:
        """Lambdas that call tools, where a rewrite gives what the script meant (each
        other one stays a problem: ``_check_await_allowed``)."""
        edits = self.edits
        for node in self.of(ast.Lambda):
            if id(node) in self.table_lambdas:
                # ``lambda s: B`` → ``lambda s: anext((B for once in [None]))``: an async
                # generator expression (B's calls awaited in it) whose one item is B's
                # value, computed when the call of the lambda is awaited
                colon = edits.data.rindex(b":", edits.start(node), edits.start(node.body))
                once = self._free_name("once")
                edits.replace(colon, colon + 1, ": anext((")
                edits.replace(edits.end(node.body), edits.end(node.body),
                              f" for {once} in [None]))")
                self.lambdas[id(node)] = "table"
                self.note("lambda calling tools")
                continue
            if not self._calls_tools(node) or node.args.vararg or node.args.kwarg:
                continue
            parent = self.parents.get(node)
            data = edits.data
            colon = data.rindex(b":", edits.start(node), edits.start(node.body))
            params = data[edits.start(node) + len("lambda"):colon].decode(
                "utf-8", "surrogatepass").strip()
            if (isinstance(parent, ast.Assign) and len(parent.targets) == 1
                    and isinstance(parent.targets[0], ast.Name) and self._one_line(parent)
                    and self._await_scope(parent) is not None
                    and not isinstance(self.parents.get(parent), ast.ClassDef)):
                # ``f = lambda x: tools.get(x)`` → ``async def f(x): return tools.get(x)``
                name = parent.targets[0].id
                edits.replace(edits.start(parent), edits.start(node.body),
                              f"async def {name}({params}): return ")
                self.async_funcs.add(name)
                self.lambdas[id(node)] = "async"
                self.note("lambda calling tools")
                continue
            if self._plan_called_lambda(node, parent):
                continue
            if isinstance(parent, ast.keyword):
                parent = self.parents.get(parent)
            if not isinstance(parent, ast.Call) or self._await_scope(parent) is None:
                continue
            func = parent.func
            args = node.args
            single = (len(args.args) == 1 and not args.posonlyargs and not args.kwonlyargs
                      and not args.defaults)
            if (isinstance(func, ast.Name) and func.id == "map" and func.id not in self.bound
                    and len(parent.args) >= 2 and parent.args[0] is node
                    and self._consumed(parent)
                    and (len(parent.args) == 2 or "zip" not in self.bound)
                    and not parent.keywords and len(args.args) == len(parent.args) - 1
                    and single | (len(args.args) > 1) and not args.defaults
                    and not args.posonlyargs and not args.kwonlyargs
                    and self._one_line(parent)):
                # ``map(lambda x: B, xs)`` → ``[B for x in xs]`` (the calls awaited in it)
                sources = parent.args[1:]
                names = ", ".join(a.arg for a in args.args)
                loop = (f" for {names} in " if len(sources) == 1
                        else f" for ({names}) in zip(")
                edits.replace(edits.start(parent), edits.start(node.body), "[")
                edits.replace(edits.end(node.body), edits.start(sources[0]), loop)
                edits.replace(edits.end(sources[-1]), edits.end(parent),
                              "]" if len(sources) == 1 else ")]")
                self.lambdas[id(node)] = "map"
                self.note("lambda calling tools")
                continue
            if (isinstance(func, ast.Name) and func.id == "filter" and "filter" not in self.bound
                    and len(parent.args) == 2 and parent.args[0] is node and single
                    and self._consumed(parent)
                    and not parent.keywords and self._one_line(parent)
                    and not isinstance(parent.args[1], ast.Starred)
                    and not self._calls_any_tool(parent.args[1])
                    and (source := self.edits.segment(parent.args[1])) is not None):
                # ``filter(lambda x: B, xs)`` → ``[x for x in xs if B]`` (B awaited in it)
                param = args.args[0].arg
                edits.replace(edits.start(parent), edits.start(node.body),
                              f"[{param} for {param} in {source} if (")
                edits.replace(edits.end(node.body), edits.end(parent), ")]")
                self.lambdas[id(node)] = "filter"
                self.note("lambda calling tools")
                continue
            items = self._key_items(parent, node)
            if items is None or not single:
                continue
            text = self.edits.segment(items) or ""
            param = args.args[0].arg
            pairs = self._keyed_pairs(parent, node, text, param)
            if pairs is not None:
                edits.replace(edits.start(parent), edits.start(node.body), pairs[0])
                edits.replace(edits.end(node.body), edits.end(parent), pairs[1])
            elif not self._rereadable(items) or not {"iter", "next"}.isdisjoint(self.bound):
                continue
            else:
                # ``xs.sort(key=lambda x: B)`` → ``xs.sort(key=lambda x, codemode_keys=
                # iter([B for x in xs]): next(codemode_keys))``: the key function is called
                # once per item, in order, so it hands out the keys computed (awaited)
                # first; a list can be read twice.
                edits.replace(colon, edits.start(node.body), ", codemode_keys=iter([")
                edits.replace(edits.end(node.body), edits.end(node.body),
                              f" for {param} in [*{text}]]): next(codemode_keys)")
            self.lambdas[id(node)] = "key"
            self.note("lambda calling tools")

    def _plan_called_lambda(self, node: ast.Lambda, call: ast.AST | None) -> bool:
        """``(lambda: B)()`` → ``(B)``: with no parameters and called where it stands, the
        lambda's value is its body's (the calls in it awaited where the call was)."""
        args = node.args
        if not (isinstance(call, ast.Call) and call.func is node and not call.args
                and not call.keywords and not (args.args or args.posonlyargs or args.kwonlyargs)
                and self._one_line(call) and self._await_scope(call) is not None
                and not any(isinstance(n, ast.NamedExpr | ast.Yield | ast.YieldFrom)
                            for n in ast.walk(node.body))):
            return False
        edits = self.edits
        tail = edits.data.rindex(b"(", edits.end(node), edits.end(call))
        edits.replace(edits.start(node), edits.start(node.body), "")
        edits.replace(tail, edits.end(call), "")
        if id(call) in self.awaited and isinstance(node.body, ast.Call):
            self.awaited.add(id(node.body))  # ``await (lambda: tools.x())()``
        self.lambdas[id(node)] = "called"
        self.note("lambda calling tools")
        return True

    def _key_items(self, call: ast.Call, key: ast.expr) -> ast.expr | None:
        """The items of ``sorted(items, key=K)`` (``min``, ``max``, ``items.sort(key=K)``)
        on one line, ``K`` being ``key``, when they can be read twice (a name, an
        attribute or a literal); else None."""
        func = call.func
        if not (any(k.arg == "key" and k.value is key for k in call.keywords)
                and self._one_line(call) and self._movable(call, key)):
            return None
        if isinstance(func, ast.Name) and func.id in ("sorted", "min", "max") and (
                func.id not in self.bound) and len(call.args) == 1:
            items: ast.expr = call.args[0]
            # read once (``_keyed_pairs``): any expression that calls no tool
            return None if self._calls_any_tool(items) else items
        elif isinstance(func, ast.Attribute) and func.attr == "sort" and not call.args:
            items = func.value
        else:
            return None
        return items if self._rereadable(items) else None

    def _rereadable(self, items: ast.expr) -> bool:
        """A name, an attribute or a literal: what ``list.sort``'s rewrite reads twice."""
        return bool((isinstance(items, ast.Name | ast.Attribute) and self.root_of(items)[0])
                    or (isinstance(items, ast.List | ast.Tuple) and all(
                        isinstance(item, ast.Constant) for item in items.elts)))

    def _calls_any_tool(self, node: ast.AST) -> bool:
        return any((isinstance(n, ast.Call) and self.awaitable(n)) or self._property_read(n)
                   for n in ast.walk(node))

    def _movable(self, call: ast.Call, key: ast.expr) -> bool:
        """Whether ``call``'s keywords but ``key`` can be read after the keys are computed
        (``_keyed_pairs``): Python reads them first, so only those whose reading runs no
        code (``reverse=True``, ``default=None``, a name): ``reverse=rev()`` ran before any
        key and could change the items (or raise before a tool was called)."""
        return all(k.value is key or (k.arg is not None and all(
            isinstance(n, _QUIET) for n in ast.walk(k.value))) for k in call.keywords)

    def _consumed(self, call: ast.Call) -> bool:
        """Whether the iterator ``call`` makes is read to its end where it stands: handed to
        ``list``/``sorted``/``sum``… or ``str.join``, unpacked (``*``), or looped over by a
        list, set or dict comprehension. Elsewhere (``next(...)``, ``any(...)``, a ``for``
        that may ``break``, a name read later) Python calls the tools lazily, some never."""
        parent = self.parents.get(call)
        if isinstance(parent, ast.Call) and self._passed_on_whole(call, parent):
            return self._consumed(parent)
        if isinstance(parent, ast.Call) and call in parent.args:
            func = parent.func
            return ((isinstance(func, ast.Name) and func.id in _CONSUMERS
                     and func.id not in self.bound)
                    or (isinstance(func, ast.Attribute) and func.attr == "join"
                        and len(parent.args) == 1))
        if isinstance(parent, ast.Starred):
            return isinstance(self.parents.get(parent), ast.Call | ast.List | ast.Tuple | ast.Set)
        if isinstance(parent, ast.comprehension) and parent.iter is call:
            return isinstance(self.parents.get(parent), ast.ListComp | ast.SetComp | ast.DictComp)
        return False

    def _passed_on_whole(self, call: ast.Call, parent: ast.Call) -> bool:
        """``filter(p, call)``, ``enumerate(call)``, ``zip(xs, map(f, xs))`` (``xs`` a
        name bound once to a list or tuple display): read to the end of ``call`` when
        they are read to theirs."""
        func = parent.func
        if not isinstance(func, ast.Name) or func.id in self.bound or parent.keywords:
            return False
        if func.id == "filter":
            return len(parent.args) == 2 and parent.args[1] is call and not (
                self._calls_any_tool(parent.args[0]))
        if func.id == "enumerate":
            return parent.args == [call]
        if func.id != "zip" or call not in parent.args or not (
                isinstance(call.func, ast.Name) and call.func.id == "map"
                and len(call.args) == 2 and isinstance(source := call.args[1], ast.Name)):
            return False
        bound = [node for node in self.of(ast.Assign) if len(node.targets) == 1
                 and isinstance(node.targets[0], ast.Name) and node.targets[0].id == source.id]
        return (self.stores.get(source.id) == 1 and len(bound) == 1
                and isinstance(bound[0].value, ast.List | ast.Tuple)
                and all(arg is call or (isinstance(arg, ast.Name) and arg.id == source.id)
                        for arg in parent.args))

    def _keyed_pairs(self, call: ast.Call, key: ast.expr, items: str,
                     param: str) -> tuple[str, str] | None:
        """``sorted``/``min``/``max(items, key=K)`` with each key awaited first: the text
        before and after the key expression of ``param`` that pairs every item with its key,
        ``sorted(xs, key=K, reverse=R)`` → ``[codemode_p[1] for codemode_p in sorted([((KEY),
        x) for x in xs], key=lambda codemode_p: codemode_p[0], reverse=R)]`` (``min``/``max``:
        ``(...)[1]``, a ``default`` paired too). The items are read once, as Python reads
        them (an iterator or a generator is spent by a read), and only keys are compared
        (stable, first of equals). None for ``list.sort`` (sorts in place; a list can be
        read twice) and for other keywords this cannot move (``**``, or calls to tools)."""
        func = call.func
        if not isinstance(func, ast.Name) or not self._movable(call, key):
            return None
        rest: list[str] = []
        for keyword in call.keywords:
            if keyword.value is key:
                continue
            text = self.edits.segment(keyword.value)
            if text is None:
                return None
            if keyword.arg == "default" and func.id != "sorted":
                text = f"(None, {text})"
            rest.append(f", {keyword.arg}={text}")
        if func.id == "sorted":  # sorted copies the items before it calls a key
            items = f"[*({items})]"
        pairs = (f"), {param}) for {param} in {items}], "
                 f"key=lambda codemode_p: codemode_p[0]{''.join(rest)})")
        if func.id == "sorted":
            return "[codemode_p[1] for codemode_p in sorted([((", pairs + "]"
        return f"{func.id}([((", pairs + "[1]"

    def _plan_key_functions(self) -> None:
        """``sorted(xs, key=title)`` where ``title`` is a plain ``def`` made async: the
        keys awaited first, in item order, as for a ``key=lambda`` (``_plan_lambdas``)."""
        converted = {f.name for f in self.of(ast.FunctionDef) if id(f) in self.converted
                     and not f.decorator_list
                     and not isinstance(self.parents.get(f), ast.ClassDef)}
        if not converted:
            return  # most scripts: no plain def was made async, no name to look for
        for node in self.loads:
            keyword = self.parents.get(node)
            call = self.parents.get(keyword) if isinstance(keyword, ast.keyword) else None
            if not (node.id in converted and node.id in self.def_only
                    and isinstance(call, ast.Call) and self._await_scope(call) is not None):
                continue
            items = self._key_items(call, node)
            if items is None:
                continue
            text = self.edits.segment(items) or ""
            pairs = self._keyed_pairs(call, node, text, "codemode_item")
            if pairs is not None:
                self.edits.replace(self.edits.start(call), self.edits.end(call),
                                   f"{pairs[0]}await {node.id}(codemode_item){pairs[1]}")
            elif not self._rereadable(items) or not {"iter", "next"}.isdisjoint(self.bound):
                continue
            else:
                self.edits.replace(self.edits.start(node), self.edits.end(node), (
                    f"lambda codemode_item, codemode_keys=iter([(await {node.id}("
                    f"codemode_item)) for codemode_item in [*{text}]]): next(codemode_keys)"))
            self.key_functions.add(id(node))
            self.note("plain def calling tools")

    def _plan_mapped_functions(self) -> None:
        """``map(fetch, xs)`` where ``fetch`` is a plain ``def`` made async, a tool or a
        partial of either → ``[(await fetch(codemode_0)) for codemode_0 in xs]``, as
        ``map(lambda ...)`` becomes a list comprehension (``_plan_lambdas``): each call
        awaited, in item order."""
        converted = {f.name for f in self.of(ast.FunctionDef) if id(f) in self.converted
                     and not f.decorator_list
                     and not isinstance(self.parents.get(f), ast.ClassDef)}
        for call in self.of(ast.Call):
            func = call.func
            if not (isinstance(func, ast.Name) and func.id == "map" and "map" not in self.bound
                    and len(call.args) >= 2 and not call.keywords
                    and isinstance(first := call.args[0], ast.Name | ast.Attribute)
                    and (self.tool_of(first) in self.tools or (isinstance(first, ast.Name) and (
                        (first.id in converted and first.id in self.def_only)
                        or self.partial_call(first.id))))
                    and self._one_line(call) and self._await_scope(call) is not None
                    and self._consumed(call) and (len(call.args) == 2 or "zip" not in self.bound)
                    and not any(isinstance(a, ast.Starred) or self._calls_any_tool(a)
                                for a in call.args[1:])):
                continue
            sources = [self.edits.segment(a) for a in call.args]
            if any(text is None for text in sources):
                continue
            function, sources = cast("str", sources[0]), sources[1:]
            names = [f"codemode_{i}" for i in range(len(sources))]
            loop = (f"{names[0]} in {sources[0]}" if len(sources) == 1 else
                    f"({', '.join(names)}) in zip({', '.join(cast('list[str]', sources))})")
            self.edits.replace(self.edits.start(call), self.edits.end(call),
                               f"[(await {function}({', '.join(names)})) for {loop}]")
            self.key_functions.add(id(first))
            self.note("plain def calling tools")

    def _awaited_later(self) -> None:
        """Add to ``task_names`` the names whose values the script awaits itself: ``await
        NAME``, ``await NAME[k]``, or a loop or comprehension variable drawn from NAME
        that is awaited (or handed to gather & co); the calls stored there stay
        un-awaited."""
        seeds = list(self.task_names)
        for node in self.of(ast.Await):
            value = node.value
            while isinstance(value, ast.Subscript):
                value = value.value
            if isinstance(value, ast.Name):
                seeds.append(value.id)
        if not seeds:
            return
        drawn: dict[str, set[str]] = {}
        """Loop variable → the names its loop's iterable is drawn from."""
        for kind in (ast.For, ast.AsyncFor, ast.comprehension):
            for loop in self.of(kind):
                sources = _sources(loop.iter)  # type: ignore[attr-defined]
                if sources:
                    for target in ast.walk(loop.target):  # type: ignore[attr-defined]
                        if isinstance(target, ast.Name):
                            drawn.setdefault(target.id, set()).update(sources)
        seen: set[str] = set()
        while seeds:
            name = seeds.pop()
            if name not in seen:
                seen.add(name)
                seeds.extend(drawn.get(name, ()))
        self.task_names |= seen

    def _handed_to_own_functions(self) -> None:
        """A call passed to the script's own ``async def`` for a parameter that function
        awaits stays un-awaited: ``await safe(tools.x())`` with ``async def safe(c): try:
        return await c ...`` awaits it inside the function's ``try`` (awaited where it was
        passed, its error escaped that ``try``, and a success was a value ``await c``
        refused)."""
        params: dict[str, tuple[list[str], set[str], set[str]]] = {}
        for func in self.of(ast.AsyncFunctionDef):
            if func.name in self.async_funcs:
                args = func.args
                positional = [a.arg for a in (*args.posonlyargs, *args.args)]
                params[func.name] = (positional, {a.arg for a in args.kwonlyargs},
                                     self._awaits(func))
        if not params:
            return
        for node in self.of(ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in params:
                continue
            positional, keyword_only, awaits = params[node.func.id]
            handed = list(zip(positional, node.args, strict=False))
            handed += [(kw.arg, kw.value) for kw in node.keywords if kw.arg is not None
                       and (kw.arg in keyword_only or kw.arg in positional)]
            for name, arg in handed:
                if isinstance(arg, ast.Call) and name in awaits:
                    self.awaited.add(id(arg))

    def _handed_thunks(self) -> None:
        """``attempt("price", lambda: get_price(symbol="AAPL"))`` with ``def attempt(label,
        fn): try: return fn() ...``: when every call of the script's own function hands,
        for a parameter it only ever calls, a lambda whose body is one tool call (or an
        ``async def``'s name), the lambda's call stays un-awaited (the lambda returns the
        awaitable) and the function awaits ``fn()`` where it calls it (a plain ``def``
        becomes async, its calls awaited): the call runs inside its ``try``, as in CPython."""
        functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = [*self.of(ast.FunctionDef)]
        functions += self.of(ast.AsyncFunctionDef)
        if not functions:
            return
        defined = Counter(f.name for f in functions)
        for func in functions:
            if (func.decorator_list or func.name not in self.def_only
                    or defined[func.name] != 1
                    or isinstance(self.parents.get(func), ast.ClassDef)):
                continue
            args = func.args
            positional = [a.arg for a in (*args.posonlyargs, *args.args)]
            params = [*positional, *(a.arg for a in args.kwonlyargs)]
            if self.skips and not any(  # no parameter it calls: ``_calls_of`` finds none
                    type(node) is ast.Call and type(node.func) is ast.Name
                    and node.func.id in params for node in ast.walk(func)):
                continue
            calls = [self.parents.get(n) for n in self.loads_of.get(func.name, ())]
            if not calls or not all(isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                                    and c.func.id == func.name and not any(
                                        isinstance(a, ast.Starred) for a in c.args)
                                    and all(k.arg is not None for k in c.keywords)
                                    for c in calls):
                continue
            for param in params:
                uses = self._calls_of(func, param)
                if not uses:
                    continue  # a parameter it never calls: nothing handed for it matters
                handed = [self._handed(cast("ast.Call", c), positional, param) for c in calls]
                if uses and isinstance(func, ast.FunctionDef) and not all(
                        self._thunk(a) for a in handed):
                    self._tool_among_values(func.name, param, handed)
                if not uses or not all(self._thunk(a) for a in handed):
                    continue
                if isinstance(func, ast.AsyncFunctionDef) and not all(
                        id(c) in self.awaited for c in uses):
                    continue
                for arg in handed:
                    if isinstance(arg, ast.Lambda):
                        self.awaited.add(id(arg.body))
                if isinstance(func, ast.FunctionDef):
                    self.thunk_calls.update(id(c) for c in uses)

    def _tool_among_values(self, name: str, param: str,
                           handed: list[ast.expr | None]) -> None:
        """A tool handed to a plain ``def`` that other calls hand plain values: it cannot
        await the tool's call, which would run nowhere (``safe_call(lookup, city="x")`` and
        ``safe_call(len, "abc")``: the tool was never called, its result an un-awaited
        call). A problem at each such call, rather than a tool call silently dropped."""
        for arg in handed:
            if isinstance(arg, ast.Name | ast.Attribute) and self.tool_of(arg) in self.tools:
                tool = self.edits.segment(arg) or "the tool"
                self.add(arg, f"{name}() is handed the tool `{tool}` for `{param}` here and "
                         f"other values elsewhere, so it cannot await the call: call the tool "
                         f"first and pass its value, or hand {name}() a tool (or `lambda: "
                         f"tools.x(...)`) at every call")

    @staticmethod
    def _handed(call: ast.Call, positional: list[str], param: str) -> ast.expr | None:
        """The argument ``call`` hands for ``param`` (None: none)."""
        if param in positional and positional.index(param) < len(call.args):
            return call.args[positional.index(param)]
        return next((k.value for k in call.keywords if k.arg == param), None)

    def _thunk(self, arg: ast.expr | None) -> bool:
        """A lambda whose body is one tool call, a tool or an ``async def``'s name: calling
        it gives an awaitable."""
        if isinstance(arg, ast.Name | ast.Attribute) and self.tool_of(arg) in self.tools:
            return True  # the tool itself (``safe_call(get_price, symbol="A")``)
        if isinstance(arg, ast.Name):
            return arg.id in self.async_funcs and arg.id in self.def_only
        return (isinstance(arg, ast.Lambda) and isinstance(arg.body, ast.Call)
                and id(arg.body) not in self.awaited and self.awaitable(arg.body))

    def _calls_of(self, func: ast.FunctionDef | ast.AsyncFunctionDef,
                  param: str) -> list[ast.Call]:
        """The calls ``param(...)`` in ``func``'s own body, or none when ``param`` is also
        read otherwise, assigned or used in a nested function."""
        found: list[ast.Call] = []
        for node in ast.walk(func):
            if isinstance(node, ast.Name) and node.id == param:
                call = self.parents.get(node)
                if not (isinstance(node.ctx, ast.Load) and isinstance(call, ast.Call)
                        and call.func is node and self._owner(call) is func):
                    return []
                found.append(call)
            elif isinstance(node, ast.Global | ast.Nonlocal) and param in node.names:
                return []
        return found

    def _owner(self, node: ast.AST) -> ast.AST | None:
        """The function or lambda ``node`` is in (comprehensions see through)."""
        parent = self.parents.get(node)
        while parent is not None and not isinstance(
                parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            parent = self.parents.get(parent)
        return parent

    def _awaits(self, func: ast.AsyncFunctionDef) -> set[str]:
        """Names ``func``'s own body awaits (``await c``, ``await c[k]``) or hands to
        ``asyncio.gather`` & co."""
        names: set[str] = set()
        for node in ast.walk(func):
            if isinstance(node, ast.Await):
                value = node.value
                while isinstance(value, ast.Subscript):
                    value = value.value
                if isinstance(value, ast.Name):
                    names.add(value.id)
            elif isinstance(node, ast.Call) and self._asyncio_call(node.func, _CONCURRENT):
                names.update(arg.id for item in node.args for arg in (
                    item.value if isinstance(item, ast.Starred) else item,)
                    if isinstance(arg, ast.Name))
        return names

    def needs_visit(self) -> bool:
        """Whether any node calls for the rewriting walk (a canonical script needs none)."""
        if self.converted or ast.AnnAssign in self.kinds or any(
                self.edits_has_return(node) for node in self.of(ast.Return)):
            return True  # a function's own ``return`` needs nothing: only a top-level one
        # a call of a plain name none of these holds is answered False below, by each test
        telling = self.refused_bare.keys() | self.bare.keys() | self.tool_loops | (
            self.async_funcs) | self.partials | self.partial_targets.keys() | self.aliases | {
            "tools"} if self.skips else None
        marked = self.thunk_calls | self.wrapper_calls
        for node in self.of(ast.Call):
            func = node.func
            if telling is not None and type(func) is ast.Name and func.id not in telling and (
                    id(node) not in marked):
                continue
            if type(func) is ast.Name and func.id in self.refused_bare:
                return True
            if self._asyncio_call(func, _RUN):
                return True
            if not self.strict:
                root, _ = self.root_of(func)
                if root is not None and root != "tools" and root in self.bare:
                    return True
                if node.args and root == "tools":
                    return True
                if id(node) not in self.awaited and self.awaitable(node):
                    return True
        return False

    def _needs_async(self, func: ast.FunctionDef,
                     calls: dict[str, list[tuple[int, ast.expr]]], index: int) -> bool:
        """Whether ``func``'s own body awaits or calls something awaitable now. Its calls
        that a later conversion can make awaitable (of a name, a partial's target, a
        method) and its attribute reads (a property) go into ``calls`` under that name,
        with ``index``."""
        found = False
        for node in _own_nodes(func):
            if isinstance(node, ast.Await):
                found = True
            elif isinstance(node, ast.Call):
                if self._awaits_call(node) or self._asyncio_call(node.func, _RUN):
                    found = True
                callee = node.func
                if isinstance(callee, ast.Name):
                    calls.setdefault(callee.id, []).append((index, node))
                    target = self.partial_targets.get(callee.id)
                    if target is not None:
                        calls.setdefault(target.id, []).append((index, node))
                elif isinstance(callee, ast.Attribute):
                    calls.setdefault(callee.attr, []).append((index, node))
            elif isinstance(node, ast.Attribute) and type(node.ctx) is ast.Load:
                if self._property_read(node):
                    found = True
                calls.setdefault(node.attr, []).append((index, node))
        return found

    def _awaits_call(self, node: ast.Call) -> bool:
        """Whether the call, in a plain function, makes it async: an awaitable the script
        uses as a value, or a generator now iterated with ``async for``."""
        if self.awaitable(node) and id(node) not in self.awaited and not self.concurrent(node):
            return True
        return (isinstance(node.func, ast.Name) and (
            node.func.id in self.async_gens or node.func.id in self.async_contexts)) or (
            isinstance(node.func, ast.Attribute) and node.func.attr in self.async_gen_methods)

    # -- the walk -------------------------------------------------------------------------

    def visit(self, node: ast.AST) -> Any:
        """``NodeVisitor.visit`` with the method found once per node type: a script that
        needs the walk (bare tool names, calls without ``await``) has all its nodes
        visited, and the lookup by name cost a fifth of its ``check()``."""
        kind = type(node)
        method = _PLANNER_VISITS.get(kind)
        if method is None:
            method = _PLANNER_VISITS[kind] = getattr(
                _Planner, "visit_" + kind.__name__, _Planner.generic_visit)
        return method(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        """``NodeVisitor.generic_visit`` over the fields that may hold a node
        (:func:`child_fields`, in ``_fields`` order): no ``visit_`` method here reads a
        context, an operator or a scalar."""
        visit = self.visit
        for name in child_fields(type(node)):
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        visit(item)
            elif isinstance(value, ast.AST):
                visit(value)

    def visit_Constant(self, node: ast.Constant) -> None:
        """Nothing below a constant (``NodeVisitor``'s looks for the removed
        ``visit_Num``/``visit_Str`` … methods first)."""

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for item in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if item is not None:
                self.visit(item)
        in_class = self.scopes[-1].kind == "class"
        if id(node) in self.converted:
            implicit = _implicit_call(node) if in_class else None
            wrapped = [self._wrapping(d) for d in node.decorator_list]
            refused = next((name for name in wrapped if name in self.refused_wrappers), None)
            if refused is not None:
                self.add(node, f"{node.name}() calls tools, so it must be `async def "
                         f"{node.name}(...)` and each call awaited; its decorator @{refused} "
                         "is made async with it only when every function it decorates can be, "
                         "and one cannot: used as a value (`key=`, `map`, passed on), a "
                         "generator, or under another decorator; call it where it is used "
                         "as a value in a loop, or leave that one undecorated")
            elif in_class and node.name in self.async_methods:
                self.note("method calling tools")
                self.edits.make_async(node)
            elif in_class and node.name in ("__enter__", "__exit__") and (
                    self.scopes[-1].node.name in self.async_contexts):  # type: ignore[union-attr]
                pass  # made __aenter__/__aexit__ with the class (visit_ClassDef)
            elif in_class and node.name in self.async_gen_methods:
                self.note("generator method calling tools")
                self.edits.make_async(node)
            elif in_class and node.name in self.async_properties:
                self.note("property calling tools")
                self.edits.make_async(node)
            elif in_class and node.name in ("__init__", "__post_init__") and (
                    self.scopes[-1].node.name in self.async_classes):  # type: ignore[union-attr]
                self.note("constructor calling tools")
                self.edits.make_async(node)
            elif in_class and self._async_wrapped(node, []):
                self.note("decorator calling tools")  # a class decorator's ``__call__``
                self.edits.make_async(node)
            elif implicit is not None:
                self.add(node, f"{node.name}() calls tools, but {implicit}, where a call "
                         "cannot be awaited: make the calls in an `async def` method (e.g. "
                         "`async def load(self)`, awaited before use) and keep the results "
                         "on the object")
            elif in_class:
                self.add(node, f"{node.name}() calls tools, so it must be `async def "
                         f"{node.name}(self, ...)` with each tool call awaited, and each call "
                         f"of it awaited too (`await obj.{node.name}(...)`)"
                         + self._why_not_async(node.name))
            elif self._cached(node):
                self.note("cached def calling tools")
                self.edits.make_async(node)
            elif id(node) in self.generator_contexts:
                self.note("contextmanager calling tools")
                self._to_async_context(node)
            elif self._async_wrapped(node, wrapped):
                self.note("decorator calling tools")
                self.edits.make_async(node)
            elif _context_decorated(node):
                self.add(node, f"{node.name}() calls tools in a @contextmanager generator, "
                         "whose entry and exit a `with` block runs for you, where a call "
                         "cannot be awaited: it runs as an async context manager only when "
                         "`contextmanager` is contextlib's and its one decorator, every use is "
                         f"`with {node.name}(...)` itself (not a value held first) and it has "
                         "no `yield from` or `return value`; else call the tools before the "
                         "`with` block and after it (in a `try`/`finally` to close what it "
                         "opened)")
            elif node.decorator_list or self._used_as_value(node.name):
                where = self._value_use(node.name)
                self.add(node, f"{node.name}() calls tools, so it must be `async def "
                         f"{node.name}(...)` and each call awaited"
                         + (self._returned_hint(node.name, where) if where else
                            _DECORATED_HINT))
            elif node.name in self.async_gens:
                self.note("generator calling tools")
                self.edits.make_async(node)
            elif suspends(node.body):
                self.add(node, f"{node.name}() is a generator that calls tools: collect the "
                         "results in a list instead of yielding them")
            else:
                self.note("plain def calling tools")
                self.edits.make_async(node)
            kind = "async"
        else:
            kind = "sync"
        self.scopes.append(_Scope(kind, node))
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    def _async_wrapped(self, node: ast.FunctionDef, wrapped: list[str | None]) -> bool:
        """``node`` is an async wrapper, or every decorator over it (``wrapped``, their
        names) is a wrapping decorator made async."""
        return any(d.wrapper is node and d.name in self.async_wrappers
                   for d in self.wrappers.values()) or (
            bool(wrapped) and all(name in self.async_wrappers for name in wrapped))

    def _to_async_context(self, node: ast.FunctionDef) -> None:
        """``@contextmanager def f`` → ``@asynccontextmanager async def f`` (imported
        beside ``contextmanager``, or ``contextlib.asynccontextmanager``)."""
        edits = self.edits
        decorator = node.decorator_list[0]
        if isinstance(decorator, ast.Attribute):
            end = edits.end(decorator)
            edits.replace(end - len("contextmanager"), end, "asynccontextmanager")
        else:
            edits.replace(edits.start(decorator), edits.end(decorator), "asynccontextmanager")
            for alias in self._imports("contextmanager"):
                end = edits.end(alias)
                edits.replace(end, end, ", asynccontextmanager")
        edits.replace(edits.start(node), edits.start(node), "async ")

    def _class_body_value(self, name: str) -> int | None:
        """The line where a class body reads ``name`` other than by calling it
        (``buy = partialmethod(place, "Buy")``, ``run = place``), or ``None``."""
        for node in self.loads_of.get(name, ()):
            parent = self.parents.get(node)
            if isinstance(parent, ast.Call) and parent.func is node:
                continue
            while parent is not None and not isinstance(parent, _SCOPES):
                parent = self.parents.get(parent)
            if isinstance(parent, ast.ClassDef):
                return node.lineno
        return None

    def _why_not_async(self, name: str) -> str:
        """Why a method that calls tools was not made async for the script."""
        held = self._class_body_value(name)
        if held is not None:
            return (f"; its class body uses `{name}` as a value at line {held} (a "
                    "`partialmethod`, an alias), where its calls cannot be awaited: define "
                    "each variant as an `async def` that awaits it")
        where = next((node.lineno for node in self.of(ast.Attribute) if node.attr == name
                      and not (isinstance(call := self.parents.get(node), ast.Call)
                               and call.func is node)), None)
        if where is not None:
            return (f"; `.{name}` is used as a value at line {where}, where it cannot be "
                    f"awaited: call it in a loop, e.g. `[await obj.{name}(x) for x in xs]` "
                    f"(if `.{name}` there is another object's attribute, give the method a "
                    "name of its own)")
        return ""

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        for item in [*node.decorator_list, *node.args.defaults, *node.args.kw_defaults]:
            if item is not None:
                self.visit(item)
        self.scopes.append(_Scope("async", node))
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()

    def visit_Lambda(self, node: ast.Lambda) -> None:
        kind = self.lambdas.get(id(node), "lambda")
        if kind in ("map", "filter", "key"):
            kind = "comprehension"
        elif kind == "table":  # its body is in an async generator expression now
            kind = "async"
        elif kind == "async":
            name = self.parents[node].targets[0].id  # type: ignore[attr-defined]
            if self._used_as_value(name):
                self.add(node, f"{name}() calls tools, so it must be `async def {name}(...)` "
                         f"and each call awaited; it is used as a value at line "
                         f"{self._value_use(name)}, where it cannot be awaited: call it in a "
                         f"loop, e.g. `[await {name}(x) for x in xs]`")
        if kind == "called":  # ``(lambda: B)()`` is ``(B)`` now: B is in this scope
            self.generic_visit(node)
            return
        self.scopes.append(_Scope(kind, node))
        self.generic_visit(node)
        self.scopes.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        if node.name in self.async_contexts:
            self.note("context manager calling tools")
            for stmt in node.body:
                if isinstance(stmt, ast.FunctionDef) and stmt.name in ("__enter__", "__exit__"):
                    start = self.edits.start(stmt)
                    found = self.edits.data.find(stmt.name.encode(), start)
                    self.edits.replace(start, start, "async ")
                    self.edits.replace(found, found + len(stmt.name),
                                       stmt.name.replace("__", "__a", 1))
        self.scopes.append(_Scope("class", node))
        self.generic_visit(node)
        self.scopes.pop()

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp |
                       ast.GeneratorExp) -> None:
        self.scopes.append(_Scope("comprehension", node))
        self.generic_visit(node)
        self.scopes.pop()

    visit_ListComp = visit_SetComp = visit_DictComp = _comprehension

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> None:
        before = len(self.edits.items)
        self._comprehension(node)
        if len(self.edits.items) > before and not self.strict and (
                id(node) not in self.gen_comprehensions):
            # An ``await`` inside makes it an async generator, which sum()/list() cannot
            # consume: make it a list (evaluated in place, same values). Where it is read
            # lazily (a ``for``, ``any``/``all``, ``next``) it stays one, read as lazily
            # (the calls after a ``break`` or the deciding item are not made).
            start, end = self.edits.start(node), self.edits.end(node)
            # the first iterable is read where the expression stands, not inside it: an
            # ``await`` there leaves it a plain generator (``next((s for s in tool() if
            # c), None)``)
            first = node.generators[0].iter
            outside = self.edits.start(first), self.edits.end(first)
            if any(start < s < end and not outside[0] <= s <= outside[1]
                   and t.startswith(b"(await") for s, _, _, _, t
                   in self.edits.items[before:]) and not self._read_lazily(node):
                # The outermost opener and closer inside the parentheses.
                self.edits.items.append((start + 1, start + 1, 1, start - end, b"["))
                self.edits.items.append((end - 1, end - 1, 0, end - start, b"]"))

    def _read_lazily(self, node: ast.GeneratorExp) -> bool:
        """A generator expression made async by its calls, read where the async forms
        read it item by item: ``for x in (...)`` → ``async for``, ``any``/``all`` (the
        first deciding item) and ``next`` → ``anext``."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.For) and parent.iter is node:
            start = self.edits.start(parent)
            self.edits.replace(start, start, "async ")
            return True
        if not isinstance(parent, ast.Call):
            return False
        item = self._free_name("decided")
        if self._stopping(parent, node, node.elt, item):
            return True
        if not (self._builtin(parent, "next") and parent.args[0] is node
                and len(parent.args) <= 2 and not parent.keywords):
            return False
        if len(parent.args) == 1 and self._catches_stop_iteration():
            self.add(node, "a generator expression that calls tools runs as an async "
                     "one, which `next()` reads as `await anext(...)`: its end raises "
                     "StopAsyncIteration, not the StopIteration this script catches: give "
                     "next() a default, `next((...), None)`")
            return True
        self.edits.replace(self.edits.start(parent.func), self.edits.end(parent.func),
                           "(await anext")
        self.edits.wrap(parent, "", ")")
        return True

    def _catches_stop_iteration(self) -> bool:
        return any(isinstance(n, ast.Name) and n.id == "StopIteration"
                   for h in self.of(ast.ExceptHandler) if h.type is not None
                   for n in ast.walk(h.type))

    def _free_name(self, base: str) -> str:
        """``base`` (or ``base1``, ...): a name the script neither reads nor binds."""
        taken = self.reads | self.bound
        return next(n for n in (f"{base}{i or ''}" for i in range(len(taken) + 1))
                    if n not in taken)

    def _cached(self, node: ast.FunctionDef) -> bool:
        """``@lru_cache``/``@cache`` (maybe ``functools.``, maybe called with options) are
        its only decorators and it is only called or asked ``.cache_info()``,
        ``.cache_clear()`` and ``.cache_parameters()``: made async, its cache keeps each
        call's awaited value (the sandbox's ``lru_cache`` caches a coroutine function's
        results, not its coroutines); a ``partial`` of it is awaited as its calls are."""
        if not node.decorator_list or not all(
                _cache_decorator(d.func if isinstance(d, ast.Call) else d)
                for d in node.decorator_list):
            return False
        partial_of = {id(target) for target in self.partial_targets.values()}
        for name in self.loads_of.get(node.name, ()):
            parent = self.parents.get(name)
            if (isinstance(parent, ast.Call) and parent.func is name) or id(name) in partial_of:
                continue
            if not (isinstance(parent, ast.Attribute) and parent.attr in _CACHE_METHODS):
                return False
        return True

    def _used_as_value(self, name: str) -> bool:
        return self._value_use(name) is not None

    def _value_use(self, name: str, held: frozenset[str] | None = None) -> int | None:
        """The line of a read of ``name`` other than a call of it (or ``None``); ``held``:
        it is a class decorator's instance, any attribute read but those."""
        partial_of = {id(target) for target in self.partial_targets.values()}
        for node in self.loads_of.get(name, ()):
            parent = self.parents.get(node)
            if not (isinstance(parent, ast.Call) and parent.func is node) and (
                    id(node) not in self.key_functions) and id(node) not in partial_of and (
                    id(node) not in self.factory_returns) and not (
                    isinstance(parent, ast.Attribute) and parent.attr in _FUNCTION_NAMES) and (
                    held is None or not isinstance(parent, ast.Attribute)
                    or parent.attr in held):
                return node.lineno
        return None

    def _returned_hint(self, name: str, where: int) -> str:
        """The fix for a function used as a value at line ``where``: a closure handed out
        by ``return`` (a factory) is called where no one can await it, so the values it
        closes over become parameters; any other use is a loop over its calls."""
        for node in self.loads_of.get(name, ()):
            parent = self.parents.get(node)
            while isinstance(parent, ast.Tuple | ast.List):
                parent = self.parents.get(parent)
            if node.lineno == where and isinstance(parent, ast.Return):
                return (f"; it is returned at line {where}, so its callers cannot await it: "
                        f"define `{name}` at the top level with the values it uses from "
                        "the enclosing function as parameters, and call it directly")
        return (f"; it is used as a value at line {where}, where it cannot be awaited: call "
                f"it in a loop, e.g. `[await {name}(x) for x in xs]`")

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if not self.strict and node.value is not None and node.simple and not isinstance(
                self.parents.get(node), ast.ClassDef):
            # ``x: dict = v`` → ``x = v``; in a class body the annotated names are the
            # fields of a ``NamedTuple``/``TypedDict`` (the policy records them)
            self.note("annotated assignments")
            start = self.edits.end(node.target)
            self.edits.replace(start, self.edits.start(node.value), " = ")
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if not any(s.kind in {"async", "sync", "lambda"} for s in self.scopes):
            if self.strict:
                self.add(node, "a top-level `return` is not allowed: end the script with the "
                         "value as its last expression")
            else:
                self.note("top-level return")
                start = self.edits.start(node)
                if node.value is None:
                    self.edits.replace(start, start + 6, "final_answer(None)")
                else:
                    self.edits.replace(start, start + 6, "final_answer((")
                    end = self.edits.end(node)
                    self.edits.replace(end, end, "))")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if self._asyncio_call(node.func, _RUN):
            if self.strict:
                shown = "asyncio.run" if isinstance(node.func, ast.Attribute) and (
                    node.func.attr == "run") else "run_until_complete"
                self.add(node, f"{shown}() is not available (the script already runs in "
                         "an event loop): write `await main()`")
            else:
                self.note("asyncio.run(main())")
                start = self.edits.start(node.func)
                self.edits.replace(start, self.edits.end(node.func), "await ")
                self._check_await_allowed(node)
            for arg in [*node.args, *node.keywords]:
                self.visit(arg)  # not the loop (``get_event_loop()``) the edit removed
            return
        if isinstance(node.func, ast.Name) and node.func.id in self.refused_bare:
            name = node.func.id
            why, tool = self.refused_bare[name]
            if why == "variable":
                self.add(node, f"`{name}` is a tool and also a variable of this script: call "
                         f"the tool as {self.canonical(tool)}, or rename the variable")
            elif self._looks_like_tool_call(node, tool):
                self.add(node, f"`{name}` here is the builtin, not the tool: call the tool as "
                         f"{self.canonical(tool)}")
        path = self.tool_of(node.func)
        if path is not None and not self.strict:
            root, _ = self.root_of(node.func)
            if root != "tools":
                self.note("bare tool names")
            if path.split(".")[-1] != (node.func.attr if isinstance(node.func, ast.Attribute)
                                       else node.func.id if isinstance(node.func, ast.Name)
                                       else ""):
                self.note("_sync aliases")
            if node.args:
                self.note("positional arguments")
        if (not self.strict and self.awaitable(node) and id(node) not in self.awaited
                and not self.concurrent(node)):
            if self._shared_method_call(node):
                # may be a dict's: where no await can stand (a class body), left as it is
                if self._await_possible():
                    self.note("calls without await")
                    (before, after), (opened, closed) = _AWAITED_IF_ASYNC
                    self.edits.wrap(node.func, before, after)
                    self.edits.wrap(node, opened, closed)
                else:
                    self.edits.wrap(node.func, *_CALLED_IF_PLAIN)
            elif self._check_await_allowed(node):
                self.note("calls without await")
                self.edits.wrap(node, "(await ", ")")
        self.generic_visit(node)

    def visit_With(self, node: ast.With) -> None:
        entries = self._async_stack_entries(node)
        if entries:
            if self._check_await_allowed(node):
                self.note("exit stack of contexts calling tools")
                self._to_async_stack(node, entries)
            else:
                self.add(node, "this exit stack enters contexts whose entry and exit call "
                         "tools, so it must be `async with AsyncExitStack()` with each "
                         "`await stack.enter_async_context(...)`, in an `async def`")
        made = [self._async_item(item) for item in node.items]
        if all(made) and self._check_await_allowed(node):
            start = self.edits.start(node)
            self.edits.replace(start, start, "async ")
        elif any(made):
            shown = ", ".join(self.edits.segment(item.context_expr) or "..."
                              for item, is_async in zip(node.items, made, strict=True)
                              if is_async)
            self.add(node, f"this `with` holds {shown}, whose entry and exit call tools (an "
                     "`async with`), beside a context manager that is not one: write them "
                     "as nested `with` statements, one item each")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if self._property_read(node) and self._check_await_allowed(node):
            self.edits.wrap(node, "(await ", ")")
        self.generic_visit(node)

    def _shared_method_call(self, node: ast.Call) -> bool:
        """``x.get(...)`` of a method made async named like a library method: only the
        run knows whether ``x`` is the script's object or a dict."""
        return isinstance(node.func, ast.Attribute) and (
            node.func.attr in self.shared_names) and self.tool_of(node.func) is None and not (
            self._tool_callee(node.func)) and id(node) not in self.wrapper_calls

    def _looks_like_tool_call(self, node: ast.Call, path: str) -> bool:
        if path not in self.tools:
            return False
        argmap = self.arguments.get(self.tools[path], {})
        return any(k.arg in argmap for k in node.keywords if k.arg is not None)

    def _await_possible(self) -> bool:
        """Whether an ``await`` can stand where the walk is."""
        scope = self.scope_of_await()
        return scope.kind in {"module", "async"} or (
            scope.kind == "sync" and scope.node is not None and id(scope.node) in self.converted)

    def _check_await_allowed(self, node: ast.AST) -> bool:
        if self._await_possible():
            return True
        scope = self.scope_of_await()
        if scope.kind == "lambda":
            self.add(node, "a tool call inside a lambda cannot be awaited: "
                     + self._lambda_fix(scope.node))
        elif scope.kind == "class":
            self.add(node, "a tool call in a class body cannot be awaited: make the method "
                     "`async def` and `await` the call")
        return False

    def _lambda_fix(self, node: ast.AST | None) -> str:
        """What to write for a lambda that calls tools where no rewrite applies."""
        parent = self.parents.get(node) if node is not None else None
        if isinstance(parent, ast.keyword):
            parent = self.parents.get(parent)
        if (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
                and parent.func.id in self.def_only and node is not parent.func):
            name = parent.func.id
            return (f"if {name}() only calls the function it is handed, hand it a lambda "
                    "whose body is the tool call alone (`lambda: tools.x(...)`) at every "
                    "call, and it awaits that call; else call the tool first and pass its "
                    "value")
        loop = _reduce_loop(node, parent)
        if loop is not None:
            return f"reduce() cannot await it: write the loop instead, {loop}"
        return "use a loop or an `async def` and `await` the call"

    def by_name_hint(self, node: ast.AST) -> str | None:
        """For ``X.call_tool("name", {...})`` (an MCP client's call, ``X`` being ``node``
        or ``tools``) whose first argument names a tool: how this host calls it."""
        attribute = self.parents.get(node)
        call = self.parents.get(attribute) if isinstance(attribute, ast.Attribute) else None
        if not (isinstance(call, ast.Call) and call.func is attribute and call.args
                and isinstance(call.args[0], ast.Constant)
                and isinstance(call.args[0].value, str)):
            return None
        path = self.named(call.args[0].value)
        if path is None:
            return None
        return (f"call the tool itself, {self.canonical(path)} (a dict of arguments goes "
                f"in as `await tools.{path}(**args)`){_DATA_ITSELF}")

    def canonical(self, path: str | None) -> str:
        if path is None or path not in self.tools:
            return "`await tools.<name>(arg=...)`"
        argmap = self.arguments.get(self.tools[path], {})
        spec = self.specs.get(self.tools[path])
        required = set(spec.parameters.get("required") or ()) if spec is not None else set()
        names = [py for py in parameter_names(spec, argmap) if argmap.get(py, py) in required]
        names = names or parameter_names(spec, argmap)[:1]
        shown = ", ".join(f"{name}=..." for name in names)
        return f"`await tools.{path}({shown})`"

    # -- after the walk -------------------------------------------------------------------

    def finish(self) -> None:
        body = self.tree.body
        self._unbound()
        if not body:
            return
        last = body[-1]
        # if __name__ == "__main__": the sandbox script is the main module.
        for stmt in body:
            if _is_main_guard(stmt):
                assert isinstance(stmt, ast.If)
                if self.strict:
                    self.add(stmt, 'the script is the main program: drop the `if __name__ == '
                             '"__main__":` line and call `await main()` at the top level')
                    continue
                self.note("if __name__ == '__main__'")
                self.edits.replace(self.edits.start(stmt.test), self.edits.end(stmt.test),
                                   "True")
                tail = stmt.body[-1]
                if stmt is last and isinstance(tail, ast.Expr):
                    self.edits.wrap(tail.value, "final_answer(", ")")
                elif stmt is last and (target := _assigned_name(tail)) is not None:
                    # ``result = asyncio.run(main())`` under the guard: its value
                    self.edits.tail.append(target)
        self._module_name()
        if self._has_result():
            return
        entry = self._entry()
        if entry is not None:
            awaited = isinstance(entry, ast.AsyncFunctionDef) or id(entry) in self.converted
            call = f"await {entry.name}()" if awaited else f"{entry.name}()"
            if self.strict:
                self.add(entry, f"{entry.name}() is defined but never called, so nothing "
                         f"runs: add `{call}` as the last line")
            else:
                self.note("uncalled main()")
                self.edits.tail.append(call)
            return
        target = _assigned_name(last)
        if target is not None:
            if self.strict:
                self.add(last, f"the script has no result: it ends by assigning `{target}`; "
                         f"add `{target}` as the last line")
            else:
                self.note("ends in an assignment")
                self.edits.tail.append(target)

    def _module_name(self) -> None:
        """``__name__`` read elsewhere (``logging.getLogger(__name__)``): the script is the
        main module, so it is the text ``'__main__'`` (the sandbox keeps ``_`` names
        private); a main guard's test is already ``True``."""
        names = self.loads_of.get("__name__")  # not in annotations: those are dropped
        if self.strict or "__name__" in self.bound or not names:
            return
        guards = {id(node) for stmt in self.tree.body if _is_main_guard(stmt)
                  for node in ast.walk(stmt.test)}  # type: ignore[attr-defined]
        for node in names:
            if id(node) not in guards:
                self.note("__name__")
                self.edits.replace(self.edits.start(node), self.edits.end(node), "'__main__'")

    def _has_result(self) -> bool:
        last = self.tree.body[-1]
        if isinstance(last, ast.Expr) or _is_main_guard(last):
            return True
        return any(self.edits_has_return(node) for node in self.of(ast.Return)) or any(
            isinstance(node.func, ast.Name) and node.func.id == "final_answer"
            for node in self.of(ast.Call))

    def edits_has_return(self, node: ast.Return) -> bool:
        parent = self.parents.get(node)
        while parent is not None:
            if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                return False
            parent = self.parents.get(parent)
        return True

    def _entry(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        reads = self.reads
        functions = [s for s in self.tree.body
                     if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)]
        uncalled = [f for f in functions if f.name not in reads]
        for func in uncalled:
            if func.name in _ENTRY_NAMES:
                return func
        if uncalled and uncalled[-1] is self.tree.body[-1]:
            return uncalled[-1]
        return None

    def _called_bare(self, node: ast.Name) -> bool:
        """``node()``: called with no argument at all."""
        call = self.parents.get(node)
        return isinstance(call, ast.Call) and call.func is node and not (
            call.args or call.keywords)

    def _class_checked(self, node: ast.Name) -> bool:
        """``isinstance(x, node)``, ``issubclass(c, (E, node))``: the class tested against."""
        parent = self.parents.get(node)
        tested: ast.expr = node
        if isinstance(parent, ast.Tuple):
            tested, parent = parent, self.parents.get(parent)
        return (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name)
                and parent.func.id in ("isinstance", "issubclass") and len(parent.args) == 2
                and parent.args[1] is tested)

    def _never_runs(self, node: ast.AST, known: dict[ast.AST, bool],
                    ruled: dict[ast.AST, frozenset[ast.AST]]) -> bool:
        """Whether ``node`` sits where a constant test never lets Python go: the branch a
        literal's truth rules out (``x if False else y``, ``if 0:``, ``while False:``, the
        ``else`` of ``while True:``, ``True or x``). Only a literal: a flag the script set
        may change before the test. ``known`` keeps each node's answer and ``ruled`` each
        test's ruled-out children, so every read costs one step up: walked afresh, each
        name read under ``if 0:`` scanned its ``or`` up to itself (16,000 reads, 80 kB:
        7 s of the host's CPU for one check)."""
        path: list[ast.AST] = []
        child, parent = node, self.parents.get(node)
        answer = False
        while parent is not None:
            found = known.get(child)
            if found is not None:
                answer = found
                break
            path.append(child)
            if isinstance(parent, _LITERAL_TESTS):
                out = ruled.get(parent)
                if out is None:
                    out = ruled[parent] = frozenset(_ruled_out(parent))
                if child in out:
                    answer = True
                    break
            child, parent = parent, self.parents.get(parent)
        for step in path:
            known[step] = answer
        return answer

    def _unbound(self) -> None:
        seen: set[str] = set()
        dead: dict[ast.AST, bool] = {}
        ruled: dict[ast.AST, frozenset[ast.AST]] = {}
        inputs, bound, bare, aliases = self.inputs, self.bound, self.bare, self.aliases
        strict = self.strict
        choices: list[str] | None = None
        suggested = 0
        for node in self.loads:
            name = node.id
            if name in _NO_ARGUMENT and name not in self.bound and self._called_bare(node):
                self.add(node, f"{name}() without an argument is not available in the "
                         f"sandbox ({_NO_ARGUMENT[name]})")
                continue
            if (name == "BaseException" and name not in self.bound and name not in seen
                    and not self._class_checked(node)):
                seen.add(name)
                self.add(node, f"`{name}` is not available in the sandbox ({_REMOVED[name]})")
                continue
            if name in _KNOWN or name in inputs or name in bound or name in seen or (
                    name.startswith("_")) or (not strict and (
                    name == "final_answer" or name in bare or name in aliases)):
                continue
            if name in self.refused_bare or name in self.by_name_roots:
                continue
            if self._never_runs(node, dead, ruled):
                continue  # CPython never reads it either
            seen.add(name)
            if name in FACADE_NAMES:
                if self.strict:
                    self.add(node, f"name '{name}' is not defined: add `import {name}` at the "
                             "top of the script")
                else:
                    self.note("modules without import")
                    self.modules.append(name)
                continue
            tool = name if name in self.tools or name in self.namespaces else (
                name[:-5] if name.endswith("_sync") and name[:-5] in self.tools else None)
            if tool is not None:
                shown = self.canonical(tool) if tool in self.tools else (
                    f"`await tools.{tool}.<name>(...)`")
                self.add(node, f"name '{name}' is not defined: tools are called as {shown}")
                continue
            if name in _REMOVED:
                self.add(node, f"`{name}` is not available in the sandbox ({_REMOVED[name]})")
                continue
            if name in self.type_params:
                self.add(node, f"name '{name}' is not defined: a type parameter (`[{name}]`) "
                         "is there for annotations only in the sandbox; to use it at run time "
                         f"define it at the top, `{name} = TypeVar('{name}')`")
                continue
            if name in _TOOLS_ALIASES:
                self.add(node, f"name '{name}' is not defined: the tools are `tools` here, "
                         f"called as `await tools.<name>(arg=...)` (a dict of arguments goes "
                         f"in as `await tools.<name>(**args)`)")
                continue
            if name == "final_answer":
                self.add(node, "final_answer() is not available: end the script with the "
                         "value as its last expression")
                continue
            by_name = next((hint for load in self.loads_of.get(name, ())
                            if (hint := self.by_name_hint(load)) is not None), None)
            if by_name is not None:
                self.add(node, f"name '{name}' is not defined: {by_name}")
                continue
            if choices is None:
                known = _KNOWN | set(inputs) | bound
                if not strict:
                    known |= {"final_answer"} | set(bare) | aliases
                choices = sorted(known - set(SAFE_BUILTINS) - {"final_answer"}) + [
                    f"tools.{p}" for p in self.tools]
            close: list[str] = []
            if suggested < _SUGGESTIONS and len(choices) <= _SUGGESTION_CHOICES and (
                    len(name) <= _SUGGESTION_LENGTH):
                import difflib  # a name the script never defined: the error path only

                suggested += 1
                close = difflib.get_close_matches(name, choices, n=1)
            if close:
                hint = f"; did you mean `{close[0]}`?"
            elif self.inputs:
                hint = (f": assign it before use (this run's inputs are "
                        f"{', '.join(sorted(self.inputs))})")
            else:
                hint = ": assign it before use (this run has no host inputs)"
            self.add(node, f"name '{name}' is not defined{hint}")

    def mark_dataclass_fields(self) -> None:
        """Each annotated line of a ``@dataclass`` body as CPython reads it, on its own line.

        The policy drops annotations, so ``name: str`` would leave nothing in the class:
        it becomes ``name: str = dataclasses.field()``, ``n: int = 0`` becomes ``n: int =
        dataclasses.field(default=0)`` (a ``field(...)`` value and a ``ClassVar`` stay as
        they are), and ``__post_init__`` (a special method a script may not define)
        ``dataclass_post_init``: the facade's ``dataclass`` reads the fields in order. Not
        a dialect (strict hosts get it too): it is how the sandbox runs plain Python.
        """
        classes = self.of(ast.ClassDef)
        if not classes:
            return
        decorators, field_names, modules = set(), set(), []
        imports_from: list[ast.ImportFrom] = []
        for node in self.of(ast.ImportFrom):
            if node.module == "dataclasses" and not node.level:
                imports_from.append(node)
                for alias in node.names:
                    if alias.name == "dataclass":
                        decorators.add(alias.asname or alias.name)
                    elif alias.name == "field":
                        field_names.add(alias.asname or alias.name)
        for imported in self.of(ast.Import):
            modules += [a.asname or a.name for a in imported.names if a.name == "dataclasses"]
        if not modules and "dataclasses" not in self.bound:
            modules = ["dataclasses"]
        if not modules:
            return  # the script's own ``dataclasses`` name: nothing here is the module's

        def names_module_item(node: ast.expr, names: set[str], item: str) -> bool:
            if isinstance(node, ast.Name):
                return node.id in names
            return (isinstance(node, ast.Attribute) and node.attr == item
                    and isinstance(node.value, ast.Name) and node.value.id in modules)

        def is_dataclass(node: ast.expr) -> bool:
            return names_module_item(node.func if isinstance(node, ast.Call) else node,
                                     decorators, "dataclass")

        ref = modules[0]
        edits = self.edits
        marked = False
        dataclasses = [c for c in classes if any(is_dataclass(d) for d in c.decorator_list)]
        if not dataclasses:
            return
        for cls in dataclasses:
            for stmt in cls.body:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and (
                        stmt.name == "__post_init__"):
                    start = edits.data.find(b"__post_init__", edits.start(stmt))
                    edits.replace(start, start + len("__post_init__"), POST_INIT)
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                note = stmt.annotation
                head = note.value if isinstance(note, ast.Subscript) else note
                if names_module_item(head, {"ClassVar"}, "ClassVar"):
                    continue
                marked = True
                if names_module_item(note, {"KW_ONLY"}, "KW_ONLY") and stmt.value is None:
                    # its name is no field (often ``_``, which a class body may not bind)
                    edits.replace(edits.start(stmt.target), edits.end(stmt.target),
                                  "dataclass_kw_only")
                    edits.replace(edits.end(note), edits.end(note), f" = {ref}.KW_ONLY")
                elif stmt.value is None:
                    edits.replace(edits.end(note), edits.end(note), f" = {ref}.field()")
                elif not (isinstance(stmt.value, ast.Call)
                          and names_module_item(stmt.value.func, field_names, "field")):
                    edits.wrap(stmt.value, f"{ref}.field(default=", ")")
        # ``super().__post_init__()`` in a dataclass's subclass reads the renamed method
        for attribute in self.of(ast.Attribute):
            if attribute.attr == "__post_init__":
                end = edits.end(attribute)
                edits.replace(end - len("__post_init__"), end, POST_INIT)
        if not marked or ref in self.bound:
            return
        if imports_from:
            # on the import's own line: a strict host binds no modules for the script
            start = edits.start(imports_from[0])
            edits.replace(start, start, f"import {ref}; ")
        elif ref not in self.modules:
            self.modules.append(ref)  # used without import (a dialect)

    def texts(self, named: Collection[str]) -> dict[str, tuple[str, str]]:
        """Tool path → (name, description) of the ``named`` tools, when the script reads a
        ``.name`` or ``.description`` (a LangChain tool's: ``for t in [search, fetch]:
        print(t.name, t.description)``)."""
        if not named or not any(node.attr in TOOL_TEXTS
                                for node in self.of(ast.Attribute)):
            return {}
        out: dict[str, tuple[str, str]] = {}
        for path in named:
            wire = self.tools[path]
            spec = self.specs.get(wire)
            out[path] = (wire, spec.description if spec is not None else "")
        return out

    def orders(self) -> dict[str, Sequence[str] | None]:
        """Tool path → its positional order, for every tool the script names (a call's
        function is one of the names and attribute chains read here)."""
        out: dict[str, Sequence[str] | None] = {}
        bare, name_kind, attribute_kind = self.bare, ast.Name, ast.Attribute
        # a link more attributes from its base than any tool path has parts names no tool:
        # walking every link of ``a.a.a….b`` to its base was quadratic (990 links, 2,000
        # characters: 0.5 s of the host's loop; 2,900 links: 5 s)
        most = self.most_parts
        # without bare names only attribute chains name tools (in ``nodes`` order either way)
        for node in self.nodes if bare else self.of(ast.Attribute):
            kind = type(node)
            if kind is name_kind:
                assert isinstance(node, ast.Name)
                if node.id not in bare:
                    continue
            elif kind is not attribute_kind or _deeper(node, most):
                continue
            assert isinstance(node, _NAMED)
            if not isinstance(node.ctx, ast.Load):
                continue
            path = self.tool_of(node)
            if path is None or path not in self.tools or path in out:
                continue
            wire = self.tools[path]
            out[path] = _order_of(self.specs.get(wire), self.arguments.get(wire, {}))
        return out


_CACHE_METHODS: Final = frozenset({"cache_info", "cache_clear", "cache_parameters"})
_READS_TO_END: Final = frozenset({"list", "sorted", "sum", "set", "frozenset", "tuple",
                                 "dict", "min", "max"})
"""Builtins that read their first argument, an iterable, to its end."""


def _own_nodes(func: ast.FunctionDef) -> Iterator[ast.AST]:
    """The nodes of ``func``'s body, not those of the functions, lambdas and classes it
    defines (their own scopes)."""
    stack: list[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


_DATACLASS_QUERIES: Final = frozenset({"fields", "is_dataclass"})
"""dataclasses' functions that read a class without making an instance of it."""


_LITERAL_TESTS: Final = (ast.If, ast.IfExp, ast.While, ast.BoolOp)
"""Where a literal's truth can rule a branch out."""


def _ruled_out(test: ast.AST) -> list[ast.AST]:
    """The children of ``test`` (an ``if``, ``while``, ``x if c else y`` or ``and``/``or``)
    its literal rules out: the branch a constant test never takes, the values after a
    constant that ends an ``or`` (true) or an ``and`` (false)."""
    if isinstance(test, ast.BoolOp):
        short = isinstance(test.op, ast.Or)  # a true value ends ``or``
        for index, value in enumerate(test.values):
            if isinstance(value, ast.Constant) and bool(value.value) is short:
                return list(test.values[index + 1:])
        return []
    if not isinstance(test, ast.If | ast.IfExp | ast.While) or not isinstance(
            test.test, ast.Constant):
        return []
    branch = test.orelse if test.test.value else test.body
    return list(branch) if isinstance(branch, list) else [branch]


def _decorator_name(node: ast.expr) -> str | None:
    """``dataclass`` for ``@dataclass``, ``@dataclasses.dataclass(frozen=True)`` …"""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _cache_decorator(func: ast.expr) -> bool:
    """``lru_cache``, ``cache`` or the same under ``functools.``."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and (
            func.value.id == "functools"):
        return func.attr in ("lru_cache", "cache")
    return isinstance(func, ast.Name) and func.id in ("lru_cache", "cache")


def _context_decorated(func: ast.FunctionDef) -> bool:
    """``@contextmanager`` or ``@contextlib.contextmanager`` over ``func``."""
    return any((isinstance(d, ast.Name) and d.id == "contextmanager") or (
        isinstance(d, ast.Attribute) and d.attr == "contextmanager"
        and isinstance(d.value, ast.Name) and d.value.id == "contextlib")
        for d in func.decorator_list)


def _is_partial(func: ast.expr) -> bool:
    """``partial`` or ``functools.partial``."""
    return (isinstance(func, ast.Name) and func.id == "partial") or (
        isinstance(func, ast.Attribute) and func.attr == "partial"
        and isinstance(func.value, ast.Name) and func.value.id == "functools")


def plan(source: str, tree: ast.Module, *, tools: Mapping[str, str],
         arguments: Mapping[str, Mapping[str, str]], specs: Mapping[str, ToolSpec],
         inputs: Mapping[str, Any] | None = None, strict: bool = False) -> ScriptPlan:
    """Read ``tree`` (parsed from ``source``) for the dialects; see the module docstring."""
    inputs = dict(inputs or {})
    edits = _Edits(source)
    planner = _Planner(tree, tools=tools, arguments=arguments, specs=specs, inputs=inputs,
                       strict=strict, edits=edits)
    planner.prepare()
    if planner.needs_visit():
        planner.visit(tree)
    planner.finish()
    planner.mark_dataclass_fields()
    if planner.bare:
        planner.note("bare tool names")
    rewritten = edits.apply() if (edits.items or edits.tail) else source
    orders = planner.orders() if not strict else {}
    prelude = Prelude(inputs=inputs, modules=tuple(planner.modules),
                      names=dict(planner.bare) if not strict else {},
                      orders=orders, texts=planner.texts(orders))
    return ScriptPlan(source=rewritten, prelude=prelude, problems=planner.problems,
                      dialects=tuple(planner.used), tool_of=planner.plan_tool_of,
                      nodes=planner.nodes, parents=planner.parents, kinds=planner.kinds,
                      appended=edits.appended, tree_edits=edits.tree_edits())
