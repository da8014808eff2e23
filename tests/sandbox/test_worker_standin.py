"""A stand-in script runtime for the process-layer tests (no tests here).

Worker processes import it instead of the restricted runner: it runs trusted
plain Python with top-level ``await`` and ``tools.<name>(...)``, so a test
script can do what no restricted script may (exit, segfault, read its
environment, spin in C) and the process machinery can be tested on its own.
"""

from __future__ import annotations

import ast
import asyncio
import json
from typing import TYPE_CHECKING, Any

from codemode.sandbox.runtime.replies import decode_reply
from codemode.sandbox.runtime.result import RunOutcome, ScriptError

if TYPE_CHECKING:
    from collections.abc import Collection

    from codemode.sandbox.executors.worker import ScriptCall
    from codemode.sandbox.limits import Limits


RUNTIME_BUG = "# make the runtime itself fail"
RAW_MESSAGE = "# send raw: "


async def standin_runtime(
    source: str, *, call: ScriptCall, tool_paths: Collection[str], limits: Limits
) -> RunOutcome:
    """Unrestricted runtime for trusted test scripts: top-level await, ``tools.x(...)``."""
    del tool_paths, limits
    if source == RUNTIME_BUG:
        raise RuntimeError("a bug in the runtime itself")
    if source == "raise MemoryError":
        raise MemoryError
    if source.startswith(RAW_MESSAGE):
        channel = call.__self__  # type: ignore[attr-defined]
        channel.send(json.loads(source[len(RAW_MESSAGE):]))
        await asyncio.sleep(5)
    output: list[str] = []

    class Tools:
        def __getattr__(self, name: str) -> Any:
            async def tool(**kwargs: Any) -> Any:
                return decode_reply(await call(name, json.dumps(kwargs)))

            return tool

    def capture(*args: object) -> None:
        output.append(" ".join(map(str, args)) + "\n")

    tree = ast.parse(source)
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body[-1]
        tree.body[-1] = ast.Assign(targets=[ast.Name("result_", ast.Store())], value=last.value)
        ast.fix_missing_locations(tree)
    namespace: dict[str, Any] = {"tools": Tools(), "print": capture, "result_": None}
    code = compile(tree, "<script>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    try:
        coroutine = eval(code, namespace)
        if coroutine is not None:
            await coroutine
    except Exception as exc:
        text = "".join(output)
        return RunOutcome(output=text, output_bytes=len(text),
                          error=ScriptError(type=type(exc).__name__, message=str(exc)))
    text = "".join(output)
    return RunOutcome(value=namespace["result_"], output=text, output_bytes=len(text))


