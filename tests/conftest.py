"""Suite-wide settings: async tests run on asyncio (the backend codemode ships for)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"
