"""AST conversions spoiled by another thread are made again (``language.parsing``)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from codemode.sandbox.language.parsing import converted, parse_tree

MISMATCH = SystemError("AST constructor recursion depth mismatch (before=129, after=43)")


class Flaky:
    """``ast.parse`` that fails as CPython does under the race ``failures`` times first."""

    def __init__(self, failures: int, error: BaseException = MISMATCH) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return ast.parse(*args, **kwargs)


@pytest.mark.parametrize("failures", [0, 1, 2])
def test_a_mismatch_is_converted_again(failures: int) -> None:
    flaky = Flaky(failures)
    tree = converted(flaky, "x = 1")
    assert isinstance(tree, ast.Module) and ast.unparse(tree) == "x = 1"
    assert flaky.calls == failures + 1


def test_a_mismatch_that_persists_is_raised() -> None:
    flaky = Flaky(3)
    with pytest.raises(SystemError, match="recursion depth mismatch"):
        converted(flaky, "x = 1")
    assert flaky.calls == 3


def test_another_system_error_is_raised_at_once() -> None:
    flaky = Flaky(1, SystemError("something else"))
    with pytest.raises(SystemError, match="something else"):
        converted(flaky, "x = 1")
    assert flaky.calls == 1


def test_parse_tree_is_ast_parse() -> None:
    assert ast.dump(parse_tree("a[1]", mode="eval")) == ast.dump(ast.parse("a[1]", mode="eval"))


FACADE_IMPORT = textwrap.dedent('''
    import importlib, json
    real = importlib.import_module
    seen = []

    def flaky(name, *args):
        seen.append(name)
        if name.endswith(".uuid_facade") and seen.count(name) <= FAILURES:
            raise SystemError(ERROR)
        return real(name, *args)

    importlib.import_module = flaky
    from codemode.sandbox.language.facades import facade
    try:
        answer = sorted(facade("uuid").exports())[:1]
    except SystemError as exc:
        answer = str(exc)
    print(json.dumps([answer, seen.count("codemode.sandbox.language.facades.uuid_facade")]))
''')


@pytest.mark.parametrize(("failures", "error", "expected"), [
    (1, "AST constructor recursion depth mismatch (before=99, after=170)", [["NAMESPACE_DNS"], 2]),
    (2, "AST constructor recursion depth mismatch (before=99, after=170)", [["NAMESPACE_DNS"], 3]),
    (1, "some other SystemError", ["some other SystemError", 1]),
])
def test_a_facade_import_spoiled_by_another_thread_is_made_again(
        failures: int, error: str, expected: list[Any]) -> None:
    """A facade's first import on a script thread while the host parses: under pytest (and
    any import hook that parses) the import converts the module's source, and the race
    failed the script's ``import contextlib`` with a SystemError."""
    source = f"FAILURES = {failures}\nERROR = {error!r}\n" + FACADE_IMPORT
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == expected
