"""Fixtures: a registry of small real tools, CodeMode over each executor, the parses made."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

import anyio
import pytest

import codemode as cm
from codemode.sandbox import Executor, InProcessExecutor, WorkerPoolExecutor
from codemode.sandbox.language.meter import SCRIPT_FILENAME

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module", params=["inprocess", "pool"])
async def executor(request: pytest.FixtureRequest) -> AsyncIterator[Executor]:
    impl: Executor = InProcessExecutor() if request.param == "inprocess" else WorkerPoolExecutor()
    async with impl:
        yield impl


class Recorder:
    """Handler-side log: (event, name, time) tuples from the tools themselves."""

    def __init__(self) -> None:
        self.log: list[tuple[str, str, float]] = []
        self._changed = anyio.Event()

    def mark(self, event: str, name: str) -> None:
        self.log.append((event, name, anyio.current_time()))
        self._changed.set()

    async def wait_for(self, event: str, count: int) -> None:
        """Until ``count`` marks of ``event`` were logged."""
        while len([entry for entry in self.log if entry[0] == event]) < count:
            self._changed = anyio.Event()
            await self._changed.wait()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The scripts codemode parses from now on: ``ast.parse`` calls named
    ``SCRIPT_FILENAME``, as every parse of a script's text is (``parse_tree``). Not the
    other parses in the process, on any thread: pytest's assertion rewriting of each
    codemode module a CodeMode's first check, prompt or run loads (the package's pytest
    plugin makes it rewrite the whole distribution), a module's own constants (the
    policy's prologue), another library reading a module's source. One such parse, of
    the asyncio facade's source while a new in-process script thread loaded it (26
    problems, the first "module 'inspect' is not available"), was taken for the warm-up
    script's once in ~25 runs."""
    seen: list[str] = []
    parse = ast.parse

    def counting(source: Any, *args: Any, **kwargs: Any) -> Any:
        filename = args[0] if args else kwargs.get("filename")
        if isinstance(source, str) and filename == SCRIPT_FILENAME:
            seen.append(source)
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    return seen


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def registry(recorder: Recorder) -> Iterator[cm.ToolRegistry]:
    reg = cm.ToolRegistry()

    async def add(args: Any, ctx: cm.ExecContext) -> dict[str, int]:
        return {"sum": args["a"] + args["b"]}

    async def slow_echo(args: Any, ctx: cm.ExecContext) -> str:
        recorder.mark("start", args["text"])
        await anyio.sleep(args.get("delay", 0.05))
        recorder.mark("end", args["text"])
        return args["text"]

    async def delete_file(args: Any, ctx: cm.ExecContext) -> str:
        recorder.mark("deleted", args["path"])
        return "deleted"

    async def snapshot(args: Any, ctx: cm.ExecContext) -> list[cm.FrozenDict]:
        return [cm.text("a chart"), cm.image("aGVsbG8=", "image/png")]

    async def stats(args: Any, ctx: cm.ExecContext) -> str:
        return '{"mean": 2.5}'

    async def fail(args: Any, ctx: cm.ExecContext) -> str:
        raise ValueError("disk on fire")

    reg.register(
        cm.define_tool(
            name="add",
            description="Add two integers.",
            parameters={
                "a": {"type": "integer", "required": True},
                "b": {"type": "integer", "required": True},
            },
            execute=add,
        )
    )
    reg.register(
        cm.define_tool(
            name="slow-echo",
            description="Echo text after a delay.",
            parameters={
                "text": {"type": "string", "required": True},
                "delay": {"type": "number", "maximum": 5},
            },
            execute=slow_echo,
        )
    )
    reg.register(
        cm.define_tool(
            name="delete_file",
            description="Delete a file.",
            parameters={"path": {"type": "string", "required": True}},
            execute=delete_file,
        )
    )
    reg.register(cm.define_tool(name="snapshot", description="A chart.", execute=snapshot))
    reg.register(
        cm.define_tool(
            name="stats",
            description="Stats as JSON text.",
            execute=stats,
            output_schema={"type": "object", "properties": {"mean": {"type": "number"}}},
        )
    )
    reg.register(cm.define_tool(name="fail", description="Always fails.", execute=fail))
    reg.pre_execute(lambda ctx: cm.Deny("read-only session") if ctx.name == "delete_file" else None)
    yield reg
