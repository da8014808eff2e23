"""Parameter specs: compact form normalised once, full schemas checked, errors with paths."""

from __future__ import annotations

from typing import Any

import pytest

from codemode.dispatch.context import ToolCall
from codemode.dispatch.registry import ToolRegistry
from codemode.dispatch.schema import compile_schema, normalise_parameters
from codemode.dispatch.tool import define_tool
from codemode.errors import ToolDefinitionError


@pytest.mark.parametrize(
    ("compact", "expected"),
    [
        pytest.param(
            {"path": {"type": "string", "required": True}, "limit": {"type": "integer"}},
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["path"],
                "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
            },
            id="required-and-optional",
        ),
        pytest.param(
            {"q": {"type": "string", "required": False, "minLength": 1}},
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {"q": {"type": "string", "minLength": 1}},
            },
            id="explicit-optional",
        ),
        pytest.param(
            {"type": {"type": "string", "required": True}},
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["type"],
                "properties": {"type": {"type": "string"}},
            },
            id="parameter-named-type",
        ),
        pytest.param(
            {"tags": {"type": "array", "items": {"type": "string", "required": True}}},
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "tags": {"type": "array", "items": {"type": "string", "required": True}}
                },
            },
            id="only-top-level-required-is-compact",
        ),
        pytest.param(
            None, {"type": "object", "properties": {}, "additionalProperties": False}, id="none"
        ),
    ],
)
def test_compact_specs_are_normalised(compact: Any, expected: dict[str, Any]) -> None:
    assert normalise_parameters("t", compact) == expected


@pytest.mark.parametrize(
    ("full", "expected"),
    [
        (
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"type": "object", "properties": {"a": {"type": "string"}}},
        ),
        ({"properties": {"a": {}}}, {"type": "object", "properties": {"a": {}}}),
        ({}, {"type": "object", "properties": {}}),
    ],
)
def test_full_schemas_pass_through(full: dict[str, Any], expected: dict[str, Any]) -> None:
    assert normalise_parameters("t", full) == expected


def test_normalised_schema_is_detached_from_the_input() -> None:
    spec = {"type": "object", "properties": {"a": {"enum": [1, 2]}}}
    schema = normalise_parameters("t", spec)
    spec["properties"]["a"]["enum"].append(3)
    assert schema["properties"]["a"]["enum"] == [1, 2]


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"type": "string"}, "root must have type 'object', got 'string'"),
        ({"type": "array", "items": {}}, "root must have type 'object'"),
        ({"type": ["object", "null"]}, "root must have type 'object'"),
        ({"anyOf": [{"type": "object"}]}, "root must have type 'object', got None"),
        ({"path": "string"}, "compact parameter 'path' must be a schema object, got str"),
        ({"path": {"type": "string", "required": "yes"}}, "'required' must be a bool"),
        (["path"], "must be a JSON Schema object, got list"),
    ],
)
def test_bad_parameter_specs_are_refused(spec: Any, problem: str) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        normalise_parameters("t", spec)
    assert problem in str(caught.value)
    assert caught.value.tool == "t"


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"type": "object", "properties": {"a": {"type": "strin"}}}, "properties/a/type"),
        ({"type": "object", "required": "a"}, "required"),
        ({"type": "object", "properties": {"a": {"minimum": "1"}}}, "properties/a/minimum"),
        ({"type": "object", "properties": {"a": {"pattern": "("}}}, "properties/a/pattern"),
        ({"type": "object", "additionalProperties": 3}, "additionalProperties"),
    ],
)
def test_check_schema_failures_name_the_location(schema: dict[str, Any], where: str) -> None:
    with pytest.raises(ToolDefinitionError, match=f"invalid at {where}"):
        compile_schema("t", schema)


def test_compiled_schema_explains_problems_best_first() -> None:
    compiled = compile_schema(
        "t",
        {
            "type": "object",
            "required": ["a"],
            "properties": {
                "a": {
                    "type": "object",
                    "properties": {"b": {"type": "array", "items": {"type": "integer"}}},
                }
            },
        },
    )
    assert compiled.is_valid({"a": {"b": [1, 2]}})
    assert not compiled.is_valid({"a": {"b": [1, "x"]}})
    problems = compiled.problems({"a": {"b": [1, "x"]}})
    assert [(p.path, p.message) for p in problems] == [("$.a.b[1]", "'x' is not of type 'integer'")]
    assert str(problems[0]) == "$.a.b[1]: 'x' is not of type 'integer'"
    assert compiled.problems({"a": {}}) == []


def test_draft_is_taken_from_the_schema() -> None:
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "maximum": 5, "exclusiveMaximum": True}},
    }
    compiled = compile_schema("t", draft4)
    assert compiled.is_valid({"n": 4.5}) and not compiled.is_valid({"n": 5})
    with pytest.raises(ToolDefinitionError):
        compile_schema("t", {**draft4, "$schema": "https://json-schema.org/draft/2020-12/schema"})


@pytest.mark.parametrize(
    ("schema", "valid", "invalid", "backend"),
    [
        (
            {
                "type": "object",
                "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}},
            },
            {"n": 0.5},
            {"n": 0},
            "jsonschema (Draft4)",
        ),
        (
            {
                "type": "object",
                "properties": {
                    "pair": {"type": "array", "items": [{"type": "number"}, {"type": "string"}]}
                },
            },
            {"pair": [1, "a"]},
            {"pair": ["a", 1]},
            "jsonschema (Draft7)",
        ),
    ],
    ids=["draft4-boolean-exclusive-minimum", "draft7-tuple-items"],
)
def test_undeclared_older_dialects_are_validated_in_their_draft(
    schema: dict[str, Any], valid: dict[str, Any], invalid: dict[str, Any], backend: str
) -> None:
    compiled = compile_schema("t", schema)
    assert compiled.backend == backend
    assert compiled.is_valid(valid) and not compiled.is_valid(invalid)
    assert compiled.problems(invalid)


def test_an_invalid_schema_in_every_dialect_is_still_refused() -> None:
    with pytest.raises(ToolDefinitionError, match="invalid at properties/a/type"):
        compile_schema("t", {"type": "object", "properties": {"a": {"type": "strin"}}})


@pytest.mark.parametrize(
    ("parameters", "where"),
    [
        ({"type": "object", "properties": {"a": {"$ref": "#/definitions/missing"}}},
         "/properties/a: '#/definitions/missing'"),
        ({"type": "object", "properties": {"a": {"$ref": "https://example.invalid/s.json"}}},
         "/properties/a: 'https://example.invalid/s.json'"),
        ({"type": "object", "properties": {"a": {"items": {"$ref": "#/$defs/Gone"}}}},
         "/properties/a/items: '#/$defs/Gone'"),
    ],
    ids=["stale-pointer", "url-never-fetched", "nested"],
)  # fmt: skip
def test_a_ref_that_points_nowhere_is_refused_when_the_tool_is_defined(
    parameters: dict[str, Any], where: str
) -> None:
    with pytest.raises(ToolDefinitionError, match="points nowhere") as refused:
        define_tool(name="t", parameters=parameters, execute=lambda args: None)
    assert where in str(refused.value)


@pytest.mark.parametrize(
    ("parameters", "good", "bad"),
    [
        ({"type": "object", "$defs": {"A": {"type": "string"}},
          "properties": {"a": {"$ref": "#/$defs/A"}, "c": {"$ref": "#/properties/a"}}},
         {"a": "x", "c": "y"}, {"c": 1}),
        ({"type": "object", "definitions": {"A": {"type": "string"}},
          "properties": {"a": {"$ref": "#/definitions/A", "default": {"$ref": "data"}}}},
         {"a": "x"}, {"a": 1}),
        ({"type": "object", "$defs": {"A": {"$anchor": "here", "type": "integer"}},
          "properties": {"a": {"$ref": "#here"}}},
         {"a": 1}, {"a": "x"}),
        ({"type": "object", "properties": {"next": {"$ref": "#"}, "n": {"type": "integer"}}},
         {"next": {"n": 1}}, {"next": {"n": "x"}}),
    ],
    ids=["pointers", "ref-shaped-data", "anchor", "root"],
)  # fmt: skip
def test_refs_that_resolve_are_accepted_and_validate(
    parameters: dict[str, Any], good: dict[str, Any], bad: dict[str, Any]
) -> None:
    tool = define_tool(name="t", parameters=parameters, execute=lambda args: None)
    assert tool.validator.is_valid(good) and not tool.validator.is_valid(bad)


@pytest.mark.parametrize(("by", "value", "valid"), [
    (0.1, 10**400, False),  # past a float: jsonschema's division raised OverflowError
    (0.5, 10**400, True),
    (0.5, 2**1100 + 1, True),
    (0.3, 2**1100, False),
    (3, 10**400, False),
    (0.1, 0.30000000000000004, False),
    (0.5, 1.5, True),
])
async def test_multiple_of_takes_any_number(by: float, value: float, valid: bool) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "number", "multipleOf": by}}}
    compiled = compile_schema("t", schema)
    assert compiled.is_valid({"n": value}) is valid
    assert (compiled.problems({"n": value}) == []) is valid
    registry = ToolRegistry()
    registry.register(define_tool(name="t", parameters=schema, execute=lambda args: "ok"))
    result = await registry.execute(ToolCall(call_id="c", name="t", arguments={"n": value}))
    assert result.is_error is not valid  # a result, never an exception out of execute


UNIQUE = [
    [1, 1.0], [True, 1], [False, 0], [[1], [True]], [{"a": 1, "b": 2}, {"b": 2, "a": 1}],
    [{"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]}], [[], {}], ["1", 1], [None, False],
    [[1, "a"], ["a", 1]], [{"a": True}, {"a": 1}], [0.5, 0.5], [[[]], [[]]],
]


@pytest.mark.parametrize("items", UNIQUE)
def test_unique_items_agrees_with_jsonschema(items: list[Any]) -> None:
    import jsonschema

    schema = {"type": "object", "properties": {"s": {"type": "array", "uniqueItems": True}}}
    expected = jsonschema.Draft202012Validator(schema).is_valid({"s": items})
    assert (compile_schema("t", schema).problems({"s": items}) == []) is expected


def test_unique_items_of_many_unsortable_items_is_one_pass(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """jsonschema compares items it cannot sort pairwise (a script's 1,000 small lists held
    the host loop for 1.3 s): the reference validator hashes each item once instead."""
    import jsonschema._utils

    compared: list[int] = []
    equal = jsonschema._utils.equal

    def counted(one: Any, two: Any) -> bool:
        compared.append(1)
        return bool(equal(one, two))

    monkeypatch.setattr(jsonschema._utils, "equal", counted)
    schema = {"type": "object", "properties": {"s": {"type": "array", "uniqueItems": True},
                                               "n": {"type": "integer"}}}
    items: list[Any] = [[i] for i in range(1000)] + [["x"]]
    [problem] = compile_schema("t", schema).problems({"s": items, "n": "7"})
    assert problem.path == "$.n"
    assert len(compared) < 100
