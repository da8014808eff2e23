"""Fixtures the integration tests share."""

from __future__ import annotations

import os
import subprocess
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pathlib import Path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit, for ``mcp-server-git`` upstreams."""
    path = tmp_path / "repo"
    path.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com"}
    (path / "notes.txt").write_text("hello\n", encoding="utf-8")
    for cmd in (["init", "-q"], ["add", "notes.txt"], ["commit", "-q", "-m", "first notes"]):
        subprocess.run(["git", *cmd], cwd=path, env=env, check=True)
    return path
