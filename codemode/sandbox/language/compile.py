"""Compile a model's script under the sandbox policy (cached by source text).

Compilation is pure: the same source always yields the same code object, so
it is cached (LRU) and a code object is reused by every run with fresh
globals. Compiling with ``PyCF_ALLOW_TOP_LEVEL_AWAIT`` keeps module semantics
(globals, ``global`` statements) while allowing top-level ``await``: running
such code returns a coroutine.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from codemode.errors import ScriptCompileError
from codemode.sandbox.language.meter import SCRIPT_FILENAME
from codemode.sandbox.language.policy import SandboxPolicy

if TYPE_CHECKING:
    from types import CodeType
from typing import Final

__all__ = ["CompiledScript", "compile_script"]

_CACHE_SIZE = 512

MAX_SOURCE: Final = 100_000
"""Longest script accepted (characters); compiling costs hundreds of times the source size."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CompiledScript:
    """A script that passed the policy, ready to run any number of times."""

    code: CodeType
    """Module code object (filename ``<script>``)."""
    is_async: bool
    """True when running ``code`` returns a coroutine (top-level ``await``)."""
    lines: tuple[str, ...]
    """Source lines, for tracebacks."""


def compile_script(source: str) -> CompiledScript:
    """Compile ``source``; raises ScriptCompileError with the first problem's position."""
    if not isinstance(source, str):
        raise ScriptCompileError("script source must be a string")
    return _compile_cached(source)


def _to_code(tree: ast.Module) -> CodeType:
    code: CodeType = compile(tree, SCRIPT_FILENAME, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                   dont_inherit=True)
    return code


@lru_cache(maxsize=_CACHE_SIZE)
def _compile_cached(source: str) -> CompiledScript:
    if len(source) > MAX_SOURCE:
        raise ScriptCompileError(f"the script is too long ({len(source)} characters, at most "
                                 f"{MAX_SOURCE})", 1, 1)
    try:
        return _compile(source)
    except (RecursionError, MemoryError):
        raise ScriptCompileError("the script is nested too deeply to compile", 1, 1) from None


def _compile(source: str) -> CompiledScript:
    try:
        tree = ast.parse(source, SCRIPT_FILENAME, "exec")
    except SyntaxError as exc:
        raise ScriptCompileError(f"SyntaxError: {exc.msg}", exc.lineno, exc.offset) from None
    except UnicodeEncodeError as exc:
        # A lone surrogate (e.g. "\ud800" decoded from JSON) cannot be parsed as UTF-8.
        where = exc.start
        raise ScriptCompileError("SyntaxError: the script contains a lone surrogate character "
                                 f"(U+{ord(source[where]):04X})", source.count("\n", 0, where) + 1,
                                 where - source.rfind("\n", 0, where)) from None
    policy = SandboxPolicy()
    policy.visit(tree)
    if policy.errors:
        line, column = policy.positions[0] if policy.positions else (None, None)
        message = "; ".join(policy.errors)
        raise ScriptCompileError(message, line, column)
    try:
        try:
            code = _to_code(tree)
        except (TypeError, ValueError):  # a generated node without a location
            code = _to_code(ast.fix_missing_locations(tree))
    except SyntaxError as exc:
        raise ScriptCompileError(f"SyntaxError: {exc.msg}", exc.lineno, exc.offset) from None
    return CompiledScript(code=code, is_async=bool(code.co_flags & inspect.CO_COROUTINE),
                          lines=tuple(source.splitlines()))
