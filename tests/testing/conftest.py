"""The kit's own tests use the plugin the way an installed harness suite does."""

from __future__ import annotations

from typing import TYPE_CHECKING

import codemode.testing.plugin

if TYPE_CHECKING:
    import pytest

pytest_plugins = ["pytester"]


def pytest_configure(config: pytest.Config) -> None:
    # Until the package is reinstalled with its pytest11 entry point, load the plugin here.
    if not config.pluginmanager.has_plugin("codemode") and not config.pluginmanager.is_registered(
            codemode.testing.plugin):
        config.pluginmanager.register(codemode.testing.plugin, "codemode")
