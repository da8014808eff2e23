"""``run``/``check``/``prompt`` take their tools as ``serve`` does: ``--tools`` any number
of times (merged), ``--config`` for MCP servers, or none at all."""

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
    import codemode as cm

    async def _{name}(args):
        return {{"tool": "{name}", "args": args}}

    TOOLS = [cm.define_tool(name="{name}", description="Echo for {name}.",
                            parameters={{"x": {{"type": "integer", "required": True}}}},
                            execute=_{name})]
    MODE = cm.CodeMode(cm.ToolRegistry())
    """
)


@pytest.fixture
def modules(tmp_path: Path) -> Iterator[dict[str, str]]:
    paths = {}
    for stem, name in (("cli_src_a", "alpha"), ("cli_src_b", "beta"), ("cli_src_c", "alpha")):
        path = tmp_path / f"{stem}.py"
        path.write_text(TOOLS.format(name=name))
        paths[stem] = str(path)
    yield paths
    for stem in paths:
        sys.modules.pop(stem, None)


def _script(tmp_path: Path, source: str) -> str:
    path = tmp_path / "script.py"
    path.write_text(source)
    return str(path)


def _value(capsys: pytest.CaptureFixture[str]) -> object:
    return json.loads(capsys.readouterr().out)["value"]


def test_a_script_runs_without_any_tools(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    script = _script(tmp_path, "sum(i * i for i in range(10))\n")
    assert main(["run", script, "--executor", "inprocess", "--json"]) == 0
    assert _value(capsys) == sum(i * i for i in range(10))


def test_several_tools_options_are_one_registry(
        modules: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = _script(tmp_path, "[await tools.alpha(x=1), await tools.beta(x=2)]\n")
    code = main(["run", script, "--executor", "inprocess", "--json",
                 "--tools", f"{modules['cli_src_a']}:TOOLS",
                 "--tools", f"{modules['cli_src_b']}:TOOLS"])
    assert code == 0
    assert _value(capsys) == [{"tool": "alpha", "args": {"x": 1}},
                              {"tool": "beta", "args": {"x": 2}}]


def test_a_tool_given_twice_is_a_load_error_naming_both_sources(
        modules: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = f"{modules['cli_src_a']}:TOOLS", f"{modules['cli_src_c']}:TOOLS"
    code = main(["check", _script(tmp_path, "1\n"), "--tools", first, "--tools", second])
    err = capsys.readouterr().err
    assert code == 3
    assert f"tool 'alpha' is in both {first} and {second}" in err
    assert "Traceback" not in err


def test_a_code_mode_must_be_the_only_tools(
        modules: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["prompt", "--tools", f"{modules['cli_src_a']}:TOOLS",
                 "--tools", f"{modules['cli_src_b']}:MODE"])
    assert code == 3
    assert "a CodeMode --tools must be the only --tools" in capsys.readouterr().err


SERVERS = {"mcpServers": {"time": {
    "command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}}}


@pytest.fixture
def config(tmp_path: Path) -> str:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(SERVERS))
    return str(path)


def test_run_calls_the_tools_of_a_config_mcp_server(
        config: str, modules: dict[str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    script = _script(tmp_path, textwrap.dedent("""\
        now = await tools.time.get_current_time(timezone="Asia/Tokyo")
        local = await tools.alpha(x=3)
        [now["timezone"], now["datetime"][:2], local["tool"]]
        """))
    code = main(["run", script, "--executor", "inprocess", "--json", "--config", config,
                 "--tools", f"{modules['cli_src_a']}:TOOLS"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    result = json.loads(captured.out)
    assert result["value"] == ["Asia/Tokyo", "20", "alpha"]
    assert [call["name"] for call in result["calls"]] == ["time.get_current_time", "alpha"]


def test_check_and_prompt_see_the_config_tools(
        config: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _script(tmp_path, "await tools.time.get_current_time(zone='UTC')\n")
    assert main(["check", bad, "--config", config]) == 4
    assert "get_current_time" in capsys.readouterr().out
    assert main(["prompt", "--config", config]) == 0
    prompt = capsys.readouterr().out
    section = prompt[prompt.index("\n[time]\n"):]
    assert "\nget_current_time: Get current time" in section
    assert "\nconvert_time: Convert time between timezones" in section


def test_an_invalid_config_is_a_usage_error(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"x": {"args": ["no command"]}}}))
    assert main(["run", _script(tmp_path, "1\n"), "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"codemode: invalid config {path}:")
    assert "Traceback" not in err


def test_a_server_that_does_not_start_is_a_load_error_and_nothing_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker = tmp_path / "ran"
    path = tmp_path / "servers.json"
    path.write_text(json.dumps({"mcpServers": {"broken": {
        "command": sys.executable, "args": ["-c", "raise SystemExit(7)"]}}}))
    script = _script(tmp_path, f"open({str(marker)!r}, 'w')\n")
    code = main(["run", script, "--executor", "inprocess", "--config", str(path),
                 "--startup-timeout", "10"])
    err = capsys.readouterr().err
    assert code == 3
    assert "MCP server(s) of --config failed to start: broken:" in err
    assert "Traceback" not in err
    assert not marker.exists()


def test_sdk_types_the_tools_of_several_sources_and_a_config(
        config: str, modules: dict[str, str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sdk"
    code = main(["sdk", "-o", str(out), "--no-progress", "--config", config,
                 "--tools", f"{modules['cli_src_a']}:TOOLS",
                 "--tools", f"{modules['cli_src_b']}:TOOLS"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    written = "".join(path.read_text() for path in sorted(out.rglob("*")) if path.is_file())
    for name in ("alpha", "beta", "get_current_time", "convert_time"):
        assert f"def {name}(" in written
    args = ["sdk", "-o", str(out), "--check", "--no-progress", "--config", config,
            "--tools", f"{modules['cli_src_a']}:TOOLS", "--tools", f"{modules['cli_src_b']}:TOOLS"]
    assert main(args) == 0
    assert main(args[:-2]) == 1
    assert "out of date" in capsys.readouterr().err


def test_sdk_refuses_a_tool_given_twice_and_a_server_that_does_not_start(
        modules: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sdk"
    first, second = f"{modules['cli_src_a']}:TOOLS", f"{modules['cli_src_c']}:TOOLS"
    assert main(["sdk", "-o", str(out), "--tools", first, "--tools", second]) == 3
    assert f"tool 'alpha' is in both {first} and {second}" in capsys.readouterr().err
    broken = tmp_path / "servers.json"
    broken.write_text(json.dumps({"mcpServers": {"broken": {
        "command": sys.executable, "args": ["-c", "raise SystemExit(7)"]}}}))
    assert main(["sdk", "-o", str(out), "--config", str(broken),
                 "--startup-timeout", "10"]) == 3
    err = capsys.readouterr().err
    assert "MCP server(s) of --config failed to start: broken:" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_sdk_without_tools_is_a_usage_error(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["sdk", "-o", str(tmp_path / "sdk")])
    assert exit_info.value.code == 2
    assert "no tools: give --tools MODULE:OBJECT and/or --config FILE" in capsys.readouterr().err


def test_ctrl_c_while_sdk_loads_its_tools_ends_quietly(
        modules: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import codemode.cli.sdk as sdk

    def interrupted(target: str) -> list[object]:
        raise KeyboardInterrupt

    monkeypatch.setattr(sdk, "load_specs", interrupted)
    out = tmp_path / "sdk"
    assert main(["sdk", "-o", str(out), "--tools", f"{modules['cli_src_a']}:TOOLS"]) == 130
    err = capsys.readouterr().err
    assert err == "codemode: interrupted\n"
    assert not out.exists()
