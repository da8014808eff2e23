"""Where the shared tool-schema corpus is, and what a test does when it is missing.

The corpus (real servers' tool listings) is shared test data, not shipped with the
package. ``CODEMODE_TOOL_CORPUS`` names its folder (default: ``../shared/corpora/
tool-schemas`` next to the repository). Without it the corpus tests skip, unless
``CODEMODE_REQUIRE_CORPUS=1`` (set by ``.ci/run``): then a missing corpus fails them,
so CI never passes by testing less.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

__all__ = ["REQUIRE_ENV", "ROOT", "corpus_dir", "corpus_or_skip", "corpus_required"]

ROOT = Path(__file__).resolve().parents[1]
"""The repository."""
ENV = "CODEMODE_TOOL_CORPUS"
REQUIRE_ENV = "CODEMODE_REQUIRE_CORPUS"


def corpus_dir() -> Path:
    """The corpus folder (it may not exist)."""
    return Path(os.environ.get(ENV) or ROOT.parent / "shared" / "corpora" / "tool-schemas")


def corpus_required() -> bool:
    """True when a missing corpus must fail the tests that need it (CI)."""
    return os.environ.get(REQUIRE_ENV, "") not in ("", "0")


def missing_message() -> str:
    return f"tool-schema corpus not found at {corpus_dir()} (set {ENV})"


def corpus_or_skip() -> Path:
    """The corpus folder; skips the test when it is missing, fails it when it is required."""
    folder = corpus_dir()
    if not folder.is_dir() or not any(folder.glob("*.json")):
        if corpus_required():
            pytest.fail(f"{missing_message()}; {REQUIRE_ENV} is set", pytrace=False)
        pytest.skip(missing_message())
    return folder
