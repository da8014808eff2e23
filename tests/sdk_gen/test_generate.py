"""generate(): inputs it accepts, what it leaves out, how it degrades, what importing costs."""

from __future__ import annotations

import subprocess
import sys
from types import MappingProxyType

import pytest
from sdkgen_support import ROOT

import sdk_gen
from codemode.errors import SdkGenerationError
from codemode.spec import ToolSpec
from sdk_gen import _render


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
    assert "async def tag(tags: list[str])" in sdk.prompt


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

    monkeypatch.setattr(_render, "render_types", fail)
    schema = {"type": "object", "properties": {"o": {"type": "object", "properties": {"a": {}}}}}
    sdk = sdk_gen.generate([{"name": "t", "inputSchema": schema}])
    assert sdk.warnings == ("t: cannot generate SDK for 't': boom",)
    assert "async def t(o: Any = ...)" in sdk.prompt


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
    assert "t(a: str = ..., b: str = ...)" in first.prompt
    assert "t(b: str = ..., a: str = ...)" in second.prompt
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
    assert "class TFilterArg(TypedDict):\n    top: NotRequired[str]" in sdk.prompt
    assert "class TOutput(TypedDict):\n    results: NotRequired[list[TResult]]" in sdk.prompt
    assert "async def t(opts: TOpts = ..., filter: TFilterArg = ...) -> TOutput" in sdk.prompt
