"""Static checks on a script before anything runs.

A model's script is checked against the SDK it was written for: it must
compile under the sandbox policy, name tools that exist, pass keyword
arguments the tool accepts (and all required ones), literal argument
values must satisfy their schemas, and it may import only the sandbox's
modules and their names (an ``import`` under ``if TYPE_CHECKING:`` never runs;
``__future__`` is the policy's to judge). Every problem carries its script line, so
the model can fix them all in one round instead of discovering them by side
effects (a missing module used to be found only after the tools before it ran).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from codemode.dispatch.schema import argument_problem
from codemode.sandbox.language.compile import MAX_SOURCE
from codemode.sandbox.language.facades import (
    FACADE_NAMES,
    facade,
    missing_attribute,
    missing_module,
    missing_name,
)
from codemode.sandbox.language.newer_syntax import syntax_message
from codemode.sandbox.language.parsing import parse_tree

if TYPE_CHECKING:
    from codemode.dispatch.spec import ToolSpec

__all__ = ["RUNNABLE", "Problem", "StaticCall", "call_lines", "check_script",
           "parameter_names", "runnable_input", "static_calls"]


@dataclass(frozen=True, kw_only=True, slots=True)
class Problem:
    """One reason the script would fail, located in the script."""

    line: int
    """1-based line in the script."""
    column: int
    """1-based column in the script."""
    message: str
    """What is wrong and how to fix it."""

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def _tool_path(node: ast.expr) -> str | None:
    """``tools.a.b`` → ``"a.b"``; anything else → None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id == "tools" and parts:
        return ".".join(reversed(parts))
    return None


def _suggest(name: str, choices: Sequence[str]) -> str:
    import difflib  # the error path only

    close = difflib.get_close_matches(name, list(choices), n=3)
    return f"; did you mean {', '.join(close)}?" if close else ""


def _by_name(node: ast.Attribute, parents: Mapping[ast.AST, ast.AST],
             tools: Mapping[str, str]) -> str:
    """For ``tools.call_tool("name", {...})`` (an MCP client's call by name) whose first
    argument is a tool's path: how this host calls it; else empty."""
    call = parents.get(node)
    if not (isinstance(call, ast.Call) and call.func is node and call.args
            and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
        return ""
    name = call.args[0].value
    wires = {wire: path for path, wire in tools.items()}
    path = name if name in tools else wires.get(name) or re.sub(r"\W", "_", name)
    if path not in tools:
        return ""
    return (f"; call the tool itself: `await tools.{path}(...)` with keyword arguments "
            f"(a dict of arguments goes in as `await tools.{path}(**args)`); it returns the "
            "tool's data itself (a dict, list or text), not an MCP result: there is no "
            "`.content[0].text` to read")


RUNNABLE: Final = frozenset({"invoke", "ainvoke", "run", "arun"})
"""A LangChain tool's methods (``search.invoke({"query": "x"})``, ``search.run("x")``): each
is the call itself, its one argument a dict of arguments or the only argument."""

RUNNABLE_INPUT: Final = frozenset({"input", "tool_input"})
"""The keyword of such a method's one argument (``invoke(input={...})``)."""


RUNNABLE_OPTIONS: Final = frozenset({
    "config", "callbacks", "tags", "metadata", "run_name", "run_id", "verbose", "color",
    "start_color", "tool_call_id"})
"""LangChain's own keywords of those methods (``x.invoke({...}, config=config)``): never
the tool's arguments there (those are in the one argument), so ignored here."""


def runnable_input(node: ast.Call) -> ast.expr | None:
    """The one argument of ``x.invoke(input=...)`` given by keyword (on its line), or None."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr in RUNNABLE
            and not node.args):
        return None
    given = [k for k in node.keywords if k.arg not in RUNNABLE_OPTIONS]
    if (len(given) == 1 and given[0].arg in RUNNABLE_INPUT
            and given[0].lineno == given[0].value.lineno):
        return given[0].value
    return None


def runnable_options(node: ast.Call) -> list[ast.keyword]:
    """LangChain's keywords (:data:`RUNNABLE_OPTIONS`) of a call ``x.invoke(...)`` that has
    its one argument (positional, or ``input=``): what the dialects drop."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr in RUNNABLE):
        return []
    if len(node.args) != 1 and runnable_input(node) is None:
        return []
    return [k for k in node.keywords if k.arg in RUNNABLE_OPTIONS]


def _runnable(path: str, tools: Mapping[str, str]) -> str:
    """For ``tools.x.invoke`` (a LangChain tool's method) of a tool ``x``: how this host
    calls it; else empty."""
    head, _, method = path.rpartition(".")
    if method not in RUNNABLE or head not in tools:
        return ""
    return (f": `.{method}()` is a LangChain tool's method; here the tool is called itself: "
            f"`await tools.{head}(...)` with keyword arguments (a dict of arguments goes in "
            f"as `await tools.{head}(**args)`)")


_NEVER_LITERAL: Final = (ast.Name, ast.Attribute, ast.Subscript, ast.JoinedStr, ast.Await,
                         ast.Lambda, ast.Compare, ast.BoolOp, ast.IfExp, ast.ListComp,
                         ast.DictComp, ast.SetComp, ast.GeneratorExp, ast.Starred)
"""Node types ``ast.literal_eval`` always refuses: answered without its exception (an
argument like ``owner=user["name"]`` is in most scripts)."""


def _literal(node: ast.expr) -> tuple[bool, Any]:
    if type(node) is ast.Constant:
        return True, node.value
    if isinstance(node, _NEVER_LITERAL):
        return False, None
    if type(node) is ast.BinOp and not (type(node.right) is ast.Constant
                                        and type(node.right.value) is complex):
        return False, None  # ``literal_eval`` reads a BinOp only as a complex ``1+2j``
    if type(node) is ast.Call and not (type(node.func) is ast.Name and node.func.id == "set"
                                       and not node.args and not node.keywords):
        return False, None  # and a call only as ``set()``
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _check_value(schema: Mapping[str, Any], wire_arg: str,
                 value: Any) -> tuple[str, str] | None:
    """Validate one literal argument in the context of its root schema (keeps $defs/$refs)."""
    return argument_problem(schema, wire_arg, value)


def _allows_extra(schema: Mapping[str, Any], name: str) -> bool:
    """Whether the undeclared keyword argument ``name`` is plausible rather than a typo.

    True when the root (or an ``allOf`` branch) says ``additionalProperties: true``
    or gives it a schema (the SDK then offers ``**extra_arguments``), when ``name`` matches
    one of its ``patternProperties``, or when the
    schema declares no properties at all and does not forbid extras (a free-form
    object). With declared properties and no ``additionalProperties`` key, JSON
    Schema would accept an unknown name, but it is far more often a misspelling
    the tool would silently ignore, so preflight reports it.
    """
    branches = [schema, *(b for b in schema.get("allOf") or () if isinstance(b, Mapping))]
    declared = False
    for branch in branches:
        if any(_matches(pattern, name) for pattern in _patterns(branch)):
            return True
        extra = branch.get("additionalProperties")
        if extra is True or (isinstance(extra, Mapping) and extra):
            return True
        if extra is False or branch.get("unevaluatedProperties") is False:
            return False
        declared = (
            declared
            or bool(branch.get("properties"))
            or bool(_patterns(branch))
            or "$ref" in branch
            or any(key in branch for key in ("anyOf", "oneOf"))
        )
    return not declared


def _patterns(schema: Mapping[str, Any]) -> list[str]:
    patterns = schema.get("patternProperties")
    return [str(p) for p in patterns] if isinstance(patterns, Mapping) else []


def _matches(pattern: str, name: str) -> bool:
    """``name`` matches ``pattern`` as JSON Schema reads it (a search, not anchored); a
    pattern Python's ``re`` cannot read matches nothing here (validation decides)."""
    try:
        return re.search(pattern, name) is not None
    except (re.error, RecursionError, OverflowError):
        return False


def _accepted(argmap: Mapping[str, Any], schema: Mapping[str, Any]) -> str:
    """``accepts: a, b`` for an unknown-argument message, with the key patterns, if any."""
    patterns = [p for b in [schema, *(x for x in schema.get("allOf") or ()
                                      if isinstance(x, Mapping))] for p in _patterns(b)]
    names = ", ".join(argmap) or "none"
    if not patterns:
        return f"accepts: {names}"
    keys = " or ".join(repr(p) for p in patterns[:3])
    return f"accepts: {names}, and keys matching {keys}"


ToolOf = Callable[[ast.expr], "str | None"]
"""The tool path a call's function (or an attribute chain) names, or None."""

Orders = Mapping[str, "Sequence[str] | None"]
"""Tool path → the parameters positional arguments fill (None: no clear order)."""


def parameter_names(spec: ToolSpec | None, argmap: Mapping[str, str]) -> list[str]:
    """A tool's Python argument names in its schema's ``properties`` order."""
    props = spec.parameters.get("properties") if spec is not None else None
    if not isinstance(props, Mapping):
        return list(argmap)
    wire_to_py = {w: p for p, w in argmap.items()}
    names = [wire_to_py.get(w, w) for w in props if isinstance(w, str)]
    return names + [p for p in argmap if p not in names]


def _folded(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def spelling_alias(name: str, argmap: Mapping[str, str]) -> str | None:
    """The one parameter ``name`` spells in another case style (``per_page`` for
    ``perPage``, ``issueNumber`` for ``issue_number``), or None (``name`` is a parameter,
    or no parameter or more than one folds to it). The dialects send it as that parameter."""
    if name in argmap:
        return None
    folded = _folded(name)
    found = [py for py in argmap if _folded(py) == folded]
    return found[0] if len(found) == 1 else None


def _type_checking(node: ast.expr) -> bool:
    """``TYPE_CHECKING`` or ``typing.TYPE_CHECKING``: False when a script runs."""
    if isinstance(node, ast.Attribute):
        return node.attr == "TYPE_CHECKING" and isinstance(node.value, ast.Name)
    return isinstance(node, ast.Name) and node.id == "TYPE_CHECKING"


def _never_runs(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Whether ``node`` is inside the body of an ``if TYPE_CHECKING:``."""
    parent = parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.If) and node in parent.body and _type_checking(parent.test):
            return True
        node, parent = parent, parents.get(parent)
    return False


_IMPORT_ERRORS: Final = frozenset({"ImportError", "ModuleNotFoundError", "Exception"})
"""Handlers that catch a refused import (the runtime raises ``ModuleNotFoundError``)."""


def _catches_import_errors(node: ast.Try | ast.TryStar) -> bool:
    for handler in node.handlers:
        kind = handler.type
        names = kind.elts if isinstance(kind, ast.Tuple) else [kind]
        if any(isinstance(name, ast.Name) and name.id in _IMPORT_ERRORS for name in names):
            return True
    return False


def _import_guarded(node: ast.AST, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """Whether ``node`` runs in the body of a ``try`` whose handlers catch ImportError
    (``try: import numpy`` / ``except ImportError:`` a fallback): the runtime's refusal is
    then the script's own business, not a problem to report before running."""
    parent = parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return False  # runs when called, maybe outside the try
        if isinstance(parent, ast.Try | ast.TryStar) and node in parent.body and (
                _catches_import_errors(parent)):
            return True
        node, parent = parent, parents.get(parent)
    return False


def _canonical(path: str, names: Sequence[str]) -> str:
    return f"`await tools.{path}({', '.join(f'{n}=...' for n in names)})`"


class _Checker(ast.NodeVisitor):
    def __init__(
        self,
        tools: Mapping[str, str],
        arguments: Mapping[str, Mapping[str, str]],
        specs: Mapping[str, ToolSpec],
        tool_of: ToolOf | None = None,
        orders: Orders | None = None,
        modules: Mapping[str, str] | None = None,
    ) -> None:
        self.import_guarded = False
        """The visitor is inside a ``try`` body whose handlers catch ImportError."""
        self.modules: Mapping[str, str] = modules or {}
        """Script name → the sandbox module it always holds (``import re as r``: r → re)."""
        self.tools = tools
        self.arguments = arguments
        self.specs = specs
        self.problems: list[Problem] = []
        self.awaited: set[int] = set()
        self.tool_of: ToolOf = tool_of or _tool_path
        self.orders = orders
        """None: keyword arguments only (no dialects); calls without await are an error."""

    def add(self, node: ast.AST, message: str) -> None:
        self.problems.append(
            Problem(
                line=getattr(node, "lineno", 1),
                column=getattr(node, "col_offset", 0) + 1,
                message=message,
            )
        )

    def check_nodes(self, nodes: Sequence[ast.AST], parents: Mapping[ast.AST, ast.AST]) -> None:
        """The visitor's checks over an already flattened tree (one pass, no recursion)."""
        tools, tool_of, strict = self.tools, self.tool_of, self.orders is None
        for node in nodes:
            kind = type(node)
            if kind is ast.Call:
                assert isinstance(node, ast.Call)
                path = tool_of(node.func)
                if path is not None and path in tools:
                    self.check_call(node, path)
            elif kind is ast.Attribute:
                assert isinstance(node, ast.Attribute)
                parent = parents.get(node)
                if isinstance(parent, ast.Attribute) and parent.value is node:
                    continue  # only whole chains: ``tools.a.b``, not ``tools.a``
                path = tool_of(node)
                if path is not None and path not in tools and not any(
                        p.startswith(path + ".") for p in tools):
                    self.add(node, f"unknown tool tools.{path}"
                             f"{_runnable(path, tools) or _by_name(node, parents, tools)}"
                             f"{'' if _runnable(path, tools) else _suggest(path, list(tools))}")
                if not (strict is False and _loop_run(node, parents)):
                    self.check_module_attribute(node)
            elif kind is ast.Import or kind is ast.ImportFrom:
                assert isinstance(node, ast.Import | ast.ImportFrom)
                if not (_never_runs(node, parents) or _import_guarded(node, parents)):
                    self.check_import(node)
            elif strict and kind is ast.Expr:
                assert isinstance(node, ast.Expr)
                if isinstance(node.value, ast.Call) and _tool_path(node.value.func):
                    self.add(node, f"the result of tools.{_tool_path(node.value.func)}(...) "
                             "is discarded and the call never runs: add await")

    def check_module_attribute(self, node: ast.Attribute) -> None:
        """``asyncio.wait`` where the module offers no ``wait``: the runtime's AttributeError,
        found before the calls on the lines above it run."""
        value = node.value
        if not (isinstance(value, ast.Name) and value.id in self.modules):
            return
        module, name = self.modules[value.id], node.attr
        if (module, name) in _DIALECT_ATTRIBUTES:
            return  # the dialects rewrite it, or refuse it with their own fix (strict)
        if not name.startswith("_") and name not in facade(module).exports():
            self.add(node, missing_attribute(module, name))

    def check_import(self, node: ast.Import | ast.ImportFrom) -> None:
        """Only facades and their names import (the runtime's refusal, found before any
        tool runs)."""
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in FACADE_NAMES:
                    self.add(alias, missing_module(alias.name))
            return
        module = node.module or ""
        if node.level:
            self.add(node, "relative imports are not available in the sandbox")
        elif module == "__future__":
            return  # the policy drops the features that change nothing, refuses the rest
        elif module not in FACADE_NAMES:
            self.add(node, missing_module(module))
        else:
            exports = facade(module).exports()
            for alias in node.names:
                if alias.name != "*" and alias.name not in exports:  # the policy refuses *
                    self.add(alias, missing_name(module, alias.name))

    def visit_Import(self, node: ast.Import) -> None:
        if not self.import_guarded:
            self.check_import(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if not self.import_guarded:
            self.check_import(node)

    def visit_Try(self, node: ast.Try | ast.TryStar) -> None:
        """An import in a ``try`` body whose handlers catch ImportError is the script's
        fallback (see :func:`_import_guarded`)."""
        guarded = _catches_import_errors(node)
        before = self.import_guarded
        self.import_guarded = before or guarded
        for stmt in node.body:
            self.visit(stmt)
        self.import_guarded = before
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
                          ) -> None:
        before, self.import_guarded = self.import_guarded, False  # runs when called
        self.generic_visit(node)
        self.import_guarded = before

    visit_AsyncFunctionDef = visit_FunctionDef
    visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        if not _type_checking(node.test):
            self.generic_visit(node)
            return
        for stmt in node.orelse:  # the body never runs
            self.visit(stmt)

    def visit_Await(self, node: ast.Await) -> None:
        self.awaited.add(id(node.value))
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        if self.orders is None and isinstance(node.value, ast.Call) and _tool_path(
                node.value.func):
            self.add(
                node,
                f"the result of tools.{_tool_path(node.value.func)}(...) is discarded "
                "and the call never runs: add await",
            )
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        path = self.tool_of(node)
        if (
            path is not None
            and path not in self.tools
            and not any(p.startswith(path + ".") for p in self.tools)
        ):
            self.add(node, f"unknown tool tools.{path}{_suggest(path, list(self.tools))}")
            return
        self.check_module_attribute(node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        path = self.tool_of(node.func)
        if path is not None and path in self.tools:
            self.check_call(node, path)
        self.generic_visit(node)

    def _positional(self, node: ast.Call, path: str,
                    accepts: list[str]) -> tuple[bool, list[ast.keyword]] | None:
        """Positional arguments as keywords (dialects): (shape unknown, keywords), or None
        after reporting that they cannot match."""
        assert self.orders is not None
        order = self.orders.get(path)
        if len(node.args) == 1 and not node.keywords:
            arg = node.args[0]
            if isinstance(arg, ast.Dict) and arg.keys and all(
                    isinstance(k, ast.Constant) and isinstance(k.value, str) for k in arg.keys):
                keys = [str(k.value) for k in arg.keys if isinstance(k, ast.Constant)]
                # The keys may be the wire names: ``{"from": ...}`` is ``from_=...``.
                argmap = self.arguments.get(self.tools[path], {})
                to_py = {wire: py for py, wire in argmap.items()}
                keys = [to_py.get(k, k) if k not in argmap else k for k in keys]
                folded = {_folded(name) for name in order or ()}
                # all keys parameters of the order, or one of them its first: ``{"query":
                # "x", "sort": "stars"}`` is the arguments, not a value for ``query``
                if order is None or all(k in order or _folded(k) in folded for k in keys) or (
                        order and _folded(order[0]) in {_folded(k) for k in keys}):
                    return False, [ast.keyword(arg=k, value=v, lineno=v.lineno,
                                               col_offset=v.col_offset)
                                   for k, v in zip(keys, arg.values, strict=True)]
            literal = ast.Constant | ast.List | ast.Tuple | ast.Dict | ast.JoinedStr
            if not isinstance(arg, literal) and (order is None or len(order) > 1):
                return True, []  # maybe one dict of arguments: the runtime decides
        if order is None:
            self.add(node, f"tools.{path}() needs keyword arguments: its parameters have no "
                     f"clear order; call it as {_canonical(path, accepts)}")
            return None
        if any(isinstance(a, ast.Starred) for a in node.args):
            return True, []
        if len(node.args) > len(order):
            self.add(node, f"tools.{path}() takes at most {len(order)} positional argument(s) "
                     f"({', '.join(order) or 'none'}); got {len(node.args)}: call it as "
                     f"{_canonical(path, order)}")
            return None
        return False, [ast.keyword(arg=name, value=a, lineno=a.lineno, col_offset=a.col_offset)
                       for name, a in zip(order, node.args, strict=False)]

    def check_call(self, node: ast.Call, path: str) -> None:
        wire = self.tools[path]
        argmap = self.arguments.get(wire, {})
        spec = self.specs.get(wire)
        keywords: list[ast.keyword] = list(node.keywords)
        unknown_shape = False
        options = runnable_options(node) if self.orders is not None else []
        if options:  # ``x.invoke({...}, config=config)``: the dialects drop LangChain's own
            node = ast.copy_location(ast.Call(
                node.func, node.args, [k for k in node.keywords if k not in options]), node)
            keywords = list(node.keywords)
        single = runnable_input(node) if self.orders is not None else None
        if single is not None:  # ``search.invoke(input={...})``: its one argument
            self.check_call(ast.copy_location(ast.Call(node.func, [single], []), node), path)
            return
        if node.args and self.orders is None:
            self.add(
                node,
                f"tools.{path} takes keyword arguments only "
                f"(accepts: {', '.join(argmap) or 'none'})",
            )
        elif node.args:
            mapped = self._positional(node, path, parameter_names(spec, argmap))
            if mapped is None:
                return
            unknown_shape, extra = mapped
            keywords = extra + keywords
        has_star = unknown_shape or any(k.arg is None for k in node.keywords)
        given: set[str] = set()
        for keyword in keywords:
            if keyword.arg is None:
                continue
            name = keyword.arg
            if name not in argmap and self.orders is not None:
                name = spelling_alias(name, argmap) or name  # ``per_page=`` for ``perPage``
            if name not in argmap:
                if spec is not None and _allows_extra(spec.parameters, keyword.arg):
                    given.add(keyword.arg)
                    continue
                accepted = (_accepted(argmap, spec.parameters) if spec is not None
                            else f"accepts: {', '.join(argmap) or 'none'}")
                self.add(
                    keyword,
                    f"tools.{path} has no argument {keyword.arg!r}"
                    f"{_suggest(keyword.arg, list(argmap))} ({accepted})",
                )
                continue
            given.add(name)
            ok, value = _literal(keyword.value)
            if ok and spec is not None:
                problem = _check_value(spec.parameters, argmap[name], _jsonable(value))
                if problem:
                    inner, message = problem
                    where = f"{name}{inner}: " if inner else ""
                    self.add(keyword.value, f"tools.{path}({name}=...): {where}{message}")
        if spec is not None and not has_star and (not node.args or self.orders is not None):
            required = spec.parameters.get("required") or []
            wire_to_py = {w: p for p, w in argmap.items()}
            missing = [
                wire_to_py.get(w, w)
                for w in required
                if isinstance(w, str) and wire_to_py.get(w, w) not in given
            ]
            if missing:
                self.add(
                    node, f"tools.{path} is missing required argument(s): {', '.join(missing)}"
                )


def check_script(
    source: str,
    *,
    tools: Mapping[str, str],
    arguments: Mapping[str, Mapping[str, str]],
    specs: Mapping[str, ToolSpec],
    tree: ast.Module | None = None,
    tool_of: ToolOf | None = None,
    orders: Orders | None = None,
    nodes: Sequence[ast.AST] | None = None,
    parents: Mapping[ast.AST, ast.AST] | None = None,
    kinds: Mapping[type, Sequence[ast.AST]] | None = None,
) -> list[Problem]:
    """Problems found without running ``source``; an empty list means it may run.

    ``tools`` maps script paths to wire names, ``arguments`` wire tool names to
    {python argument → wire argument}, ``specs`` wire names to specs. With the
    dialects (``codemode.mode.dialects``), ``tree`` is the script already parsed,
    ``tool_of`` also resolves bare names and ``_sync`` aliases, and ``orders`` says
    how positional arguments map to keywords (calls without ``await`` are then fine:
    the dialects await them). ``nodes`` and ``parents`` (the dialect plan's walk,
    ``policy.index_nodes``) spare a walk of ``tree``; with ``kinds`` (the same nodes by
    type) only its statements, calls and attributes are read.
    """
    if tree is not None:
        modules = _module_names(kinds if kinds is not None else _by_kind(nodes or ast.walk(tree)))
        checker = _Checker(tools, arguments, specs, tool_of, orders, modules)
        try:
            if kinds is not None and parents is not None:
                # Problems at one position come from one node and its ancestors (nodes
                # starting at the same place are nested): a statement before its call,
                # a call before its function's attribute chain, as in ``nodes`` order.
                checker.check_nodes([*(kinds.get(ast.Expr, ()) if orders is None else ()),
                                     *kinds.get(ast.Call, ()), *kinds.get(ast.Attribute, ()),
                                     *kinds.get(ast.Import, ()), *kinds.get(ast.ImportFrom, ())],
                                    parents)
            elif nodes is not None and parents is not None:
                checker.check_nodes(nodes, parents)
            else:
                checker.visit(tree)
        except (RecursionError, MemoryError) as exc:
            return [Problem(line=1, column=1, message=_unparsable(exc))]
        return sorted(checker.problems, key=lambda p: (p.line, p.column))
    if len(source) > MAX_SOURCE:
        return [
            Problem(
                line=1,
                column=1,
                message=f"the script is too long ({len(source)} characters, at most {MAX_SOURCE})",
            )
        ]
    try:
        tree = parse_tree(source)
    except SyntaxError as exc:
        return [
            Problem(line=exc.lineno or 1, column=exc.offset or 1, message=syntax_message(exc))
        ]
    except (RecursionError, MemoryError, ValueError) as exc:
        return [Problem(line=1, column=1, message=_unparsable(exc))]
    checker = _Checker(tools, arguments, specs, modules=_module_names(_by_kind(ast.walk(tree))))
    try:
        checker.visit(tree)
    except (RecursionError, MemoryError) as exc:
        return [Problem(line=1, column=1, message=_unparsable(exc))]
    return sorted(checker.problems, key=lambda p: (p.line, p.column))


def _by_kind(nodes: Iterable[ast.AST]) -> dict[type, list[ast.AST]]:
    kinds: dict[type, list[ast.AST]] = {}
    for node in nodes:
        kinds.setdefault(type(node), []).append(node)
    return kinds


_DIALECT_ATTRIBUTES: Final = frozenset({("asyncio", "run")})
"""Module attributes the dialects handle (``asyncio.run(main())``)."""

def _loop_run(node: ast.Attribute, parents: Mapping[ast.AST, ast.AST]) -> bool:
    """``asyncio.get_event_loop().run_until_complete(...)``, which the dialects run as
    ``asyncio.run(...)`` (strict hosts get the missing name and its fix)."""
    call = parents.get(node)
    method = parents.get(call) if call is not None else None
    return (node.attr in ("get_event_loop", "new_event_loop") and isinstance(call, ast.Call)
            and call.func is node and isinstance(method, ast.Attribute)
            and method.attr == "run_until_complete"
            and isinstance(parents.get(method), ast.Call))


_BINDERS: Final = ((ast.FunctionDef, "name"), (ast.AsyncFunctionDef, "name"),
                   (ast.ClassDef, "name"), (ast.arg, "arg"), (ast.ExceptHandler, "name"),
                   (ast.MatchAs, "name"), (ast.MatchStar, "name"), (ast.MatchMapping, "rest"))


_OWN_NAMES: Final[dict[str, str]] = {name: name for name in FACADE_NAMES}
"""Each sandbox module's name → itself (never changed: copied per script)."""


def _module_names(kinds: Mapping[type, Sequence[ast.AST]]) -> dict[str, str]:
    """Script name → the sandbox module it names wherever it is read: ``import re as r``
    binds ``r``, and a module's own name is bound by the runtime when the script never
    imports it (a dialect). A name the script also binds any other way is left out."""
    found = _OWN_NAMES.copy()
    other: set[str] = set()
    for node in kinds.get(ast.Import, ()):
        for alias in node.names:  # type: ignore[attr-defined]
            bound = alias.asname or alias.name.split(".")[0]
            # ``import urllib.parse`` binds the package, ``... as p`` the submodule
            module = alias.name if alias.asname else bound
            if alias.name in FACADE_NAMES:
                if found.get(bound, module) != module:
                    other.add(bound)
                found[bound] = module
            else:
                other.add(bound)
    for node in kinds.get(ast.ImportFrom, ()):
        other.update(alias.asname or alias.name for alias in node.names)  # type: ignore[attr-defined]
    for node in kinds.get(ast.Name, ()):
        if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
            other.add(node.id)  # type: ignore[attr-defined]
    for kind, attr in _BINDERS:
        other.update(name for node in kinds.get(kind, ()) if (name := getattr(node, attr)))
    for name in other:
        found.pop(name, None)
    return found


def _unparsable(exc: BaseException) -> str:
    if isinstance(exc, ValueError):
        return f"the script cannot be parsed: {exc}"
    return "the script is nested too deeply to check"


@dataclass(frozen=True, kw_only=True, slots=True)
class StaticCall:
    """A tool call whose tool and arguments are known before the script runs."""

    line: int
    """1-based line of the call in the script."""
    tool: str
    """Wire name of the tool."""
    arguments: Mapping[str, Any]
    """Wire arguments (JSON values)."""


_MAX_STATIC = 200
"""At most this many calls are resolved (a literal loop may be long)."""

MAX_STEPS: Final = 20_000
"""At most this many statements and loop items are visited while resolving: literal loops
nested three deep over 200 items each were 8 million visits (18 s on the host's event
loop, before the run started); past the budget the remaining call sites are unresolved
and policy decides them at run time."""


def call_lines(tree: ast.Module, tools: Mapping[str, str],
               tool_of: ToolOf | None = None) -> dict[str, tuple[int, ...]]:
    """Wire tool name → the lines where the script calls it (for messages)."""
    resolve = tool_of or _tool_path
    found: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            path = resolve(node.func)
            wire = tools.get(path) if path is not None else None
            if wire is not None and node.lineno not in found.setdefault(wire, []):
                found[wire].append(node.lineno)
    return {wire: tuple(sorted(lines)) for wire, lines in found.items()}


def static_calls(tree: ast.Module, *, tools: Mapping[str, str],
                 arguments: Mapping[str, Mapping[str, str]]) -> tuple[list[StaticCall], int]:
    """(the calls the script will make that can be resolved statically, how many call sites
    could not be).

    Resolved: ``await tools.x(k=...)`` statements at the top level (alone, assigned, or in
    ``asyncio.gather(...)``, also over a literal comprehension) and in ``for`` loops over
    literals, whose arguments are literals, names assigned once to a literal, or the loop
    variable. Every other call site is counted as unresolved: policy decides it at run time.
    """
    stores: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
    constants: dict[str, Any] = {}
    for stmt in tree.body:
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name) and stores[stmt.targets[0].id] == 1):
            ok, value = _literal(stmt.value)
            if ok:
                constants[stmt.targets[0].id] = _jsonable(value)
    resolver = _Static(tools, arguments, constants)
    for stmt in tree.body:
        resolver.statement(stmt, {})
    unresolved = sum(1 for node in ast.walk(tree) if isinstance(node, ast.Call)
                     and id(node) not in resolver.resolved
                     and (path := _tool_path(node.func)) is not None and path in tools)
    return resolver.calls, unresolved


def _rebinds(body: list[ast.stmt], name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store)
               for stmt in body for node in ast.walk(stmt))


class _Static:
    def __init__(self, tools: Mapping[str, str], arguments: Mapping[str, Mapping[str, str]],
                 constants: Mapping[str, Any]) -> None:
        self.tools, self.arguments, self.constants = tools, arguments, constants
        self.calls: list[StaticCall] = []
        self.resolved: set[int] = set()
        """Call sites resolved (``id`` of their node; a site in a loop counts once)."""
        self.steps = 0
        """Statements and loop items visited so far (at most :data:`MAX_STEPS`)."""
        self.literals: dict[int, Any] = {}
        """``id`` of an expression → its literal value as JSON (``_UNKNOWN``: not a literal),
        evaluated once however often an outer loop visits it."""
        self.rebound: dict[int, bool] = {}
        """``id`` of a loop → whether its body binds its loop variable."""

    def step(self) -> bool:
        """Count one visit; False once the budget or the calls cap is spent."""
        self.steps += 1
        return self.steps <= MAX_STEPS and len(self.calls) < _MAX_STATIC

    def literal(self, node: ast.expr) -> Any:
        """``node``'s literal value as JSON, or ``_UNKNOWN``."""
        key = id(node)
        if key not in self.literals:
            ok, value = _literal(node)
            self.literals[key] = _jsonable(value) if ok else _UNKNOWN
        return self.literals[key]

    def items(self, node: ast.expr) -> list[Any]:
        """The first items of the literal sequence ``node`` (none if it is not one)."""
        items = self.literal(node)
        return items[:_MAX_STATIC] if isinstance(items, list) else []

    def statement(self, stmt: ast.stmt, bound: Mapping[str, Any]) -> None:
        if not self.step():
            return
        if isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign):
            if isinstance(stmt.value, ast.Await):
                self.awaited(stmt.value.value, bound)
        elif (isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name)
              and not stmt.orelse):
            name = stmt.target.id
            if id(stmt) not in self.rebound:
                self.rebound[id(stmt)] = _rebinds(stmt.body, name)
            if self.rebound[id(stmt)]:
                return
            for item in self.items(stmt.iter):
                if not self.step():
                    return
                for inner in stmt.body:
                    self.statement(inner, {**bound, name: item})

    def awaited(self, node: ast.expr, bound: Mapping[str, Any]) -> None:
        if not isinstance(node, ast.Call):
            return
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "gather"
                and isinstance(func.value, ast.Name) and func.value.id == "asyncio"
                and not node.keywords):
            for arg in node.args:
                if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.ListComp):
                    self.comprehension(arg.value, bound)
                elif isinstance(arg, ast.Call):
                    self.call(arg, bound)
            return
        self.call(node, bound)

    def comprehension(self, comp: ast.ListComp, bound: Mapping[str, Any]) -> None:
        if len(comp.generators) != 1 or not isinstance(comp.elt, ast.Call):
            return
        gen = comp.generators[0]
        if gen.ifs or gen.is_async or not isinstance(gen.target, ast.Name):
            return
        for item in self.items(gen.iter):
            if not self.step():
                return
            self.call(comp.elt, {**bound, gen.target.id: item})

    def call(self, node: ast.Call, bound: Mapping[str, Any]) -> None:
        path = _tool_path(node.func)
        wire = self.tools.get(path) if path is not None else None
        if wire is None or node.args or len(self.calls) >= _MAX_STATIC:
            return
        argmap = self.arguments.get(wire, {})
        values: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                return
            value = self.value(keyword.value, bound)
            if value is _UNKNOWN:
                return
            values[argmap.get(keyword.arg, keyword.arg)] = value
        self.calls.append(StaticCall(line=node.lineno, tool=wire, arguments=values))
        self.resolved.add(id(node))

    def value(self, node: ast.expr, bound: Mapping[str, Any]) -> Any:
        if isinstance(node, ast.Name):
            if node.id in bound:
                return bound[node.id]
            return self.constants.get(node.id, _UNKNOWN)
        return self.literal(node)


_UNKNOWN: Any = object()
