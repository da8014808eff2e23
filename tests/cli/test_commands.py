"""``codemode run`` and ``codemode check``: exit codes, and a failed preflight runs nothing."""

from __future__ import annotations

import json
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest

from codemode.cli import main

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

TOOLS = textwrap.dedent(
    """
    import os

    import codemode as cm

    async def _touch(args):
        with open(os.path.join(os.environ["CODEMODE_TEST_MARKS"], args["name"]), "w") as f:
            f.write("ran")
        return args["name"]

    async def _add(args):
        return {"sum": args["a"] + args["b"]}

    TOOLS = [
        cm.define_tool(name="touch", description="Create a marker file.",
                       parameters={"name": {"type": "string", "required": True}},
                       execute=_touch),
        cm.define_tool(name="add", description="Add two integers.",
                       parameters={"a": {"type": "integer", "required": True},
                                   "b": {"type": "integer", "required": True}},
                       execute=_add),
    ]
    """
)


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    monkeypatch.setenv("CODEMODE_TEST_MARKS", str(folder))
    return folder


@pytest.fixture
def tools(tmp_path: Path, marks: Path) -> Iterator[str]:
    path = tmp_path / "cli_run_tools.py"
    path.write_text(TOOLS)
    yield f"{path}:TOOLS"
    sys.modules.pop("cli_run_tools", None)


def _script(tmp_path: Path, source: str) -> str:
    path = tmp_path / "script.py"
    path.write_text(source)
    return str(path)


BAD = "await tools.touch(name='first')\nawait tools.add(a=1)\n"
GOOD = "await tools.touch(name='first')\n(await tools.add(a=1, b=2))['sum']\n"


def test_run_reports_the_value_and_exits_0(
    tools: str, marks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", _script(tmp_path, GOOD), "--tools", tools, "--executor", "inprocess",
                 "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["value"] == 3
    assert [c["name"] for c in out["calls"]] == ["touch", "add"]
    assert (marks / "first").read_text() == "ran"


def test_run_refuses_a_script_that_fails_preflight_and_runs_none_of_it(
    tools: str, marks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", _script(tmp_path, BAD), "--tools", tools, "--executor", "inprocess"])
    captured = capsys.readouterr()
    assert code == 4
    assert "PreflightError (line 2)" in captured.err
    assert "tools.add is missing required argument(s): b" in captured.err
    assert list(marks.iterdir()) == []


def test_run_exits_1_on_a_script_error_after_running_its_calls(
    tools: str, marks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = "await tools.touch(name='first')\n1 / 0\n"
    code = main(["run", _script(tmp_path, source), "--tools", tools, "--executor", "inprocess"])
    assert code == 1
    assert "ZeroDivisionError (line 2)" in capsys.readouterr().err
    assert (marks / "first").is_file()


ESCAPES = "\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\r"
"""A window title, a screen clear, a C1 CSI colour and a carriage return (script text)."""


@pytest.mark.parametrize(("source", "stream"), [
    (f"print('a{ESCAPES}b')\n'v{ESCAPES}'\n", "out"),
    (f"raise ValueError('e{ESCAPES}')\n", "err"),
])
def test_run_never_writes_a_scripts_control_characters_to_the_terminal(
    tools: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, stream: str
) -> None:
    main(["run", _script(tmp_path, source), "--tools", tools, "--executor", "inprocess"])
    captured = capsys.readouterr()
    written = captured.out + captured.err
    assert not any(ch in written for ch in "\x1b\x07\x9b\r")
    assert "\\x1b]0;owned\\x07\\x1b[2J\\x9b31m\\x0d" in getattr(captured, stream)


def test_run_exits_5_when_a_limit_trips(
    tools: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = "while True:\n    pass\n"
    code = main(["run", _script(tmp_path, source), "--tools", tools, "--executor", "inprocess",
                 "--timeout", "0.3"])
    assert code == 5
    assert "LimitExceeded" in capsys.readouterr().err


def test_check_lists_problems_with_file_line_and_column_and_runs_nothing(
    tools: str, marks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script(tmp_path, BAD)
    code = main(["check", script, "--tools", tools])
    out = capsys.readouterr().out.splitlines()
    assert code == 4
    assert len(out) == 1
    assert out[0].startswith(f"{script}:2:")
    assert out[0].endswith("tools.add is missing required argument(s): b")
    assert list(marks.iterdir()) == []


def test_check_says_ok_for_a_clean_script(
    tools: str, marks: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script(tmp_path, GOOD)
    assert main(["check", script, "--tools", tools]) == 0
    assert capsys.readouterr().out == f"{script}: ok\n"
    assert list(marks.iterdir()) == []


def test_an_unreadable_script_is_a_usage_error(
    tools: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(tmp_path / "missing.py"), "--tools", tools]) == 2
    assert "cannot read script" in capsys.readouterr().err
