"""A corpus row run in CPython, the reference the sandbox's run is compared with."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import os
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any, NoReturn

from codemode.sandbox.language.parsing import converted, parse_tree

if TYPE_CHECKING:
    from collections.abc import Callable


class FinalAnswer(Exception):
    """smolagents' ``final_answer(x)``: ends the row with ``x``."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def final_answer(value: Any) -> NoReturn:
    raise FinalAnswer(value)


def run_in_cpython(script: str, namespace: dict[str, Any], *,
                   stderr: bool = False) -> tuple[Any, str]:
    """(the result, the printed output) of ``script`` in CPython: its last expression,
    its ``result`` variable or its ``final_answer``; in a thread with no running loop, so
    ``asyncio.run(main())`` runs as it does for the model's own host. ``stderr``: what
    the script writes there is output too (the sandbox's run output holds both)."""
    tree = parse_tree(script, "<cpython>")
    last = tree.body[-1]
    if isinstance(last, ast.Expr):
        tree.body[-1] = ast.copy_location(
            ast.Assign([ast.Name("result", ast.Store())], last.value), last)
    # dont_inherit: a test module's ``from __future__ import annotations`` would make
    # every annotation of the row a string (dataclasses would then look KW_ONLY up in
    # __main__)
    code = converted(compile, ast.fix_missing_locations(tree), "<cpython>", "exec",
                     flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    output = io.StringIO()
    outcome: dict[str, Any] = {}

    def run() -> None:
        errors = contextlib.redirect_stderr(output) if stderr else contextlib.nullcontext()
        with contextlib.redirect_stdout(output), errors:
            try:
                pending = eval(code, namespace)  # the tests' own rows
                if asyncio.iscoroutine(pending):
                    asyncio.run(pending)
                outcome["value"] = namespace.get("result")
            except FinalAnswer as answer:
                outcome["value"] = answer.value
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert "value" in outcome, "the row failed in CPython"
    return json.loads(json.dumps(outcome["value"])), output.getvalue()


class ToolCallError(Exception):
    """What a failed call raises in CPython (the sandbox's, of the same name)."""


def _plain(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return json.loads(json.dumps(fn(*args, **kwargs)))
        except Exception as exc:
            raise ToolCallError(f"{type(exc).__name__}: {exc}") from None
    return call


def run_with_tools(script: str, style: str, functions: dict[str, Callable[..., Any]], *,
                   stderr: bool = False) -> tuple[Any, str]:
    """The row in CPython with ``functions`` as its tools: bare names sync (``smol``) or
    async (``async``), and ``tools.x`` async either way; results travel as JSON, as
    they do from a host."""
    tools = type("Tools", (), {})()
    namespace: dict[str, Any] = {"__name__": "__main__", "final_answer": final_answer,
                                 "tools": tools, "ToolCallError": ToolCallError}
    for name, fn in functions.items():
        sync = _plain(fn)

        async def call(*a: Any, sync: Callable[..., Any] = sync, **k: Any) -> Any:
            return sync(*a, **k)
        setattr(tools, name, call)
        namespace[name] = call if style == "async" else sync
    return run_in_cpython(script, namespace, stderr=stderr)


_FRESH = """
import importlib, json, sys
from tests.mode.cpython_side import run_with_tools
functions = getattr(importlib.import_module(sys.argv[3]), "FUNCTIONS")
print("\\0" + json.dumps(run_with_tools(sys.argv[1], sys.argv[2], functions, stderr=True)))
"""


def run_in_fresh_cpython(script: str, style: str, module: str) -> tuple[Any, str]:
    """:func:`run_with_tools` with stderr as output, in a new CPython process with
    ``module``'s ``FUNCTIONS`` as the tools: ``logging`` state is per process (pytest's
    own handlers on the root would make ``basicConfig`` do nothing)."""
    done = subprocess.run([sys.executable, "-c", _FRESH, script, style, module], check=True,
                          stdout=subprocess.PIPE, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    value, output = json.loads(done.stdout.rpartition("\0")[2])
    return value, output
