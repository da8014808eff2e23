"""``codemode sdk``: resolve MODULE:OBJECT, write the files, and ``--check`` for drift."""

from __future__ import annotations

import sys
import textwrap
from typing import TYPE_CHECKING

import pytest

from codemode.cli.sdk import main_sdk
from sdk_gen import FILES

if TYPE_CHECKING:
    from pathlib import Path

TOOLS_MODULE = textwrap.dedent(
    """
    from codemode.dispatch.spec import ToolSpec

    SPECS = [
        ToolSpec(name="echo", description="Echo text.",
                 parameters={"type": "object", "properties": {"text": {"type": "string"}}}),
        {"name": "ping", "inputSchema": {"type": "object"}},
    ]

    class Registry:
        def specs(self):
            return list(SPECS)

    class Mode:
        registry = Registry()

    REGISTRY = Registry()
    MODE = Mode()

    def make():
        return SPECS

    import codemode as cm

    async def _echo(args):
        return args["text"]

    TOOLS = [cm.define_tool(name="echo", description="Echo text.",
                            parameters={"text": {"type": "string"}}, execute=_echo),
             cm.define_tool(name="ping", execute=_echo)]
    REAL_REGISTRY = cm.ToolRegistry()
    for _tool in TOOLS:
        REAL_REGISTRY.register(_tool)
    REAL_MODE = cm.CodeMode(REAL_REGISTRY)
    REAL_REGISTRY.register(REAL_MODE.as_tool())
    """
)


@pytest.fixture
def tools_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    name = f"cli_tools_{abs(hash(str(tmp_path)))}"
    (tmp_path / f"{name}.py").write_text(TOOLS_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


@pytest.mark.parametrize(
    "obj", ["SPECS", "REGISTRY", "MODE", "make", "TOOLS", "REAL_REGISTRY", "REAL_MODE"]
)
def test_writes_module_stub_and_prompt(
    tools_module: str, obj: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sdk"
    assert main_sdk(["--tools", f"{tools_module}:{obj}", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(FILES)
    assert "async def echo(" in (out / "tools.py").read_text()
    assert "\nping\n" in (out / "prompt.txt").read_text()
    assert str(out / "tools.py") in capsys.readouterr().out
    assert "run_code" not in (out / "prompt.txt").read_text()


def test_accepts_a_py_path(tools_module: str, tmp_path: Path) -> None:
    out = tmp_path / "sdk"
    path = tmp_path / f"{tools_module}.py"
    assert main_sdk(["--tools", f"{path}:TOOLS", "-o", str(out)]) == 0
    assert "async def echo(" in (out / "tools.py").read_text()


def test_check_passes_when_current_and_fails_when_stale(tools_module: str, tmp_path: Path) -> None:
    out = tmp_path / "sdk"
    target = f"{tools_module}:SPECS"
    assert main_sdk(["--tools", target, "-o", str(out), "--check"]) == 1
    assert not out.exists()
    assert main_sdk(["--tools", target, "-o", str(out)]) == 0
    assert main_sdk(["--tools", target, "-o", str(out), "--check"]) == 0
    (out / "tools.pyi").write_text("# edited\n")
    assert main_sdk(["--tools", target, "-o", str(out), "--check"]) == 1


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_colon_here", "MODULE:OBJECT"),
        ("json:dumps_nothing", "dumps_nothing"),
        ("module_that_does_not_exist_xyz:X", "module_that_does_not_exist_xyz"),
        ("math:pi", "not a registry"),
    ],
)
def test_bad_targets_exit_3(
    target: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main_sdk(["--tools", target, "-o", str(tmp_path / "x")]) == 3
    assert message in capsys.readouterr().err
