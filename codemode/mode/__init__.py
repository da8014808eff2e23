"""Code Mode: ``CodeMode`` ties a registry, the SDK generator and an executor together.

``code_mode`` builds the prompt, the per-run ``tools`` bridge and the ``run_code`` tool;
``preflight`` finds what would fail before anything runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from codemode.exports import lazy_exports

if TYPE_CHECKING:
    from .code_mode import CodeMode as CodeMode

_LAZY: Final = {
    "CodeMode": "code_mode",
}
"""Public name -> its module, imported on first use (see ``codemode.exports``)."""

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = ["CodeMode"]
