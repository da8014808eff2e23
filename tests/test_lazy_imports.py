"""Packages re-export their public names lazily (``codemode.exports``): the same names, the
same objects, typed through ``TYPE_CHECKING`` imports that match each table, and a
process that imports part of codemode does not load the rest."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("codemode", "codemode.sandbox", "codemode.mode")


def _source(package: str) -> ast.Module:
    path = ROOT.joinpath(*package.split("."), "__init__.py")
    return ast.parse(path.read_text(encoding="utf-8"))


def _typed_imports(tree: ast.Module) -> dict[str, str]:
    """``name -> module`` of the ``if TYPE_CHECKING:`` block's relative imports."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for statement in node.body:
                assert isinstance(statement, ast.ImportFrom) and statement.level == 1
                for alias in statement.names:
                    assert alias.asname == alias.name  # an explicit re-export
                    found[alias.name] = str(statement.module)
    return found


def _table(tree: ast.Module) -> dict[str, str]:
    """The literal ``_LAZY`` table, read from the source."""
    for node in tree.body:
        if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                and node.target.id == "_LAZY"):
            value = ast.literal_eval(node.value)  # type: ignore[arg-type]
            assert isinstance(value, dict)
            return value
    raise AssertionError("no _LAZY table")


@pytest.mark.parametrize("package", PACKAGES)
def test_table_and_typed_imports_name_the_same_objects(package: str) -> None:
    tree = _source(package)
    typed, table = _typed_imports(tree), _table(tree)
    module = importlib.import_module(package)
    assert set(table) == set(typed) <= set(module.__all__)
    for name, where in table.items():
        value = getattr(module, name)
        assert value is getattr(importlib.import_module(f"{package}.{where}"), name), name
        assert value is getattr(importlib.import_module(f"{package}.{typed[name]}"), name), name
        assert vars(module)[name] is value  # kept: the next read is a plain lookup


@pytest.mark.parametrize("package", PACKAGES)
def test_dir_lists_every_public_name_and_unknown_names_fail(package: str) -> None:
    module = importlib.import_module(package)
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name  # noqa: B018
    with pytest.raises(ImportError):
        exec(f"from {package} import no_such_name", {})


def _loaded_after(code: str) -> set[str]:
    """Top-level packages and codemode modules a fresh interpreter holds after ``code``."""
    probe = f"{code}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, cwd=ROOT, timeout=60).stdout
    return set(out.split())


HEAVY = {"pydantic", "jsonschema", "jsonschema_rs", "anyio", "RestrictedPython", "sdk_gen",
         "mcp", "asyncio"}


def test_importing_codemode_loads_only_its_errors() -> None:
    loaded = _loaded_after("import codemode")
    assert not loaded & HEAVY
    assert {m for m in loaded if m.startswith("codemode.")} == {"codemode.errors",
                                                                 "codemode.exports"}


def test_a_code_mode_host_does_not_load_the_decorator_or_the_mcp_client() -> None:
    loaded = _loaded_after("import codemode\ncodemode.CodeMode\ncodemode.define_tool")
    assert {"jsonschema_rs", "anyio"} <= loaded
    assert "codemode.mode.code_mode" in loaded
    # the SDK generator, compiler and preflight load with the first prompt, check or run:
    # a first run starts its pool's template before them (CodeMode._boot_soon)
    assert not loaded & {"RestrictedPython", "sdk_gen", "codemode.mode.preflight",
                         "codemode.mode.bridge", "codemode.sandbox.executors.pool"}
    # jsonschema (~45 ms) loads when a schema or a failure needs it (dispatch.schema)
    assert not loaded & {"pydantic", "codemode.dispatch.decorator", "mcp", "jsonschema"}
    # the decorator imports pydantic only for a signature that is no plain JSON
    decorated = _loaded_after("import codemode\ncodemode.tool")
    assert "codemode.dispatch.decorator" in decorated and "pydantic" not in decorated


def test_an_in_process_run_loads_no_pool_and_no_feature_it_does_not_use() -> None:
    """A first run costs the imports it needs: no worker pool (confinement, templates),
    no run cards, sessions, approvals or journal unless the host uses them."""
    loaded = _loaded_after(
        "import anyio, codemode as cm\n"
        "from codemode.sandbox import InProcessExecutor\n"
        "async def main():\n"
        "    registry = cm.ToolRegistry()\n"
        "    async def double(args, ctx):\n"
        "        return args['i'] * 2\n"
        "    registry.register(cm.define_tool(name='double', execute=double, parameters={\n"
        "        'type': 'object', 'properties': {'i': {'type': 'integer'}}}))\n"
        "    async with cm.CodeMode(registry, executor=InProcessExecutor()) as mode:\n"
        "        mode.prompt()\n"
        "        assert (await mode.run('await tools.double(i=2)')).value == 4\n"
        "anyio.run(main)")
    assert "codemode.sandbox.executors.inprocess" in loaded
    assert not loaded & {"codemode.sandbox.executors.pool", "codemode.sandbox.executors.confine",
                         "codemode.sandbox.executors.template", "codemode.mode.run_card",
                         "codemode.dispatch.cards", "codemode.mode.session",
                         "codemode.mode.approval", "codemode.mode.journal"}
    # exact multipleOf arithmetic loads only when a float quotient overflows
    assert "fractions" not in loaded


FRESH_HOST = """\
import anyio, codemode as cm
FIELDS = {"get_user": {"id": {"type": "integer"}}, "list_repos": {"owner": {"type": "string"}},
          "add_note": {"text": {"type": "string"}}}
async def main():
    registry = cm.ToolRegistry()
    for name, fields in FIELDS.items():
        async def execute(args, ctx, name=name):
            return {"tool": name, **args}
        registry.register(cm.define_tool(name=name, execute=execute, parameters={
            "type": "object", "properties": fields, "required": list(fields),
            "additionalProperties": False}))
    async with cm.CodeMode(registry{executor}) as mode:
        result = await mode.run("user = await tools.get_user(id=7)\\n"
                                "await tools.add_note(text=str(user['id']))")
        assert result.value == {"tool": "add_note", "text": "7"}, result
anyio.run(main)
"""
"""A fresh process's first result as ``benchmarks/vs_monty.py`` times it: three tools, a
``CodeMode``, one run; the executor is filled in."""

NOT_ON_THE_FIRST_RUN = {
    # optional extras and what only other features use
    "datamodel_code_generator", "opentelemetry", "mcp", "pydantic", "httpx",
    "jsonschema", "referencing", "rpds", "attrs",  # jsonschema_rs validates alone
    "codemode.dispatch.decorator", "codemode.integrations", "codemode.mode.stream",
    "codemode.dispatch.tasks",  # a call's ctx.tasks is a task_scope.TaskScope
    "sdk_gen._types",  # the typed module and stub only
    # standard modules only a rarer path needs (typed files, session logs, non-ASCII
    # names, float overflow in multipleOf)
    "pathlib", "unicodedata", "fractions",
}
"""Modules a fresh host's first run does not import (their import would be ms each)."""


@pytest.mark.parametrize("executor", ["inprocess", "pool"])
def test_a_fresh_hosts_first_run_imports_only_what_it_uses(executor: str) -> None:
    """Counted against a process that runs an empty anyio loop: what codemode adds."""
    code = FRESH_HOST.replace("{executor}", ", executor=cm.InProcessExecutor()"
                              if executor == "inprocess" else "")
    baseline = _loaded_after("import anyio\nasync def main(): pass\nanyio.run(main)")
    added = _loaded_after(code) - baseline
    assert {"jsonschema_rs", "RestrictedPython", "codemode.mode.code_mode"} <= added
    assert not {m for m in added if m in NOT_ON_THE_FIRST_RUN
                or any(m.startswith(p + ".") for p in NOT_ON_THE_FIRST_RUN)}
    if executor == "pool":  # the host side of a pool: the script runtime's needs are not
        assert not added & {"difflib", "importlib.util"}  # (suggestions, preloads)


def test_the_sandbox_runtime_loads_no_host_layer() -> None:
    """What a worker imports (its bootstrap stubs the two parent packages as well)."""
    loaded = _loaded_after("import codemode.sandbox.runtime.runner")
    assert not loaded & {"pydantic", "jsonschema", "sdk_gen", "mcp"}
    assert not {m for m in loaded if m.startswith(("codemode.dispatch", "codemode.mode",
                                                   "codemode.sandbox.executors"))}


def test_a_submodule_read_as_an_attribute_is_imported() -> None:
    """``import codemode`` then ``codemode.sandbox.…`` worked when the root imported its
    subpackages eagerly; it still does."""
    loaded = _loaded_after("import codemode\nassert codemode.sandbox.spare_workers\n"
                           "assert codemode.mode.preflight.check_script")
    assert {"codemode.sandbox", "codemode.mode.preflight"} <= loaded
    with pytest.raises(AttributeError, match="no_such_module"):
        importlib.import_module("codemode.sandbox").no_such_module  # noqa: B018


@pytest.mark.parametrize("first", ["run", "prompt"])
def test_a_fresh_hosts_first_run_starts_the_template_before_its_heavy_imports(
        first: str) -> None:
    """The default pool's template (~150 ms of boot) is started before the pool module,
    the SDK generator, the preflight, the facades and the compiler load (~45 ms a fresh
    host's first run or prompt imports), so its boot overlaps them instead of following
    them."""
    probe = (
        "import logging, sys\n"
        "seen = []\n"
        "class Probe(logging.Handler):\n"
        "    def emit(self, record):\n"
        "        if 'template' in record.getMessage() and not seen:\n"
        "            seen.append(sorted(m for m in sys.modules if m in HEAVY))\n"
        "HEAVY = {'codemode.sandbox.executors.pool', 'sdk_gen', 'RestrictedPython',\n"
        "         'codemode.mode.preflight', 'codemode.sandbox.language.compile',\n"
        "         'codemode.sandbox.language.facades'}\n"
        "log = logging.getLogger('codemode.sandbox')\n"
        "log.setLevel(logging.DEBUG)\n"
        "log.addHandler(Probe())\n"
        + FRESH_HOST.replace("{executor}", "").replace(
            "        result = await mode.run(",
            "        mode.prompt()\n        result = await mode.run(" if first == "prompt"
            else "        result = await mode.run(")
        + "print(seen)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, cwd=ROOT, timeout=60).stdout
    assert out.split("\n")[-2] == "[[]]"


@pytest.mark.parametrize("executor", ["inprocess", "pool"])
def test_a_first_run_after_a_prompt_on_the_loop_imports_nothing(executor: str) -> None:
    """What a first run needs loads during the model's turn (the prompt's warm-up), not
    in the run: the modules a CodeMode loads lazily are all in by then."""
    probe = FRESH_HOST.replace("{executor}", ", executor=cm.InProcessExecutor()"
                               if executor == "inprocess" else "").replace(
        "        result = await mode.run(",
        "        mode.prompt()\n"
        "        await anyio.sleep(0.5)\n"
        "        import sys\n"
        "        before = set(sys.modules)\n"
        "        result = await mode.run(").replace(
        "        assert result.value ==",
        "        print(sorted(set(sys.modules) - before))\n"
        "        assert result.value ==")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, cwd=ROOT, timeout=60).stdout
    assert out.split("\n")[-2] == "[]"
