"""The RestrictedPython policy: what compiles, what is refused, what gets instrumented."""

from __future__ import annotations

import ast
import textwrap

import pytest

from codemode.errors import ScriptCompileError
from codemode.sandbox.language.compile import compile_script
from codemode.sandbox.language.policy import SandboxPolicy


def transformed(source: str) -> str:
    tree = ast.parse(textwrap.dedent(source))
    policy = SandboxPolicy()
    policy.visit(tree)
    assert policy.errors == []
    return ast.unparse(tree)


@pytest.mark.parametrize("source", [
    "await tools.x()",
    "async def f():\n    await g()",
    "async def f():\n    async for x in y:\n        pass",
    "async def f():\n    async with y as z:\n        pass",
    "async for x in y:\n    pass",
    "[await f(x) for x in range(3)]",
    "async def f():\n    return [x async for x in y]",
    "x = [i for i in range(3)]",
    "def f(*args, **kwargs):\n    return g(*args, **kwargs)",
    "class A(Exception):\n    def __init__(self, x):\n        self.x = x",
    "global_value = 1\ndef f():\n    global global_value\n    global_value = 2",
    "import json\nfrom math import sqrt as s",
    "print('a', end='')",
    "d = {}\nd['k'] += 1",
    "try:\n    pass\nexcept (ValueError, KeyError) as e:\n    pass\nfinally:\n    pass",
    "x = 1 if True else 2\ny = (lambda a: a + 1)(x)",
])
def test_allowed_scripts_compile(source: str) -> None:
    compiled = compile_script(source)
    assert compiled.code.co_filename == "<script>"


@pytest.mark.parametrize(("source", "fragment", "line", "column"), [
    ("x = 1\n_y_ = 2", '"_y_" is an invalid variable name', 2, 1),
    ("a.__class__", '"__class__" is an invalid attribute name', 1, 1),
    ("def f():\n    yield 1\nf().gi_frame", '"gi_frame" is a restricted name', 3, 1),
    ("exec('x')", "Exec calls are not allowed", 1, 1),
    ("eval('x')", "Eval calls are not allowed", 1, 1),
    ("try:\n    pass\nexcept* ValueError:\n    pass", "`except*` is not available in the sandbox",
     1, 1),
    ("printed", '"printed" is not available', 1, 1),
    ("from json import *", '"*" imports are not allowed', 1, 1),
    ("class A(metaclass=M):\n    pass", "a class cannot choose its metaclass", 1, 1),
    ("def print():\n    pass", '"print" is a reserved name', 1, 1),
    ("x = (", "SyntaxError", 1, 5),
    ("await = 1", "SyntaxError", 1, 7),
    ("def f():\n    await g()", "SyntaxError", 2, 5),
])
def test_refused_scripts_report_message_and_position(source: str, fragment: str, line: int,
                                                     column: int) -> None:
    with pytest.raises(ScriptCompileError) as info:
        compile_script(source)
    assert fragment in info.value.message
    assert (info.value.line, info.value.column) == (line, column)


def test_compile_is_cached_by_source() -> None:
    first = compile_script("x = 41\nx + 1")
    assert compile_script("x = 41\nx + 1") is first
    assert compile_script("x = 41\nx + 2") is not first


def test_top_level_await_makes_a_coroutine_script() -> None:
    assert compile_script("await f()").is_async
    assert not compile_script("x = 1").is_async


def test_for_loops_and_comprehensions_go_through_the_budget() -> None:
    code = transformed("for x in items:\n    pass\n[y for y in other]")
    assert "for x in _compress_(items, _T_)" in code
    assert "for y in _compress_(other, _T_)" in code


def test_while_lambda_and_functions_tick() -> None:
    code = transformed("""
        while cond():
            pass
        f = lambda: 1
        def g():
            return 2
        def gen():
            yield 3
        async def co():
            return 4
    """)
    assert "while cond():\n    _next_(_T_)" in code
    assert "f = lambda: _next_(_T_) and 1" in code
    assert "_depth_ += 1" in code and "if _depth_ > _maxdepth_:" in code
    assert "@_track_\ndef gen():\n    _next_(_T_)" in code
    assert "@_track_\nasync def co():\n    _next_(_T_)" in code


@pytest.mark.parametrize(("source", "expected"), [
    ("a * b", "_mul_(a, b)"),
    ("a ** b", "_pow_(a, b)"),
    ("a << b", "_lshift_(a, b)"),
    ("a + b", "_add_(a, b)"),
    ("a % b", "_mod_(a, b)"),
    ("x *= 3", "x = _inplacevar_('*=', x, 3)"),
    ("x += y", "x = _inplacevar_('+=', x, y)"),
    ("d[k] += y", "_augitem_(_write_(d), _key_(k), '+=', y)"),
    ("a == b", "_eq_(a, b)"),
    ("a < b", "_lt_(a, b)"),
    ("a in b", "_in_(a, b)"),
    ("a not in b", "_notin_(a, b)"),
    ("a < b < c", "_cmparg_(a) < _cmparg_(b) < _cmparg_(c)"),
    ("a in {1, 2}", "_in_(a, {1, 2})"),
    ("d[k]", "_getitem_(d, _key_(k))"),
    ("d[k] = 1", "_write_item_(d)[_key_(k)] = 1"),
    ("a[::2] = g", "_write_item_(a)[::2] = g"),
    ("a[0] = g", "_write_(a)[0] = g"),
    ("{k: 1}", "{_key_(k): 1}"),
    ("{k, *s}", "{_key_(k), *_keys_("),
    ("{k for k in s}", "{_key_(k) for k in"),
    ("a - b", "_sub_(a, b)"),
    ("a | b", "_or_(a, b)"),
    ("a |= b", "a = _inplacevar_('|=', a, b)"),
    ("o.n *= 2", "_augattr_(_write_attr_(o), 'n', '*=', 2)"),
    ("f'{x:>{w}}'", "_format_(w, -1, '')"),
    ("f'{x}'", "_format_(x, -1, '')"),
])
def test_size_sensitive_operators_are_guarded(source: str, expected: str) -> None:
    assert expected in transformed(source)


@pytest.mark.parametrize(("source", "expected"), [
    ("for i in range(9):\n    t += i * i % 7", "t += i * i % 7"),
    ("for i in range(9):\n    s = s + i", "s = s + i"),
    ("x = a * 2.5", "x = a * 2.5"),
    ("x = n + 1", "x = n + 1"),
    ("x = len(a) * len(b)", "x = len(a) * len(b)"),
    ("x = 2 ** 10", "x = 2 ** 10"),
    ("x = '%d items' % n", "x = '%d items' % n"),
    ("c += 1", "c += 1"),
    ("x = a == 'b'", "x = a == 'b'"),
    ("x = a in ('b', 'c')", "x = a in ('b', 'c')"),
    ("x = a is b", "x = a is b"),
    ("x = n - 1", "x = n - 1"),
    ("x = a - 1.5", "x = a - 1.5"),
    ("x = n & 0xff", "x = n & 255"),
    ("x = d['k']", "x = _getitem_(d, 'k')"),
    ("for i in range(9):\n    x = d[i]", "x = _getitem_(d, i)"),
])
def test_provably_small_arithmetic_stays_native(source: str, expected: str) -> None:
    assert expected in transformed(source)


@pytest.mark.parametrize("source", [
    "for i in range(9):\n    pass\ni = 'a'\ni * 3",
    "range = lambda n: ['a']\nfor i in range(3):\n    i * 3",
    "for i in items:\n    i * i",
])
def test_inference_gives_up_when_a_name_may_not_be_an_int(source: str) -> None:
    assert "_mul_(i, " in transformed(source)


def test_last_expression_is_stored_and_others_are_not() -> None:
    assert transformed("x = 1\nx + y").endswith("_result_ = _add_(x, y)")
    assert "_result_" not in transformed("x = 1\nif x:\n    x")


def test_generated_code_keeps_script_positions() -> None:
    code = compile_script("x = 1\nfor i in range(3):\n    y = x * i\n").code
    lines = {pos[0] for pos in code.co_positions() if pos[0]}
    assert lines <= {1, 2, 3}
