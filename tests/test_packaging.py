"""What a newcomer meets first: the version, the README's program, mypy on their own code,
the pytest plugin in a suite of their own, and what the runtime install pulls in."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
from pathlib import Path

import pytest

import codemode
from codemode.cli import main

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env.pop("PYTHONWARNINGS", None)
    return env


def test_the_version_is_the_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    assert codemode.__version__ == PYPROJECT["project"]["version"]
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"codemode {codemode.__version__}\n"


def test_the_runtime_install_leaves_the_type_generator_to_an_extra() -> None:
    runtime = " ".join(PYPROJECT["project"]["dependencies"])
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert "datamodel-code-generator" not in runtime
    assert any(r.startswith("datamodel-code-generator") for r in extras["types"])
    assert any(r.startswith("datamodel-code-generator") for r in extras["dev"])


def _readme_program() -> str:
    section = README[README.index("## Embedding it"):]
    found = re.search(r"^```python\n(.*?)^```", section, re.S | re.M)
    assert found is not None
    return found.group(1)


def test_the_readme_embedding_example_runs_as_written(tmp_path: Path) -> None:
    """As a file, under ``python -X dev``: it runs its own event loop, closes what it opens,
    and leaves no ResourceWarning."""
    program = tmp_path / "weather.py"
    program.write_text(_readme_program(), encoding="utf-8")
    done = subprocess.run([sys.executable, "-X", "dev", str(program)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=_clean_env())
    assert done.returncode == 0, done.stderr
    for noise in ("ResourceWarning", "Traceback", "Exception ignored", "Error"):
        assert noise not in done.stderr, done.stderr
    assert "get_weather: Current weather for a city." in done.stdout


USER_CODE = textwrap.dedent(
    """
    import codemode as cm

    registry = cm.ToolRegistry()
    specs: tuple[cm.ToolSpec, ...] = registry.specs()
    reveal_type(registry.specs)
    wrong: str = registry.specs()
    """
)


def test_mypy_strict_on_user_code_finds_codemodes_types(tmp_path: Path) -> None:
    """After the README's ``python -m pip install -e .`` (no ``editable_mode=compat``), in a
    fresh venv: the install is a plain ``.pth`` naming the checkout, which mypy follows
    (PEP 561, ``py.typed``), not an import hook, which it cannot.

    The venv sees this environment's packages (mypy, setuptools, codemode's dependencies)
    through a path entry, not as a site directory, so this environment's own editable
    codemode is not visible there: only the test's install can make ``import codemode``
    type-check. The build runs offline (``--no-build-isolation``, setuptools from the
    dev extra)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)],
                   check=True, timeout=120)
    python = venv / "bin" / "python"
    purelib = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    assert purelib != Path(sysconfig.get_paths()["purelib"])
    (purelib / "environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n",
                                             encoding="utf-8")
    user = tmp_path / "user"
    user.mkdir()
    (user / "app.py").write_text(USER_CODE, encoding="utf-8")
    mypy = [str(python), "-m", "mypy", "--strict", "--no-incremental", "app.py"]
    before = subprocess.run(mypy, cwd=user, capture_output=True, text=True, timeout=300,
                            env=_clean_env())
    assert 'Cannot find implementation or library stub for module named "codemode"' in (
        before.stdout), before.stdout + before.stderr
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
               "--no-build-isolation", "--no-index", "-q", "-e", str(ROOT)]
    done = subprocess.run(install, capture_output=True, text=True, timeout=300,
                          env=_clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    pth = [p.read_text(encoding="utf-8") for p in purelib.glob("__editable__*codemode*.pth")]
    assert pth == [f"{ROOT}\n"] or [text.strip() for text in pth] == [str(ROOT)]
    assert not list(purelib.glob("__editable__*finder*.py"))  # no import hook
    done = subprocess.run(mypy, cwd=user, capture_output=True, text=True, timeout=300,
                          env=_clean_env())
    lines = [ln for ln in done.stdout.splitlines() if ": error:" in ln or ": note:" in ln]
    assert len(lines) == 2, done.stdout + done.stderr
    assert lines[0].startswith("app.py:6: note: Revealed type is")
    assert "codemode.dispatch.spec.ToolSpec" in lines[0]  # read from codemode's own annotations
    assert lines[1].startswith("app.py:7: error: Incompatible types in assignment")
    assert '"tuple[ToolSpec, ...]"' in lines[1]
    assert "editable_mode=compat" not in README


PLUGIN_SUITE = textwrap.dedent(
    """
    async def test_run_code_without_anyio_mode(run_code, scripted_tools):
        scripted_tools.add("double", results=[4])
        result = await run_code("await tools.double(x=2)")
        assert not result.is_error, result.text
        assert scripted_tools["double"].calls[0].arguments == {"x": 2}

    async def test_code_mode_fixture(code_mode):
        run = await code_mode.run("1 + 1")
        assert run.value == 2
    """
)


def test_the_pytest_plugin_needs_no_anyio_mode(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")  # no anyio_mode
    (tmp_path / "test_user_suite.py").write_text(PLUGIN_SUITE, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_user_suite.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env=_clean_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    assert "skipped" not in done.stdout and "warning" not in done.stdout.lower()


FORGETFUL = textwrap.dedent(
    """
    import anyio
    import codemode as cm

    registry = cm.ToolRegistry()

    @cm.tool
    def add(a: int, b: int) -> int:
        \"\"\"Add two integers.\"\"\"
        return a + b

    registry.register(add)

    async def main() -> None:
        mode = cm.CodeMode(registry)  # its own worker pool, never closed
        run = await mode.run("await tools.add(a=1, b=2)")
        print(run.value)

    anyio.run(main)
    """
)


def test_a_code_mode_nobody_closed_exits_quietly(tmp_path: Path) -> None:
    program = tmp_path / "forgetful.py"
    program.write_text(FORGETFUL, encoding="utf-8")
    done = subprocess.run([sys.executable, "-X", "dev", str(program)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, env=_clean_env())
    assert (done.returncode, done.stdout) == (0, "3\n"), done.stderr
    for noise in ("ResourceWarning", "Traceback", "Exception ignored", "Error"):
        assert noise not in done.stderr, done.stderr
