"""Bad input to ``codemode`` is one line on stderr with the documented exit code, never a
traceback; a closed stdout ends quietly; ``codemode sdk`` can draw a progress bar."""

from __future__ import annotations

import io
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from typing import TYPE_CHECKING

import pytest

from codemode.cli import main
from codemode.cli.sdk import ProgressBar, main_sdk
from codemode.cli.serve import REPEAT_WINDOW, REPEATS, status_handler

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

TOOLS = textwrap.dedent(
    """
    import os

    import codemode as cm

    def _touch(args):
        with open(os.path.join(os.environ["CODEMODE_TEST_MARKS"], "ran"), "w") as f:
            f.write("ran")
        return "ok"

    TOUCH = cm.define_tool(name="touch", description="Create a marker file.", execute=_touch)
    TOOLS = [TOUCH]

    def needs_arguments(prefix, *, strict):
        return TOOLS

    def broken_factory():
        raise RuntimeError("no database")
    """
)


@pytest.fixture
def marks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "marks"
    folder.mkdir()
    monkeypatch.setenv("CODEMODE_TEST_MARKS", str(folder))
    return folder


@pytest.fixture
def tools_file(tmp_path: Path, marks: Path) -> Iterator[Path]:
    path = tmp_path / "cli_polish_tools.py"
    path.write_text(TOOLS)
    yield path
    sys.modules.pop("cli_polish_tools", None)


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "touch.py"
    path.write_text("await tools.touch()\n")
    return path


def _one_line_error(err: str) -> str:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("value", ["-1", "0", "-0.5", "nan", "inf", "soon"])
def test_a_timeout_that_is_no_positive_number_is_a_usage_error(
    value: str, tools_file: Path, script: Path, marks: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["run", str(script), "--tools", f"{tools_file}:TOOLS", f"--timeout={value}"])
    assert exit_.value.code == 2
    line = _one_line_error(capsys.readouterr().err)
    assert line.startswith("codemode run: error: argument --timeout:") and value in line
    assert list(marks.iterdir()) == []  # nothing ran


def test_a_positive_timeout_still_runs(
    tools_file: Path, script: Path, marks: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", str(script), "--tools", f"{tools_file}:TOOLS", "--timeout", "5",
            "--executor", "inprocess"]
    assert main(argv) == 0
    assert (marks / "ran").read_text() == "ran"


@pytest.mark.parametrize("command", ["run", "check"])
def test_a_script_that_is_not_utf8_is_a_usage_error(
    command: str, tools_file: Path, tmp_path: Path, marks: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = tmp_path / "latin1.py"
    bad.write_bytes(b"await tools.touch()  # caf\xe9\n")
    argv = [command, str(bad), "--tools", f"{tools_file}:TOOLS"]
    assert main([*argv, "--executor", "inprocess"] if command == "run" else argv) == 2
    line = _one_line_error(capsys.readouterr().err)
    assert line == f"codemode: cannot read script {bad}: not UTF-8 text (byte 26: invalid " \
        "continuation byte)"
    assert list(marks.iterdir()) == []


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        ("needs_arguments", "needs_arguments needs arguments (missing a required argument"),
        ("broken_factory", "calling {target}() failed: RuntimeError: no database"),
    ],
)
@pytest.mark.parametrize("command", ["prompt", "sdk"])
def test_a_factory_that_cannot_be_called_is_a_tools_error(
    factory: str, message: str, command: str, tools_file: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    target = f"{tools_file}:{factory}"
    if command == "sdk":
        code = main_sdk(["--tools", target, "-o", str(tmp_path / "out")])
    else:
        code = main([command, "--tools", target])
    assert code == 3
    line = _one_line_error(capsys.readouterr().err)
    assert message.format(target=target) in line
    assert not (tmp_path / "out").exists()


def test_a_closed_stdout_ends_quietly(tools_file: Path) -> None:
    """``codemode prompt | head``: the reader is gone before the first write."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "codemode.cli", "prompt", "--tools", f"{tools_file}:TOOLS"],
            stdout=write_end, stderr=subprocess.PIPE, timeout=60, check=False,
        )
    finally:
        os.close(write_end)
    assert done.stderr.decode() == ""
    assert done.returncode == 141


@pytest.mark.parametrize("executor", ["pool", "inprocess"])
def test_ctrl_c_stops_a_run_with_one_line_and_130(tools_file: Path, marks: Path,
                                                  tmp_path: Path, executor: str) -> None:
    """SIGINT while a script runs: one line on stderr, exit 130, well before the run's
    own timeout, and no worker process left behind."""
    looping = tmp_path / "loop.py"
    looping.write_text("import time\nawait tools.touch()\nwhile True:\n    time.sleep(0.01)\n")
    child = subprocess.Popen(
        [sys.executable, "-m", "codemode.cli", "run", str(looping), "--timeout", "120",
         "--executor", executor, "--tools", f"{tools_file}:TOOLS"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):  # the tool call marks that the script is running
            if (marks / "ran").exists() or child.poll() is not None:
                break
            time.sleep(0.1)
        assert (marks / "ran").exists(), child.communicate(timeout=60)
        before = _children(child.pid)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert (child.returncode, err) == (130, "codemode: interrupted\n"), out
    assert executor == "inprocess" or len(before) >= 2  # the pool's template and workers
    for _ in range(100):  # a worker may take a moment to see its pipe close
        if not any(_alive(pid) for pid in before):
            break
        time.sleep(0.1)
    assert [pid for pid in before if _alive(pid)] == []


def _children(pid: int) -> list[int]:
    """``pid``'s descendants (read from /proc): the pool's template forks its workers."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parents[int(entry)] = int(stat.read().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [child for child, up in parents.items() if up == parent]
        found += kids
        frontier += kids
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_the_progress_bar_draws_one_line_and_ends_it() -> None:
    stream = io.StringIO()
    bar = ProgressBar(stream, width=10)
    for done in range(1, 1001):
        bar(done, 1000)
    frames = stream.getvalue().split("\r")[1:]
    assert len(frames) == 51  # at once, then every 2 %: not every tool
    assert frames[:2] == ["codemode sdk: [..........] 1/1000 tools",
                          "codemode sdk: [..........] 20/1000 tools"]
    assert frames[-1] == "codemode sdk: [##########] 1000/1000 tools\n"
    assert all("\n" not in frame for frame in frames[:-1])


def test_codemode_sdk_shows_progress_when_asked(
    tools_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sdk"
    assert main_sdk(["--tools", f"{tools_file}:TOOLS", "-o", str(out), "--progress"]) == 0
    err = capsys.readouterr().err
    assert err.endswith("codemode sdk: [" + "#" * 30 + "] 1/1 tools\n")
    assert (out / "tools.py").is_file()
    assert main_sdk(["--tools", f"{tools_file}:TOOLS", "-o", str(out), "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


def test_serve_status_lines_of_one_kind_are_bounded_and_counted() -> None:
    """A library that logs every bad line it reads (the MCP SDK, for an upstream writing
    garbage to its stdout) gives ``REPEATS`` status lines, then one that counts the rest;
    serve's own lines are never held back."""
    stream = io.StringIO()
    handler = status_handler(stream)
    sdk, own = logging.getLogger("mcp.client.stdio"), logging.getLogger("codemode.test")
    for logger in (sdk, own):
        logger.addHandler(handler)
        logger.propagate = False
    try:
        for i in range(1_000):
            sdk.warning("Failed to parse JSONRPC message from server: line %d", i)
        for i in range(20):
            own.warning("upstream %d went down", i)
    finally:
        for logger in (sdk, own):
            logger.removeHandler(handler)
            logger.propagate = True
    lines = stream.getvalue().splitlines()
    sdk_lines = [line for line in lines if "[mcp.client.stdio]" in line and "JSONRPC" in line]
    assert [line.split("line ")[1] for line in sdk_lines] == [str(i) for i in range(REPEATS)]
    assert sum("upstream" in line and "went down" in line for line in lines) == 20
    assert len(lines) == REPEATS + 20


def test_a_burst_left_out_is_counted_on_the_next_line_shown() -> None:
    stream = io.StringIO()
    handler = status_handler(stream)
    records = [logging.LogRecord("mcp.x", logging.WARNING, "y.py", 7, f"m{i}", None, None)
               for i in range(REPEATS + 3)]
    after = logging.LogRecord("mcp.x", logging.WARNING, "y.py", 7, "after", None, None)
    after.created = records[0].created + REPEAT_WINDOW + 1
    for record in [*records, after]:
        handler.handle(record)
    assert stream.getvalue().splitlines()[-1] == (
        "codemode serve: [mcp.x] after (3 more like this left out)")


def test_a_warning_that_cannot_be_rendered_is_still_one_status_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    """logging prints "--- Logging error ---" and a traceback to stderr when formatting
    fails: an exception whose text raises, arguments that do not fit the message."""

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    stream = io.StringIO()
    handler = status_handler(stream)
    logger = logging.getLogger("mcp.unprintable")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise Unprintable
        except Unprintable:
            logger.warning("the upstream failed", exc_info=True)
        logger.warning("needs two %s %s", "args")
        logger.warning("long %s", "x" * 100_000)
    finally:
        logger.removeHandler(handler)
        logger.propagate = True
    lines = stream.getvalue().splitlines()
    assert lines[:2] == ["codemode serve: [mcp.unprintable] the upstream failed (Unprintable)",
                         "codemode serve: [mcp.unprintable] needs two %s %s"]
    assert len(lines) == 3 and len(lines[2]) < 2_100
    assert "Traceback" not in capsys.readouterr().err
