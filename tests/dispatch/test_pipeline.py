"""The pipeline's validation stage and the handler call: what reaches a handler, and how."""

from __future__ import annotations

import dataclasses
import math
import threading
from types import MappingProxyType
from typing import Any

import pytest

import codemode as cm
from codemode.dispatch.schema import PROBLEM_TEXT

from .support import call, echo

SCHEMA: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "point": {
            "type": "object",
            "properties": {"x": {"type": "number"}},
            "required": ["x"],
            "additionalProperties": False,
        }
    },
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 8, "pattern": "^[a-z]+$"},
        "count": {"type": "integer", "minimum": 0, "maximum": 10},
        "mode": {"enum": ["fast", "slow"]},
        "version": {"const": 2},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
        "owner": {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "emails": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["id"],
        },
        "id": {"oneOf": [{"type": "integer"}, {"type": "string", "minLength": 3}]},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "at": {"$ref": "#/$defs/point"},
    },
    "required": ["name"],
    "additionalProperties": False,
}


@pytest.fixture
def handled(registry: cm.ToolRegistry) -> list[Any]:
    seen: list[Any] = []

    async def handler(args: Any, ctx: cm.ExecContext) -> str:
        seen.append(args)
        return "ok"

    registry.register(cm.define_tool(name="t", parameters=SCHEMA, execute=handler))
    return seen


@pytest.mark.parametrize(
    ("arguments", "path", "message"),
    [
        pytest.param({"name": 3}, "$.name", "3 is not of type 'string'", id="type"),
        pytest.param({}, "$", "'name' is a required property", id="required"),
        pytest.param(
            {"name": "ab", "mode": "medium"},
            "$.mode",
            "'medium' is not one of ['fast', 'slow']",
            id="enum",
        ),
        pytest.param({"name": "ab", "version": 3}, "$.version", "2 was expected", id="const"),
        pytest.param(
            {"name": "ab", "count": 11},
            "$.count",
            "11 is greater than the maximum of 10",
            id="maximum",
        ),
        pytest.param(
            {"name": "ab", "count": -1}, "$.count", "-1 is less than the minimum of 0", id="minimum"
        ),
        pytest.param({"name": "a"}, "$.name", "'a' is too short", id="minLength"),
        pytest.param({"name": "abcdefghi"}, "$.name", "is too long", id="maxLength"),
        pytest.param({"name": "AB"}, "$.name", "'AB' does not match '^[a-z]+$'", id="pattern"),
        pytest.param(
            {"name": "ab", "tags": ["a", "b", "c"]}, "$.tags", "is too long", id="maxItems"
        ),
        pytest.param(
            {"name": "ab", "tags": ["a", 5]},
            "$.tags[1]",
            "5 is not of type 'string'",
            id="array-items",
        ),
        pytest.param(
            {"name": "ab", "owner": {}},
            "$.owner",
            "'id' is a required property",
            id="nested-required",
        ),
        pytest.param(
            {"name": "ab", "owner": {"id": 1, "emails": ["a", None]}},
            "$.owner.emails[1]",
            "None is not of type 'string'",
            id="nested-object-array",
        ),
        pytest.param(
            {"name": "ab", "extra": 1},
            "$",
            "Additional properties are not allowed ('extra' was unexpected)",
            id="additionalProperties",
        ),
        pytest.param(
            {"name": "ab", "id": "x"},
            "$.id",
            "'x' is too short",  # the only string alternative's own problem
            id="oneOf",
        ),
        pytest.param(
            {"name": "ab", "note": 5},
            "$.note",
            "5 (integer) matches none of 2 alternatives: (1) string; (2) null",
            id="anyOf",
        ),
        pytest.param(
            {"name": "ab", "at": {"x": "far"}},
            "$.at.x",
            "'far' is not of type 'number'",
            id="ref-defs",
        ),
        pytest.param(
            {"name": "ab", "at": {"x": 1, "y": 2}},
            "$.at",
            "('y' was unexpected)",
            id="ref-additionalProperties",
        ),
    ],
)
async def test_invalid_arguments_are_rejected_with_their_path(
    registry: cm.ToolRegistry,
    handled: list[Any],
    arguments: dict[str, Any],
    path: str,
    message: str,
) -> None:
    result = await registry.execute(call("t", arguments))
    assert result.is_error
    assert result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert result.error.path == path
    assert f"{path}: " in result.text and message in result.text
    assert result.text.startswith("invalid arguments for 't': ")
    assert handled == []


async def test_valid_arguments_reach_the_handler_frozen(
    registry: cm.ToolRegistry, handled: list[Any]
) -> None:
    arguments = {
        "name": "ab",
        "count": 3,
        "mode": "fast",
        "version": 2,
        "tags": ["x"],
        "owner": {"id": 1, "emails": []},
        "id": 7,
        "note": None,
        "at": {"x": 1.5},
    }
    result = await registry.execute(call("t", arguments))
    assert not result.is_error, result.text
    assert handled == [{**arguments, "tags": ("x",), "owner": {"id": 1, "emails": ()}}]
    assert isinstance(handled[0], cm.FrozenDict)


async def test_every_problem_is_listed_up_to_five(registry: cm.ToolRegistry) -> None:
    properties = {f"p{i}": {"type": "integer"} for i in range(8)}
    registry.register(
        cm.define_tool(
            name="many", parameters={"type": "object", "properties": properties}, execute=echo
        )
    )
    result = await registry.execute(call("many", {f"p{i}": "x" for i in range(8)}))
    assert result.is_error
    assert result.text.count("is not of type 'integer'") == 5
    assert result.text.endswith("(and 3 more)")


@pytest.mark.parametrize(
    ("value", "start", "end"),
    [
        pytest.param("a" * 3_000_000, "$.count: 'aaaa", "' is not of type 'integer'",
                     id="long-text"),
        pytest.param({f"k{i}": i for i in range(100_000)}, "$.count: {'k0': 0, 'k1': 1",
                     "'k99999': 99999} is not of type 'integer'", id="wide-object"),
    ],
)
async def test_a_huge_bad_value_is_quoted_by_its_ends(
    registry: cm.ToolRegistry, handled: list[Any], value: Any, start: str, end: str
) -> None:
    result = await registry.execute(call("t", {"name": "ab", "count": value}))
    assert result.error is not None and result.error.kind == "invalid_arguments"
    problem = result.text.removeprefix("invalid arguments for 't': ")
    assert problem.startswith(start) and problem.endswith(end)
    assert " characters] … " in problem
    assert len(problem) <= len("$.count: ") + PROBLEM_TEXT + len(" … [9,999,999 characters] … ")
    assert handled == []


@pytest.mark.parametrize(
    ("arguments", "path", "message"),
    [
        (["not", "an", "object"], "$", "expected a JSON object, got list"),
        ("text", "$", "expected a JSON object, got str"),
        ({"name": "ab", "at": {"x": math.nan}}, "$.at.x", "float is not JSON data"),
        ({"name": "ab", "at": {"x": math.inf}}, "$.at.x", "float is not JSON data"),
    ],
)
async def test_non_object_or_non_json_arguments_are_rejected(
    registry: cm.ToolRegistry, handled: list[Any], arguments: Any, path: str, message: str
) -> None:
    result = await registry.execute(call("t", arguments))
    assert result.is_error and result.error is not None
    assert result.error.kind == "invalid_arguments"
    assert result.error.path == path
    assert message in result.text
    assert handled == []


async def test_non_json_values_in_open_schemas_are_rejected(registry: cm.ToolRegistry) -> None:
    registry.register(cm.define_tool(name="open", parameters={"type": "object"}, execute=echo))
    result = await registry.execute(call("open", {"blob": {1, 2}}))
    assert result.is_error and result.error is not None
    assert (result.error.kind, result.error.path) == ("invalid_arguments", "$.blob")


async def test_none_arguments_mean_no_arguments(registry: cm.ToolRegistry) -> None:
    registry.register(cm.define_tool(name="noargs", execute=echo))
    result = await registry.execute(cm.ToolCall(call_id="x", name="noargs", arguments=None))  # type: ignore[arg-type]
    assert not result.is_error and result.structured == {}


async def test_callers_dict_is_detached_from_what_the_handler_sees(
    registry: cm.ToolRegistry,
) -> None:
    seen: list[Any] = []
    kept: list[Any] = []

    async def handler(args: Any, ctx: cm.ExecContext) -> str:
        seen.append(cm.thaw(args))
        kept.append(args)
        return "ok"

    async def mutate_caller_dict(ctx: cm.ExecContext) -> None:
        arguments["tags"].append("during")
        arguments["path"] = "/etc/shadow"

    registry.register(cm.define_tool(name="t", parameters={"type": "object"}, execute=handler))
    registry.pre_execute(mutate_caller_dict)
    arguments: dict[str, Any] = {"path": "/tmp/x", "tags": ["a"]}
    await registry.execute(call("t", arguments))
    arguments["tags"].append("after")
    arguments["extra"] = 1
    assert seen == [{"path": "/tmp/x", "tags": ["a"]}]
    assert kept == [{"path": "/tmp/x", "tags": ("a",)}]


@pytest.mark.parametrize(
    "mutate",
    [
        lambda ctx: setattr(ctx, "name", "other"),
        lambda ctx: setattr(ctx, "arguments", {}),
        lambda ctx: setattr(ctx, "parent", None),
        lambda ctx: setattr(ctx, "token", cm.Token()),
        lambda ctx: ctx.arguments.__setitem__("path", "/etc/shadow"),
        lambda ctx: ctx.arguments["tags"].append("x"),
        lambda ctx: ctx.arguments.update(path="x"),
        lambda ctx: setattr(ctx.token, "_number", 0),
        lambda ctx: delattr(ctx.token, "_number"),
    ],
    ids=[
        "name",
        "arguments",
        "parent",
        "token",
        "arg-item",
        "nested-array",
        "update",
        "token-value",
        "token-delete",
    ],
)
async def test_exec_context_cannot_be_mutated_by_the_handler(
    registry: cm.ToolRegistry, mutate: Any
) -> None:
    refused: list[BaseException] = []

    async def handler(args: Any, ctx: cm.ExecContext) -> Any:
        try:
            mutate(ctx)
        except (TypeError, AttributeError, dataclasses.FrozenInstanceError) as exc:
            refused.append(exc)
        return cm.thaw(ctx.arguments)

    registry.register(cm.define_tool(name="t", parameters={"type": "object"}, execute=handler))
    result = await registry.execute(call("t", {"path": "/tmp/x", "tags": ["a"]}))
    assert len(refused) == 1
    assert result.structured == {"path": "/tmp/x", "tags": ("a",)}


async def test_prepare_arguments_runs_before_validation(registry: cm.ToolRegistry) -> None:
    raw_seen: list[Any] = []

    def prepare(raw: Any) -> Any:
        raw_seen.append(raw)
        return {**raw, "limit": int(raw["limit"])} if "limit" in raw else raw

    registry.register(
        cm.define_tool(
            name="t",
            parameters={"limit": {"type": "integer", "required": True}},
            prepare_arguments=prepare,
            execute=echo,
        )
    )
    ok = await registry.execute(call("t", {"limit": "5"}))
    assert not ok.is_error and ok.structured == {"limit": 5}
    assert raw_seen == [{"limit": "5"}]
    missing = await registry.execute(call("t", {}))
    assert missing.is_error and missing.error is not None and missing.error.path == "$"
    broken = await registry.execute(call("t", {"limit": "five"}))
    assert broken.is_error and broken.error is not None
    assert broken.error.kind == "invalid_arguments"
    assert "ValueError: invalid literal for int()" in broken.text


async def test_prepare_arguments_output_must_be_an_object(registry: cm.ToolRegistry) -> None:
    registry.register(cm.define_tool(name="t", prepare_arguments=lambda raw: ["x"], execute=echo))
    result = await registry.execute(call("t"))
    assert result.is_error and "expected a JSON object, got list" in result.text


async def test_sync_handlers_run_on_the_event_loop_thread(registry: cm.ToolRegistry) -> None:
    def handler(args: Any, ctx: cm.ExecContext) -> str:
        return threading.current_thread().name

    registry.register(cm.define_tool(name="t", execute=handler))
    result = await registry.execute(call("t"))
    assert result.text == threading.current_thread().name


async def test_threaded_handlers_run_in_a_worker_thread(registry: cm.ToolRegistry) -> None:
    def handler(args: Any, ctx: cm.ExecContext) -> dict[str, Any]:
        return {"thread": threading.current_thread().name, "n": args["n"]}

    registry.register(
        cm.define_tool(
            name="t", parameters={"n": {"type": "integer"}}, execute=handler, threaded=True
        )
    )
    result = await registry.execute(call("t", {"n": 4}))
    assert not result.is_error
    assert result.structured["n"] == 4
    assert result.structured["thread"] != threading.current_thread().name


async def test_sync_handler_returning_an_awaitable_is_awaited(registry: cm.ToolRegistry) -> None:
    async def later() -> str:
        return "awaited"

    registry.register(cm.define_tool(name="t", execute=lambda args: later()))
    assert (await registry.execute(call("t"))).text == "awaited"


async def test_context_carries_the_call_identity(registry: cm.ToolRegistry) -> None:
    contexts: list[cm.ExecContext] = []

    async def handler(args: Any, ctx: cm.ExecContext) -> str:
        contexts.append(ctx)
        return "ok"

    tool = registry.register(cm.define_tool(name="t", execute=handler)).tool
    parent = cm.Token()
    await registry.execute(cm.ToolCall(call_id="id-1", name="t", parent=parent, agent="bot"))
    await registry.execute(cm.ToolCall(call_id="id-2", name="t"))
    first, second = contexts
    assert (first.call_id, first.name, first.agent, first.parent) == ("id-1", "t", "bot", parent)
    assert first.spec is tool.spec
    assert second.parent is None and second.agent is None
    assert first.token != second.token and first.token != parent
    assert hash(first.token) != hash(second.token)
    assert str(first.token) != str(second.token)


async def test_any_mapping_is_accepted_as_arguments(registry: cm.ToolRegistry) -> None:
    registry.register(cm.define_tool(name="t", parameters={"n": {"type": "integer"}}, execute=echo))
    result = await registry.execute(call("t", MappingProxyType({"n": 1})))
    assert not result.is_error and result.structured == {"n": 1}
    bad = await registry.execute(call("t", MappingProxyType({"n": "x"})))
    assert bad.error is not None and bad.error.path == "$.n"


async def test_a_huge_key_in_a_problems_path_is_cut_too(registry: cm.ToolRegistry) -> None:
    registry.register(cm.define_tool(name="counts", execute=echo, parameters={
        "type": "object", "properties": {"by": {
            "type": "object", "additionalProperties": {"type": "integer"}}}}))
    key = "k" * 1_000_000
    result = await registry.execute(call("counts", {"by": {key: "x"}}))
    assert result.error is not None and result.error.kind == "invalid_arguments"
    assert result.error.path is not None and result.error.path.startswith("$.by.kkk")
    assert len(result.error.path) <= PROBLEM_TEXT + len(" … [9,999,999 characters] … ")
    assert len(result.text) < 3 * PROBLEM_TEXT
