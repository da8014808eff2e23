"""A script whose dialect rewrite only appended lines is compiled from its own tree plus
those lines (issue #18): the same tree, the same policy findings, the same code object and
the same run as parsing the whole rewritten text."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from types import CodeType
from typing import Any

import pytest
from script_literals import script_literals

import codemode as cm
from codemode.errors import ScriptCompileError
from codemode.mode.dialects import plan
from codemode.mode.rewritten import rewritten_tree
from codemode.sandbox import InProcessExecutor
from codemode.sandbox.language.compile import _checked
from codemode.sandbox.language.policy import index_nodes
from tests.mode.compat_harness import corpus_rows, other_hosts_mode

_unique = iter(range(10**9))

APPENDED = [
    "x = await tools.add(a=1, b=2)\nresult = {'x': x, 'n': [x] * 2}\n",
    "result = 1",  # no newline at the end
    "result = 1  # the answer",
    "result = 1\n\n\n",
    "result = 1\n    \n\t",  # blank lines of spaces and tabs, no newline at the end
    "result = 1\n\x0c",
    "result = (\n    1,\n    2,\n)\n",
    'doc = """a\nb\nc"""\n',  # a string over three lines
    "x = 1 + \\\n    2\n",  # a line continued
    "résultat = 'é' * 3\n",  # a name beyond ASCII, columns in UTF-8 bytes
    "for i in range(3):\n\tresult = i\nresult = i\n",
    "if True:\n    total = 1\nelse:\n    total = 2\ntotal = total\n",
    "def main():\n    return 1\n",  # uncalled main(): ``main()`` appended
    "async def main():\n    return await tools.add(a=2, b=2)\n",  # ``await main()`` appended
    "match = 1\n",  # a soft keyword as a name
    "printed = 1\n",  # refused by the policy, at the appended line too
    "__x__ = 1\n",
]
"""Scripts whose plan only appends lines."""

AWAITED = [
    "x = add(1, 2)\nresult = x\n",  # ``(await ...)`` inside the script's lines too
    "x = add(1, 2)\n",
    "y = [add(a, 2) for a in range(3)]\nz = add(add(1, 2), add(3, 4)) + 1\n",
    "é = 'é'; x = add('é' if é else 'è', b=2); y = [add(1, 2), add(3, 4)]\n",
    "x = add(1,\n        2) + add(3,\n  4)\n",  # wraps over lines, a line holding two
    "print(add(1, 2), add(3, 4))\nadd(5, 6)\n",
    "async def f():\n    return add(1, 2)\nresult = await f()\n",
    "x = tools.add(a=1, b=2)\nresult = x\n",  # awaited, not bare
    "def f(a):\n    return add(a, 2)\nresult = f(1)\n",  # ``async def``, awaited call
    "def f(a): return add(a, 2)\n@g\ndef h(): return add(1, f(2))\n",
    "def main():\n    return tools.add(a=3, b=2)\n",  # ``await main()`` appended
    "x = f\"{add(1, 2)['sum']} and {f'{add(3, 4)}'}\"\n",  # in f-strings (nested)
    "x = f\"\"\"a\n{add(1, 2)}\n  {  add(3, 4)!r:>10}\"\"\"\n",
    "class C:\n    def f(self):\n        return add(1, 2)\nresult = C().f()\n",
]
"""Scripts whose plan only puts calls in ``(await ...)``, makes functions ``async def``
(and maybe appends lines)."""

NOT_APPENDED = [
    "import asyncio\nasync def main():\n    return 1\nif __name__ == '__main__':\n"
    "    result = asyncio.run(main())\n",  # the test made ``True`` too
    "result = 1\r\n",  # lines ended by "\r": parsed whole
    "x = await tools.add(a=1, b=2)\nx\n",  # nothing rewritten: the script's own tree
]


def _mode(registry: cm.ToolRegistry) -> cm.CodeMode:
    return cm.CodeMode(registry, executor=InProcessExecutor())


def _planned(mode: cm.CodeMode, script: str) -> tuple[ast.Module, Any]:
    sdk, specs = mode.sdk(), {spec.name: spec for spec in mode.visible_specs()}
    tree = ast.parse(script)
    return tree, plan(script, tree, tools=sdk.names.tools, arguments=sdk.names.arguments,
                      specs=specs)


def _edited_in_place(found: Any) -> bool:
    """Whether the plan made edits within the script's lines that the tree follows."""
    return found.tree_edits is not None and any(found.tree_edits)


def _facts(code: CodeType) -> Any:
    """``code`` and what its equality leaves out: every instruction's position, its nested
    code objects' too (marshal's bytes differ with how many references a constant has)."""
    return code, code.co_exceptiontable, list(code.co_positions()), [
        _facts(const) for const in code.co_consts if isinstance(const, CodeType)]


def _compiled(source: str, tree: ast.Module | None, kinds: Any) -> Any:
    """What compiling gives, uncached: the code or the error with its position and each
    of its problems."""
    try:
        done = _checked(source, tree, None, kinds)
    except ScriptCompileError as exc:
        return exc.message, exc.line, exc.column, exc.problems
    return _facts(done.code), done.is_async, done.lines


def _same_tree(script: str, mode: cm.CodeMode, planned: Any = None) -> Any:
    """(the rewritten text, the rewritten tree of ``script`` and its index) after checking
    that the tree is the text's and the index holds its nodes; None when the text is not
    rewritten by appending and ``(await ...)`` alone. ``planned``: ``_planned``'s answer,
    when the caller has it."""
    tree, found = planned or _planned(mode, script)
    made = rewritten_tree(script, tree, found) if found.source is not script else None
    if made is None:
        return None
    extended, kinds = made
    parsed = ast.parse(found.source)
    assert ast.dump(extended, include_attributes=True) == ast.dump(
        parsed, include_attributes=True), script
    # the index holds every node of the tree once, under its own type
    indexed = index_nodes(extended)[2]
    assert {k: sorted(map(id, v)) for k, v in kinds.items()} == {
        k: sorted(map(id, v)) for k, v in indexed.items()}, script
    return found.source, extended, kinds


def _same_as_parsing_the_text(script: str, mode: cm.CodeMode) -> bool:
    """Whether the rewritten tree of ``script`` is the rewritten text's, and compiles the
    same (False when the text is not rewritten by appending and ``(await ...)`` alone)."""
    made = _same_tree(script, mode)
    if made is None:
        return False
    source, extended, kinds = made
    assert _compiled(source, extended, kinds) == _compiled(source, None, None)
    return True


@pytest.mark.parametrize("script", APPENDED)
def test_appended_lines_give_the_tree_and_code_of_the_whole_text(
        script: str, registry: cm.ToolRegistry) -> None:
    assert _same_as_parsing_the_text(script, _mode(registry))


@pytest.mark.parametrize("script", AWAITED)
def test_awaited_calls_give_the_tree_and_code_of_the_whole_text(
        script: str, registry: cm.ToolRegistry) -> None:
    mode = _mode(registry)
    assert _edited_in_place(_planned(mode, script)[1])
    assert _same_as_parsing_the_text(script, mode)


@pytest.mark.parametrize("script", NOT_APPENDED)
def test_other_rewrites_are_parsed_whole(script: str, registry: cm.ToolRegistry) -> None:
    mode = _mode(registry)
    tree, found = _planned(mode, script)
    made = rewritten_tree(script, tree, found)
    if found.source is script:
        assert made == (tree, found.kinds)
    else:
        assert made is None


def test_every_corpus_script_ending_in_an_assignment_compiles_the_same(
        registry: cm.ToolRegistry) -> None:
    mode = _mode(registry)
    compared = 0
    for source in script_literals("mode/test_dialects.py", "mode/test_preflight.py"):
        script = f"{source.rstrip()}\nresult_{next(_unique)} = 1\n"
        try:
            ast.parse(script)
        except SyntaxError:
            continue
        compared += _same_as_parsing_the_text(script, mode)
    assert compared > 300


def _compat_scripts() -> list[str]:
    """The scripts of the compat rounds' rows (models' scripts for other hosts) this Python
    parses (a row's ``min_version``: 3.12's type statements are a SyntaxError on 3.11)."""
    names = sorted(path.name.removesuffix("_scripts.toml")
                   for path in (Path(__file__).parent / "data").glob("compat*_scripts.toml"))
    return [row["script"] for name in names for rows in corpus_rows(name) for row in rows
            if sys.version_info >= tuple(int(p) for p in row.get("min_version", "3").split("."))]


def test_every_corpus_script_awaited_in_place_has_the_tree_of_its_text() -> None:
    """The same tree node for node and position for position (so the same code)."""
    mode = other_hosts_mode(InProcessExecutor())
    compared = 0
    for script in _compat_scripts():
        planned = _planned(mode, script)
        if _edited_in_place(planned[1]):
            assert _same_tree(script, mode, planned) is not None, script
            compared += 1
    assert compared > 300


@pytest.mark.parametrize("script", [
    "x = await tools.add(a=1, b=2)\nresult = [x]\n",
    "x = add(1, 2)\ny = add(x, 3)\nresult = [x, y]\n",  # ``(await ...)`` in place too
])
def test_check_parses_only_the_appended_line(script: str, parses: list[str],
                                             registry: cm.ToolRegistry) -> None:
    mode = _mode(registry)
    mode.sdk()
    script = f"{script}# {next(_unique)}"
    parses.clear()
    assert mode.check(script) == []
    assert parses == [script, "result\n"]


@pytest.mark.parametrize(("script", "problems"), [
    ("printed = 1\n", [(1, 1), (3, 1)]),  # the line after the script's last (a comment)
    ("x = 1\n__x__ = x\n", [(2, 1), (4, 1)]),
])
def test_a_refused_appended_line_is_reported_at_its_line(
        script: str, problems: list[tuple[int, int]], registry: cm.ToolRegistry) -> None:
    found = _mode(registry).check(f"{script}# {next(_unique)}")
    assert [(p.line, p.column) for p in found] == problems


async def test_an_error_in_the_appended_call_names_its_line(
        registry: cm.ToolRegistry) -> None:
    script = (f"# {next(_unique)}\ndef main():\n    x = 1\n    raise ValueError(x)\n")
    async with InProcessExecutor() as executor:
        result = await cm.CodeMode(registry, executor=executor).run(script)
    assert result.error is not None and result.error.line == 4
    assert result.error.traceback is not None
    assert "line 5, in <script>\n    main()\n  line 4, in main" in result.error.traceback
