"""Suite-wide settings: async tests run on asyncio (the backend codemode ships for), and
the helper modules next to this file are importable."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Tests run with --import-mode=importlib: make the suite's helper modules (tool_corpus)
# importable from every folder.
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"
