"""Compile a model's script under the sandbox policy (cached by source text).

Compilation is pure: the same source always yields the same code object, so
it is cached (LRU) and a code object is reused by every run with fresh
globals. Compiling with ``PyCF_ALLOW_TOP_LEVEL_AWAIT`` keeps module semantics
(globals, ``global`` statements) while allowing top-level ``await``: running
such code returns a coroutine.

A host that already parsed the script (its preflight did) hands that tree to
:func:`compile_tree`, so a new script is parsed once. A worker process gets the host's
code object with the run (:func:`export_code`, :func:`adopt_code`) instead of parsing,
checking and compiling the script a second time.
"""

from __future__ import annotations

import ast
import inspect
import marshal
import re
import sys
import threading
import types
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from codemode.errors import ScriptCompileError
from codemode.sandbox.language.meter import SCRIPT_FILENAME
from codemode.sandbox.language.newer_syntax import syntax_message
from codemode.sandbox.language.parsing import converted, parse_tree
from codemode.sandbox.language.policy import SandboxPolicy

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from types import CodeType

__all__ = ["CODE_TAG", "CompiledScript", "adopt_code", "cached_script", "compile_script",
           "compile_tree", "export_code"]

_CACHE_SIZE = 512
_CACHE_CHARS: Final = 1_000_000
"""Most characters of source the cache holds in all (the oldest entries go first). A
compiled script keeps 30-40 bytes per character of its source (its code object's line and
column tables, constants, the source lines): 512 distinct scripts of ``MAX_SOURCE``
characters, each a valid script a model may send, held about 2 GB of the host (and of a
worker, which caches the code it adopts); within this budget, about 40 MB."""

MAX_SOURCE: Final = 100_000
"""Longest script accepted (characters); compiling costs hundreds of times the source size."""

CODE_TAG: Final = f"{sys.implementation.cache_tag}-{sys.hexversion:x}"
"""The interpreter a marshalled code object is for: marshal's format and the bytecode
are the interpreter's own, so a worker adopts code only from an identical one."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CompiledScript:
    """A script that passed the policy, ready to run any number of times."""

    code: CodeType
    """Module code object (filename ``<script>``)."""
    is_async: bool
    """True when running ``code`` returns a coroutine (top-level ``await``)."""
    lines: tuple[str, ...]
    """Source lines, for tracebacks."""


_cache: OrderedDict[str, CompiledScript] = OrderedDict()
_cache_chars = 0
"""Characters of source held in ``_cache``."""
_cache_lock = threading.Lock()  # the in-process executor compiles on its script thread


def compile_script(source: str) -> CompiledScript:
    """Compile ``source``; raises ScriptCompileError with the first problem's position."""
    if not isinstance(source, str):
        raise ScriptCompileError("script source must be a string")
    return _cached(source) or _remember(source, _checked(source, None, None))


def compile_tree(source: str, tree: ast.Module, nodes: Sequence[ast.AST] | None = None, *,
                 kinds: Mapping[type, Sequence[ast.AST]] | None = None) -> CompiledScript:
    """:func:`compile_script` for a ``tree`` the caller parsed from ``source`` with
    ``ast.parse(source)`` and no longer needs: the policy rewrites it in place. Same
    checks, same result, same cache, one parse fewer. ``nodes``: every node of the tree
    but contexts and operators, each after its parent (the preflight's list), or
    ``kinds``, those nodes by type (``policy.index_nodes``), so the policy does not walk
    the tree to find what it binds."""
    if not isinstance(source, str):
        raise ScriptCompileError("script source must be a string")
    return _cached(source) or _remember(source, _checked(source, tree, nodes, kinds))


def cached_script(source: str) -> CompiledScript | None:
    """``source`` compiled, if it is in the cache (nothing is compiled)."""
    return _cached(source)


def export_code(compiled: CompiledScript) -> bytes:
    """``compiled``'s code object, marshalled, for :func:`adopt_code` in a worker."""
    return marshal.dumps(compiled.code)


def adopt_code(source: str, data: bytes) -> None:
    """Cache the code the host compiled from ``source`` (:func:`export_code`), so the
    worker's ``compile_script(source)`` returns it without compiling again.

    Sound because marshal data flows one way only, host to worker: the host is trusted
    (it chooses the worker's runtime, plan and limits, and sends the script) and made
    this code with this module's ``compile_script``, under the same policy the worker
    would apply; a worker's frames are only ever JSON to the host, never unmarshalled.
    A confined worker running what its host compiled gains nothing it could not get by
    compiling the source itself. Anything that is not a module code object of a script
    is ignored (the worker then compiles the source as usual).
    """
    try:
        code = marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return
    if type(code) is not types.CodeType or code.co_filename != SCRIPT_FILENAME or (
            code.co_name != "<module>"):
        return
    _remember(source, CompiledScript(code=code,
                                     is_async=bool(code.co_flags & inspect.CO_COROUTINE),
                                     lines=tuple(source.splitlines())))


def _cached(source: str) -> CompiledScript | None:
    with _cache_lock:
        hit = _cache.get(source)
        if hit is not None:
            _cache.move_to_end(source)
        return hit


def _remember(source: str, compiled: CompiledScript) -> CompiledScript:
    global _cache_chars
    with _cache_lock:
        if source not in _cache:
            _cache_chars += len(source)
        _cache[source] = compiled
        _cache.move_to_end(source)
        while len(_cache) > _CACHE_SIZE or (_cache_chars > _CACHE_CHARS and len(_cache) > 1):
            _cache_chars -= len(_cache.popitem(last=False)[0])
    return compiled


def _to_code(tree: ast.Module) -> CodeType:
    code: CodeType = converted(compile, tree, SCRIPT_FILENAME, "exec",
                               flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    return code


def _checked(source: str, tree: ast.Module | None, nodes: Sequence[ast.AST] | None,
             kinds: Mapping[type, Sequence[ast.AST]] | None = None) -> CompiledScript:
    if len(source) > MAX_SOURCE:
        raise ScriptCompileError(f"the script is too long ({len(source)} characters, at most "
                                 f"{MAX_SOURCE})", 1, 1)
    try:
        return _compile(source, tree, nodes, kinds)
    except (RecursionError, MemoryError):
        raise ScriptCompileError("the script is nested too deeply to compile", 1, 1) from None


def _compile(source: str, tree: ast.Module | None, nodes: Sequence[ast.AST] | None,
             kinds: Mapping[type, Sequence[ast.AST]] | None) -> CompiledScript:
    if tree is None:
        tree, nodes, kinds = _parse(source), None, None
    policy = SandboxPolicy(nodes=nodes, kinds=kinds)
    policy.visit(tree)
    if policy.errors:
        line, column = policy.positions[0] if policy.positions else (None, None)
        message = "; ".join(policy.errors)
        problems = tuple((*where, re.sub(r"^Line \d+: ", "", text)) for where, text in zip(
            policy.positions, policy.errors, strict=False)) if len(
            policy.positions) == len(policy.errors) else ()
        raise ScriptCompileError(message, line, column, problems=problems)
    try:
        try:
            code = _to_code(tree)
        except (TypeError, ValueError):  # a generated node without a location
            code = _to_code(ast.fix_missing_locations(tree))
    except SyntaxError as exc:
        raise ScriptCompileError(syntax_message(exc), exc.lineno, exc.offset) from None
    return CompiledScript(code=code, is_async=bool(code.co_flags & inspect.CO_COROUTINE),
                          lines=tuple(source.splitlines()))


def _parse(source: str) -> ast.Module:
    try:
        return parse_tree(source, SCRIPT_FILENAME, "exec")  # type: ignore[no-any-return]
    except SyntaxError as exc:
        raise ScriptCompileError(syntax_message(exc), exc.lineno, exc.offset) from None
    except UnicodeEncodeError as exc:
        # A lone surrogate (e.g. "\ud800" decoded from JSON) cannot be parsed as UTF-8.
        where = exc.start
        raise ScriptCompileError("SyntaxError: the script contains a lone surrogate character "
                                 f"(U+{ord(source[where]):04X})", source.count("\n", 0, where) + 1,
                                 where - source.rfind("\n", 0, where)) from None
