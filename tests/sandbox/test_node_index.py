"""One walk of a script's tree (issue #18): ``index_nodes`` gives the dialect plan, the
preflight and the policy what their own walks gave, the walks skip only fields Python's
grammar says hold no node to check, and the policy's shortcuts (forwarding methods called
directly, clean names and constants checked inline, binding sites read by node type)
transform and refuse every script exactly as RestrictedPython's plain walk does."""

from __future__ import annotations

import ast
import sys
import textwrap
from typing import Any

import pytest
from RestrictedPython.transformer import RestrictingNodeTransformer
from script_literals import script_literals

from codemode.sandbox.language.policy import (
    _PASSIVE,
    _PROLOGUE,
    _PROLOGUE_BODY,
    SandboxPolicy,
    _binding_sites,
    _copy,
    _forwards,
    child_fields,
    index_nodes,
)


def _corpus() -> list[str]:
    """Every string literal of the policy and attack tests that parses as a script, and
    each of those also as the body of a function, an async function and a method."""
    scripts = script_literals("sandbox/test_policy.py", "sandbox/test_attacks.py",
                              "sandbox/test_language_routes.py")
    found = dict.fromkeys(scripts)
    for source in scripts[::3]:
        body = textwrap.indent(source, "    ")
        for head in ("def f(n):\n", "async def g(*a, **k):\n", "class C:\n    def m(self):\n"):
            wrapped = head + (textwrap.indent(body, "    ") if head.startswith("class") else body)
            try:
                ast.parse(wrapped)
            except (SyntaxError, ValueError):
                continue
            found[wrapped] = None
    return list(found)


CORPUS = _corpus()
NODE_TYPES = sorted((kind for kind in vars(ast).values() if isinstance(kind, type)
                     and issubclass(kind, ast.AST) and kind._fields
                     and not (kind.__doc__ or "").startswith("Deprecated")),
                    key=lambda k: k.__name__)
"""The node types ``ast.parse`` makes (not the deprecated aliases such as ``ast.Num``)."""


def _walk(tree: ast.AST) -> list[ast.AST]:
    """Breadth first over every field (``ast.iter_child_nodes``), contexts and operators
    left out: what the planner's own walk listed."""
    nodes, index = [tree], 0
    while index < len(nodes):
        nodes.extend(child for child in ast.iter_child_nodes(nodes[index])
                     if type(child) not in _PASSIVE)
        index += 1
    return nodes


def test_the_corpus_holds_scripts_and_their_wrapped_forms() -> None:
    assert len(CORPUS) > 500
    assert any(source.startswith("class C:") for source in CORPUS)


@pytest.mark.parametrize("kind", NODE_TYPES, ids=lambda kind: kind.__name__)
def test_child_fields_keep_every_field_but_scalars_contexts_and_operators(kind: type) -> None:
    signature = (kind.__doc__ or "").split("\n", 1)[0]
    assert signature.startswith(f"{kind.__name__}("), signature  # read, not the fallback
    skipped = set(kind._fields) - set(child_fields(kind))
    declared = dict(reversed(part.strip().split(" ")) for part in
                    signature[len(kind.__name__) + 1:-1].split(","))
    for field in skipped:
        assert declared[field].rstrip("?*") in {
            "identifier", "int", "string", "constant", "expr_context", "boolop", "operator",
            "unaryop", "cmpop"}, (kind, field)
    assert [f for f in kind._fields if f not in skipped] == list(child_fields(kind))
    field_types = getattr(kind, "_field_types", None)  # 3.13+: the grammar's types
    if field_types is not None:
        leaves = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
        for field in skipped:
            declared_type = field_types[field]
            inner = getattr(declared_type, "__args__", (declared_type,))
            assert all(t in (str, int, object, type(None)) or (
                isinstance(t, type) and issubclass(t, leaves)) for t in inner), (kind, field)


def test_child_fields_of_the_hot_node_types() -> None:
    assert child_fields(ast.Name) == ()
    assert child_fields(ast.Constant) == ()
    assert child_fields(ast.Attribute) == ("value",)
    assert child_fields(ast.BinOp) == ("left", "right")
    assert child_fields(ast.Compare) == ("left", "comparators")
    assert child_fields(ast.Global) == ()
    assert child_fields(ast.ImportFrom) == ("names",)
    if sys.version_info >= (3, 12):
        assert child_fields(ast.TypeAlias) == ("name", "type_params", "value")  # `name`: expr


def test_a_node_type_without_a_readable_signature_keeps_all_its_fields() -> None:
    class Odd(ast.AST):
        """Not an ASDL signature."""

        _fields = ("id", "ctx")

    class Renamed(ast.AST):
        """Renamed(identifier other, expr_context ctx)"""

        _fields = ("id", "ctx")

    assert child_fields(Odd) == ("id", "ctx")
    assert child_fields(Renamed) == ("id", "ctx")


def test_skipped_fields_hold_no_node_in_any_corpus_tree() -> None:
    for source in CORPUS:
        for node in ast.walk(ast.parse(source)):
            for field in set(node._fields) - set(child_fields(type(node))):
                value = getattr(node, field, None)
                for item in value if isinstance(value, list) else [value]:
                    assert not isinstance(item, ast.AST) or type(item) in _PASSIVE, (
                        source, type(node).__name__, field)


def test_the_index_is_what_separate_walks_give() -> None:
    for source in CORPUS:
        tree = ast.parse(source)
        nodes, parents, kinds = index_nodes(tree)
        assert nodes == _walk(tree), source
        assert parents == {child: parent for parent in nodes
                           for child in ast.iter_child_nodes(parent)
                           if type(child) not in _PASSIVE}
        by_type: dict[type, list[ast.AST]] = {}
        for node in nodes:
            by_type.setdefault(type(node), []).append(node)
        assert kinds == by_type
        assert _binding_sites(tree, kinds=kinds) == _binding_sites(tree) == _binding_sites(
            tree, nodes) == _binding_sites_one_by_one(tree), source


def _binding_sites_one_by_one(tree: ast.AST) -> tuple[set[str], set[str]]:
    """``_binding_sites`` as a walk that looks at each node once, parents first: the
    names only ever bound by ``for NAME in range(...)`` and every name bound anywhere."""
    range_targets: set[str] = set()
    other: set[str] = set()
    loop_targets: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.comprehension):
            source = node.iter
            if (isinstance(node.target, ast.Name) and isinstance(source, ast.Call)
                    and isinstance(source.func, ast.Name) and source.func.id == "range"
                    and not source.keywords
                    and not any(isinstance(a, ast.Starred) for a in source.args)
                    and (len(source.args) == 1 or all(
                        isinstance(a, ast.Constant) and type(a.value) is int
                        and abs(a.value) < 2**16 for a in source.args))):
                range_targets.add(node.target.id)
                loop_targets.add(id(node.target))
        elif isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load) and id(node) not in loop_targets:
                other.add(node.id)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            other.add(node.name)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Global | ast.Nonlocal):
            other.update(node.names)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            other.add(node.name)
    if "range" in other:
        return set(), other | range_targets
    return range_targets - other, other | range_targets


def test_forwarding_methods_are_told_from_the_checking_ones() -> None:
    for name in ("visit_Expr", "visit_If", "visit_List", "visit_keyword", "visit_Return"):
        assert _forwards(getattr(RestrictingNodeTransformer, name)), name
    assert _forwards(SandboxPolicy.visit_Await)
    for name in ("visit_Name", "visit_Attribute", "visit_Call", "visit_Subscript", "visit_Assign",
                 "visit_ListComp", "visit_TryStar", "visit_ExceptHandler", "generic_visit"):
        assert not _forwards(getattr(SandboxPolicy, name)), name


class _PlainWalk(SandboxPolicy):
    """The policy walked the plain NodeTransformer way: every field, every node through
    ``getattr(self, "visit_" + name)``, no inline names or constants."""

    def visit(self, node: ast.AST) -> Any:
        return getattr(self, "visit_" + type(node).__name__, self.generic_visit)(node)

    def node_contents_visit(self, node: Any) -> Any:
        return ast.NodeTransformer.generic_visit(self, node)

    def visit_Name(self, node: ast.Name) -> Any:
        return SandboxPolicy.visit_Name(self, node)


class _OwnVisit(SandboxPolicy):
    """A subclass that only hooks ``visit``: every node must still pass through it."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[type] = []

    def visit(self, node: ast.AST) -> Any:
        self.seen.append(type(node))
        return super().visit(node)


def _transformed(policy: SandboxPolicy, source: str) -> tuple[str, list[str], list[Any],
                                                              dict[str, bool]]:
    tree = ast.parse(source)
    try:
        new = policy.visit(tree)
    except (RecursionError, MemoryError) as exc:
        return type(exc).__name__, [], [], {}
    dumped = ast.dump(new, include_attributes=True) if isinstance(new, ast.AST) else repr(new)
    return dumped, policy.errors, policy.positions, policy.used_names


def test_the_policy_transforms_and_refuses_as_the_plain_walk_does() -> None:
    refused = 0
    for source in CORPUS:
        fast = _transformed(SandboxPolicy(), source)
        tree = ast.parse(source)
        indexed = SandboxPolicy(kinds=index_nodes(tree)[2]).visit(tree)
        assert fast == _transformed(_PlainWalk(), source), source
        if isinstance(indexed, ast.AST):
            assert ast.dump(indexed, include_attributes=True) == fast[0], source
        refused += bool(fast[1])
    assert refused > 50  # the corpus's attacks are refused, and identically


def test_a_subclass_with_its_own_visit_sees_every_node_and_transforms_the_same() -> None:
    source = "x = [a.b for a in range(3)]\ny = {'k': x[0]}\ny"
    own = _OwnVisit()
    assert _transformed(own, source) == _transformed(SandboxPolicy(), source)
    assert own.seen.count(ast.Name) == len([n for n in ast.walk(ast.parse(source))
                                            if type(n) is ast.Name])


def test_a_name_refused_once_is_refused_every_time() -> None:
    policy = SandboxPolicy()
    policy.visit(ast.parse("x = 1\n_y = x\nprinted = 2\nprint(x)\nprint = 3\n[_y, printed]"))
    assert sorted(policy._clean) == ["_y", "x"]
    assert len(policy.errors) == 3  # printed (twice: stored, then read), print = 3


def test_a_plain_functions_prologue_is_the_parsed_template() -> None:
    first, second = ([_copy(stmt) for stmt in _PROLOGUE_BODY] for _ in range(2))
    assert [ast.dump(s) for s in first] == [ast.dump(s) for s in ast.parse(_PROLOGUE).body]
    assert all(a is not b for a, b in zip(ast.walk(first[0]), ast.walk(second[0]), strict=True)
               if type(a) not in _PASSIVE)


class _RestrictedPythonReads(_PlainWalk):
    """The plain walk with attribute and subscript reads rewritten by RestrictedPython's own
    ``visit_Attribute``/``visit_Subscript``: the policy before its shortcuts for them."""

    def _read_attribute(self, node: ast.Attribute) -> Any:
        return RestrictingNodeTransformer.visit_Attribute(self, node)

    def _read_item(self, node: ast.Subscript) -> Any:
        return RestrictingNodeTransformer.visit_Subscript(self, node)


EDGES = [
    "builtins = 1\nbreakpoint()\nx__roles__ = 2\nprint(printed)\n_ = 3\n_",
    "a.x__roles__\na.__roles__\na._\na.gi_frame\na.f_back.f_globals\na.cr_frame",
    "a.b = 1\ndel a.c\na.d += 1\na[0] = 1\ndel a[1]\na[1:2]\na[k] += 1\na[::2] = b\na.items",
    "x = a.b.c[d][e:f].g(h.i)[j]\nf'{a.b[c]!r:>{d.e}}'\n[a.b for a in c if a[0]]",
]


def test_reads_and_plain_names_are_rewritten_as_restrictedpython_rewrites_them() -> None:
    """The policy's own ``_getattr_``/``_getitem_`` reads and its clean plain names give
    the tree, errors, positions and names RestrictedPython's methods and ``visit_Name``
    give, over the corpus and names at the edges of the checks (reserved, ``__roles__``,
    inspection attributes, ``_``)."""
    for source in [*CORPUS, *EDGES]:
        assert _transformed(SandboxPolicy(), source) == _transformed(
            _RestrictedPythonReads(), source), source
