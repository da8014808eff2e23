"""generate(): inputs it accepts, what it leaves out, how it degrades, what importing costs."""

from __future__ import annotations

import subprocess
import sys
from types import MappingProxyType

import hypothesis.strategies as st
import pytest
from hypothesis import given, settings
from sdkgen_support import ROOT

import sdk_gen
from codemode.dispatch.spec import ToolSpec
from codemode.errors import SdkGenerationError
from sdk_gen import _generate, _types


def test_tool_specs_with_read_only_schemas() -> None:
    params = MappingProxyType(
        {
            "type": "object",
            "properties": MappingProxyType(
                {"tags": {"type": "array", "items": {"type": "string"}}}
            ),
            "required": ("tags",),
        }
    )
    sdk = sdk_gen.generate([ToolSpec(name="tag", description="Tag it.", parameters=params)])
    assert "\ntag: Tag it.\n tags: list[str]\n" in sdk.prompt


def test_tools_hidden_from_code_are_left_out() -> None:
    sdk = sdk_gen.generate([ToolSpec(name="shown"), ToolSpec(name="hidden", visible_in_code=False)])
    assert dict(sdk.names.tools) == {"shown": "shown"}
    assert "hidden" not in sdk.module_source


@pytest.mark.parametrize("bad", [42, {"description": "no name"}, {"name": 3}])
def test_unusable_inputs_are_rejected(bad: object) -> None:
    with pytest.raises(SdkGenerationError):
        sdk_gen.generate([bad])  # type: ignore[list-item]


def test_type_generation_failure_degrades_to_any(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(tool: str, *args: object) -> None:
        raise SdkGenerationError(tool, "boom")

    monkeypatch.setattr(_types, "render_types", fail)  # where _render takes it from
    schema = {"type": "object", "properties": {"o": {"type": "object", "properties": {"a": {}}}}}
    sdk = sdk_gen.generate([{"name": "t", "inputSchema": schema}])
    assert sdk.warnings == ("t: cannot generate SDK for 't': boom",)
    assert "\nt\n o?: {a?: Any}\n" in sdk.prompt, "the prompt reads the schema itself"


def test_files_and_staleness(tmp_path: object) -> None:
    from pathlib import Path

    root = Path(str(tmp_path))
    sdk = sdk_gen.generate([{"name": "a"}])
    assert sdk.stale_files(root) == list(sdk_gen.FILES)
    paths = sdk.write(root)
    assert [p.name for p in paths] == list(sdk_gen.FILES)
    assert sdk.stale_files(root) == []
    assert sdk.prompt_chars == len((root / "prompt.txt").read_text(encoding="utf-8"))


def test_import_is_cheap() -> None:
    """The type generator is imported on first use, not with the package."""
    code = "import sys, sdk_gen; print('datamodel_code_generator' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "False"


def test_cache_keeps_property_order_apart() -> None:
    """Key order decides parameter order, so it is part of the cache key."""
    ab = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    ba = {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "string"}}}
    cache = sdk_gen.SdkCache()
    first = sdk_gen.generate([{"name": "t", "inputSchema": ab}], cache=cache)
    second = sdk_gen.generate([{"name": "t", "inputSchema": ba}], cache=cache)
    assert "\nt\n a?: str\n b?: str\n" in first.prompt
    assert "\nt\n b?: str\n a?: str\n" in second.prompt
    assert cache.misses == 2


def test_generated_type_names_never_go_to_the_wrong_schema() -> None:
    """A nested ``filter`` field must not take the name meant for the ``filter`` argument."""
    nested = {"type": "object", "properties": {"nested": {"type": "string"}}}
    schema = {
        "type": "object",
        "properties": {
            "opts": {"type": "object", "properties": {"filter": nested}},
            "filter": {"type": "object", "properties": {"top": {"type": "string"}}},
        },
    }
    output = {
        "type": "object",
        "properties": {
            "results": {"type": "array", "items": {"type": "object", "properties": {"q": {}}}}
        },
    }
    sdk = sdk_gen.generate([{"name": "t", "inputSchema": schema, "outputSchema": output}])
    stub = sdk.stub_source
    assert "class TFilterArg(TypedDict):\n    top: NotRequired[str]" in stub
    assert "class TOutput(TypedDict):\n    results: NotRequired[list[TResult]]" in stub
    assert "opts: TOpts = ...,\n    filter: TFilterArg = ...,\n) -> TOutput:" in stub
    assert "\n opts?: {filter?: {nested?: str}}\n filter?: {top?: str}\n" in sdk.prompt


_KEYS = st.sampled_from(
    [
        "type",
        "properties",
        "required",
        "items",
        "anyOf",
        "oneOf",
        "allOf",
        "enum",
        "const",
        "default",
        "description",
        "$ref",
        "$defs",
        "additionalProperties",
        "nullable",
        "format",
    ]
)
_NAMES = st.sampled_from(["a", "from", "@x", "1st", "", "type", "é", "a-b", "_invoke", "Model"])
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["string", "object", "array", "integer", "null", "weird", "#/$defs/A", "#"]),
    st.sampled_from(["#/properties/a", "#/definitions/B", "http://example.invalid/s.json"]),
)
_JSON = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.one_of(_KEYS, _NAMES), inner, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, database=None)
@given(_JSON, _JSON)
def test_arbitrary_json_never_breaks_generation(params: object, output: object) -> None:
    """Whatever the schemas hold, the SDK renders and its sources compile."""
    spec = {
        "name": "t",
        "inputSchema": params if isinstance(params, dict) else {},
        "outputSchema": output if isinstance(output, dict) else None,
    }
    sdk = sdk_gen.generate([spec])
    compile(sdk.module_source, "tools.py", "exec")
    compile(sdk.stub_source, "tools.pyi", "exec")
    assert sdk.names.python_to_wire("t") == "t"


def test_unreadable_spec_degrades_to_any_keywords(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("surprise")

    monkeypatch.setattr(_generate, "argument_names", broken)
    monkeypatch.setattr(_generate, "render_tool", broken)
    sdk = sdk_gen.generate([{"name": "t", "description": "Still listed."}])
    assert "\nt: Still listed.\n **extra_arguments: Any\n" in sdk.prompt
    assert sdk.warnings == (
        "t: cannot read the schema (KeyError: 'surprise'); typed as **extra_arguments: Any",
    )
