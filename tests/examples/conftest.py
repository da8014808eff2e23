from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `examples` is a folder of the repository, not an installed package
    sys.path.insert(0, str(ROOT))

from examples.local_tools import build_registry, seed  # noqa: E402

if TYPE_CHECKING:
    from codemode import ToolRegistry


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A freshly seeded example workspace."""
    return seed(tmp_path / "ws")


@pytest.fixture
def local_registry(workspace: Path) -> ToolRegistry:
    """The example tools over ``workspace``."""
    return build_registry(workspace)


@pytest.fixture
def anyio_backend() -> str:
    # The in-process executor bridges to its script thread with asyncio, and the installed
    # trio predates anyio 4.16's trio backend; asyncio is the backend codemode supports.
    return "asyncio"
