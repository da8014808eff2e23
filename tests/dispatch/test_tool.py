"""define_tool: a frozen spec plus a host-side handler; bad definitions fail right here."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import codemode as cm

from .support import call, echo

SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
    "additionalProperties": False,
}


def test_define_tool_builds_a_spec_and_keeps_the_handler_host_side() -> None:
    tool = cm.define_tool(
        name="read_file",
        description="Read a file.",
        parameters=SCHEMA,
        execute=echo,
        output_schema={"type": "object"},
        namespace="fs",
    )
    assert tool.name == "read_file"
    assert tool.spec == cm.ToolSpec(
        name="read_file",
        description="Read a file.",
        parameters=SCHEMA,
        output_schema={"type": "object"},
        namespace="fs",
    )
    assert tool.handler is echo
    assert not any(f.name == "handler" for f in dataclasses.fields(cm.ToolSpec))
    assert "handler" not in repr(tool)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.spec.name = "other"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tool.handler = echo  # type: ignore[misc]


def test_compact_parameters_are_normalised_into_the_spec() -> None:
    tool = cm.define_tool(
        name="t", parameters={"path": {"type": "string", "required": True}}, execute=echo
    )
    assert tool.spec.parameters == {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
        "additionalProperties": False,
    }


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "non-empty string"),
        (None, "non-empty string"),
        (42, "non-empty string"),
        ("x" * 129, "longer than 128"),
        (" padded", "whitespace"),
        ("trailing\n", "whitespace"),
        ("tab\tname", "control characters"),
        ("nul\x00", "control characters"),
    ],
)
def test_bad_names_are_refused(name: Any, problem: str) -> None:
    with pytest.raises(cm.ToolDefinitionError, match=problem):
        cm.define_tool(name=name, execute=echo)


def _sync(args: Any) -> str:
    return "x"


async def _no_args() -> str:
    return "x"


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"description": 3}, "description must be a string"),
        ({"execute": "not callable"}, "execute must be callable"),
        ({"execute": _no_args}, r"handler must accept \(args\) or \(args, ctx\)"),
        ({"prepare_arguments": "nope"}, "prepare_arguments must be callable"),
        ({"execution_mode": "serial"}, "execution_mode must be 'parallel' or 'sequential'"),
        ({"threaded": True}, "threaded=True is for sync handlers only"),
        ({"parameters": {"type": "string"}}, "root must have type 'object'"),
        (
            {"parameters": {"type": "object", "properties": {"a": {"type": 1}}}},
            "parameters schema is invalid at properties/a/type",
        ),
        ({"output_schema": {"type": "nope"}}, "output schema is invalid at type"),
        ({"output_schema": ["not", "a", "schema"]}, "output_schema must be a JSON Schema object"),
    ],
)
def test_bad_definitions_fail_at_definition_time(options: dict[str, Any], problem: str) -> None:
    with pytest.raises(cm.ToolDefinitionError, match=problem):
        cm.define_tool(**{"name": "t", "execute": echo, **options})


class AsyncCallable:
    async def __call__(self, args: Any, ctx: cm.ExecContext) -> str:
        return f"object saw {ctx.name}"


class SyncCallable:
    def __call__(self, args: Any) -> str:
        return "sync object"


async def _args_only(args: Any) -> str:
    return f"args only: {dict(args)}"


@pytest.mark.parametrize(
    ("handler", "is_async", "takes_context", "text"),
    [
        (echo, True, True, '{"k":1}'),
        (_args_only, True, False, "args only: {'k': 1}"),
        (_sync, False, False, "x"),
        (lambda args, ctx: ctx.call_id.startswith("c"), False, True, "true"),
        (AsyncCallable(), True, True, "object saw t"),
        (SyncCallable(), False, False, "sync object"),
    ],
)
async def test_handler_shapes_are_detected(
    handler: Any, is_async: bool, takes_context: bool, text: str, registry: cm.ToolRegistry
) -> None:
    tool = cm.define_tool(name="t", parameters={"k": {"type": "integer"}}, execute=handler)
    assert (tool.is_async, tool.takes_context) == (is_async, takes_context)
    registry.register(tool)
    result = await registry.execute(call("t", {"k": 1}))
    assert not result.is_error, result.text
    assert result.text == text


def test_description_none_becomes_empty() -> None:
    assert cm.define_tool(name="t", description=None, execute=echo).spec.description == ""  # type: ignore[arg-type]
