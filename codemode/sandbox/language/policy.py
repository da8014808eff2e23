"""The RestrictedPython policy for model scripts: async allowed, ticks and size guards added.

On top of :class:`RestrictingNodeTransformer` (which keeps refusing special
names and attributes, frame/code/generator attributes, ``exec``/``eval``,
``try/except*`` …) this policy:

- allows ``async def``, ``await``, ``async for``, ``async with`` (top-level
  ``await`` comes from compiling with ``PyCF_ALLOW_TOP_LEVEL_AWAIT``);
- leaves ``print`` a plain name (the builtin writes to the run's one bounded
  buffer) and refuses ``printed``;
- threads every ``for`` loop and comprehension through the operation budget
  (``compress(iterable, _T_)``, C speed) and inserts ``_next_(_T_)`` at
  ``while`` back-edges and at every function and lambda entry;
- counts the depth of plain (non-generator, non-async) functions against the
  recursion limit, and decorates generator and async functions with
  ``_track_`` (the run closes what they return and checks the stack depth);
- charges the keys of ``f(**d)`` and ``{**d}`` (``_kwargs_``, ``_merged_``);
- rewrites ``*``, ``**``, ``<<``, ``+`` and ``%`` (and their augmented forms)
  into size guards, unless a small static proof shows the operands are small
  ints (a ``for i in range(n)`` variable, an int literal, ``len(...)``): the
  hot arithmetic of compute loops stays native CPython;
- routes ``==``, ``<`` … and ``in`` through the ``compare`` guards unless an
  operand is a small literal or a provable int (C comparisons walk nested
  containers element by element; see :mod:`codemode.sandbox.language.compare`);
- routes every non-constant f-string field through ``_format_`` (width and
  rendering cost are checked);
- allows ``x[k] += y`` / ``obj.n += y`` (common in model code): plain for small
  ints, otherwise through ``_augitem_``/``_augattr_`` and the size guards;
- drops the unpacking guards: every iterable a script can build is bounded or
  counted at its source, so plain unpacking cannot loop unchecked;
- lets a script's classes define the protocol methods in :data:`SCRIPT_METHODS`
  (``__repr__``, ``__len__``, ``__enter__`` …; never the attribute, lifecycle or
  pickling hooks) and read them as attributes (``super().__init__``), and allows
  private names (``self._items``, ``_cache``, ``self.__secret`` mangled as Python
  does) that cannot be one of the runtime's own ``_x_`` globals; the guards decide
  at run time that only the script's own objects answer them;
- allows ``nonlocal`` and annotations, which are never evaluated (the sandbox's
  ``list`` is a stand-in, not the subscriptable type): ``x: int = 5`` becomes
  ``x = 5``, and the argument and return annotations of functions are dropped;
- drops ``from __future__ import annotations`` and the other features that change
  nothing on Python 3.11+ (:data:`FUTURE_FEATURES`), and refuses the rest;
- allows ``match`` with literal, capture, sequence, mapping and ``|`` patterns; class
  patterns (an unguarded ``getattr``) and non-literal values stay refused;
- stores the last top-level expression statement in ``_result_``.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import TYPE_CHECKING, Any, Final

import RestrictedPython.transformer as _rp_transformer
from RestrictedPython.transformer import (
    FORBIDDEN_FUNC_NAMES,
    INSPECT_ATTRIBUTES,
    IOPERATOR_TO_STR,
    RestrictingNodeTransformer,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = [
    "ANNOTATED",
    "CHAINED_ERRORS",
    "DATA_KEY",
    "DATA_KEY_NAMES",
    "DATA_SPECIAL",
    "FREE_KEYS",
    "FUTURE_FEATURES",
    "GENERIC_BASE",
    "KW_ONLY_MARK",
    "LOOP_RANGE",
    "MATCH_CLASS",
    "MATCH_SEQUENCE",
    "MATCH_TYPES",
    "MATCH_VALUES",
    "NAME_OF",
    "OBJECT_SETATTR",
    "POST_INIT",
    "RESULT_NAME",
    "SCRIPT_METHODS",
    "SLOTS_NAME",
    "STARRED",
    "STARRED_ITEMS",
    "TYPE_ALIAS",
    "SandboxPolicy",
    "child_fields",
    "index_nodes",
    "match_temporary",
    "private_name_ok",
    "star_spec",
    "suspends",
]

NAME_OF: Final = "_nameof_"
"""Global that reads ``x.__name__``, ``__qualname__`` or ``__module__`` (a class's or
function's: a str, read-only)."""
_NAMES: Final = frozenset({"__name__", "__qualname__", "__module__"})
DATA_SPECIAL: Final = "_special_"
"""Global that reads ``x.__getitem__``, ``x.__contains__``, ``x.__len__`` as written (a
function of plain data, handed to ``key=`` or ``filter``); see ``guards.data_special``."""
DATA_SPECIAL_NAMES: Final = frozenset({"__getitem__", "__contains__", "__len__"})
DATA_KEY: Final = "_datakey_"
"""Global that reads ``x.items`` (a dict method's name) when it is not called: a dict's
key by that name (``{"items": [...], "total": 3}``, a paginated tool result) shadows the
method there (see ``datakeys``)."""
DATA_KEY_NAMES: Final = frozenset({"items", "keys", "values"})
"""Dict methods whose names results use as keys (a page's ``items``, a sheet's ``values``)
and scripts seldom hand on uncalled. Not ``get``, ``pop``, ``copy`` …: those are passed
as callbacks (``max(counts, key=counts.get)``), where a word count's key ``"get"`` must
not replace the method."""
WRITE_PRIVATE: Final = "_write_private_"
"""Guard of a private attribute's target when set or deleted: the script's own objects only."""
WRITE_ATTRIBUTE: Final = "_write_attr_"
"""Guard of a public attribute's target when set or deleted: the script's own objects
only (``_write_`` guards items, of the containers a script may change too)."""
WRITE_ITEM: Final = "_write_item_"
"""Guard of ``obj[key] = v`` whose key may be a slice: ``_write_``, and a list's slice
stores draw a script iterable's items before C measures the slice."""

LOOP_RANGE: Final = "_looprange_"
"""Global the policy calls for ``range(...)`` iterated directly by a loop (plain ``range``)."""

STARRED: Final = "_starred_"
"""Global the policy calls on the value of an assignment to a target with a starred name
(``a, *rest = text``: C builds ``rest``), with the target's :func:`star_spec`."""

STARRED_ITEMS: Final = "_starred_items_"
"""The same for each item a loop or comprehension unpacks into such a target."""


# Type tuples for the hot ``isinstance`` checks: ``ast.A | ast.B`` builds a new union
# object each time it is evaluated (~1 µs, for every node these checks see).
_SEQUENCES: Final = (ast.Tuple, ast.List)
_YIELDS: Final = (ast.Yield, ast.YieldFrom)
_SCOPES: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_ADDITIVE: Final = (ast.Add, ast.Sub, ast.BitOr, ast.BitAnd, ast.BitXor)
_GROWING: Final = (ast.Pow, ast.LShift)
_INT_UNARY: Final = (ast.USub, ast.UAdd, ast.Invert)
_HASHED: Final = (ast.Set, ast.Dict)
_COLLECTIONS: Final = (ast.List, ast.Tuple, ast.Set)


def star_spec(target: ast.expr) -> tuple[Any, ...] | None:
    """For a target with a starred name at any depth: the positions (from the end after
    the star) of its nested targets that have one, each with its own spec; else None."""
    if not isinstance(target, _SEQUENCES):
        return None
    elts = target.elts
    star = next((i for i, elt in enumerate(elts) if isinstance(elt, ast.Starred)), None)
    children = []
    for i, elt in enumerate(elts):
        spec = star_spec(elt)
        if spec is not None:
            children.append((i if star is None or i < star else i - len(elts), spec))
    return tuple(children) if star is not None or children else None


def _spec_node(spec: tuple[Any, ...]) -> ast.Tuple:
    """``spec`` as a literal the script's code passes (the compiler folds it)."""
    return ast.Tuple([ast.Tuple([ast.Constant(index), _spec_node(child)], ast.Load())
                      for index, child in spec], ast.Load())


MATCH_TYPES: Final = {name: f"_match_{name}_" for name in (
    "bool", "bytearray", "bytes", "dict", "float", "frozenset", "int", "list", "set", "str",
    "tuple")}
"""Builtin type name → the global holding the real type, for ``case str(s):`` (these types
match their subject itself, so the pattern reads no attribute; the script's ``str`` is a
stand-in that Python's class patterns do not accept)."""

MATCH_CLASS: Final = "_match_class_"
"""Global that a class pattern's test calls: ``guards.match_class`` (the subject's type
checked in C, its attributes read through the guard)."""
MATCH_SEQUENCE: Final = "_match_sequence_"
"""Global that a sequence pattern inside a class pattern calls: ``guards.match_sequence``
(the subject's items, or None)."""
MATCH_VALUES: Final = "_match_values_"
"""The name a class pattern's attribute values are bound to inside its guard."""

TYPE_ALIAS: Final = "_type_alias_"
"""Global that ``type Price = float`` (3.12) calls for the alias, its value never
evaluated (as CPython's lazy ``TypeAliasType``): ``typing_facade.type_alias``."""
GENERIC_BASE: Final = "_generic_base_"
"""Global holding ``Generic[...]``, the base CPython adds to ``class Box[T]:`` (3.12)."""

OBJECT_SETATTR: Final = "_object_setattr_"
"""Global that ``object.__setattr__(obj, name, value)`` calls (a frozen dataclass's
``__post_init__`` sets a derived field so): ``guards.object_setattr``."""

RESULT_NAME: Final = "_result_"
CASE_SUBJECT: Final = "_case_subject_"
"""The capture a ``case Color.RED:`` becomes (see ``visit_match_case``)."""
"""Global that receives the value of the script's last expression statement."""

FUTURE_FEATURES: Final = frozenset({
    "nested_scopes", "generators", "division", "absolute_import", "with_statement",
    "print_function", "unicode_literals", "generator_stop", "annotations"})
"""``from __future__ import X`` features that change nothing for a script (Python 3.11+
has them all; ``annotations`` too, as the policy drops every annotation): the statement
is dropped, where running it would import ``__future__``, which is no facade."""

SCRIPT_METHODS: Final = frozenset({
    "__init__", "__repr__", "__str__", "__bytes__", "__hash__", "__bool__", "__len__",
    "__iter__", "__next__", "__reversed__", "__contains__", "__getitem__", "__setitem__",
    "__delitem__", "__missing__", "__call__", "__enter__", "__exit__", "__aenter__",
    "__aexit__", "__aiter__", "__anext__",
    "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
    "__int__", "__float__", "__complex__", "__round__", "__trunc__", "__floor__", "__ceil__",
    "__format__", "__neg__", "__pos__", "__abs__", "__invert__",
    *(f"__{prefix}{op}__" for op in (
        "add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow",
        "lshift", "rshift", "and", "or", "xor") for prefix in ("", "r", "i")
      if not (prefix == "i" and op == "divmod")),
})
"""Special methods a script's class may define (and read, e.g. ``super().__init__``).

Refused on purpose: attribute hooks (``__getattr__``, ``__getattribute__``,
``__setattr__``, ``__delattr__``), lifecycle and class hooks (``__new__``,
``__del__``, ``__init_subclass__``, ``__set_name__``, ``__class_getitem__``,
``__mro_entries__``), descriptors (``__get__``/``__set__``/``__delete__``), pickling
(``__reduce__``/``__reduce_ex__``, ``__getstate__`` …), ``__index__``/``__length_hint__``
(C code trusts them for sizes the guards have checked) and ``__await__`` (it could hand
the event loop its own objects). ``__format__`` is a text method: its result is charged by
its length, as ``__str__``'s is.
"""

ANNOTATED: Final = "_sandbox_annotated_"
"""Class-body name the policy binds to the names annotated directly in that body, in order
(``x: int`` leaves nothing else: annotations are dropped), but not a ``ClassVar``'s; a bare
``_: KW_ONLY`` is ``KW_ONLY_MARK``. ``ScriptMeta`` keeps them for ``@dataclass``
(``guards.CLASS_ANNOTATIONS``); the ``NamedTuple``/``TypedDict`` builders read their fields
from it."""
KW_ONLY_MARK: Final = "*"
"""Stands for ``_: KW_ONLY`` among a class's annotated names (the fields after it are
keyword-only)."""
CLASS_METACLASS: Final = "_sandbox_metaclass_"
"""The class keyword ``metaclass=`` becomes (``build_class`` answers it): every script
class has the sandbox's own metaclass, and a facade's marker (``abc.ABCMeta``) stands for
the base it means."""
POST_INIT: Final = "dataclass_post_init"
"""What ``__post_init__`` is called in a script (a special method a script may not define
under its own name; only ``dataclasses`` calls it, and the facade calls this one)."""

SLOTS_NAME: Final = "_sandbox_slots_value_"
"""What a class body's ``__slots__ = ...`` is bound to (``ScriptMeta`` takes it out of the
namespace and makes the class slotted: ``slots.slotted_setattr``)."""

CHAINED_ERRORS: Final = frozenset({"__cause__", "__context__", "__suppress_context__",
                                   "__notes__"})
"""Dunder attributes a script may read (never set) on an exception: the guards answer them
with the chained exception if it is an ``Exception`` a script may hold, else ``None``
(``__suppress_context__``: whether ``raise ... from`` set a cause, a bool; ``__notes__``:
a copy of what ``add_note`` gave, its texts scrubbed)."""

_ATTRIBUTE_HINTS: Final = {
    "__dict__": "use vars(obj) (a copy of a script object's attributes)",
    "__class__": "use type(obj), and type(obj).__name__ for its name",
    "__doc__": "docstrings cannot be read in the sandbox: keep the text in a string of "
               "your own",
    "__setattr__": "use setattr(obj, name, value) (a frozen dataclass's __post_init__ may "
                   "call `object.__setattr__(self, 'name', value)`)",
    "__members__": "iterate the enum instead (`list(Color)`, `{m.name: m for m in Color}`)",
    "__mro__": "a class's bases are not readable in the sandbox: test them with "
               "issubclass(Cls, Base) or isinstance(obj, Base)",
    "__bases__": "a class's bases are not readable in the sandbox: test them with "
                 "issubclass(Cls, Base) or isinstance(obj, Base)",
}
"""What to write instead of the refused underscore attributes models reach for most."""

_NAME_HINTS: Final = {
    "__match_args__": "a class pattern matches a plain class by keyword (`case Point(kind=k, "
                      "value=v)`); a @dataclass sets __match_args__ itself",
    "_missing_": "look the value up yourself, e.g. `next((m for m in Color if m.value == "
                 "v.lower()), None)`",
    "__init_subclass__": "register each class after its `class` statement "
                         "(`registry['name'] = Cls`), or with a decorator of your own that "
                         "adds it to a dict; class keywords (`class Sub(Base, tag='x')`) "
                         "become that decorator's arguments (`@register(tag='x')` over "
                         "`class Sub(Base)`)",
}
"""What to write instead of the refused underscore names models bind most (in a class
body)."""

_METHOD_HINT: Final = "__init__, __repr__, __str__, __eq__, __hash__, __len__, __iter__, " \
    "__getitem__, __call__, __enter__/__exit__, the operators …; see docs/writing-scripts.md"

_RESERVED_PRIVATE: Final = ("_asyncio", "_is_coroutine", "_sandbox")
"""Private-name prefixes host code reads on arbitrary objects (``asyncio.isfuture`` reads
``_asyncio_future_blocking``; the guards read ``_sandbox_names_``)."""


def match_temporary(name: str) -> bool:
    """Whether ``name`` is a temporary a rewritten ``case`` binds (``_case_subject_``,
    ``_case_subject_1_``, ``_match_values_``, ``_match_values_2_``): no name of the
    script's, so a class body that holds a ``match`` drops them (``ScriptMeta``)."""
    return name in (CASE_SUBJECT, MATCH_VALUES) or any(
        name.startswith(base) and name.endswith("_") and name[len(base):-1].isdigit()
        for base in (MATCH_VALUES, CASE_SUBJECT))


def private_name_ok(name: str) -> bool:
    """True for a private name a script may bind and read on its own objects: ``_x`` or
    ``__x``, never ``_x_``/``__x__`` (the runtime's globals and Python's special names)
    nor a name host code looks up on objects it is handed."""
    return (len(name) > 1 and name[0] == "_" and name[-1] != "_"
            and not name.startswith(_RESERVED_PRIVATE))


def _names(annotation: ast.expr, name: str) -> bool:
    """``annotation`` is ``name``, ``module.name`` or either subscripted (``ClassVar[int]``)."""
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    return (isinstance(head, ast.Name) and head.id == name) or (
        isinstance(head, ast.Attribute) and head.attr == name)


def _annotated_name(stmt: ast.AnnAssign) -> str:
    assert isinstance(stmt.target, ast.Name)
    if stmt.value is None and _names(stmt.annotation, "KW_ONLY"):
        return KW_ONLY_MARK
    return stmt.target.id


def _binds_slots(stmt: ast.stmt) -> bool:
    """``__slots__ = ...`` (or annotated) directly in a class body."""
    if isinstance(stmt, ast.Assign):
        return len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) and (
            stmt.targets[0].id == "__slots__")
    return (isinstance(stmt, ast.AnnAssign) and stmt.value is not None
            and isinstance(stmt.target, ast.Name) and stmt.target.id == "__slots__")


def _method_aliases(body: list[ast.stmt]) -> list[int]:
    """ids of the two names of each ``__radd__ = __add__`` (``__str__ = __repr__``) directly
    in a class body: both special methods, the one read a ``def`` above it in that body, so
    the class namespace holds it (else the read fails as CPython's does: no global or
    builtin has such a name)."""
    defined: set[str] = set()
    found: list[int] = []
    for stmt in body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            defined.add(stmt.name)
        elif (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
              and isinstance(target := stmt.targets[0], ast.Name)
              and isinstance(value := stmt.value, ast.Name)
              and target.id in SCRIPT_METHODS and value.id in SCRIPT_METHODS
              and value.id in defined):
            found += (id(target), id(value))
            defined.add(target.id)
    return found


def _mangled(name: str, cls: str | None) -> str:
    """``name`` as CPython mangles it inside class ``cls`` (``__x`` -> ``_Cls__x``)."""
    if cls is None or not name.startswith("__") or name.endswith("__"):
        return name
    owner = cls.lstrip("_")
    return f"_{owner}{name}" if owner else name


_GUARDED_BINOPS: Final[dict[type[ast.operator], str]] = {
    ast.Mult: "_mul_", ast.Pow: "_pow_", ast.LShift: "_lshift_", ast.Add: "_add_",
    ast.Mod: "_mod_", ast.Sub: "_sub_", ast.BitOr: "_or_", ast.BitAnd: "_and_",
    ast.BitXor: "_xor_",
}
_COMPARE_GUARDS: Final[dict[type[ast.cmpop], str]] = {
    ast.Eq: "_eq_", ast.NotEq: "_ne_", ast.Lt: "_lt_", ast.LtE: "_le_", ast.Gt: "_gt_",
    ast.GtE: "_ge_",
}
_INT_CLOSED_OPS: Final = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.BitAnd,
                          ast.BitOr, ast.BitXor)
_PERCENT_SPEC: Final = re.compile(
    r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([a-zA-Z%]?)")
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
_PROLOGUE_BODY: Final = ast.parse(_PROLOGUE).body
""":data:`_PROLOGUE` parsed once; each function gets a copy (:func:`_copy`)."""


def _copy(node: Any) -> Any:
    """A copy of a template subtree's nodes (contexts and operators, which hold nothing,
    shared as ``ast.parse`` shares them; locations left for ``_located(force=True)``)."""
    kind = type(node)
    if kind is list:
        return [_copy(item) for item in node]
    if kind in _PASSIVE or not isinstance(node, ast.AST):
        return node
    return kind(*[_copy(getattr(node, field)) for field in node._fields])  # all are set


_LOAD: Final = ast.Load()
"""One load context for the names the policy makes (``ast.parse`` shares one too)."""


def _name(id_: str) -> ast.Name:
    return ast.Name(id_, _LOAD)  # positional: a third of the keyword form's cost


def _self_pattern(pattern: ast.MatchClass) -> bool:
    """``case str(s):``, ``case dict():``: a builtin type matched against the subject
    itself, which reads no attribute (``visit_MatchClass``)."""
    return (isinstance(pattern.cls, ast.Name) and pattern.cls.id in MATCH_TYPES
            and not pattern.kwd_patterns and len(pattern.patterns) <= 1)


def _guarded_class_pattern(pattern: ast.MatchClass) -> bool:
    """A class pattern ``_class_case`` rewrites: a dotted public class, public keyword
    names, and sub-patterns that are names, ``_``, literals or such class patterns (maybe
    under ``as``)."""
    root: ast.expr = pattern.cls
    while isinstance(root, ast.Attribute):
        if root.attr.startswith("_"):
            return False
        root = root.value
    if not isinstance(root, ast.Name) or root.id.startswith("_"):
        return False
    return all(not name.startswith("_") for name in pattern.kwd_attrs) and all(
        _flat_sub_pattern(sub) for sub in [*pattern.patterns, *pattern.kwd_patterns])


def _flat_sub_pattern(sub: ast.pattern) -> bool:
    if isinstance(sub, ast.MatchAs):
        return sub.pattern is None or _flat_sub_pattern(sub.pattern)
    if isinstance(sub, ast.MatchClass):
        return _guarded_class_pattern(sub)
    if isinstance(sub, ast.MatchMapping):  # ``case Ok(value={"status": st}):``
        return sub.rest is None and all(_literal_pattern(key) for key in sub.keys) and all(
            _flat_sub_pattern(child) for child in sub.patterns)
    if isinstance(sub, ast.MatchSequence):  # ``case Page(items=[first, *_]):``
        return all(isinstance(child, ast.MatchStar) or _flat_sub_pattern(child)
                   for child in sub.patterns)
    if isinstance(sub, ast.MatchOr):  # ``case Ok(status="Closed" | "Resolved"):``
        return all(_flat_sub_pattern(option) for option in sub.patterns)
    return isinstance(sub, ast.MatchSingleton) or (
        isinstance(sub, ast.MatchValue) and (_literal_pattern(sub.value)
                                             or isinstance(sub.value, ast.Attribute)))


def _dotted_values(pattern: ast.pattern) -> bool:
    """``Kind.BUY`` or ``Kind.BUY | "x"``: value patterns (among literals and singletons
    under ``|``), one at least a dotted name, which CPython reads with a plain
    ``getattr``; tested in a guard instead (``_nested_class_case``)."""
    options = pattern.patterns if isinstance(pattern, ast.MatchOr) else [pattern]
    return all(isinstance(option, ast.MatchValue | ast.MatchSingleton) for option in options) \
        and any(isinstance(option, ast.MatchValue) and isinstance(option.value, ast.Attribute)
                for option in options)


def _pattern_names(pattern: ast.pattern) -> list[tuple[ast.pattern, str]]:
    """The names a pattern binds, each with the pattern binding it (an ``|``'s first
    option's: every option binds the same)."""
    if isinstance(pattern, ast.MatchOr):
        return _pattern_names(pattern.patterns[0]) if pattern.patterns else []
    found: list[tuple[ast.pattern, str]] = []
    name = (pattern.name if isinstance(pattern, ast.MatchAs | ast.MatchStar)
            else pattern.rest if isinstance(pattern, ast.MatchMapping) else None)
    if name is not None:
        found.append((pattern, name))
    for child in ast.iter_child_nodes(pattern):
        if isinstance(child, ast.pattern):
            found += _pattern_names(child)
    return found


def _nested_class_patterns(pattern: ast.pattern,
                           ) -> list[tuple[ast.AST, ast.pattern, str | None]]:
    """The class patterns and dotted values (``{"type": Kind.BUY}``, see
    ``_dotted_values``) ``_nested_class_case`` tests in a guard: each (its parent, the
    pattern, the name of an ``as`` around it), in the pattern's order, when the case's
    pattern is a sequence or mapping pattern (maybe under ``as``) holding such patterns
    through sequence, mapping and ``as`` patterns only (not under ``|``, where the guard
    could not tell which option matched); else none."""
    if isinstance(pattern, ast.MatchAs) and pattern.pattern is not None:
        pattern = pattern.pattern
    if not isinstance(pattern, ast.MatchSequence | ast.MatchMapping):
        return []
    found: list[tuple[ast.AST, ast.pattern, str | None]] = []
    stack: list[ast.pattern] = [pattern]
    while stack:
        node = stack.pop()
        children = node.patterns if isinstance(node, ast.MatchSequence | ast.MatchMapping) else []
        for child in children:
            target, capture = child, None
            if isinstance(child, ast.MatchAs) and child.pattern is not None:
                target, capture = child.pattern, child.name
            if isinstance(target, ast.MatchClass) and not _self_pattern(target):
                if not _guarded_class_pattern(target):
                    return []  # refused where it stands (``visit_MatchClass``)
                found.append((node if capture is None else child, target, capture))
            elif _dotted_values(target):
                found.append((node if capture is None else child, target, capture))
            elif isinstance(target, ast.MatchOr):
                if any(isinstance(sub, ast.MatchClass) and not _self_pattern(sub)
                       for sub in ast.walk(target)):
                    return []
            else:
                stack.append(target)
    order = {id(p): getattr(p, "lineno", 0) * 10**6 + getattr(p, "col_offset", 0)
             for _, p, _ in found}
    return sorted(found, key=lambda item: order[id(item[1])])


def _bind(capture: str, subject: str) -> ast.expr:
    """``((p := _case_subject_) or True)``: ``as p`` bound only once its pattern matched
    (``p`` keeps its value when the case fails, as in CPython)."""
    return ast.BoolOp(ast.Or(), [ast.NamedExpr(ast.Name(capture, ast.Store()), _name(subject)),
                                 ast.Constant(True)])


def _call(func: str, *args: ast.expr) -> ast.Call:
    return ast.Call(ast.Name(func, _LOAD), list(args), [])


def _tick() -> ast.Expr:
    return ast.Expr(_call("_next_", _name("_T_")))


FREE_KEYS: Final = 8
"""Keys a ``**`` copy may have without a charge of its own (``expansion``): the call or the
display it feeds costs about that much already."""


def _charge_keyword_mappings(keywords: list[ast.keyword]) -> None:
    """``f(**d)``: ``f(**_kwargs_(d))``, C copies ``d`` key by key (see ``expansion``);
    a small dict display (``f(**{"from": x})``) is left as it is."""
    for keyword in keywords:
        value = keyword.value
        if keyword.arg is None and not (
                isinstance(value, ast.Dict) and len(value.keys) <= FREE_KEYS
                and None not in value.keys):
            keyword.value = _located(_call("_kwargs_", value), value)


_LOCATION: Final = ("lineno", "col_offset", "end_lineno", "end_col_offset")

_LEAF_TYPES: Final = frozenset({"identifier", "int", "string", "constant", "expr_context",
                                "boolop", "operator", "unaryop", "cmpop"})
"""ASDL field types that never hold a node a walk must reach: scalars (``compile`` refuses
a node there) and the context and operator leaves, which carry nothing to check."""
_FIELD: Final = re.compile(r"(\w+)[?*]? (\w+)$")
_CHILDREN: dict[type, tuple[str, ...]] = {}
_LOCATED: set[type] = set()
"""The node types :func:`child_fields` has seen that carry a source location."""
_DECLARED: set[type] = set()
"""The node types whose :func:`child_fields` their ASDL signature gave: in a parsed tree
those fields hold a node, None or a list of nodes and Nones, nothing else."""


def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of node type ``kind`` that may hold nodes other than contexts and
    operators, in ``_fields`` order (``Name`` has none, ``Attribute`` only ``value``).

    Read from the node type's ASDL signature (its docstring, ``Name(identifier id,
    expr_context ctx)``); a type whose signature does not name exactly its ``_fields``
    keeps them all, so a walk skips a field only where Python's grammar says it holds
    no such node."""
    known = _CHILDREN.get(kind)
    if known is not None:
        return known
    fields: tuple[str, ...] = tuple(getattr(kind, "_fields", ()))
    doc = (kind.__doc__ or "").split("\n", 1)[0]
    head, _, rest = doc.partition("(")
    declared = [_FIELD.match(part.strip()) for part in rest.rstrip(")").split(",")] if (
        head == kind.__name__ and rest.endswith(")") and fields) else []
    if len(declared) == len(fields) and all(
            match is not None and match.group(2) == name
            for match, name in zip(declared, fields, strict=True)):
        fields = tuple(name for match, name in zip(declared, fields, strict=True)
                       if match is not None and match.group(1) not in _LEAF_TYPES)
        _DECLARED.add(kind)
    if "lineno" in getattr(kind, "_attributes", ()):
        _LOCATED.add(kind)
    _CHILDREN[kind] = fields
    return fields


def _located(new: Any, old: ast.AST, *, force: bool = False) -> Any:
    """Give ``new`` and its generated children the location of ``old``.

    Children that already have a location (the script's own subtrees) keep
    theirs and are not walked, which keeps compilation linear.
    """
    lineno = getattr(old, "lineno", None)
    col_offset = getattr(old, "col_offset", None)
    end_lineno = getattr(old, "end_lineno", None)
    end_col_offset = getattr(old, "end_col_offset", None)
    stack: list[Any] = [new]
    children, located = _CHILDREN, _LOCATED
    while stack:
        node = stack.pop()
        kind = type(node)
        fields = children.get(kind)  # only node types are in there
        if fields is None:
            if not isinstance(node, ast.AST):
                continue
            fields = child_fields(kind)
        if kind in located:
            if not force and node is not new and hasattr(node, "lineno"):
                continue
            node.lineno = lineno
            node.col_offset = col_offset
            node.end_lineno = end_lineno
            node.end_col_offset = end_col_offset
        for field in fields:
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend(value)
            elif value is not None:
                stack.append(value)
    return new


def _call_at(where: ast.AST, func: str, *args: ast.expr) -> ast.Call:
    """``_call_at(where, func, *args)`` without its walk (most nodes the policy
    makes are such calls): the call and its function's name are made with ``where``'s
    location; an argument that has one (a subtree of the script's) keeps it, and one that
    has none (a node made here) gets it as ``_located`` would give it."""
    lineno: Any = getattr(where, "lineno", None)
    col_offset: Any = getattr(where, "col_offset", None)
    end_lineno: Any = getattr(where, "end_lineno", None)
    end_col_offset: Any = getattr(where, "end_col_offset", None)
    name = ast.Name(func, _LOAD)
    name.lineno = lineno
    name.col_offset = col_offset
    name.end_lineno = end_lineno
    name.end_col_offset = end_col_offset
    call = ast.Call(name, list(args), [])
    call.lineno = lineno
    call.col_offset = col_offset
    call.end_lineno = end_lineno
    call.end_col_offset = end_col_offset
    for arg in args:
        kind = type(arg)
        fields = _CHILDREN.get(kind)
        if fields is None:
            fields = child_fields(kind)
        if kind not in _LOCATED:
            _located(arg, where)
        elif not hasattr(arg, "lineno"):
            if fields:
                _located(arg, where)
            else:  # a name or a constant: nothing below it to locate
                arg.lineno = lineno
                arg.col_offset = col_offset
                arg.end_lineno = end_lineno
                arg.end_col_offset = end_col_offset
    return call


def _name_at(where: ast.AST, id_: str) -> ast.Name:
    """``_name_at(where, id_)``, made located."""
    name: Any = ast.Name(id_, _LOAD)
    name.lineno = getattr(where, "lineno", None)
    name.col_offset = getattr(where, "col_offset", None)
    name.end_lineno = getattr(where, "end_lineno", None)
    name.end_col_offset = getattr(where, "end_col_offset", None)
    return name  # type: ignore[no-any-return]


def _push_children(node: ast.AST, stack: list[Any]) -> None:
    """Push ``node``'s child nodes (and stray non-node items, which callers skip) but
    contexts and operators.

    ``ast.iter_child_nodes`` does the same through two generators; compiling walks
    every node more than once, so this is a measurable share of a cold run.
    """
    kind = type(node)
    fields = _CHILDREN.get(kind)
    for field in child_fields(kind) if fields is None else fields:
        value = getattr(node, field, None)
        if type(value) is list:
            stack.extend(value)
        elif value is not None:
            stack.append(value)


def _copy_locations(new_node: Any, old_node: Any) -> None:
    """Faster stand-in for RestrictedPython's ``copy_locations`` (same result).

    The original calls ``ast.fix_missing_locations`` on every node it creates,
    re-walking whole subtrees (quadratic in nesting); the compiler fills any
    remaining gaps with one ``fix_missing_locations`` pass at the end.
    """
    _located(new_node, old_node)


_rp_transformer.copy_locations = _copy_locations


def _is_small_number(node: ast.expr) -> bool:
    if not isinstance(node, ast.Constant):
        return False
    value = node.value
    return type(value) in (int, float) and abs(value) < _SMALL_CONSTANT  # type: ignore[arg-type]


def _is_float_constant(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is float


def suspends(body: list[ast.stmt]) -> bool:
    """True if the function body yields (so it is a generator and can suspend); a nested
    ``def``, ``lambda`` or class does not count."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _YIELDS):
            return True
        if isinstance(node, _SCOPES) or not isinstance(node, ast.AST):
            continue
        _push_children(node, stack)  # no yield in a scalar, context or operator field
    return False


_SUSPENDS: Final = (ast.Yield, ast.YieldFrom, ast.Await)
"""Expressions that suspend the generator or coroutine evaluating them."""


def _tick_handlers(body: list[ast.stmt]) -> None:
    """Start each ``except`` and ``finally`` body of a generator's or coroutine's own code
    with a tick. Once the run has ended a tick raises ``GeneratorExit``, so no handler can
    catch the run's close and yield again: such a generator survived its close, suspended,
    and was held for the process's life with all it referenced (an in-process host grew
    by ~40 MiB per run of 40 generators each holding a megabyte string, run after run)."""
    stack: list[Any] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES) or not isinstance(node, ast.AST):
            continue
        if isinstance(node, ast.ExceptHandler):
            node.body.insert(0, _located(_tick(), node))
        elif isinstance(node, ast.Try) and node.finalbody:
            node.finalbody.insert(0, _located(_tick(), node.finalbody[0]))
        _push_children(node, stack)


def _drop_annotations(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
    """Drop ``node``'s argument and return annotations, unchecked and never evaluated, as
    for ``x: T = v``: Python would evaluate them when the ``def`` runs, and ``list[dict]``
    fails there (the sandbox's ``list`` is a stand-in, not the real type)."""
    args = node.args
    for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if arg is not None:
            arg.annotation = None
    if not isinstance(node, ast.Lambda):
        node.returns = None
        _drop_type_params(node)


def _drop_type_params(node: Any) -> bool:
    """Drop ``node``'s type parameters (3.12: ``def first[T](xs: list[T]) -> T:``, ``class
    Box[T]:``), there for annotations only; whether it had any."""
    had = bool(getattr(node, "type_params", None))
    node.type_params = []
    return had


def _percent_literal_ok(fmt: str | bytes) -> bool:
    """A %-format literal with small widths and only numeric conversions.

    ``%s``/``%r``/``%a`` render arbitrary objects, so they go through the
    guard, which charges the rendering like ``str()``.
    """
    text = fmt.decode("latin-1") if isinstance(fmt, bytes) else fmt
    if "%(" in text:
        return False  # mapping keys: the run-time guard parses them (linearly)
    for match in _PERCENT_SPEC.finditer(text):
        if match.group(3) in ("s", "r", "a", "b"):
            return False
        for part in match.groups()[:2]:
            if part is not None and (part == "*" or len(part) > 4):
                return False
    return True


def _small_range(call: ast.Call) -> bool:
    """``range(...)`` whose items are provably small ints.

    ``range(n)`` yields 0..n-1 and the ``range`` builtin refuses more items than
    the operation budget, so its items are small whatever ``n`` is; with a start
    or step the start could be huge (``range(2**100000, 2**100000 + 1)``), so
    every argument must be a small int literal.
    """
    if call.keywords or any(isinstance(arg, ast.Starred) for arg in call.args):
        return False
    if len(call.args) == 1:
        return True
    return all(isinstance(arg, ast.Constant) and type(arg.value) is int
               and abs(arg.value) < _SMALL_CONSTANT for arg in call.args)


def index_nodes(tree: ast.AST) -> tuple[list[ast.AST], dict[ast.AST, ast.AST],
                                        dict[type, list[ast.AST]]]:
    """One walk of ``tree``: (every node but contexts and operators, breadth first, so each
    after its parent; node -> its parent (nodes hash by identity); node type -> the nodes
    of exactly that type, in that order). The dialect plan, the preflight and this policy
    read the script from these instead of walking it each."""
    nodes: list[ast.AST] = [tree]
    parents: dict[ast.AST, ast.AST] = {}
    kinds: dict[type, list[ast.AST]] = {type(tree): [tree]}
    children, declared, node_type, skip = _CHILDREN, _DECLARED, ast.AST, _PASSIVE
    for parent in nodes:  # grows while it is read
        kind = type(parent)
        fields = children.get(kind)
        if fields is None:
            fields = child_fields(kind)
        sure = kind in declared  # a child is a node or None: no type test (a fifth faster)
        for name in fields:
            value = getattr(parent, name, None)
            for child in value if type(value) is list else (value,):
                if child is None:
                    continue
                child_kind = type(child)
                if not sure and (child_kind in skip or not isinstance(child, node_type)):
                    continue
                parents[child] = parent
                nodes.append(child)
                same = kinds.get(child_kind)
                if same is None:
                    kinds[child_kind] = [child]
                else:
                    same.append(child)
    return nodes, parents, kinds


def _binding_sites(tree: ast.AST, nodes: Iterable[ast.AST] | None = None,
                   kinds: Mapping[type, Sequence[ast.AST]] | None = None,
                   ) -> tuple[set[str], set[str]]:
    """(names bound only as ``for NAME in range(...)`` targets, every name bound anywhere).

    ``nodes``: every node of ``tree`` but contexts and operators, each after its parent,
    when the caller already listed them (the preflight did): no second walk. ``kinds``
    (:func:`index_nodes`): only the nodes of the types that bind are read, a type at a
    time (a long script's thousands of ``Name`` nodes in one set comprehension)."""
    if kinds is None and nodes is None:
        kinds = index_nodes(tree)[2]  # a fifth fewer instructions than listing, then grouping
    if kinds is None:
        grouped: dict[type, list[ast.AST]] = {}
        for node in nodes or ():
            same = grouped.get(type(node))
            if same is None:
                grouped[type(node)] = [node]
            else:
                same.append(node)
        kinds = grouped
    range_targets: set[str] = set()
    skip: set[int] = set()
    for loop in (ast.For, ast.comprehension):
        for node in kinds.get(loop, ()):
            target, source = node.target, node.iter  # type: ignore[attr-defined]
            if (type(target) is ast.Name and type(source) is ast.Call
                    and type(source.func) is ast.Name and source.func.id == "range"
                    and _small_range(source)):
                range_targets.add(target.id)
                skip.add(id(target))
    load = ast.Load
    other = {node.id for node in kinds.get(ast.Name, ())  # type: ignore[attr-defined]
             if type(node.ctx) is not load and id(node) not in skip}  # type: ignore[attr-defined]
    other.update(node.arg for node in kinds.get(ast.arg, ()))  # type: ignore[attr-defined]
    for named in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        other.update(node.name for node in kinds.get(named, ()))  # type: ignore[attr-defined]
    other.update((node.asname or node.name).split(".")[0]  # type: ignore[attr-defined]
                 for node in kinds.get(ast.alias, ()))
    for scope in (ast.Global, ast.Nonlocal):
        for node in kinds.get(scope, ()):
            other.update(node.names)  # type: ignore[attr-defined]
    for capture in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
        other.update(name for node in kinds.get(capture, ())
                     if (name := getattr(node, "name", None)))
    if "range" in other:
        return set(), other | range_targets
    return {t for t in range_targets if t not in other}, other | range_targets


def _static_spec(spec: ast.expr | None) -> str | None:
    if isinstance(spec, ast.JoinedStr) and all(
            isinstance(v, ast.Constant) and isinstance(v.value, str) for v in spec.values):
        return "".join(str(v.value) for v in spec.values if isinstance(v, ast.Constant))
    return None


_PASSIVE: Final = frozenset({
    ast.Load, ast.Store, ast.Del, ast.Add, ast.Sub, ast.Mult, ast.MatMult, ast.Div, ast.Mod,
    ast.Pow, ast.LShift, ast.RShift, ast.BitOr, ast.BitXor, ast.BitAnd, ast.FloorDiv,
    ast.And, ast.Or, ast.Not, ast.Invert, ast.UAdd, ast.USub, ast.Eq, ast.NotEq, ast.Lt,
    ast.LtE, ast.Gt, ast.GtE, ast.Is, ast.IsNot, ast.In, ast.NotIn,
})
"""Leaf node types the base policy only walks through (they have no fields)."""

_CODE_KIND: Final = 0x3FF
"""The code flags that say how a function runs (varargs, generator, coroutine …), not the
``__future__`` imports of its module."""


def _literal_pattern(node: ast.expr) -> bool:
    """A literal a pattern may hold: a constant, a negative number, a complex ``1+2j``."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        return _literal_pattern(node.left) and _literal_pattern(node.right)
    return isinstance(node, ast.Constant)


def _forward(self: Any, node: Any) -> Any:
    return self.node_contents_visit(node)


def _forwards(method: Any) -> bool:
    """Whether ``method`` is only ``return self.node_contents_visit(node)`` (most of
    RestrictedPython's ``visit_X``): the walk then calls ``node_contents_visit`` itself."""
    code, same = getattr(method, "__code__", None), _forward.__code__
    return code is not None and code.co_code == same.co_code and (
        code.co_names == same.co_names and code.co_argcount == 2 and not code.co_freevars
        and code.co_flags & _CODE_KIND == same.co_flags & _CODE_KIND)


def _same(self: Any, node: Any) -> Any:
    return node


MAX_BLOCKS: Final = 12
"""Statically nested blocks a script may hold: loops,
``with`` items, ``try``, ``except`` bodies and list, set and dict comprehensions (inlined
since 3.12, each with its own exception handler). CPython refuses 20 blocks, but counts
neither those handlers nor a generator's or coroutine's own: 3.12.1 and 3.13.0 wrote past
their compiler's handler stack, a segfault of the process compiling the script (the host,
through the in-process executor or the preflight) for 19 ``async with`` items, 18
``with`` blocks around a nested comprehension, or 21 nested comprehensions."""


def _with_items(node: Any) -> int:
    return len(node.items)


def _handler(node: Any) -> int:
    return 1 if node.name is None else 2  # ``as e``: a hidden try/finally deletes ``e``


def _one(node: Any) -> int:
    return 1


_BLOCKS: Final[dict[type, Any]] = {
    ast.For: _one, ast.AsyncFor: _one, ast.While: _one, ast.Try: _one,
    ast.With: _with_items, ast.AsyncWith: _with_items, ast.ExceptHandler: _handler,
    ast.ListComp: _one, ast.SetComp: _one, ast.DictComp: _one,
    **({ast.TryStar: _one} if hasattr(ast, "TryStar") else {}),
}
"""Node type -> the blocks it nests its children in (counted against :data:`MAX_BLOCKS`).
A nested function or class counts from its enclosing blocks: its defaults, decorators and
bases are compiled there."""


def _nested(method: Any, weight: Any) -> Any:
    """``method`` visiting a block node ``weight(node)`` levels deeper."""
    def visit(self: SandboxPolicy, node: Any) -> Any:
        depth = self.blocks
        self.blocks = depth + weight(node)
        if self.blocks > MAX_BLOCKS >= depth:
            self.error(node, f"too many statically nested blocks: loops, with, try/except and "
                             f"comprehensions nest at most {MAX_BLOCKS} deep in the sandbox "
                             "(define the inner part as a function outside these blocks)")
        try:
            return method(self, node)
        finally:
            self.blocks = depth
    return visit


_METHODS: dict[type, dict[type, Any]] = {}
"""Policy class -> {node type -> the unbound function that visits it} (filled on use)."""
_INLINE: dict[type, tuple[bool, bool]] = {}
"""Policy class -> (whether its walk may check ``Name`` and ``Constant`` children itself:
the class keeps this module's ``visit_Name``, ``check_name`` and ``visit_Constant``;
whether it may dispatch children without ``visit``: the class keeps this ``visit``)."""
_Name, _Load, _Constant, _Attribute = ast.Name, ast.Load, ast.Constant, ast.Attribute
_IDENTITY: Final = (ast.Is, ast.IsNot)
_NOT_PLAIN: Final = FORBIDDEN_FUNC_NAMES | {"print", "printed"}
"""Names without a leading underscore that ``visit_Name`` does more with than record a
read (RestrictedPython's reserved names, ``print``, ``printed``)."""


class SandboxPolicy(RestrictingNodeTransformer):
    """RestrictedPython policy for codemode scripts (see module docstring)."""

    def __init__(self, errors: list[str] | None = None, warnings: list[str] | None = None,
                 used_names: dict[str, bool] | None = None, *,
                 nodes: Iterable[ast.AST] | None = None,
                 kinds: Mapping[type, Sequence[ast.AST]] | None = None) -> None:
        super().__init__(errors, warnings, used_names)
        self.nodes = nodes
        """The module's nodes (but contexts and operators), each after its parent, when the
        caller listed them already: the policy reads its binding sites from them."""
        self.kinds = kinds
        """Or the same nodes by type (:func:`index_nodes`)."""
        self.range_ints: set[str] = set()
        """Names only ever bound by ``for NAME in range(...)``: always ints."""
        self.bound_names: set[str] = set()
        """Every name the script binds anywhere (shadowing checks)."""
        self.positions: list[tuple[int | None, int | None]] = []
        """(line, column) of each entry in ``errors``, 1-based."""
        self.classes: list[str] = []
        """Names of the class bodies being visited, innermost last (name mangling)."""
        self.methods: set[int] = set()
        """ids of the ``def`` nodes directly in a class body (may be special methods)."""
        self.method_aliases: set[int] = set()
        """ids of both names of ``__radd__ = __add__`` in a class body (a special method
        another one defined above it names: :func:`_method_aliases`)."""
        self.called: set[int] = set()
        """ids of the attributes that are a call's function (``x.items()``)."""
        self.blocks = 0
        """Blocks around the node being visited, in its code object (:data:`MAX_BLOCKS`)."""
        self.sequences = 0
        """Sequence patterns inside class patterns so far (each binds its own items)."""
        cls = type(self)
        methods = _METHODS.get(cls)
        if methods is None:
            direct = cls.visit is SandboxPolicy.visit
            _INLINE[cls] = (direct and cls.visit_Name is SandboxPolicy.visit_Name
                            and cls.check_name is SandboxPolicy.check_name
                            and cls.visit_Constant is SandboxPolicy.visit_Constant, direct)
            methods = _METHODS.setdefault(cls, dict.fromkeys(_PASSIVE, _same))
        self._methods = methods
        self._inline, self._direct = _INLINE[cls]
        self._clean: set[str] = set()
        """Names ``visit_Name`` found nothing wrong with: what it does depends on the name
        alone (and, for ``print``, which is never in here, on its context)."""

    def visit(self, node: ast.AST) -> Any:
        """``NodeTransformer.visit`` with the method lookup cached per node type.

        Context and operator nodes (a third of a typical tree) carry nothing to
        check and are returned as they are.
        """
        kind = type(node)
        if kind in _PASSIVE:
            return node
        method = self._methods.get(kind)
        if method is None:
            method = self._method(kind)
        return method(self, node)

    def _method(self, kind: type) -> Any:
        cls = type(self)
        method = getattr(cls, "visit_" + kind.__name__, cls.generic_visit)
        if _forwards(method):
            method = cls.node_contents_visit
        weight = _BLOCKS.get(kind)
        if weight is not None:
            method = _nested(method, weight)
        self._methods[kind] = method
        return method

    def _first_name(self, node: ast.Name) -> Any:
        """``visit_Name`` for a name not yet found clean. A plain name (no leading
        underscore, not reserved) is clean without the calls: ``check_name`` finds nothing
        in it, so ``visit_Name`` only records a read."""
        name = node.id
        if name[:1] != "_" and name not in _NOT_PLAIN and not name.endswith("__roles__"):
            self._clean.add(name)
            if type(node.ctx) is _Load:
                self.used_names[name] = True
            return node
        before = len(self.errors)
        new = self.visit_Name(node)
        if len(self.errors) == before and node.id not in ("print", "printed"):
            self._clean.add(node.id)
        return new

    def node_contents_visit(self, node: Any) -> Any:
        """``NodeTransformer.generic_visit``, faster: only the fields that can hold nodes
        (:func:`child_fields`), lists rebuilt only when a child was replaced, and a
        ``Name`` already found clean or a ``Constant`` handled here without a call
        (compiling is on the cold-run path). A subclass with its own ``visit`` gets
        RestrictedPython's plain walk, through that ``visit``."""
        if not self._direct:
            return ast.NodeTransformer.generic_visit(self, node)
        methods, inline, clean, used = self._methods, self._inline, self._clean, (
            self.used_names)
        kind = type(node)
        fields = _CHILDREN.get(kind)
        for field in child_fields(kind) if fields is None else fields:
            value = getattr(node, field, None)
            if type(value) is list:
                if not value:  # ``keywords``, ``orelse`` … are most often empty
                    continue
                changed = False
                items: list[Any] = []
                for item in value:
                    kind = type(item)
                    if inline and kind is _Name:
                        name = item.id
                        if name in clean:
                            if type(item.ctx) is _Load:
                                used[name] = True
                            items.append(item)
                            continue
                        new = self._first_name(item)
                    elif inline and kind is _Constant:
                        items.append(item)
                        continue
                    else:
                        method = methods.get(kind)
                        if method is None:
                            if not isinstance(item, ast.AST):
                                items.append(item)
                                continue
                            method = self._method(kind)
                        new = method(self, item)
                    if new is not item:
                        changed = True
                        if new is None:
                            continue
                        if not isinstance(new, ast.AST):
                            items.extend(new)
                            continue
                    items.append(new)
                if changed:
                    value[:] = items
            elif value is not None:
                kind = type(value)
                if inline and kind is _Name:
                    name = value.id
                    if name in clean:
                        if type(value.ctx) is _Load:
                            used[name] = True
                        continue
                    new = self._first_name(value)
                elif inline and kind is _Constant:
                    continue
                else:
                    method = methods.get(kind)
                    if method is None:
                        if not isinstance(value, ast.AST):
                            continue
                        method = self._method(kind)
                    new = method(self, value)
                if new is None:
                    delattr(node, field)
                elif new is not value:
                    setattr(node, field, new)
        return node

    def error(self, node: ast.AST, info: str) -> None:
        super().error(node, info)
        col = getattr(node, "col_offset", None)
        self.positions.append((getattr(node, "lineno", None), None if col is None else col + 1))

    def inject_print_collector(self, node: Any, position: int = 0) -> None:
        """No per-scope PrintCollector: ``print`` is a builtin writing to the run's buffer."""

    # Names -------------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> Any:
        """RestrictedPython's ``visit_Call`` (its ``exec``/``eval`` refusals) without the
        ``_apply_`` wrapper around calls with ``*args``/``**kwargs``: the sandbox's
        ``_apply_`` was a plain call, and CPython's own errors then named it
        (``codemode…guarded_apply() argument after ** must be a mapping``) instead of the
        function the script called. Starred arguments are counted by ``visit_Starred``."""
        func = node.func
        if isinstance(func, _Name):
            if func.id == "exec":
                self.error(node, "Exec calls are not allowed.")
            elif func.id == "eval":
                self.error(node, "Eval calls are not allowed.")
        elif isinstance(func, _Attribute):
            self.called.add(id(func))
        if (isinstance(func, _Attribute) and func.attr == "__setattr__"
                and isinstance(func.value, ast.Name) and func.value.id == "object"
                and len(node.args) == 3 and not node.keywords
                and not any(isinstance(arg, ast.Starred) for arg in node.args)):
            # ``object.__setattr__(self, "slug", value)``: the guarded form, never the
            # real hook (see ``guards.object_setattr``).
            node.func = _located(ast.Name(OBJECT_SETATTR, ast.Load()), func, force=True)
            node.args = [self.visit(arg) for arg in node.args]
            return node
        node = self.node_contents_visit(node)
        _charge_keyword_mappings(node.keywords)
        return node

    def visit_Name(self, node: ast.Name) -> Any:
        """RestrictedPython's ``visit_Name`` (pinned 9.0) minus its ``print``/``printed``
        rewrites and its walk into ``ctx``, which holds nothing to check."""
        name = node.id
        load = type(node.ctx) is ast.Load
        if load and name == "print":
            return node
        if name == "printed":
            self.error(node, '"printed" is not available; print() output is captured '
                       "automatically")
            return node
        if load:
            self.used_names[name] = True
        self.check_name(node, name)
        return node

    def check_name(self, node: Any, name: str | None,
                   allow_magic_methods: bool = False) -> None:
        """RestrictedPython's name check, plus private names (:func:`private_name_ok`) and,
        for a ``def`` directly in a class body, the names in :data:`SCRIPT_METHODS`."""
        if name is not None and (private_name_ok(name) or (
                allow_magic_methods and name in SCRIPT_METHODS and id(node) in self.methods)
                or (name == "__hash__" and id(node) in self.methods)
                or (name in SCRIPT_METHODS and id(node) in self.method_aliases)):
            return
        hint = _NAME_HINTS.get(name or "")
        if allow_magic_methods and name is not None and name.startswith("__") and (
                name.endswith("__")):
            where = "in a class body" if id(node) in self.methods else "outside a class"
            self.error(node, f'"{name}" cannot be defined {where} in the sandbox ('
                       + (hint or "a class may define " + _METHOD_HINT) + ")")
            return
        if hint is not None:
            self.error(node, f'"{name}" is an invalid variable name because it starts with '
                       f'"_": {hint}')
            return
        super().check_name(node, name)

    # ``match`` ------------------------------------------------------------------------

    def visit_Match(self, node: ast.Match) -> Any:
        """``match`` with literal, capture, wildcard, sequence, mapping and ``|``
        patterns. Patterns compare and unpack in C like ``==`` on a literal and
        unpacking do; class patterns (``case Point(x=0)``) read attributes with a plain
        ``getattr`` the guard never sees, so a case that is one becomes a guard that reads
        them through it (``_class_case``); elsewhere only a builtin type's (``case
        str(s):``, see ``visit_MatchClass``) is left to Python."""
        return self.node_contents_visit(node)

    def visit_match_case(self, node: ast.match_case) -> Any:
        """A case whose whole pattern is a dotted value (``case Color.RED:``), maybe among
        literals in ``|`` and under ``as``, becomes a capture and a guard: ``case
        _case_subject_ if _eq_(_case_subject_, _getattr_(Color, 'RED')):``. CPython would
        read the value with an unguarded ``getattr`` and hand it to the subject's
        ``__eq__``; this way it is read like ``Color.RED`` anywhere else, and compared
        like ``==``. A dotted value inside a sequence or mapping pattern stays refused."""
        pattern: ast.pattern = node.pattern
        capture: str | None = None
        if isinstance(node.pattern, ast.MatchAs) and node.pattern.pattern is not None:
            pattern, capture = node.pattern.pattern, node.pattern.name
        if isinstance(pattern, ast.MatchClass) and not _self_pattern(pattern) and (
                _guarded_class_pattern(pattern)):
            return self._class_case(node, pattern, capture)
        nested = _nested_class_patterns(node.pattern)
        if nested:
            return self._nested_class_case(node, nested)
        options = pattern.patterns if isinstance(pattern, ast.MatchOr) else [pattern]
        if not all(isinstance(p, ast.MatchValue | ast.MatchSingleton) for p in options) or all(
                not isinstance(p, ast.MatchValue) or _literal_pattern(p.value) for p in options):
            return self.node_contents_visit(node)
        self.check_name(node.pattern, capture)
        subject = CASE_SUBJECT
        tests: list[ast.expr] = []
        for option in options:
            if isinstance(option, ast.MatchValue):
                tests.append(_call("_eq_", _name(subject), self.visit(option.value)))
            elif isinstance(option, ast.MatchSingleton):
                tests.append(ast.Compare(_name(subject), [ast.Is()], [ast.Constant(
                    option.value)]))
        test = tests[0] if len(tests) == 1 else ast.BoolOp(ast.Or(), tests)
        if capture is not None:
            test = ast.BoolOp(ast.And(), [test, _bind(capture, subject)])
        original = node.guard
        node.pattern = ast.MatchAs(pattern=None, name=None)  # the walk below skips it
        node = self.node_contents_visit(node)
        if node.guard is not None:
            test = ast.BoolOp(ast.And(), [test, node.guard])
        node.pattern = _located(ast.MatchAs(pattern=None, name=subject), pattern)
        node.guard = _located(test, original if original is not None else pattern)
        return node

    def _class_case(self, node: ast.match_case, pattern: ast.MatchClass,
                    capture: str | None) -> Any:
        """``case Quote(s, change=c) if g:`` becomes ``case _case_subject_ if
        (_match_values_ := _match_class_(_case_subject_, Quote, 1, ('change',))) is not
        None and ((s := _match_values_[0]) or True) and ... and g:``. CPython's class
        pattern reads ``__match_args__`` and the attributes with a plain ``getattr`` the
        guard never sees; ``match_class`` checks the type the same way and reads each
        attribute through the guard (a missing one fails the case, as in CPython). The
        sub-patterns are captures, ``_``, literals and class patterns of the same kind,
        maybe under ``as`` (see ``_guarded_class_pattern``), tested left to right."""
        self.check_name(node.pattern, capture)
        bound: set[str | None] = {capture} - {None}
        for sub in ast.walk(pattern):
            if isinstance(sub, ast.MatchAs | ast.MatchStar) and sub.name is not None:
                self.check_name(sub, sub.name)
        for sub, name in _pattern_names(pattern):
            if name in bound:  # CPython's compiler refuses it; the guard would not
                self.error(sub, f"multiple assignments to name {name!r} in pattern")
            bound.add(name)
        subject = CASE_SUBJECT
        tests = self._class_tests(pattern, lambda: _name(subject), 0)
        if capture is not None:
            tests.append(_bind(capture, subject))
        original = node.guard
        node.pattern = ast.MatchAs(pattern=None, name=None)  # the walk below skips it
        node = self.node_contents_visit(node)
        if node.guard is not None:
            tests.append(node.guard)
        node.pattern = _located(ast.MatchAs(pattern=None, name=subject), pattern)
        test = tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)
        node.guard = _located(test, original or pattern, force=True)
        return node

    def _nested_class_case(self, node: ast.match_case,
                           nested: list[tuple[ast.AST, ast.pattern, str | None]]) -> Any:
        """``case [Point(x=0) as p, *rest]:`` (class patterns inside a sequence or mapping
        pattern) becomes ``case [_case_subject_1_, *rest] if <the class pattern's tests on
        _case_subject_1_> and ((p := _case_subject_1_) or True):``, the tests those of a
        whole-case class pattern (``_class_case``), in the pattern's order; a dotted value
        (``{"type": Kind.BUY}``) is tested as ``_eq_(_case_subject_1_, Kind.BUY)``, the
        value read as ``Kind.BUY`` anywhere else is. The structure
        matches first: a capture of it (``rest``) stays bound when a class test then fails,
        as a name bound before a failing guard does."""
        names: list[str] = []
        for sub in ast.walk(node.pattern):
            name = (sub.name if isinstance(sub, ast.MatchAs | ast.MatchStar)
                    else sub.rest if isinstance(sub, ast.MatchMapping) else None)
            if name is not None:
                if name in names:  # CPython's compiler refuses it; the guard would not
                    self.error(sub, f"multiple assignments to name {name!r} in pattern")
                names.append(name)
        holes: list[tuple[ast.MatchAs, ast.pattern, str | None]] = []
        for parent, pattern, capture in nested:
            if isinstance(parent, ast.MatchAs):  # ``Point() as p``: the ``as`` is the hole
                parent.pattern = parent.name = None
                hole = parent
            else:
                assert isinstance(parent, ast.MatchSequence | ast.MatchMapping)
                hole = _located(ast.MatchAs(pattern=None, name=None), pattern)
                parent.patterns = [hole if child is pattern else child
                                   for child in parent.patterns]
            holes.append((hole, pattern, capture))
        for sub in ast.walk(node.pattern):
            if isinstance(sub, ast.MatchAs) and sub.name is not None:
                self.check_name(sub, sub.name)
        tests: list[ast.expr] = []
        for index, (hole, pattern, capture) in enumerate(holes, 1):
            for sub in ast.walk(pattern):
                if isinstance(sub, ast.MatchAs) and sub.name is not None:
                    self.check_name(sub, sub.name)
            self.check_name(hole, capture)
            subject = f"{CASE_SUBJECT}{index}_"
            tests += (self._class_tests(pattern, functools.partial(_name, subject), 0)
                      if isinstance(pattern, ast.MatchClass)
                      else self._sub_tests(pattern, functools.partial(_name, subject), 0))
            if capture is not None:
                tests.append(_bind(capture, subject))
        original = node.guard
        node = self.node_contents_visit(node)
        for index, (hole, _, _) in enumerate(holes, 1):
            hole.name = f"{CASE_SUBJECT}{index}_"
        if node.guard is not None:
            tests.append(node.guard)
        test = tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)
        node.guard = _located(test, original or node.pattern, force=True)
        return node

    def _class_tests(self, pattern: ast.MatchClass, subject: Callable[[], ast.expr],
                     depth: int) -> list[ast.expr]:
        """The tests of one class pattern matched against ``subject()`` (a fresh node
        each call); ``depth`` names its values apart from the enclosing pattern's."""
        cls = pattern.cls
        if isinstance(cls, ast.Name) and cls.id in MATCH_TYPES:
            klass: ast.expr = _located(ast.Name(MATCH_TYPES[cls.id], ast.Load()), cls)
        else:
            klass = self.visit(_copy(cls))
        values = MATCH_VALUES if depth == 0 else f"{MATCH_VALUES}{depth}_"
        found = ast.NamedExpr(ast.Name(values, ast.Store()), _call(
            MATCH_CLASS, subject(), klass, ast.Constant(len(pattern.patterns)),
            ast.Tuple([ast.Constant(k) for k in pattern.kwd_attrs], ast.Load())))
        tests: list[ast.expr] = [ast.Compare(found, [ast.IsNot()], [ast.Constant(None)])]
        for index, sub in enumerate([*pattern.patterns, *pattern.kwd_patterns]):
            def value(index: int = index) -> ast.expr:
                return ast.Subscript(_name(values), ast.Constant(index), ast.Load())
            tests += self._sub_tests(sub, value, depth)
        return tests

    def _sub_tests(self, sub: ast.pattern, value: Callable[[], ast.expr],
                   depth: int) -> list[ast.expr]:
        tests: list[ast.expr] = []
        if isinstance(sub, ast.MatchAs):
            if sub.pattern is not None:
                tests += self._sub_tests(sub.pattern, value, depth)
            if sub.name is not None:
                tests.append(ast.BoolOp(ast.Or(), [ast.NamedExpr(
                    ast.Name(sub.name, ast.Store()), value()), ast.Constant(True)]))
        elif isinstance(sub, ast.MatchValue):
            tests.append(_call("_eq_", value(), self.visit(_located(_copy(sub.value),
                                                                    sub.value))))
        elif isinstance(sub, ast.MatchSingleton):
            tests.append(ast.Compare(value(), [ast.Is()], [ast.Constant(sub.value)]))
        elif isinstance(sub, ast.MatchClass):
            tests += self._class_tests(sub, value, depth + 1)
        elif isinstance(sub, ast.MatchMapping):
            # a dict's keys and items, read in C as CPython's mapping pattern reads them
            tests.append(ast.Compare(_call(
                MATCH_CLASS, value(), ast.Name(MATCH_TYPES["dict"], ast.Load()),
                ast.Constant(0), ast.Tuple([], ast.Load())), [ast.IsNot()], [ast.Constant(None)]))
            for key, child in zip(sub.keys, sub.patterns, strict=True):
                tests.append(ast.Compare(_copy(key), [ast.In()], [value()]))

                def item(key: ast.expr = key) -> ast.expr:
                    return ast.Subscript(value(), _copy(key), ast.Load())
                tests += self._sub_tests(child, item, depth)
        elif isinstance(sub, ast.MatchSequence):
            tests += self._sequence_tests(sub, value, depth)
        elif isinstance(sub, ast.MatchOr):
            names = {frozenset(name for _, name in _pattern_names(option))
                     for option in sub.patterns}
            if len(names) > 1:
                self.error(sub, "alternative patterns bind different names")
            options: list[ast.expr] = []
            for option in sub.patterns:
                found = self._sub_tests(option, value, depth)
                options.append(ast.BoolOp(ast.And(), found) if len(found) > 1
                               else found[0] if found else ast.Constant(True))
            tests.append(ast.BoolOp(ast.Or(), options))
        return tests

    def _sequence_tests(self, sub: ast.MatchSequence, value: Callable[[], ast.expr],
                        depth: int) -> list[ast.expr]:
        """A sequence pattern's tests inside a class pattern: its items (``match_sequence``)
        bound to a name of its own, each tested as a sub-pattern; the starred one is
        captured as a list."""
        self.sequences += 1
        items = f"{MATCH_VALUES}s{self.sequences}_"
        star = next((i for i, child in enumerate(sub.patterns)
                     if isinstance(child, ast.MatchStar)), None)
        before = len(sub.patterns) if star is None else star
        after = 0 if star is None else len(sub.patterns) - star - 1
        tests: list[ast.expr] = [ast.Compare(ast.NamedExpr(ast.Name(items, ast.Store()), _call(
            MATCH_SEQUENCE, value(), ast.Constant(before), ast.Constant(after),
            ast.Constant(star is not None))), [ast.IsNot()], [ast.Constant(None)])]
        for index, child in enumerate(sub.patterns):
            def item(index: int = index) -> ast.expr:
                return ast.Subscript(_name(items), ast.Constant(index), ast.Load())
            if isinstance(child, ast.MatchStar):
                if child.name is not None:
                    tests.append(ast.BoolOp(ast.Or(), [ast.NamedExpr(
                        ast.Name(child.name, ast.Store()), item()), ast.Constant(True)]))
            else:
                tests += self._sub_tests(child, item, depth)
        return tests

    def visit_MatchValue(self, node: ast.MatchValue) -> Any:
        if not _literal_pattern(node.value):
            shown = ast.unparse(node.value) if isinstance(node.value, ast.Attribute) else ""
            self.error(node, "a case value must be a literal (a number, string, True, "
                       "False or None): compare other values in a guard, "
                       + (f"`case x if x == {shown}:`" if 0 < len(shown) <= 60 else
                          "`case x if x == other.value:`"))
        return node

    def visit_MatchSingleton(self, node: ast.MatchSingleton) -> Any:
        return node

    def visit_MatchSequence(self, node: ast.MatchSequence) -> Any:
        return self.node_contents_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> Any:
        self.check_name(node, node.name)
        return node

    def visit_MatchAs(self, node: ast.MatchAs) -> Any:
        self.check_name(node, node.name)
        return self.node_contents_visit(node)

    def visit_MatchOr(self, node: ast.MatchOr) -> Any:
        return self.node_contents_visit(node)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> Any:
        for key in node.keys:
            if not _literal_pattern(key):
                self.error(node, "a mapping pattern's keys must be literals")
        self.check_name(node, node.rest)
        node.patterns = [self.visit(pattern) for pattern in node.patterns]
        return node

    def visit_MatchClass(self, node: ast.MatchClass) -> Any:
        """``case str(s):``, ``case int():``, ``case dict():`` (a builtin type and at most
        one positional pattern, which is matched against the subject itself) check the
        type in C and read nothing. Any other class pattern reads attributes with a plain
        ``getattr`` the guard never sees (``__match_args__`` and the keywords): refused
        here, where ``visit_match_case`` has not made it a guard (under ``|``, with a
        private keyword or class, a sub-pattern it cannot test)."""
        cls = node.cls
        if _self_pattern(node):
            assert isinstance(cls, ast.Name)
            node.cls = _located(ast.Name(MATCH_TYPES[cls.id], ast.Load()), cls)
            node.patterns = [self.visit(pattern) for pattern in node.patterns]
            return node
        self.error(node, "this class pattern is not available in the sandbox: a class "
                   "pattern works as the whole case or inside a sequence or mapping pattern "
                   "(not under `|`), with names, `_`, literals and class patterns as its "
                   "sub-patterns and public keyword names (`case Line(Point(x=0), end=e):`, "
                   "`case [Point(x=0), *rest]:`); otherwise test the type in a guard, "
                   "`case p if isinstance(p, Point) and p.x == 0:`, or match on the value "
                   "itself")
        return node

    def visit_TryStar(self, node: ast.AST) -> Any:
        """``except*`` stays refused (it splits exception groups, which may hold the run's
        own stops): the message says what to write instead."""
        self.error(node, "`except*` is not available in the sandbox: write `except "
                   "ExceptionGroup as eg:` and test its members, `[e for e in eg.exceptions "
                   "if isinstance(e, ToolCallError)]` (or gather with "
                   "`return_exceptions=True`)")
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> Any:
        """An ``except`` clause whose type yields or awaits is refused: its type is
        evaluated before the handler's first tick, so a generator closed after its run
        (``except (yield 2):``) yielded there again and was left suspended, held for the
        life of the process with all it referenced."""
        if node.type is not None and any(isinstance(sub, _SUSPENDS)
                                         for sub in ast.walk(node.type)):
            self.error(node, "an `except` clause's type cannot yield or await in the "
                       "sandbox: compute the exception types before the `try`")
        return super().visit_ExceptHandler(node)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> Any:
        """``nonlocal`` (closures with counters); the names are checked like any other."""
        for name in node.names:
            self.check_name(node, name)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Any:
        """``from __future__ import annotations`` (and the other no-op features) is
        dropped; another ``__future__`` feature is refused here rather than failing as
        a missing module when it runs."""
        if node.module == "__future__" and not node.level:
            other = [alias.name for alias in node.names if alias.name not in FUTURE_FEATURES]
            if other:
                self.error(node, f"from __future__ import {', '.join(other)} is not "
                           "available in the sandbox (available: "
                           f"{', '.join(sorted(FUTURE_FEATURES))})")
                return node
            return _located(ast.Pass(), node)
        return self.check_import_names(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        """``x: T = v`` becomes ``x = v`` and ``x: T`` nothing: annotations are never
        evaluated (no ``__annotations__`` is built)."""
        if node.value is None:
            return _located(ast.Pass(), node)
        assign = _located(ast.Assign([node.target], node.value), node)
        return self.visit(assign)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        """``x.__name__`` (``__qualname__``, ``__module__``; a read) goes through
        ``_nameof_``; private names (mangled as Python does) and reads of
        :data:`SCRIPT_METHODS` pass to the guards, which answer them only for the script's
        own objects; every other underscore attribute is still refused."""
        if node.attr == "__post_init__":  # ``super().__post_init__()``: see ``POST_INIT``
            node.attr = POST_INIT
        attr = node.attr
        if attr in DATA_SPECIAL_NAMES and type(node.ctx) is ast.Load:
            return _located(_call(DATA_SPECIAL, self.visit(node.value), ast.Constant(attr)),
                            node)
        if private_name_ok(attr) or (attr in SCRIPT_METHODS and type(node.ctx) is ast.Load):
            node.attr = _mangled(attr, self.classes[-1] if self.classes else None)
            node.value = self.visit(node.value)
            if type(node.ctx) is ast.Load:
                return _call_at(node, "_getattr_", node.value, ast.Constant(node.attr))
            guard = WRITE_PRIVATE if private_name_ok(attr) else "_write_"
            node.value = _call_at(node.value, guard, node.value)
            return node
        if attr in CHAINED_ERRORS and type(node.ctx) is ast.Load:
            return _located(_call("_getattr_", self.visit(node.value), ast.Constant(attr)),
                            node)
        if attr in _NAMES and type(node.ctx) is ast.Load:
            value = node.value
            if isinstance(value, ast.Attribute) and value.attr == "__class__":
                # ``x.__class__.__name__``: the name only, never the class object
                return _call_at(node, NAME_OF, self.visit(value.value),
                                ast.Constant(value=True), ast.Constant(attr))
            return _call_at(node, NAME_OF, self.visit(value), ast.Constant(value=False),
                            ast.Constant(attr))
        if attr in _ATTRIBUTE_HINTS:
            self.error(node, f'"{attr}" is an invalid attribute name because it starts with '
                       f'"_": {_ATTRIBUTE_HINTS[attr]}')
            return self.node_contents_visit(node)
        if attr in DATA_KEY_NAMES and type(node.ctx) is ast.Load and id(node) not in self.called:
            # ``page.items`` not called: the key, when ``page`` is a dict that has one
            return _call_at(node, DATA_KEY, self.visit(node.value), ast.Constant(attr))
        if type(node.ctx) is ast.Load and attr[:1] != "_" and not attr.endswith("__roles__") and (
                attr not in INSPECT_ATTRIBUTES):
            return self._read_attribute(node)
        new = super().visit_Attribute(node)
        call = getattr(new, "value", None) if type(node.ctx) is not ast.Load else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and (
                call.func.id == "_write_"):
            call.func = _name_at(call.func, WRITE_ATTRIBUTE)  # not the items' guard
        return new

    def _read_attribute(self, node: ast.Attribute) -> Any:
        """RestrictedPython's rewrite of a read of a public attribute it finds nothing wrong
        with, ``_getattr_(obj, 'name')``, built without its keyword-argument node
        constructors (most attributes of a script are such reads)."""
        node = self.node_contents_visit(node)
        return _call_at(node, "_getattr_", node.value, ast.Constant(node.attr))

    def _read_item(self, node: ast.Subscript) -> Any:
        """RestrictedPython's rewrite of a subscript read, ``_getitem_(obj, key)``, built
        the same way."""
        node = self.node_contents_visit(node)
        return _call_at(node, "_getitem_", node.value, node.slice)

    def visit_Constant(self, node: ast.Constant) -> Any:
        """A literal has no child nodes: nothing to walk."""
        return node

    # Async -------------------------------------------------------------------------------

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
        self.check_name(node, node.name, allow_magic_methods=True)
        self.check_function_argument_names(node)
        _drop_annotations(node)
        node = self.node_contents_visit(node)
        _tick_handlers(node.body)
        node.body.insert(0, _located(_tick(), node))
        node.decorator_list.append(_name_at(node, "_track_"))
        return node

    def visit_Await(self, node: ast.Await) -> Any:
        return self.node_contents_visit(node)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> Any:
        node = self.node_contents_visit(node)
        spec = star_spec(node.target)
        if spec is not None:
            node.body.insert(0, self._unstarred(node, spec))
        node.body.insert(0, _located(_tick(), node))
        return node

    def visit_AsyncWith(self, node: ast.AsyncWith) -> Any:
        return self._with_stars(self.node_contents_visit(node))

    def visit_With(self, node: ast.With) -> Any:
        return self._with_stars(self.node_contents_visit(node))

    def _unstarred(self, node: ast.For | ast.AsyncFor | ast.withitem,
                   spec: tuple[Any, ...]) -> ast.Assign:
        """Bind ``node``'s target with a starred name (``async for a, *b in``, ``with … as
        (a, *b)``: C unpacks them, no expression to wrap) to a new name, and the statement
        that unpacks that name's value into the target as an assignment does."""
        target = node.optional_vars if isinstance(node, ast.withitem) else node.target
        assert target is not None
        held = self.gen_tmp_name()
        if isinstance(node, ast.withitem):
            node.optional_vars = _located(ast.Name(held, ast.Store()), target)
        else:
            node.target = _located(ast.Name(held, ast.Store()), target)
        unpack = ast.Assign([target], _call(STARRED, _name(held), _spec_node(spec)))
        _located(unpack, target)
        return unpack

    def _with_stars(self, node: ast.With | ast.AsyncWith) -> ast.With | ast.AsyncWith:
        """A ``with`` whose item binds a target with a starred name, as nested ``with``
        statements (what CPython runs anyway): that item's value is unpacked (sized) before
        the next item is entered, as C unpacks it."""
        for i, item in enumerate(node.items):
            spec = None if item.optional_vars is None else star_spec(item.optional_vars)
            if spec is None:
                continue
            unpack = self._unstarred(item, spec)
            rest = node.items[i + 1:]
            if rest:
                inner = _located(type(node)(rest, node.body), node)
                node.body = [unpack, self._with_stars(inner)]
            else:
                node.body.insert(0, unpack)
            node.items = node.items[:i + 1]
            break
        return node

    def _comprehension_stars(self, node: Any) -> Any:
        """An ``async for`` clause of a comprehension whose target has a starred name binds
        a new name instead, and a clause ``for <target> in (_starred_(name, spec),)``
        follows with its conditions (a synchronous clause is sized by ``guard_iter``)."""
        generators: list[ast.comprehension] = []
        for clause in node.generators:
            spec = star_spec(clause.target) if clause.is_async else None
            if spec is None:
                generators.append(clause)
                continue
            unpack = self._unstarred_clause(clause, spec)
            generators += [clause, unpack]
        node.generators = generators
        return node

    def _unstarred_clause(self, clause: ast.comprehension,
                          spec: tuple[Any, ...]) -> ast.comprehension:
        target = clause.target
        held = self.gen_tmp_name()
        clause.target = _located(ast.Name(held, ast.Store()), target)
        value = _call(STARRED, _name(held), _spec_node(spec))
        unpack = ast.comprehension(target, ast.Tuple([value], ast.Load()), clause.ifs, 0)
        clause.ifs = []
        _located(unpack, target)
        return unpack

    def visit_ListComp(self, node: ast.ListComp) -> Any:
        return self._comprehension_stars(super().visit_ListComp(node))

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        return self._comprehension_stars(super().visit_GeneratorExp(node))

    # Loops, functions, ticks ---------------------------------------------------------------

    def visit_Starred(self, node: ast.Starred) -> Any:
        node = self.node_contents_visit(node)
        if isinstance(node.ctx, ast.Load):
            # ``{*x}`` / ``[*x]`` build in C: draw the items through the budget.
            node.value = _call_at(node.value, "_compress_", node.value, _name("_T_"))
        return node

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        slicing = isinstance(node.slice, ast.Slice) and isinstance(node.ctx, ast.Load)
        keyed = not isinstance(node.slice, ast.Slice)
        new = self._read_item(node) if type(node.ctx) is ast.Load else super().visit_Subscript(
            node)
        if keyed and isinstance(new, ast.Call) and len(new.args) == 2:
            new.args[1] = self._key(new.args[1])  # _getitem_(obj, key)
        elif keyed and isinstance(new, ast.Subscript):
            new.slice = self._key(new.slice)  # _write_(obj)[key] = … / del …
        if isinstance(node.ctx, ast.Store) and isinstance(new, ast.Subscript) and (
                not self._small_operand(node.slice)):
            self._write_items(new)  # the key may be a slice: ``lst[::2] = gen()``
        if slicing and isinstance(new, ast.Call) and isinstance(new.func, ast.Name):
            new.func.id = "_getslice_"  # slices copy: give the memory check a look
        return new

    @staticmethod
    def _write_items(node: ast.Subscript) -> None:
        """``_write_(obj)[key] = v`` -> ``_write_item_(obj)[key] = v``: a list stores the
        items of a slice drawn before C measures it (``guards.slice_items``)."""
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and (
                call.func.id == "_write_"):
            call.func = _name_at(call.func, WRITE_ITEM)

    def _key(self, node: ast.expr) -> ast.expr:
        """A dict/set key (or an index): through ``_key_`` unless it is provably flat."""
        if self._small_operand(node) or isinstance(node, ast.Slice) or (
                isinstance(node, ast.Tuple) and any(isinstance(e, ast.Slice) for e in node.elts)):
            return node
        return _call_at(node, "_key_", node)

    def visit_Set(self, node: ast.Set) -> Any:
        node = self.node_contents_visit(node)
        node.elts = [self._starred_keys(elt) if isinstance(elt, ast.Starred) else self._key(elt)
                     for elt in node.elts]
        return node

    def _starred_keys(self, node: ast.Starred) -> ast.Starred:
        node.value = _call_at(node.value, "_keys_", node.value)
        return node

    def visit_Dict(self, node: ast.Dict) -> Any:
        node = self.node_contents_visit(node)
        # ``{**d, **e}`` merges in C: a mapping's keys sharing a hash are charged first.
        node.values = [_call_at(value, "_merged_", value) if key is None else value
                       for key, value in zip(node.keys, node.values, strict=True)]
        node.keys = [None if key is None else self._key(key) for key in node.keys]
        return node

    def visit_SetComp(self, node: ast.SetComp) -> Any:
        new = super().visit_SetComp(node)
        assert isinstance(new, ast.SetComp)
        new.elt = self._key(new.elt)
        return self._comprehension_stars(new)

    def visit_DictComp(self, node: ast.DictComp) -> Any:
        new = super().visit_DictComp(node)
        assert isinstance(new, ast.DictComp)
        new.key = self._key(new.key)
        return self._comprehension_stars(new)

    def guard_iter(self, node: Any) -> Any:
        node = self.node_contents_visit(node)
        if getattr(node, "is_async", 0):
            return node
        source = node.iter
        if (type(source) is ast.Call and type(source.func) is ast.Name
                and source.func.id == "range" and "range" not in self.bound_names):
            # ``for i in range(10**8): ... break``: the loop draws every item through the
            # budget, so its range need not be refused up front for its length.
            source.func = _name_at(source.func, LOOP_RANGE)
        node.iter = _call_at(source, "_compress_", source, _name("_T_"))
        spec = star_spec(node.target)
        if spec is not None:
            node.iter = _call_at(source, STARRED_ITEMS, node.iter, _spec_node(spec))
        return node

    def visit_While(self, node: ast.While) -> Any:
        node = self.node_contents_visit(node)
        node.body.insert(0, _located(_tick(), node))
        return node

    def visit_TypeAlias(self, node: Any) -> Any:
        """``type Price = float`` (3.12) binds ``Price = _type_alias_('Price', False)``:
        an alias that can be subscripted when it has parameters; the value is never
        evaluated, as CPython evaluates it only when ``__value__`` (which a script may not
        read) is."""
        name = node.name.id
        self.check_name(node, name)
        alias = _call(TYPE_ALIAS, ast.Constant(name), ast.Constant(bool(node.type_params)))
        return _located(ast.Assign([ast.Name(name, ast.Store())], alias), node)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        self.check_name(node, node.name, allow_magic_methods=True)
        self.check_function_argument_names(node)
        _drop_annotations(node)
        node = self.node_contents_visit(node)
        if suspends(node.body):
            _tick_handlers(node.body)
            node.body.insert(0, _located(_tick(), node))
            node.decorator_list.append(_name_at(node, "_track_"))
            return node
        prologue = [_located(_copy(stmt), node, force=True) for stmt in _PROLOGUE_BODY]
        guard = prologue[-1]
        assert isinstance(guard, ast.Try)
        guard.body.extend(node.body)
        node.body = prologue
        return node

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        _drop_annotations(node)  # none in source text; a built tree may carry some
        node = self.node_contents_visit(node)
        self.check_function_argument_names(node)
        # ``tick and body``: a tick is ``True`` (the ticker's items), so the body's value
        node.body = _located(ast.BoolOp(op=ast.And(), values=[_tick().value, node.body]),
                             node.body)
        return node

    # Operators -----------------------------------------------------------------------------

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        node = self.node_contents_visit(node)
        guard = _GUARDED_BINOPS.get(type(node.op))
        if guard is None or self._safe_binop(node.op, node.left, node.right):
            return node
        return _call_at(node, guard, node.left, node.right)

    def _safe_binop(self, op: ast.operator, left: ast.expr, right: ast.expr) -> bool:
        """True when ``left op right`` provably cannot allocate a huge object."""
        ints = self._int_typed
        if isinstance(op, _ADDITIVE):
            # int/float + anything is numeric or a TypeError: no concatenation (nor, for
            # the set operators, a dict view hashing an iterable).
            return ints(left) or ints(right) or _is_float_constant(left) or (
                _is_float_constant(right))
        if isinstance(op, ast.Mult):
            return (ints(left) and ints(right)) or _is_float_constant(left) or (
                _is_float_constant(right))
        if isinstance(op, ast.Mod):
            if ints(left) or _is_float_constant(left):
                return True
            return isinstance(left, ast.Constant) and isinstance(left.value, str | bytes) and (
                _percent_literal_ok(left.value))
        if isinstance(op, _GROWING):
            return _is_small_number(left) and _is_small_number(right) and (
                isinstance(right, ast.Constant) and isinstance(right.value, int)
                and 0 <= right.value <= 64)
        return False

    def _int_typed(self, node: ast.expr) -> bool:
        """A conservative proof that ``node`` is a small-growth int (see ``_range_ints``)."""
        if isinstance(node, ast.Constant):
            return type(node.value) is int
        if isinstance(node, ast.Name):
            return node.id in self.range_ints
        if isinstance(node, ast.UnaryOp):
            return isinstance(node.op, _INT_UNARY) and (
                self._int_typed(node.operand))
        if isinstance(node, ast.BinOp):
            return isinstance(node.op, _INT_CLOSED_OPS) and self._int_typed(node.left) and (
                self._int_typed(node.right))
        if isinstance(node, ast.Call):
            return (isinstance(node.func, ast.Name) and node.func.id == "len"
                    and "len" not in self.bound_names and not node.keywords)
        return False

    def visit_Compare(self, node: ast.Compare) -> Any:
        """Comparisons that can walk containers in C go through the ``compare`` guards.

        ``a == b``, ``a < b`` … become ``_eq_(a, b)`` …, ``a in b`` becomes ``_in_(a, b)``
        (operands still evaluated left to right), unless an operand is a small literal
        or a provable int (then the walk is bounded by that operand). In a chain each
        operand is charged on its own through ``_cmparg_``; ``is`` needs nothing.
        """
        node = self.node_contents_visit(node)
        ops = node.ops
        if type(ops[0]) in _IDENTITY if len(ops) == 1 else all(
                type(op) in _IDENTITY for op in ops):
            return node
        if len(ops) == 1:
            op, left, right = ops[0], node.left, node.comparators[0]
            if type(op) in (ast.In, ast.NotIn):
                # A small list/tuple literal bounds the comparisons; a set/dict literal
                # still hashes ``left``, so only a small ``left`` makes that cheap.
                # A long text literal on the left is compared with every item.
                # A text literal of two or more characters may be searched for in a long
                # text (a two-way search: ~5 ns a character in one C call), a window at a
                # time by the guard.
                value = left.value if isinstance(left, ast.Constant) else None
                short = not (isinstance(value, str | bytes) and len(value) >= 2)
                if (short and self._small_operand(left)) or (
                        self._small_operand(right) and not isinstance(right, _HASHED)):
                    return node
                contains = "_in_" if type(op) is ast.In else "_notin_"
                return _call_at(node, contains, left, right)
            guard = _COMPARE_GUARDS.get(type(op))
            if guard is None or self._small_operand(left) or self._small_operand(right):
                return node
            return _call_at(node, guard, left, right)
        operands = [node.left, *node.comparators]
        wrapped = [operand if self._small_operand(operand)
                   else _call_at(operand, "_cmparg_", operand) for operand in operands]
        node.left, node.comparators = wrapped[0], wrapped[1:]
        return node

    def _small_operand(self, node: ast.expr) -> bool:
        """A literal made of constants (bounded by the source) or a provable int."""
        if isinstance(node, ast.Constant) or self._int_typed(node):
            return True
        if isinstance(node, _COLLECTIONS):
            return all(isinstance(elt, ast.Constant) for elt in node.elts)
        if isinstance(node, ast.Dict):
            return all(isinstance(part, ast.Constant) for part in (*node.keys, *node.values))
        return False

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        node = self.node_contents_visit(node)
        guarded = type(node.op) in _GUARDED_BINOPS
        if not guarded or self._safe_binop(node.op, node.target, node.value):
            return node
        op = ast.Constant(IOPERATOR_TO_STR[type(node.op)])
        target = node.target
        if isinstance(target, ast.Name):
            value = _call_at(node, "_inplacevar_", op, _name(target.id), node.value)
            return _located(ast.Assign([target], value), node)
        if isinstance(target, ast.Subscript):
            obj = target.value
            if isinstance(obj, ast.Call) and isinstance(obj.func, ast.Name) and (
                    obj.func.id == WRITE_ITEM):
                obj.func.id = "_write_"  # ``_augitem_`` draws a slice's items itself
            call = _call_at(node, "_augitem_", obj, target.slice, op, node.value)
        else:
            assert isinstance(target, ast.Attribute)
            call = _call_at(node, "_augattr_", target.value, ast.Constant(target.attr), op,
                            node.value)
        return _located(ast.Expr(call), node)

    def visit_Assign(self, node: ast.Assign) -> Any:
        node = self.node_contents_visit(node)
        for target in node.targets:
            spec = star_spec(target)
            if spec is not None:
                node.value = _call_at(node.value, STARRED, node.value, _spec_node(spec))
        return node

    def visit_FormattedValue(self, node: ast.FormattedValue) -> Any:
        node = self.node_contents_visit(node)
        static = _static_spec(node.format_spec) if node.format_spec is not None else ""
        if isinstance(node.value, ast.Constant) and static is not None and all(
                len(run) <= 4 for run in re.findall(r"\d+", static)):
            return node
        spec = node.format_spec if node.format_spec is not None else ast.Constant("")
        value = _call("_format_", node.value, ast.Constant(node.conversion), spec)
        return _located(ast.FormattedValue(value, -1, None), node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> Any:
        """An f-string with several parts becomes ``_fjoin_((part, ...))``: the parts are
        rendered (and checked) one by one, and their total size is checked before joining."""
        node = self.node_contents_visit(node)
        if len(node.values) < 2 or all(isinstance(v, ast.Constant) for v in node.values):
            return node
        parts: list[ast.expr] = []
        for value in node.values:
            if (isinstance(value, ast.FormattedValue) and value.conversion == -1
                    and value.format_spec is None and isinstance(value.value, ast.Call)
                    and isinstance(value.value.func, ast.Name)
                    and value.value.func.id == "_format_"):
                parts.append(value.value)  # already a str
            elif isinstance(value, ast.FormattedValue):
                parts.append(_located(ast.JoinedStr([value]), value))
            else:
                parts.append(value)
        call = _call("_fjoin_", ast.Tuple(parts, _LOAD))
        return _located(call, node)

    # Classes and module --------------------------------------------------------------------

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        # ``__slots__ = (...)``: its value is evaluated (on its own line) and bound, after
        # the visit, to ``SLOTS_NAME`` (``ScriptMeta`` makes the slotted ``__setattr__``);
        # instances keep a ``__dict__``.
        slotted = {id(stmt): _located(ast.Expr(stmt.value), stmt)  # type: ignore[attr-defined]
                   for stmt in node.body if _binds_slots(stmt)}
        node.body = [slotted.get(id(stmt), stmt) for stmt in node.body]
        slot_values = {id(expr) for expr in slotted.values()}
        annotated = list(dict.fromkeys(
            _annotated_name(stmt) for stmt in node.body
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
            and not _names(stmt.annotation, "ClassVar")))
        for stmt in node.body:  # a planner that ran before renamed it already
            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    stmt.name == "__post_init__"):
                stmt.name = POST_INIT
        self.methods.update(id(stmt) for stmt in node.body
                            if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef))
        # ``__hash__ = None``: instances unhashable, as a class with ``__eq__`` says
        self.methods.update(id(stmt.targets[0]) for stmt in node.body
                            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                            and isinstance(stmt.targets[0], ast.Name)
                            and stmt.targets[0].id == "__hash__"
                            and isinstance(stmt.value, ast.Constant) and stmt.value.value is None)
        self.method_aliases.update(_method_aliases(node.body))
        generic = _drop_type_params(node)
        keywords = self._class_keywords(node)
        self.classes.append(node.name)
        try:
            new = super().visit_ClassDef(node)
        finally:
            self.classes.pop()
        assert isinstance(new, ast.ClassDef)
        # RestrictedPython keeps only its own ``metaclass=``: the others reach
        # ``build_class`` (``class Row(TypedDict, total=False)``; a plain class raises
        # CPython's TypeError), none silently dropped
        new.keywords.extend(keywords)
        if generic:  # CPython's last base: ``Box[int]`` is ``Box``, as of ``Generic[T]``
            new.bases.append(_name_at(node, GENERIC_BASE))
        new.body = [_located(ast.Assign(targets=[ast.Name(id=SLOTS_NAME, ctx=ast.Store())],
                                        value=stmt.value), stmt)
                    if id(stmt) in slot_values and isinstance(stmt, ast.Expr) else stmt
                    for stmt in new.body]
        if annotated:
            record = ast.Assign(targets=[ast.Name(id=ANNOTATED, ctx=ast.Store())],
                                value=ast.Constant(
                                    value=tuple(annotated)))  # type: ignore[arg-type]
            new.body.append(_located(record, node.body[-1]))
        ast.copy_location(new, node)
        for keyword in new.keywords:
            _located(keyword, node)
        return new

    def _class_keywords(self, node: ast.ClassDef) -> list[ast.keyword]:
        """The class's keywords, visited and taken off ``node``: ``metaclass=`` as
        :data:`CLASS_METACLASS` (refused here unless it names ``ABCMeta``), a keyword of
        an ``_`` name or ``**mapping`` refused."""
        kept = []
        for keyword in node.keywords:
            if keyword.arg == "metaclass":
                value = keyword.value
                named = value.attr if isinstance(value, ast.Attribute) else getattr(
                    value, "id", None)
                if named != "ABCMeta":
                    self.error(node, "a class cannot choose its metaclass in the sandbox "
                                     "(every script class has the sandbox's own): for an "
                                     "abstract base, subclass abc.ABC; to register classes, "
                                     "use a decorator of your own that adds each to a dict")
                    continue
                keyword = ast.keyword(CLASS_METACLASS, value)
            elif keyword.arg is None:
                self.error(node, "class keywords are written out one by one in the sandbox "
                                 "(`class Row(TypedDict, total=False)`), not as `**mapping`")
                continue
            elif keyword.arg.startswith("_"):
                self.error(node, f'"{keyword.arg}" is an invalid class keyword because it '
                                 'starts with "_".')
                continue
            keyword.value = self.visit(keyword.value)
            kept.append(_located(keyword, node))
        node.keywords = []
        return kept

    def visit_Module(self, node: ast.Module) -> Any:
        self.range_ints, self.bound_names = _binding_sites(node, self.nodes, self.kinds)
        node = self.node_contents_visit(node)
        if node.body and isinstance(node.body[-1], ast.Expr):
            last = node.body[-1]
            assign = ast.Assign(targets=[ast.Name(id=RESULT_NAME, ctx=ast.Store())],
                                value=last.value)
            node.body[-1] = _located(assign, last)
        return node
