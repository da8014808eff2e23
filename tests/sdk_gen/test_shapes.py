"""Synthetic schemas for every messy shape: generation, import, call semantics, round trip."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_jsonschema import from_schema
from sdkgen_support import (
    SHAPES,
    InstanceMaker,
    Recorder,
    function_for,
    load_sdk,
    type_check_and_lint,
)

from sdk_gen._audit import FACTS, audit_prompt
from sdk_gen._schema import normalize, root_object
from sdk_gen._text import TRUNCATED

if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType

    import sdk_gen


@pytest.fixture
def recorder(shapes_module: ModuleType) -> Any:
    rec = Recorder(answer={"ok": True})
    shapes_module.set_transport(rec)
    yield rec
    shapes_module.set_transport(None)


def _wire_names(sdk: sdk_gen.GeneratedSDK, tool: str) -> dict[str, str]:
    return {wire: py for py, wire in sdk.names.arguments[tool].items()}


def test_every_shape_generates_without_degrading(shapes_sdk: sdk_gen.GeneratedSDK) -> None:
    assert shapes_sdk.warnings == ()
    assert sorted(shapes_sdk.names.tools.values()) == sorted(t["name"] for t in SHAPES)


async def test_omitted_arguments_are_not_sent(
    shapes_module: ModuleType, recorder: Recorder
) -> None:
    await shapes_module.defaults()
    await shapes_module.defaults(cursor=None, limit=5)
    assert recorder.calls == [("defaults", {}), ("defaults", {"cursor": None, "limit": 5})]


async def test_result_comes_back_unchanged(shapes_module: ModuleType, recorder: Recorder) -> None:
    assert await shapes_module.with_output(q="x") == {"ok": True}


async def test_extra_keys_pass_through_verbatim(
    shapes_module: ModuleType, recorder: Recorder
) -> None:
    await shapes_module.extra_keys(known="k", **{"x-y": 1, "z": 2})
    assert recorder.calls == [("extra-keys", {"known": "k", "x-y": 1, "z": 2})]


async def test_namespaced_and_colliding_tools(
    shapes_module: ModuleType, recorder: Recorder
) -> None:
    await shapes_module.github.get_issue(number=7)
    await shapes_module.github.get_issue_()
    await shapes_module.github_()
    await shapes_module.list_()
    assert [c[0] for c in recorder.calls] == ["get_issue", "get-issue", "github", "list"]


async def test_property_names_round_trip(
    shapes_sdk: sdk_gen.GeneratedSDK, shapes_module: ModuleType, recorder: Recorder
) -> None:
    schema = next(t for t in SHAPES if t["name"] == "property-names")["inputSchema"]
    wire_args = {name: f"v{i}" for i, name in enumerate(schema["properties"])}
    to_py = _wire_names(shapes_sdk, "property-names")
    await shapes_module.property_names(**{to_py[w]: v for w, v in wire_args.items()})
    assert recorder.calls == [("property-names", wire_args)]


async def test_calling_without_transport_fails_clearly(shapes_module: ModuleType) -> None:
    shapes_module.set_transport(None)
    with pytest.raises(RuntimeError, match="set_transport"):
        await shapes_module.no_params()


async def test_missing_required_argument_is_a_type_error(shapes_module: ModuleType) -> None:
    with pytest.raises(TypeError, match="target"):
        await shapes_module.any_of_objects()


def test_prompt_audit_finds_nothing_lost(shapes_sdk: sdk_gen.GeneratedSDK) -> None:
    checked, lost = audit_prompt(SHAPES, shapes_sdk)
    assert lost == []
    assert set(FACTS) <= set(checked)
    assert checked["nested names"] > 0 and checked["nested required"] > 0


def test_long_descriptions_truncated_in_prompt_only(shapes_sdk: sdk_gen.GeneratedSDK) -> None:
    assert TRUNCATED in shapes_sdk.prompt
    assert TRUNCATED not in shapes_sdk.module_source
    assert ("Word " * 399).strip() in " ".join(shapes_sdk.module_source.split())


@pytest.mark.parametrize(
    ("fragment", "where"),
    [
        (" limit?: int = 30 # (>= 1; <= 100)\n", "prompt"),
        (" cursor?: str|None = None\n", "prompt"),
        (' state?: "open"|"closed"\n', "prompt"),
        (' maybe?: "a"|None\n', "prompt"),
        (' version: "v1"\n', "prompt"),
        ("format date-time", "prompt"),
        ("pattern ^[^@]+@[^@]+$", "prompt"),
        ("**extra_arguments: int", "prompt"),
        ("ghost: Any", "prompt"),
        (" tree: Node\n", "prompt"),
        (" Node = {value: str, children?: list[Node]}\n", "prompt"),
        (" target: {id: int}|{slug?: str}|str\n", "prompt"),
        (" rows?: list[{k?: str, v?: Any}]\n", "prompt"),
        ("\n nested?: dict\n  id?: str # (format uuid)\n", "prompt"),
        ("cursor: str | None = OMIT", "module"),
        ("Default: None.", "module"),
        ("(wire name 'user-id')", "module"),
        ("cursor: str | None = ...", "stub"),
    ],
)
def test_rendered_fragments(shapes_sdk: sdk_gen.GeneratedSDK, fragment: str, where: str) -> None:
    text = {
        "prompt": shapes_sdk.prompt,
        "module": shapes_sdk.module_source,
        "stub": shapes_sdk.stub_source,
    }
    assert fragment in text[where]


ROUND_TRIP = [t for t in SHAPES if t["name"] not in {"property-names"}]
RECURSIVE = {"refs"}
"""hypothesis-jsonschema cannot resolve recursive refs: these use the corpus instance maker."""


@pytest.mark.parametrize("tool", ROUND_TRIP, ids=lambda t: t["name"])
def test_generated_instances_round_trip(
    tool: dict[str, Any], shapes_sdk: sdk_gen.GeneratedSDK, shapes_module: ModuleType
) -> None:
    """hypothesis-jsonschema instances, called through Python names, arrive as sent."""
    import anyio

    schema = tool["inputSchema"]
    body, defs = normalize(schema)
    props = root_object(body, defs).properties
    strict = {
        **body,
        "$defs": defs,
        "type": "object",
        "properties": props,
        "additionalProperties": False,
    }
    to_py = _wire_names(shapes_sdk, tool["name"])
    path = shapes_sdk.names.wire_to_python(tool["name"])
    func = function_for(shapes_module, path)

    if tool["name"] in RECURSIVE:
        required = root_object(body, defs).required
        instances = st.integers(0, 2**32).map(
            lambda seed: InstanceMaker(schema, seed).arguments(props, required)
        )
    else:
        instances = from_schema(strict)

    @settings(
        max_examples=15, deadline=None, suppress_health_check=list(HealthCheck), database=None
    )
    @given(instances)
    def check(instance: dict[str, Any]) -> None:
        rec = Recorder()
        shapes_module.set_transport(rec)
        anyio.run(lambda: func(**{to_py[k]: v for k, v in instance.items()}))
        assert [(n, json.dumps(a, sort_keys=True)) for n, a in rec.calls] == [
            (tool["name"], json.dumps(instance, sort_keys=True))
        ]

    try:
        check()
    finally:
        shapes_module.set_transport(None)


USAGE_OK = """
import tools

async def main() -> None:
    result = await tools.with_output(q="x")
    total: int = result.get("total", 0)
    first = result["items"][0].get("id")
    await tools.defaults(limit=5, cursor=None, tags=["a"])
    await tools.property_names(from_="a", user_id_="b", type_="t")
    await tools.github.get_issue(number=1)
    await tools.extra_keys(known="k", anything=3)
    print(total, first)
"""

USAGE_BAD = {
    "wrong type": 'await tools.defaults(limit="5")',
    "unknown argument": "await tools.defaults(limitt=5)",
    "missing required": "await tools.github.get_issue()",
    "positional": "await tools.github.get_issue(1)",
    "wire name instead of python name": 'await tools.property_names(**{"from": "a"})',
    "not in enum": 'await tools.enums_and_consts(version="v2")',
    "wrong extra type": 'await tools.extra_keys(other="x")',
}


def test_stub_lets_right_calls_through_and_stops_wrong_ones(
    shapes_sdk: sdk_gen.GeneratedSDK, tmp_path: Path
) -> None:
    (tmp_path / "tools.pyi").write_text(shapes_sdk.stub_source, encoding="utf-8")
    (tmp_path / "ok.py").write_text(USAGE_OK, encoding="utf-8")
    for index, line in enumerate(USAGE_BAD.values()):
        body = f"import tools\n\nasync def main() -> None:\n    {line}\n"
        (tmp_path / f"bad_{index}.py").write_text(body, encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    failing = {line.split(":")[0] for line in run.stdout.splitlines() if ": error:" in line}
    assert failing == {f"bad_{i}.py" for i in range(len(USAGE_BAD))}, run.stdout


@pytest.mark.timeout(300)
def test_shapes_sources_type_check_and_lint(
    shapes_sdk: sdk_gen.GeneratedSDK, tmp_path: Path
) -> None:
    """mypy --strict and ruff over the shapes SDK's module and stub: needs no corpus."""
    load_sdk(shapes_sdk, tmp_path, "shapes_checked")
    files = sorted(str(p) for p in tmp_path.iterdir() if p.suffix in {".py", ".pyi"})
    assert [p.rsplit("/", 1)[1] for p in files] == ["shapes_checked.py", "shapes_checked_stub.pyi"]
    type_check_and_lint(files, tmp_path)
