"""Fixtures for the dispatch tests: a fresh registry and an event recorder."""

from __future__ import annotations

import pytest

import codemode as cm

from .support import Events


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def registry() -> cm.ToolRegistry:
    return cm.ToolRegistry()


@pytest.fixture
def events(registry: cm.ToolRegistry) -> Events:
    recorder = Events()
    registry.subscribe(recorder)
    return recorder
