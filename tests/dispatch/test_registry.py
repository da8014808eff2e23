"""The registry: names → tools, duplicate policy, disposable registrations, close matches."""

from __future__ import annotations

import pytest

import codemode as cm

from .support import call, echo


def make(name: str, description: str = "") -> cm.Tool:
    return cm.define_tool(name=name, description=description, execute=echo)


def test_register_returns_an_active_registration(registry: cm.ToolRegistry) -> None:
    tool = make("a")
    registration = registry.register(tool)
    assert isinstance(registration, cm.Registration)
    assert registration.tool is tool and registration.active
    assert "a" in registry and len(registry) == 1
    assert registry.get("a") is tool
    assert repr(registration) == "<Registration 'a' active>"


def test_specs_are_the_model_visible_projection_in_order(registry: cm.ToolRegistry) -> None:
    for name in ("b", "a", "c"):
        registry.register(make(name, f"tool {name}"))
    specs = registry.specs()
    assert [s.name for s in specs] == ["b", "a", "c"]
    assert all(type(s) is cm.ToolSpec for s in specs)
    assert specs[0].description == "tool b"
    assert not hasattr(specs[0], "handler")


def test_duplicate_name_is_refused_by_default(registry: cm.ToolRegistry) -> None:
    first = make("a")
    registry.register(first)
    with pytest.raises(cm.DuplicateToolError, match="already registered") as caught:
        registry.register(make("a"))
    assert isinstance(caught.value, cm.ToolDefinitionError)
    assert caught.value.tool == "a"
    assert registry.get("a") is first


@pytest.mark.parametrize("how", ["policy", "per-call"])
def test_replace_policy_swaps_the_tool(how: str) -> None:
    registry = cm.ToolRegistry(duplicates="replace") if how == "policy" else cm.ToolRegistry()
    old, new = make("a", "old"), make("a", "new")
    first = registry.register(old)
    second = registry.register(new) if how == "policy" else registry.register(new, replace=True)
    assert registry.get("a") is new
    assert not first.active and second.active
    assert [s.description for s in registry.specs()] == ["new"]


def test_replace_policy_can_be_refused_per_call() -> None:
    registry = cm.ToolRegistry(duplicates="replace")
    registry.register(make("a"))
    with pytest.raises(cm.DuplicateToolError):
        registry.register(make("a"), replace=False)


def test_unknown_policy_and_non_tools_are_refused(registry: cm.ToolRegistry) -> None:
    with pytest.raises(ValueError, match="duplicates must be"):
        cm.ToolRegistry(duplicates="ignore")  # type: ignore[arg-type]
    with pytest.raises(cm.ToolDefinitionError, match="takes a Tool"):
        registry.register(echo)  # type: ignore[arg-type]


async def test_dispose_unregisters_and_is_idempotent(registry: cm.ToolRegistry) -> None:
    registration = registry.register(make("a"))
    version = registry.version
    registration.dispose()
    assert "a" not in registry and registry.specs() == ()
    assert not registration.active and registry.version == version + 1
    registration.dispose()
    assert registry.version == version + 1
    result = await registry.execute(call("a"))
    assert result.is_error and result.error is not None and result.error.kind == "unknown_tool"
    assert repr(registration) == "<Registration 'a' disposed>"


@pytest.mark.parametrize("same_object", [False, True])
def test_disposing_a_replaced_registration_keeps_the_newer_tool(
    registry: cm.ToolRegistry, same_object: bool
) -> None:
    old = make("a")
    new = old if same_object else make("a")
    first = registry.register(old)
    second = registry.register(new, replace=True)
    first.dispose()
    assert registry.get("a") is new and second.active
    second.dispose()
    assert "a" not in registry


def test_registration_is_a_context_manager(registry: cm.ToolRegistry) -> None:
    with registry.register(make("a")) as registration:
        assert registration.active and "a" in registry
    assert not registration.active and "a" not in registry


def test_re_registering_after_dispose_works(registry: cm.ToolRegistry) -> None:
    registry.register(make("a")).dispose()
    again = registry.register(make("a"))
    assert again.active


@pytest.mark.parametrize(
    ("name", "suggestions"),
    [
        ("read_fil", ("read_file", "read_files")),
        ("write", ()),
        ("serch", ("search",)),
    ],
)
async def test_unknown_tool_lists_close_matches(
    registry: cm.ToolRegistry, name: str, suggestions: tuple[str, ...]
) -> None:
    for known in ("read_file", "read_files", "search", "delete_everything"):
        registry.register(make(known))
    with pytest.raises(cm.UnknownToolError) as caught:
        registry.get(name)
    assert caught.value.suggestions == suggestions
    result = await registry.execute(call(name))
    assert result.is_error and result.error is not None
    assert result.error.kind == "unknown_tool"
    assert result.text == str(caught.value)
    assert result.text.startswith(f"unknown tool {name!r}")
    for suggestion in suggestions:
        assert repr(suggestion) in result.text
    assert ("did you mean" in result.text) == bool(suggestions)


def test_subscribe_returns_an_unsubscribe(registry: cm.ToolRegistry) -> None:
    seen: list[cm.ToolEvent] = []
    unsubscribe = registry.subscribe(seen.append)
    unsubscribe()
    unsubscribe()
    assert registry.hooks.subscribers == []


@pytest.mark.parametrize(
    "method", ["pre_execute", "guard", "wrap_execute", "post_execute", "on_result"]
)
def test_hook_registration_returns_the_function_and_refuses_non_callables(
    registry: cm.ToolRegistry, method: str
) -> None:
    def hook(*args: object) -> None:
        return None

    assert getattr(registry, method)(hook) is hook
    with pytest.raises(TypeError, match="hook must be callable"):
        getattr(registry, method)("not callable")
