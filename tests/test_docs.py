"""Every ```python block in README.md and docs/*.md runs.

Blocks of one document run in order in one namespace (so later blocks build
on earlier ones), with top-level ``await`` allowed, in a temporary directory.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks(path: Path) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    return [(text[: m.start()].count("\n") + 2, m.group(1)) for m in BLOCK.finditer(text)]


DOCS_WITH_CODE = [p for p in DOCS if p.exists() and blocks(p)]


@pytest.fixture
def anyio_backend() -> str:
    # Executors bridge to script threads/workers with asyncio; the installed trio predates
    # anyio's trio backend (as in tests/mode, tests/sandbox, tests/testing).
    return "asyncio"


def test_docs_have_runnable_examples() -> None:
    assert len(DOCS_WITH_CODE) >= 3, [p.name for p in DOCS_WITH_CODE]


@pytest.mark.parametrize("path", DOCS_WITH_CODE, ids=lambda p: p.name)
async def test_doc_examples_run(
    path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": f"doc_{path.stem}"}
    for line, source in blocks(path):
        code = compile(
            "\n" * (line - 1) + source, str(path), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
        outcome = eval(code, namespace)
        if inspect.isawaitable(outcome):
            await outcome
