"""The RestrictedPython policy for model scripts: async allowed, ticks and size guards added.

On top of :class:`RestrictingNodeTransformer` (which keeps refusing underscore
names and attributes, frame/code/generator attributes, ``exec``/``eval``,
``try/except*``, ``nonlocal`` …) this policy:

- allows ``async def``, ``await``, ``async for``, ``async with`` (top-level
  ``await`` comes from compiling with ``PyCF_ALLOW_TOP_LEVEL_AWAIT``);
- leaves ``print`` a plain name (the builtin writes to the run's one bounded
  buffer) and refuses ``printed``;
- threads every ``for`` loop and comprehension through the operation budget
  (``map(_get_, _T_, iterable)``, C speed) and inserts ``_next_(_T_)`` at
  ``while`` back-edges and at every function and lambda entry;
- counts the depth of plain (non-generator, non-async) functions against the
  recursion limit;
- rewrites ``*``, ``**``, ``<<`` (and their augmented forms) into size guards
  and guards f-string format specs that could allocate huge strings;
- allows ``x[k] += 1`` / ``obj.n += 1`` through ``_write_`` (common in model
  code), except for the size-guarded operators;
- drops the unpacking guards: every iterable a script can build is bounded or
  counted at its source, so plain unpacking cannot loop unchecked;
- stores the last top-level expression statement in ``_result_``.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Final

from RestrictedPython.transformer import IOPERATOR_TO_STR, RestrictingNodeTransformer

__all__ = ["RESULT_NAME", "SandboxPolicy"]

RESULT_NAME: Final = "_result_"
"""Global that receives the value of the script's last expression statement."""

_GUARDED_BINOPS: Final[dict[type[ast.operator], str]] = {
    ast.Mult: "_mul_", ast.Pow: "_pow_", ast.LShift: "_lshift_",
}
_SMALL_CONSTANT: Final = 1 << 16

_PROLOGUE: Final = """\
global _depth_
_depth_ += 1
try:
    if _depth_ > _maxdepth_:
        _deep_()
    _next_(_T_)
finally:
    _depth_ -= 1
"""
"""Entry of a plain function: depth against the recursion limit, one operation tick."""


def _name(id_: str) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Load())


def _call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=_name(func), args=list(args), keywords=[])


def _tick() -> ast.Expr:
    return ast.Expr(value=_call("_next_", _name("_T_")))


def _located(new: Any, old: ast.AST) -> Any:
    """Give ``new`` and its generated children (those without one) the location of ``old``."""
    for node in ast.walk(new):
        if "lineno" in node._attributes and not hasattr(node, "lineno"):
            ast.copy_location(node, old)
    return new


def _is_small_number(node: ast.expr) -> bool:
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    return type(value) in (int, float) and abs(value) < _SMALL_CONSTANT  # type: ignore[arg-type]


def _is_float_constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is float


def _suspends(body: list[ast.stmt]) -> bool:
    """True if the function body yields (so it is a generator and can suspend)."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


def _static_spec(spec: ast.expr | None) -> str | None:
    if isinstance(spec, ast.JoinedStr) and all(
            isinstance(v, ast.Constant) and isinstance(v.value, str) for v in spec.values):
        return "".join(str(v.value) for v in spec.values if isinstance(v, ast.Constant))
    return None


class SandboxPolicy(RestrictingNodeTransformer):
    """RestrictedPython policy for codemode scripts (see module docstring)."""

    def __init__(self, errors: list[str] | None = None, warnings: list[str] | None = None,
                 used_names: dict[str, bool] | None = None) -> None:
        super().__init__(errors, warnings, used_names)
        self.positions: list[tuple[int | None, int | None]] = []
        """(line, column) of each entry in ``errors``, 1-based."""

    def error(self, node: ast.AST, info: str) -> None:
        super().error(node, info)
        col = getattr(node, "col_offset", None)
        self.positions.append((getattr(node, "lineno", None), None if col is None else col + 1))

    def inject_print_collector(self, node: Any, position: int = 0) -> None:
        """No per-scope PrintCollector: ``print`` is a builtin writing to the run's buffer."""

    # Names -------------------------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> Any:
        if isinstance(node.ctx, ast.Load) and node.id == "print":
            return node
        if node.id == "printed":
            self.error(node, '"printed" is not available; print() output is captured '
                       "automatically")
            return node
        return super().visit_Name(node)

    # Async -------------------------------------------------------------------------------

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
        self.check_name(node, node.name, allow_magic_methods=True)
        self.check_function_argument_names(node)
        node = self.node_contents_visit(node)
        node.body.insert(0, _located(_tick(), node))
        return node

    def visit_Await(self, node: ast.Await) -> Any:
        return self.node_contents_visit(node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> Any:
        node = self.node_contents_visit(node)
        node.body.insert(0, _located(_tick(), node))
        return node

    def visit_AsyncWith(self, node: ast.AsyncWith) -> Any:
        return self.node_contents_visit(node)

    def visit_With(self, node: ast.With) -> Any:
        return self.node_contents_visit(node)

    # Loops, functions, ticks ---------------------------------------------------------------

    def guard_iter(self, node: Any) -> Any:
        node = self.node_contents_visit(node)
        if getattr(node, "is_async", 0):
            return node
        node.iter = _located(ast.Call(func=_name("_map_"),
                                      args=[_name("_get_"), _name("_T_"), node.iter],
                                      keywords=[]), node.iter)
        return node

    def visit_While(self, node: ast.While) -> Any:
        node = self.node_contents_visit(node)
        node.body.insert(0, _located(_tick(), node))
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        self.check_name(node, node.name, allow_magic_methods=True)
        self.check_function_argument_names(node)
        node = self.node_contents_visit(node)
        if _suspends(node.body):
            node.body.insert(0, _located(_tick(), node))
            return node
        prologue = [_located(stmt, node) for stmt in ast.parse(_PROLOGUE).body]
        guard = prologue[-1]
        assert isinstance(guard, ast.Try)
        guard.body.extend(node.body)
        node.body = prologue
        return node

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        node = self.node_contents_visit(node)
        self.check_function_argument_names(node)
        node.body = _located(ast.BoolOp(op=ast.Or(), values=[_tick().value, node.body]),
                             node.body)
        return node

    # Operators -----------------------------------------------------------------------------

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        node = self.node_contents_visit(node)
        guard = _GUARDED_BINOPS.get(type(node.op))
        if guard is None:
            return node
        if _is_small_number(node.left) and _is_small_number(node.right) and not (
                isinstance(node.op, ast.Pow | ast.LShift)):
            return node
        if isinstance(node.op, ast.Mult) and (_is_float_constant(node.left)
                                              or _is_float_constant(node.right)):
            return node
        return _located(_call(guard, node.left, node.right), node)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        node = self.node_contents_visit(node)
        guarded = type(node.op) in _GUARDED_BINOPS
        if isinstance(node.target, ast.Name):
            if not guarded:
                return node
            value = _call("_inplacevar_", ast.Constant(IOPERATOR_TO_STR[type(node.op)]),
                          _name(node.target.id), node.value)
            return _located(ast.Assign(targets=[node.target], value=value), node)
        if guarded:
            self.error(node, "Augmented assignment with *=, **= or <<= is only allowed on "
                       "plain names; write x[k] = x[k] * y instead.")
        return node

    def visit_Assign(self, node: ast.Assign) -> Any:
        return self.node_contents_visit(node)

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Any:
        node = self.node_contents_visit(node)
        if node.format_spec is None:
            return node
        spec = _static_spec(node.format_spec)
        if spec is not None and all(len(run) <= 4 for run in re.findall(r"\d+", spec)):
            return node
        value = _call("_format_", node.value, ast.Constant(node.conversion), node.format_spec)
        return _located(ast.FormattedValue(value=value, conversion=-1, format_spec=None), node)

    # Classes and module --------------------------------------------------------------------

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        new = super().visit_ClassDef(node)
        assert isinstance(new, ast.ClassDef)
        ast.copy_location(new, node)
        for keyword in new.keywords:
            _located(keyword, node)
        return new

    def visit_Module(self, node: ast.Module) -> Any:
        node = self.node_contents_visit(node)
        if node.body and isinstance(node.body[-1], ast.Expr):
            last = node.body[-1]
            assign = ast.Assign(targets=[ast.Name(id=RESULT_NAME, ctx=ast.Store())],
                                value=last.value)
            node.body[-1] = ast.copy_location(assign, last)
            ast.fix_missing_locations(node.body[-1])
        return node
