"""Lazy re-exports for a package's ``__init__`` (PEP 562 module ``__getattr__``).

A package that re-exports its public names eagerly makes every import of any of its
submodules pay for all of them: a sandbox worker imports ``codemode.sandbox.runtime``,
and through ``codemode/__init__.py`` it used to import pydantic, jsonschema, the SDK
generator and the MCP client, none of which it uses (about half of a worker's boot).
With :func:`lazy_exports` a name is imported the first time it is read and then kept
in the package's namespace, so the second read is a plain attribute lookup. Type
checkers see the same names through the package's ``if TYPE_CHECKING:`` imports;
``tests/test_lazy_imports.py`` keeps those and each table equal.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(package: str, table: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose public ``name`` is defined in the
    submodule ``table[name]`` (relative to the package, e.g. ``"mode.code_mode"``)."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            # a submodule read as an attribute (``codemode.sandbox``): imported, as the
            # eager imports did (``importlib.util`` loads here, not with every host)
            from importlib.util import find_spec

            if not name.startswith("_") and name.isidentifier() and \
                    find_spec(f"{package}.{name}") is not None:
                return importlib.import_module(f"{package}.{name}")
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *table})

    return __getattr__, __dir__
