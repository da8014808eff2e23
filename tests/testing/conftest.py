"""The kit's own tests use the plugin the way an installed harness suite does."""

from __future__ import annotations

import pytest

import codemode.testing.plugin


def pytest_configure(config: pytest.Config) -> None:
    # `pytest_plugins` is refused in a non-top-level conftest when collection starts above
    # this folder (`pytest .`), so the plugins are registered here instead.
    if not config.pluginmanager.has_plugin("pytester"):
        config.pluginmanager.import_plugin("pytester")
    # Until the package is reinstalled with its pytest11 entry point, load the kit here.
    if not config.pluginmanager.has_plugin("codemode") and not config.pluginmanager.is_registered(
            codemode.testing.plugin):
        config.pluginmanager.register(codemode.testing.plugin, "codemode")


@pytest.fixture
def anyio_backend() -> str:
    # The in-process executor bridges to its script thread with asyncio, and the installed
    # trio predates anyio 4.16's trio backend; asyncio is the backend codemode supports.
    return "asyncio"
