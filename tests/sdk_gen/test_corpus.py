"""The whole real-world corpus: every tool renders, imports, type-checks and round-trips."""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING

import jsonschema
import pytest
from sdkgen_support import InstanceMaker, Recorder, function_for, type_check_and_lint

import sdk_gen
from sdk_gen._audit import FACTS, audit_prompt
from sdk_gen._schema import root_object

if TYPE_CHECKING:
    from pathlib import Path

    from conftest import CorpusSdk

INSTANCES_PER_TOOL = 3


def test_every_tool_generates_without_degrading(corpus_sdks: list[CorpusSdk]) -> None:
    assert sum(len(c.tools) for c in corpus_sdks) == 1161
    for batch in corpus_sdks:
        assert batch.sdk.warnings == ()
        assert sorted(batch.sdk.names.tools.values()) == sorted(t["name"] for t in batch.tools)


def test_every_tool_is_callable_in_the_module(corpus_sdks: list[CorpusSdk]) -> None:
    for batch in corpus_sdks:
        for path in batch.sdk.names.tools:
            assert callable(function_for(batch.module, path)), path


def test_every_declared_argument_is_mapped(corpus_sdks: list[CorpusSdk]) -> None:
    for batch in corpus_sdks:
        for tool in batch.tools:
            declared = set(tool["inputSchema"].get("properties", {}))
            mapped = set(batch.sdk.names.arguments[tool["name"]].values())
            assert declared <= mapped, tool["name"]


def test_prompt_keeps_names_required_enums_defaults_descriptions(
    corpus_sdks: list[CorpusSdk],
) -> None:
    checked: Counter[str] = Counter()
    for batch in corpus_sdks:
        batch_checked, lost = audit_prompt(batch.tools, batch.sdk)
        assert lost == []
        checked.update(batch_checked)
    assert set(checked) == set(FACTS) | {f"nested {kind}" for kind in FACTS}
    assert min(checked[kind] for kind in FACTS) > 1000
    assert checked["nested names"] > 500 and checked["nested descriptions"] > 500


def test_prompt_is_smaller_than_the_json_definitions(corpus_sdks: list[CorpusSdk]) -> None:
    prompt = sum(batch.sdk.prompt_chars for batch in corpus_sdks)
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    raw = sum(
        len(json.dumps({k: v for k, v in t.items() if k != "namespace"}, **compact))
        for batch in corpus_sdks
        for t in batch.tools
    )
    assert prompt <= 0.5 * raw, "the issue's target: at most half of the compact JSON"


async def test_generated_instances_round_trip(corpus_sdks: list[CorpusSdk]) -> None:
    """Arguments built from Python names reach the transport with exact wire names and values."""
    valid = total = 0
    for batch in corpus_sdks:
        rec = Recorder()
        batch.module.set_transport(rec)
        try:
            for seed, tool in enumerate(batch.tools):
                schema = tool["inputSchema"]
                to_py = {w: p for p, w in batch.sdk.names.arguments[tool["name"]].items()}
                func = function_for(batch.module, batch.sdk.names.wire_to_python(tool["name"]))
                maker = InstanceMaker(schema, seed)
                root = root_object(maker.root, maker.defs)
                validator = jsonschema.validators.validator_for(schema)(schema)
                for _ in range(INSTANCES_PER_TOOL):
                    instance = maker.arguments(root.properties, root.required)
                    total += 1
                    valid += validator.is_valid(instance)
                    rec.calls.clear()
                    await func(**{to_py[k]: v for k, v in instance.items()})
                    sent = [(name, json.dumps(args, sort_keys=True)) for name, args in rec.calls]
                    assert sent == [(tool["name"], json.dumps(instance, sort_keys=True))]
        finally:
            batch.module.set_transport(None)
    assert total == 1161 * INSTANCES_PER_TOOL
    assert valid / total > 0.95, f"only {valid}/{total} generated instances were schema-valid"


@pytest.mark.timeout(300)
def test_generated_sources_type_check_and_lint(
    corpus_sdks: list[CorpusSdk], generated_dir: Path
) -> None:
    """One mypy --strict and one ruff run over every generated corpus module and stub
    (the shapes SDK is checked on its own, without the corpus: test_shapes.py)."""
    files = sorted(str(p) for p in generated_dir.iterdir()
                   if p.suffix in {".py", ".pyi"} and p.name.startswith("corpus_"))
    assert len(files) == 2 * len(corpus_sdks)
    type_check_and_lint(files, generated_dir)


def test_incremental_regeneration_renders_only_the_changed_tool(
    corpus_sdks: list[CorpusSdk],
) -> None:
    tools = corpus_sdks[0].tools[:150]
    cache = sdk_gen.SdkCache()
    first = sdk_gen.generate(tools, cache=cache)
    assert (cache.misses, cache.hits) == (len(tools), 0)
    changed = [dict(tools[0], description="changed"), *tools[1:]]
    second = sdk_gen.generate(changed, cache=cache)
    assert (cache.misses, cache.hits) == (len(tools) + 1, len(tools) - 1)
    assert first.module_source != second.module_source
    assert sdk_gen.generate(tools, cache=cache) == first


def test_disposed_tool_disappears(corpus_sdks: list[CorpusSdk]) -> None:
    tools = corpus_sdks[0].tools[:150]
    gone = tools[0]["name"]
    sdk = sdk_gen.generate(tools[1:])
    assert gone not in sdk.names.tools.values()
    assert gone not in sdk.names.arguments
