"""The cold path of a new script (issue #18): a tree parsed once is compiled without a
second parse under the same policy, a pool worker runs the code its host compiled (and
compiles itself when the host did not, or runs another interpreter), and a run sends its
tool paths to a worker only when they changed."""

from __future__ import annotations

import ast
import marshal
from typing import TYPE_CHECKING, Any

import anyio.lowlevel
import pytest

from codemode.errors import ScriptCompileError
from codemode.sandbox import WorkerPoolExecutor
from codemode.sandbox.executors import pool as pool_module
from codemode.sandbox.language import compile as compile_module
from codemode.sandbox.language.compile import (
    adopt_code,
    cached_script,
    compile_script,
    compile_tree,
    export_code,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

STANDIN = "tests.sandbox.test_worker_standin:standin_runtime"
_unique = iter(range(10**9))


def fresh(source: str) -> str:
    """``source`` no cache has seen."""
    return f"{source}\n# cold path test {next(_unique)}\n"


async def no_tool(name: str, arguments: dict[str, Any]) -> Any:
    return {"tool": name, "arguments": arguments}


@pytest.fixture(scope="module")
async def pool() -> AsyncIterator[WorkerPoolExecutor]:
    """One worker for the module's tests (a worker keeps its last tool paths: the test of
    them sends paths no earlier test sent)."""
    async with WorkerPoolExecutor(size=1, confinement="off") as made:
        yield made


ACCEPTED = [
    "x = [i * i for i in range(5)]\nx",
    "def f(n):\n    return n + 1\nf(2)",
    "async def g():\n    return 1\nawait g()",
    "class A:\n    def __init__(self):\n        self._v = 3\nA()._v",
    "s = 'a' * 3\nf'{s:>5}'",
]
REFUSED = [
    "().__class__.__bases__",
    "exec('1')",
    "x.__globals__",
    "def __del__(self):\n    pass",
    "printed",
    "try:\n    pass\nexcept* ValueError:\n    pass",
]


@pytest.mark.parametrize("source", ACCEPTED)
def test_a_shared_tree_compiles_to_the_code_a_fresh_parse_makes(source: str) -> None:
    text = fresh(source)
    expected = compile_module._checked(text, None, None)  # uncached, parsed by the compiler
    got = compile_tree(text, ast.parse(text))
    assert got.code.co_code == expected.code.co_code
    assert got.code.co_names == expected.code.co_names
    assert (got.is_async, got.lines) == (expected.is_async, expected.lines)
    assert compile_script(text) is got  # the same cache


@pytest.mark.parametrize("source", REFUSED)
def test_a_shared_tree_is_refused_exactly_as_the_source_is(source: str) -> None:
    text = fresh(source)
    with pytest.raises(ScriptCompileError) as by_source:
        compile_script(text)
    with pytest.raises(ScriptCompileError) as by_tree:
        compile_tree(text, ast.parse(text))
    assert (by_tree.value.message, by_tree.value.line, by_tree.value.column) == (
        by_source.value.message, by_source.value.line, by_source.value.column)
    assert cached_script(text) is None


def test_adopted_code_answers_compile_script_without_compiling() -> None:
    text = fresh("1 + 1")
    other = compile_script(fresh("40 + 2"))
    adopt_code(text, export_code(other))
    assert compile_script(text).code is not other.code  # unmarshalled: a copy
    assert compile_script(text).code.co_code == other.code.co_code
    assert compile_script(text).lines == tuple(text.splitlines())


@pytest.mark.parametrize("data", [
    marshal.dumps(42),
    marshal.dumps(compile("x = 1", "<not the script>", "exec")),
    marshal.dumps(compile("def f():\n    pass", "<script>", "exec").co_consts[0]),
    b"\x00garbage",
    b"",
])
def test_adopt_code_ignores_anything_but_a_scripts_module_code(data: bytes) -> None:
    text = fresh("7")
    adopt_code(text, data)
    assert cached_script(text) is None


async def test_the_worker_runs_the_code_its_host_compiled(pool: WorkerPoolExecutor) -> None:
    # The host's cache says this source compiles to ``40 + 2``: a worker that adopted the
    # host's code answers 42, one that compiled the source itself would answer 2.
    text = fresh("1 + 1")
    compile_module._remember(text, compile_script(fresh("40 + 2")))
    result = await pool.run(text, call_tool=no_tool)
    assert result.error is None, result.error
    assert result.value == 42


async def test_a_worker_of_another_interpreter_compiles_the_source_itself(
        pool: WorkerPoolExecutor, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pool_module, "CODE_TAG", "cpython-0-not-this-one")
    text = fresh("1 + 1")
    compile_module._remember(text, compile_script(fresh("40 + 2")))
    result = await pool.run(text, call_tool=no_tool)
    assert result.value == 2


async def test_a_script_the_host_never_compiled_is_compiled_by_the_worker(
        pool: WorkerPoolExecutor) -> None:
    text = fresh("x = [i for i in range(4)]\nsum(x)")
    result = await pool.run(text, call_tool=no_tool)
    assert result.value == 6
    assert cached_script(text) is None  # the host did not compile it for the worker


async def test_a_refused_script_still_fails_in_the_worker(pool: WorkerPoolExecutor) -> None:
    result = await pool.run(fresh("().__class__.__bases__"), call_tool=no_tool)
    assert result.error is not None and result.error.type == "SyntaxError"


async def test_tool_paths_are_sent_to_a_worker_only_when_they_change(
        pool: WorkerPoolExecutor, monkeypatch: pytest.MonkeyPatch) -> None:
    sent: list[dict[str, Any]] = []
    encode = pool_module.encode

    def spy(message: list[Any]) -> bytes:
        if message[0] == "run":
            sent.append(message[1])
        return encode(message)

    monkeypatch.setattr(pool_module, "encode", spy)
    script = "await tools.b(n=1)"
    first = await pool.run(script, call_tool=no_tool, tool_paths=("a", "b"))
    again = await pool.run(script, call_tool=no_tool, tool_paths=("a", "b"))
    fewer = await pool.run(script, call_tool=no_tool, tool_paths=("a",))
    assert first.value == again.value == {"tool": "b", "arguments": {"n": 1}}
    assert fewer.error is not None and "b" in fewer.error.message
    assert [frame.get("tool_paths") for frame in sent] == [("a", "b"), None, ("a",)]
    assert fewer.calls == ()


async def test_a_worker_of_the_host_interpreter_boots_without_site() -> None:
    # No ``site``: no .pth file of the environment runs in a worker, yet the packages of
    # the host's site-packages are found (the worker imported RestrictedPython from there).
    probe = ("import sys\n[sys.flags.no_site, 'site' in sys.modules, "
             "'RestrictedPython' in sys.modules]")
    async with WorkerPoolExecutor(size=1, runtime=STANDIN, confinement="off") as standin:
        result = await standin.run(probe, call_tool=no_tool)
    assert result.error is None, result.error
    assert result.value == [1, False, True]
    async with WorkerPoolExecutor(size=1, confinement="off") as real:
        ran = await real.run("import re\nre.sub('a', 'b', 'aa')", call_tool=no_tool)
    assert ran.value == "bb"


@pytest.mark.parametrize("spare", [True, False], ids=["forked", "booted"])
async def test_a_worker_collects_cycles_once_booted(spare: bool) -> None:
    # The bootstrap turns the cyclic collector off for the boot's imports; a worker that
    # kept it off would never free a script's cycles (its memory grows run after run).
    probe = ("import gc, weakref\nclass A:\n    pass\na = A()\na.me = a\n"
             "gone = weakref.ref(a)\ndel a\nmade = [[] for _ in range(5000)]\n"
             "[gc.isenabled(), gone() is None]")
    async with WorkerPoolExecutor(size=1, runtime=STANDIN, spare=spare) as made:
        result = await made.run(probe, call_tool=no_tool)
    assert result.error is None, result.error
    assert result.value == [True, True]


async def test_spawn_starts_the_workers_without_waiting_for_them() -> None:
    # one before spawn returns (the first run's), the other from the loop's next turn:
    # its fork does not hold the caller (the first run's SDK and preflight)
    async with WorkerPoolExecutor(size=1, confinement="off") as first:
        await first.start()  # the process's template is up and its spare made
    async with WorkerPoolExecutor(size=2, confinement="off") as made:
        made.spawn()
        assert len(made._idle) == 1
        await anyio.lowlevel.checkpoint()
        started = list(made._idle)
        assert len(started) == 2 and all(w.process.poll() is None for w in started)
        made.spawn()  # nothing missing: no more processes
        assert list(made._idle) == started
        result = await made.run("1 + 1", call_tool=no_tool)
        assert result.value == 2
        assert {id(w) for w in made._idle} == {id(w) for w in started}
