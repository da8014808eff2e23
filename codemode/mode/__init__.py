"""Code Mode: ``CodeMode`` ties a registry, the SDK generator and an executor together.

``code_mode`` builds the prompt, the per-run ``tools`` bridge and the ``run_code`` tool;
``preflight`` finds what would fail before anything runs.
"""

from __future__ import annotations

from .code_mode import CodeMode as CodeMode

__all__ = ["CodeMode"]
