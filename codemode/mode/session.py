"""Typed state between runs: a session keeps the JSON globals a script leaves.

``session = mode.session()``; ``await session.run(script)`` runs the script with the
state so far bound as globals (host inputs, so they cross to a worker as JSON), and
afterwards keeps every top-level name the script assigned whose value is JSON data,
while the total stays under ``max_bytes`` characters of JSON. No pickle: a function,
a set or a tool result object is simply not kept. :meth:`Session.prompt` lists the
state with its types for the model's next turn.

The capture is a few statements appended after the script (its lines do not move), so
it runs only when the script finishes: a run that fails or trips a limit leaves the
state as it was. A change of the tool set (a new SDK) clears the state, since values
shaped by the old tools may no longer fit. Scripts that end in ``return`` or
``final_answer(...)`` keep their result but no state.
"""

from __future__ import annotations

import ast
import json
import keyword
import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Final, Protocol, final

from codemode.mode.dialects import SANDBOX_GLOBALS
from codemode.sandbox.language.builtins import SAFE_BUILTINS
from codemode.sandbox.language.compile import MAX_SOURCE
from codemode.sandbox.language.parsing import parse_tree

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from codemode.dispatch.registry import ToolRegistry
    from codemode.sandbox import ScriptResult

__all__ = ["Session"]


class Mode(Protocol):
    """What a session needs of its ``CodeMode``."""

    registry: ToolRegistry

    def prompt(self, *, inputs: Mapping[str, Any] | None = None) -> str:
        """The model-facing prompt listing ``inputs`` as globals."""
        ...

    @property
    def run(self) -> Callable[..., Awaitable[ScriptResult]]:
        """``CodeMode.run``."""
        ...

_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")
"""Python's own line breaks: ``str.splitlines`` also breaks at form feeds, file
separators, NEL, U+2028 …, which a script may hold in a string or as blank space, and
its rows would then not be the parser's."""

_CAPTURE_ROOM: Final = 1_000
"""Characters of the capture besides its (name, reader) pairs (about 500)."""

_PREFIX: Final = "cm_session_"
"""Names of the capture's own globals (a script's names with this prefix are not kept)."""


@final
class Session:
    """State carried from one run of a :class:`CodeMode` to the next (see module docs)."""

    def __init__(self, mode: Mode, *, max_bytes: int = 100_000) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be positive")
        self.mode = mode
        self.max_bytes = max_bytes
        """At most this many characters of JSON are kept over all names."""
        self.state: dict[str, Any] = {}
        """Name → JSON value, bound as globals of the next run."""
        self.labels: dict[str, str] = {}
        """Labels of the runs that left the state (label → where it was read): every later
        run carries them, so a secret kept in the state stays refused at the sinks."""
        self._version = mode.registry.version

    def prompt(self) -> str:
        """The model-facing prompt, the session's state listed with its types."""
        self._check_sdk()
        return self.mode.prompt(inputs=self.state)

    def _check_sdk(self) -> None:
        if self.mode.registry.version != self._version:
            self.state.clear()
            self.labels.clear()
            self._version = self.mode.registry.version

    async def run(self, script: str, **options: Any) -> ScriptResult:
        """Run ``script`` with the state as globals (``options`` as for ``CodeMode.run``)."""
        self._check_sdk()
        labels = {**self.labels, **(options.pop("labels", None) or {})}
        capture = _capture(script, self.max_bytes)
        if capture is None:
            return await self.mode.run(script, inputs=self.state, labels=labels, **options)
        source, assigned = capture
        names = set(assigned)
        result = await self.mode.run(source, inputs=self.state, labels=labels, **options)
        if result.error is not None or not isinstance(result.value, dict):
            return result
        for label, where in getattr(result, "labels", {}).items():
            self.labels.setdefault(label, f"{where} in an earlier run")
        kept = result.value.get("state")
        state = {name: value for name, value in self.state.items() if name not in names}
        left = self.max_bytes - sum(map(_size, state.values()))
        for name, value in (kept.items() if isinstance(kept, dict) else ()):
            size = _size(value)  # again here: the script may have rebound ``len``
            if name in names and size <= left:
                state[name] = value
                left -= size
        self.state = state
        return replace(result, value=result.value.get("value"))


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False))


def _keepable(name: str) -> bool:
    return (name.isidentifier() and not name.startswith(("_", _PREFIX))
            and not keyword.iskeyword(name) and name not in SANDBOX_GLOBALS
            and name not in SAFE_BUILTINS)


def _assigned(tree: ast.Module) -> list[str]:
    """Top-level names the script binds (assignments, loops, with, imports excluded)."""
    names: list[str] = []
    seen: set[str] = set()
    for stmt in tree.body:
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = list(stmt.targets)
        elif isinstance(stmt, ast.AnnAssign | ast.AugAssign | ast.For | ast.AsyncFor):
            targets = [stmt.target]
        elif isinstance(stmt, ast.With | ast.AsyncWith):
            targets = [item.optional_vars for item in stmt.items if item.optional_vars]
        for target in targets:
            for node in ast.walk(target):
                if (isinstance(node, ast.Name) and _keepable(node.id)
                        and node.id not in seen):
                    seen.add(node.id)
                    names.append(node.id)
    return names


def _ends_elsewhere(tree: ast.Module) -> bool:
    """Whether the script's result comes from a dialect the capture cannot follow."""
    if any(isinstance(stmt, ast.Return) for stmt in tree.body):
        return True
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "final_answer"):
            return True
    return any(isinstance(stmt, ast.AsyncFunctionDef | ast.FunctionDef)
               and stmt.name == "main" for stmt in tree.body)


def _capture(script: str, max_bytes: int) -> tuple[str, list[str]] | None:
    """(the script with the capture appended, the names it binds: their earlier state is
    replaced; those that fit under the length cap are kept), or None to run the
    script as it is."""
    try:
        tree = parse_tree(script)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not tree.body or _ends_elsewhere(tree):
        return None
    names = _assigned(tree)
    lines = _LINE_BREAK.split(script)
    last = tree.body[-1]
    value = "None"
    if isinstance(last, ast.Expr):
        row = last.lineno - 1
        line = lines[row]
        prefix = line.encode("utf-8")[: last.col_offset].decode("utf-8", "replace")
        start = len(prefix)
        lines[row] = f"{line[:start]}{_PREFIX}value = {line[start:]}"
        value = f"{_PREFIX}value"
    elif (isinstance(last, ast.Assign) and len(last.targets) == 1
          and isinstance(last.targets[0], ast.Name)):
        value = last.targets[0].id
    # one loop over (name, reader) pairs: a block of its own per name made a script of
    # 3 000 assignments (37 000 characters) 750 000, past the length cap; names whose
    # reader would not fit under it are not kept
    room = MAX_SOURCE - len(script) - _CAPTURE_ROOM
    pairs: list[str] = []
    for name in names:
        pair = f"({json.dumps(name)}, lambda: {name})"
        room -= len(pair) + 2
        if room < 0:
            break
        pairs.append(pair)
    readers = ", ".join(pairs)
    tail = [f"import json as {_PREFIX}json", f"{_PREFIX}state = {{}}",
            f"{_PREFIX}left = {int(max_bytes)}",
            f"for {_PREFIX}name, {_PREFIX}read in ({readers}{',' if pairs else ''}):",
            "    try:",
            f"        {_PREFIX}kept = {_PREFIX}read()",
            f"        {_PREFIX}text = {_PREFIX}json.dumps({_PREFIX}kept)",
            f"        if len({_PREFIX}text) <= {_PREFIX}left:",
            f"            {_PREFIX}state[{_PREFIX}name] = {_PREFIX}kept",
            f"            {_PREFIX}left = {_PREFIX}left - len({_PREFIX}text)",
            "    except Exception:",
            "        pass"]
    tail.append(f'{{"value": {value}, "state": {_PREFIX}state}}')
    return "\n".join(lines + tail) + "\n", names
