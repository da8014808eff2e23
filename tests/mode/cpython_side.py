"""A corpus row run in CPython, the reference the sandbox's run is compared with."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import json
import threading
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from collections.abc import Callable


class FinalAnswer(Exception):
    """smolagents' ``final_answer(x)``: ends the row with ``x``."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def final_answer(value: Any) -> NoReturn:
    raise FinalAnswer(value)


def run_in_cpython(script: str, namespace: dict[str, Any]) -> tuple[Any, str]:
    """(the result, the printed output) of ``script`` in CPython: its last expression,
    its ``result`` variable or its ``final_answer``; in a thread with no running loop, so
    ``asyncio.run(main())`` runs as it does for the model's own host."""
    tree = ast.parse(script)
    last = tree.body[-1]
    if isinstance(last, ast.Expr):
        tree.body[-1] = ast.copy_location(
            ast.Assign([ast.Name("result", ast.Store())], last.value), last)
    # dont_inherit: a test module's ``from __future__ import annotations`` would make
    # every annotation of the row a string (dataclasses would then look KW_ONLY up in
    # __main__)
    code = compile(ast.fix_missing_locations(tree), "<cpython>", "exec",
                   flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    output = io.StringIO()
    outcome: dict[str, Any] = {}

    def run() -> None:
        with contextlib.redirect_stdout(output):
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


def run_with_tools(script: str, style: str,
                   functions: dict[str, Callable[..., Any]]) -> tuple[Any, str]:
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
    return run_in_cpython(script, namespace)
