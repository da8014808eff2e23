"""Resolve ``--tools MODULE:OBJECT``, the way every ``codemode`` subcommand does.

MODULE is a dotted module name (importable from the working directory) or a path to a
``.py`` file; OBJECT is a dotted attribute path. Failures raise ``ToolsLoadError``.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codemode.dispatch.registry import ToolRegistry
from codemode.dispatch.tool import Tool
from codemode.errors import DuplicateToolError, ToolsLoadError
from codemode.mode import CodeMode

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["call_factory", "load_all", "load_tools", "resolve_target"]


def _import(module: str) -> Any:
    path = Path(module)
    if module.endswith(".py") or path.exists():
        if not path.is_file():
            raise ToolsLoadError(f"no such file: {module}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise ToolsLoadError(f"cannot import {module}")
        mod = importlib.util.module_from_spec(spec)
        sys.modules.setdefault(path.stem, mod)
        sys.path.insert(0, str(path.resolve().parent))
        try:
            spec.loader.exec_module(mod)
        except Exception as exc:
            raise ToolsLoadError(f"importing {module} failed: {type(exc).__name__}: {exc}") from exc
        return mod
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise ToolsLoadError(f"cannot import module {module!r}: {exc}") from None
    except Exception as exc:
        raise ToolsLoadError(f"importing {module} failed: {type(exc).__name__}: {exc}") from exc


def resolve_target(target: str) -> Any:
    """Import ``MODULE:OBJECT`` (MODULE dotted or a ``.py`` path; OBJECT a dotted attribute
    path); every subcommand resolves ``--tools`` through here."""
    module, sep, attr = target.rpartition(":")
    if not sep or not module or not attr:
        raise ToolsLoadError(f"--tools must look like MODULE:OBJECT, got {target!r}")
    obj = _import(module)
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ToolsLoadError(f"{module} has no attribute {attr!r}") from None
    return obj


def call_factory(target: str, factory: Any) -> Any:
    """Call a zero-argument ``--tools`` factory; one that needs arguments, or fails, raises
    ``ToolsLoadError`` saying so (never a traceback from the command)."""
    try:
        inspect.signature(factory).bind()
    except TypeError as exc:
        raise ToolsLoadError(
            f"{target} needs arguments ({exc}); name a zero-argument factory or the object"
        ) from None
    except ValueError:  # no signature to read (some builtins): just call it
        pass
    try:
        return factory()
    except Exception as exc:
        raise ToolsLoadError(f"calling {target}() failed: {type(exc).__name__}: {exc}") from exc


def load_tools(target: str) -> CodeMode | ToolRegistry:
    """Resolve ``MODULE:OBJECT`` to a CodeMode or a ToolRegistry."""
    obj = resolve_target(target)
    if callable(obj) and not isinstance(obj, (ToolRegistry, CodeMode, Tool)):
        obj = call_factory(target, obj)
    if isinstance(obj, (ToolRegistry, CodeMode)):
        return obj
    if isinstance(obj, Tool):
        obj = [obj]
    if isinstance(obj, (list, tuple)) and all(isinstance(t, Tool) for t in obj):
        registry = ToolRegistry()
        for item in obj:
            registry.register(item)
        return registry
    raise ToolsLoadError(
        f"{target} is a {type(obj).__name__}; expected a ToolRegistry, a "
        "CodeMode, a list of tools or a callable returning one"
    )


def load_all(targets: Sequence[str]) -> CodeMode | ToolRegistry | None:
    """Every ``--tools`` given (repeatable), as one: the tools of several registries in
    one registry (a name in two of them is a load error, never a silent replacement); a
    CodeMode only alone (it brings its own registry, limits and executor); None when none
    was given."""
    merged: CodeMode | ToolRegistry | None = None
    origin: dict[str, str] = {}
    for target in targets:
        loaded = load_tools(target)
        if isinstance(loaded, CodeMode) or isinstance(merged, CodeMode):
            if merged is not None:
                raise ToolsLoadError(
                    "a CodeMode --tools must be the only --tools (it has its own registry); "
                    "give the others as registries or lists of tools")
            merged = loaded
            continue
        if merged is None:
            merged = loaded
            origin = dict.fromkeys((spec.name for spec in loaded.specs()), target)
            continue
        for spec in loaded.specs():
            try:
                merged.register(loaded.get(spec.name))
            except DuplicateToolError:
                raise ToolsLoadError(
                    f"tool {spec.name!r} is in both {origin.get(spec.name, 'another --tools')}"
                    f" and {target}: give each tool once") from None
            origin[spec.name] = target
    return merged
