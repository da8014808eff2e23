"""The demo, as the README runs it and as a library call."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from codemode.sandbox import InProcessExecutor
from examples.demo import demo, main

if TYPE_CHECKING:
    import pytest

ROOT = Path(__file__).resolve().parents[2]


async def test_demo_nests_every_call_under_run_code(workspace: Path) -> None:
    async with InProcessExecutor() as executor:
        run = await demo("revenue_by_country", root=workspace, executor=executor)
    assert not run.result.is_error
    assert run.result.text.startswith('value: {"revenue_by_country": {')
    lines = run.nested_lines()
    assert len(lines) == len((run.result.meta or {})["calls"]) == 3
    assert all("parent=run_code" in line and line.endswith(" ok") for line in lines)
    assert [line.split()[:2] for line in lines] == [
        ["demo:code:1", "query"], ["demo:code:2", "query"], ["demo:code:3", "summarize_numbers"]]
    assert f"run_code token {run.run_token}" in run.report()


def test_main_reports_a_denied_call_and_exits_1(workspace: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["denied_delete", "--in-process", "--workspace", str(workspace)])
    out = capsys.readouterr().out
    assert code == 1
    assert "error: PreflightError at line 6: the script was not run:" in out
    assert "line 6: call to 'delete_file' denied" in out
    assert "demo:code:" not in out  # refused before its first call: no nested call ran
    assert (workspace / "files" / "todo.txt").is_file()
    assert not (workspace / "files" / "archive" / "todo-2024-03.txt").exists()


def test_readme_command_runs_in_a_worker_process(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-m", "examples.demo", "parallel_notes", "--workspace",
         str(tmp_path / "ws")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
        check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "--- run_code result (model-visible) ---"
    assert lines[1].startswith('value: {"notes": [')
    nested = lines[lines.index(next(x for x in lines if x.startswith("--- nested"))) + 1:]
    assert [line.split()[1] for line in nested] == (
        ["list_files"] + ["read_file"] * 3 + ["word_count"] * 3 + ["extract_emails"])
    assert all("parent=run_code" in line for line in nested)
    assert (tmp_path / "ws" / "shop.db").is_file()
