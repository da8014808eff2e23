"""The tree is the architecture: layers import downwards only, with no circles and no privates.

Read from the source's own imports (every ``import`` statement, including those under
``TYPE_CHECKING`` and inside functions), so a new module is checked the day it lands.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("codemode", "sdk_gen")

LAYERS: dict[str, tuple[str, ...]] = {
    # module prefix: project prefixes it may import (besides itself)
    "codemode.errors": (),
    "codemode.exports": (),  # lazy re-exports: any package's __init__ may use it
    "codemode.jsontext": (),  # JSON text in steps: dispatch and the sandbox both need it
    "codemode.dispatch": ("codemode.errors", "codemode.jsontext"),
    # the tool contract's leaves stay below the pipeline (context and pipeline use them)
    "codemode.dispatch.signal": (),
    "codemode.dispatch.agent": (),
    "codemode.dispatch.failure": ("codemode.errors",),  # a nested call's failure names its tool
    "codemode.dispatch.tasks": ("codemode.errors", "codemode.dispatch.signal",
                                "codemode.dispatch.agent", "codemode.dispatch.failure"),
    "codemode.dispatch.task_scope": ("codemode.errors", "codemode.dispatch.signal",
                                     "codemode.dispatch.agent", "codemode.dispatch.tasks"),
    "codemode.dispatch.cards": ("codemode.dispatch.frozen", "codemode.dispatch.events"),
    "sdk_gen": ("codemode.errors", "codemode.dispatch.spec"),
    "codemode.sandbox.limits": ("codemode.errors",),
    "codemode.sandbox.language": ("codemode.errors", "codemode.sandbox.limits"),
    "codemode.sandbox.runtime": (
        "codemode.errors", "codemode.jsontext", "codemode.sandbox.limits",
        "codemode.sandbox.language"),
    "codemode.sandbox.executors": (
        "codemode.errors", "codemode.jsontext", "codemode.sandbox.limits",
        "codemode.sandbox.language", "codemode.sandbox.runtime"),
    "codemode.sandbox": ("codemode.errors", "codemode.exports"),
    "codemode.mode": ("codemode.errors", "codemode.exports", "codemode.dispatch",
                      "codemode.sandbox", "sdk_gen"),
    "codemode.integrations": ("codemode.errors", "codemode.dispatch", "codemode.sandbox",
                              "codemode.mode", "sdk_gen"),
    # telemetry sees dispatch only (its events and hooks); adapters drive a CodeMode
    "codemode.integrations.otel": ("codemode.errors", "codemode.dispatch"),
    "codemode.integrations.adapters": ("codemode.errors", "codemode.dispatch", "codemode.mode"),
    "codemode.testing": ("codemode.errors", "codemode.dispatch", "codemode.sandbox",
                         "codemode.mode"),
    "codemode.cli": ("codemode.errors", "codemode.dispatch", "codemode.sandbox",
                     "codemode.mode", "sdk_gen", "codemode.integrations"),
    "codemode": ("codemode", "sdk_gen"),  # the package root re-exports the public API
}
"""Most specific prefix wins. A new layer must be placed here before it can import."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _is_project(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    base = package.split(".")
    if node.level > 1:
        base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


@cache
def _imports() -> dict[str, set[str]]:
    """Module → project modules it imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names if _is_project(a.name)}
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(module, path, node)
                if not _is_project(target):
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    edges.add(sub if sub in modules else target)
        edges.discard(module)
        graph[module] = edges
    return graph


def _layer(module: str) -> str:
    return max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_import_graph_is_read_from_every_module() -> None:
    graph = _imports()
    assert "codemode.dispatch.pipeline" in graph and "sdk_gen._generate" in graph
    assert "codemode.dispatch.registry" in graph["codemode.cli.targets"]
    assert "codemode.sandbox.runtime.runner" in graph["codemode.sandbox.executors.inprocess"]


def test_no_import_circles() -> None:
    assert _cycles(_imports()) == []


def test_a_planted_circle_is_found() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


@pytest.mark.parametrize("module", sorted(_modules()))
def test_layers_import_downwards_only(module: str) -> None:
    own = _layer(module)
    allowed = LAYERS[own]
    wrong = sorted(
        target for target in _imports()[module]
        if not (target == own or target.startswith(own + "."))
        and not any(target == a or target.startswith(a + ".") for a in allowed)
    )
    assert wrong == [], f"{module} ({own}) may import only {allowed}"


def _private_reads(module: str, path: Path) -> list[str]:
    """``from m import _x``, and ``name._x`` where ``name`` came from another project module
    (an imported name, or a parameter annotated with one)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported: set[str] = set()
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _is_project(_resolve(module, path, node)):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"line {node.lineno}: imports {alias.name}")
                imported.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            imported |= {(a.asname or a.name).split(".")[0] for a in node.names
                         if _is_project(a.name)}
    typed: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            names = {n.id for n in ast.walk(node.annotation) if isinstance(n, ast.Name)}
            names |= {n.value for n in ast.walk(node.annotation)
                      if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            if names & imported:
                typed.add(node.arg)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and node.attr.startswith("_")
                and not node.attr.startswith("__") and isinstance(node.value, ast.Name)
                and node.value.id in imported | typed):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize("module", sorted(_modules()))
def test_no_module_reads_another_modules_private_names(module: str) -> None:
    assert _private_reads(module, _modules()[module]) == []


def test_a_planted_private_read_is_found(tmp_path: Path) -> None:
    planted = ROOT / "codemode" / "dispatch" / "pipeline.py"
    source = planted.read_text(encoding="utf-8") + (
        "\n\ndef _peek(registry: ToolRegistry) -> object:\n    return registry._tools\n"
        "\nfrom codemode.dispatch.registry import ToolRegistry, _hidden\n"
    )
    copy = tmp_path / "pipeline.py"
    copy.write_text(source, encoding="utf-8")
    reads = _private_reads("codemode.dispatch.pipeline", copy)
    assert any("registry._tools" in r for r in reads)
    assert any("imports _hidden" in r for r in reads)


def test_sdk_gen_needs_codemode_only_for_the_error_root_and_the_spec_type() -> None:
    used = {t for m, targets in _imports().items() if m.startswith("sdk_gen")
            for t in targets if t.startswith("codemode")}
    assert used <= {"codemode.errors", "codemode.dispatch.spec"}
