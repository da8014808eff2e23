"""Names and prompt come without the type generator; typed files render on first use, with
progress; a CodeMode can build its prompt off the event loop."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
import threading
from typing import Any

import pytest

import codemode as cm
import sdk_gen
from codemode.errors import SdkGenerationError

ADDRESS = {
    "type": "object",
    "description": "A postal address.",
    "properties": {
        "city": {"type": "string"},
        "geo": {"type": "object", "properties": {"lat": {"type": "number"}}},
    },
    "required": ["city"],
}


def nested(i: int) -> dict[str, Any]:
    return {
        "name": f"ship_{i}",
        "description": f"Ship parcel {i}.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "to": ADDRESS,
                "items": {"type": "array", "items": {"type": "object", "properties": {
                    "sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}}}},
                "speed": {"enum": ["slow", "fast"], "default": "slow"},
            },
            "required": ["to"],
        },
        "outputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
    }


TOOLS = [nested(i) for i in range(6)]


def test_a_prompt_never_imports_the_type_generator() -> None:
    code = textwrap.dedent(
        f"""
        import sys
        import codemode as cm
        import sdk_gen
        tools = {TOOLS!r}
        sdk = sdk_gen.generate(tools)
        registry = cm.ToolRegistry()
        for t in tools:
            registry.register(cm.define_tool(name=t["name"], parameters=t["inputSchema"],
                                             execute=lambda args: None))
        prompt = cm.CodeMode(registry, executor=cm.InProcessExecutor()).prompt()
        assert "ship_5" in sdk.prompt and "ship_5" in prompt
        print("datamodel_code_generator" in sys.modules)
        sdk.module_source
        print("datamodel_code_generator" in sys.modules)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.split() == ["False", "True"], out.stderr


def test_typed_files_first_or_never_give_the_same_prompt_and_names() -> None:
    typed_first = sdk_gen.generate(TOOLS)
    module = typed_first.module_source
    prompt_only = sdk_gen.generate(TOOLS)
    assert (typed_first.prompt, typed_first.names) == (prompt_only.prompt, prompt_only.names)
    assert prompt_only.module_source == module
    assert prompt_only == typed_first
    assert "class Ship0To(TypedDict):" in module and "to: Ship0To," in module


def test_typed_files_report_progress_tool_by_tool() -> None:
    seen: list[tuple[int, int]] = []
    sdk = sdk_gen.generate(TOOLS)
    sdk.render_files(progress=lambda done, total: seen.append((done, total)))
    assert seen == [(n, 6) for n in range(1, 7)]
    sdk.render_files(progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (6, 6) and len(seen) == 7  # already rendered: one final report


def test_one_changed_tool_renders_one_outline_and_one_piece() -> None:
    cache = sdk_gen.SdkCache()
    first = sdk_gen.generate(TOOLS, cache=cache)
    first.render_files()
    before = cache.misses
    changed = [*TOOLS[:3], {**TOOLS[3], "description": "Ship it now."}, *TOOLS[4:]]
    second = sdk_gen.generate(changed, cache=cache)
    assert cache.misses == before + 1 and "ship_3: Ship it now." in second.prompt
    assert "Ship it now." in second.module_source
    assert cache.misses == before + 2


def test_a_schema_dict_changed_in_place_is_read_again() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {"a": {"type": "string"}}}
    tool = {"name": "t", "inputSchema": schema}
    cache = sdk_gen.SdkCache()
    assert "\n a?: str" in sdk_gen.generate([tool], cache=cache).prompt
    schema["properties"]["a"] = {"type": "integer"}
    assert "\n a?: int" in sdk_gen.generate([tool], cache=cache).prompt


def test_without_the_type_generator_typed_files_say_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "datamodel_code_generator" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)  # what sdk_gen asks
    sdk = sdk_gen.generate(TOOLS)
    assert "ship_0: Ship parcel 0." in sdk.prompt
    with pytest.raises(SdkGenerationError, match=r"pip install 'codemode\[types\]'"):
        sdk.module_source  # noqa: B018 - the property renders


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_aprompt_generates_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    registry = cm.ToolRegistry()
    for t in TOOLS:
        registry.register(cm.define_tool(name=t["name"], parameters=t["inputSchema"],
                                         execute=lambda args: None))
    threads: list[int] = []
    real = sdk_gen.generate

    def generate(*args: Any, **kwargs: Any) -> sdk_gen.GeneratedSDK:
        threads.append(threading.get_ident())
        return real(*args, **kwargs)

    monkeypatch.setattr(sdk_gen, "generate", generate)
    mode = cm.CodeMode(registry, executor=cm.InProcessExecutor())
    text = await mode.aprompt(inputs={"budget": 3})
    assert threads and threading.get_ident() not in threads
    assert text == mode.prompt(inputs={"budget": 3}) and "ship_5" in text
    assert len(threads) == 1  # the second prompt came from the cache


def test_what_the_cache_keeps_leaves_the_garbage_collector_little_to_scan() -> None:
    """A full GC pass scans every tracked object of the process and holds the GIL (a long
    stall for a server's event loop): the cached prompt lines are flat tuples of strings,
    which the collector stops tracking, and an unchanged tool keeps its slot and names
    across regenerations instead of allocating new ones."""
    import gc

    cache = sdk_gen.SdkCache()
    specs = [sdk_gen.as_spec(tool) for tool in TOOLS]
    first = sdk_gen.generate(specs, cache=cache)
    gc.collect()
    prompts = [cache.outline(spec, path=spec.name).prompt for spec in specs]
    assert all(prompt.rows and not gc.is_tracked(prompt.rows) for prompt in prompts)
    assert not any(isinstance(row, tuple) for prompt in prompts for row in prompt.rows)
    slots = [cache.slot(spec, None, spec.name) for spec in specs]
    changed = [*specs[:-1], sdk_gen.as_spec({**TOOLS[-1], "description": "Changed."})]
    again = sdk_gen.generate(changed, cache=cache)
    assert "Changed." in again.prompt
    assert all(cache.slot(s, None, s.name) is slot for s, slot in zip(specs, slots, strict=False))
    unchanged = TOOLS[0]["name"]
    assert again.names.arguments[unchanged] is first.names.arguments[unchanged]
