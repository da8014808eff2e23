"""A stand-in runtime for ``test_worker_bytecode.py`` (no tests here): a module only a
worker imports, so whether its ``.pyc`` exists says whether a worker's boot wrote it."""

from __future__ import annotations

from tests.sandbox.attacks.compromised_worker import raw

__all__ = ["raw"]
