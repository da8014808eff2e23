"""The hot path asks jsonschema-rs, errors come from jsonschema: prove they agree.

Over every ``inputSchema`` of the shared tool corpus plus synthetic schemas that
exercise each keyword, valid instances (hypothesis-jsonschema) and mutated or
arbitrary ones must get the same verdict from ``CompiledSchema.is_valid`` and
from the jsonschema reference, and ``problems()`` must be empty exactly when
the instance is valid. Example generation is derandomized, so CI is stable.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema
from tool_corpus import corpus_dir, corpus_or_skip

from codemode.dispatch.frozen import thaw
from codemode.dispatch.schema import CompiledSchema, compile_schema
from codemode.errors import ToolDefinitionError

SETTINGS = settings(
    max_examples=300,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)
WRONG_TYPES: list[Any] = [None, True, 0, 1.5, "x", [], {}]


@functools.cache
def _load_corpus() -> list[tuple[str, CompiledSchema]]:
    """Every corpus schema compiled, once per process and only in a process that runs a corpus
    test (compiling ~1,200 schemas at import cost every xdist worker seconds of collection)."""
    out = []
    for path in sorted(corpus_dir().glob("*.json")):
        for tool in json.loads(path.read_text(encoding="utf-8")):
            try:
                out.append(
                    (
                        f"{path.stem}:{tool['name']}",
                        compile_schema(tool["name"], tool["inputSchema"]),
                    )
                )
            except ToolDefinitionError:
                continue  # a schema invalid in every draft: refused at definition
    return out


SYNTHETIC: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "s": {"type": "string", "minLength": 2, "maxLength": 5},
            "n": {"type": "integer", "minimum": -3, "maximum": 7},
            "e": {"enum": ["a", "b", 3, None]},
            "l": {"type": "array", "items": {"type": "string"}, "maxItems": 3, "uniqueItems": True},
        },
        "required": ["s"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "x": {
                "type": "number",
                "exclusiveMinimum": 0,
                "exclusiveMaximum": 1.5,
                "multipleOf": 0.1,
            }
        },
    },
    {"type": "object", "properties": {"x": {"type": "integer", "multipleOf": 3}}},
    {"type": "object", "properties": {"c": {"const": {"k": [1, 2.0]}}}},
    {
        "type": "object",
        "properties": {
            "code": {"type": "string", "pattern": r"^AS\d+$"},
            "word": {"type": "string", "pattern": r"^\w+$"},
            "dot": {"type": "string", "pattern": "^.$"},
            "pattern": {"type": "string"},
        },
    },
    {
        "type": "object",
        "properties": {
            "v": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 2}]},
            "w": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "a": {"allOf": [{"minimum": 1}, {"maximum": 9}]},
            "z": {"not": {"type": "boolean"}},
        },
    },
    {
        "type": "object",
        "$defs": {
            "pt": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"],
                "additionalProperties": False,
            }
        },
        "properties": {
            "p": {"$ref": "#/$defs/pt"},
            "ps": {"type": "array", "items": {"$ref": "#/$defs/pt"}, "minItems": 1},
        },
        "required": ["p"],
    },
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "definitions": {"d": {"type": "string", "format": "date"}},
        "properties": {
            "when": {"$ref": "#/definitions/d"},
            "mail": {"type": "string", "format": "email"},
            "url": {"type": "string", "format": "uri"},
        },
    },
    {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {"n": {"type": "number", "maximum": 5, "exclusiveMaximum": True}},
    },
    {
        "type": "object",
        "properties": {"kind": {"enum": ["a", "b"]}, "n": {"type": "integer"}},
        "if": {"properties": {"kind": {"const": "a"}}},
        "then": {"required": ["n"]},
        "else": {"not": {"required": ["n"]}},
    },
    {
        "type": "object",
        "properties": {
            "m": {
                "type": "object",
                "minProperties": 1,
                "maxProperties": 2,
                "additionalProperties": {"type": "integer"},
                "propertyNames": {"pattern": "^[a-z]+$"},
            }
        },
    },
    {
        "type": "object",
        "patternProperties": {r"^x-\d$": {"type": "integer"}},
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "t": {
                "type": "array",
                "minItems": 2,
                "contains": {"type": "integer"},
                "items": {"type": ["integer", "string"]},
            }
        },
    },
    {
        "type": "object",
        "properties": {
            "deep": {
                "type": "object",
                "properties": {
                    "deeper": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"leaf": {"type": "boolean"}},
                            "required": ["leaf"],
                        },
                    }
                },
            }
        },
    },
]
# Keywords hypothesis-jsonschema does not generate from: checked with arbitrary JSON only.
SYNTHETIC_NO_GENERATOR: list[dict[str, Any]] = [
    {"type": "object", "properties": {"a": {}, "b": {}}, "dependentRequired": {"a": ["b"]}},
    {
        "type": "object",
        "properties": {"t": {"prefixItems": [{"type": "string"}], "items": False}},
        "unevaluatedProperties": False,
    },
]

COMPILED_SYNTHETIC = [(f"synthetic[{i}]", compile_schema("s", s)) for i, s in enumerate(SYNTHETIC)]
COMPILED_NO_GENERATOR = [
    (f"synthetic-json-only[{i}]", compile_schema("s", s))
    for i, s in enumerate(SYNTHETIC_NO_GENERATOR)
]
_STRATEGIES: dict[int, st.SearchStrategy[Any]] = {}


def _local_refs(node: Any, where: str = "#") -> list[tuple[str, str]]:
    """(location, target) of every local ``$ref`` in ``node``, as JSON pointers."""
    found: list[tuple[str, str]] = []
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            found.append((where, ref))
        for key, value in node.items():
            found += _local_refs(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _local_refs(value, f"{where}/{index}")
    return found


def _recursive(schema: Any) -> bool:
    """Whether a ``$ref`` leads back into itself (a tree of nodes, say): hypothesis-jsonschema
    cannot generate from such a schema ("Could not resolve recursive references")."""
    refs = _local_refs(schema)

    def inside(location: str, target: str) -> bool:
        return location == target or location.startswith(target.rstrip("/") + "/")

    edges = {target: {t for loc, t in refs if inside(loc, target)} for _, target in refs}
    for start in edges:
        stack, seen = list(edges[start]), set()
        while stack:
            node = stack.pop()
            if node == start:
                return True
            if node not in seen:
                seen.add(node)
                stack.extend(edges.get(node, ()))
    return False


def _valid_strategy(compiled: CompiledSchema) -> st.SearchStrategy[Any]:
    key = id(compiled)
    if key not in _STRATEGIES:
        _STRATEGIES[key] = from_schema(thaw(compiled.schema))
    return _STRATEGIES[key]


def _agree(name: str, compiled: CompiledSchema, instance: Any, seen: set[bool]) -> None:
    fast = compiled.is_valid(instance)
    reference = compiled.reference.is_valid(instance)
    assert fast == reference, (
        f"{name}: jsonschema-rs says {fast}, jsonschema says {reference} for "
        f"{json.dumps(instance)[:300]} (backend {compiled.backend})"
    )
    assert (not compiled.problems(instance)) == reference, name
    seen.add(reference)


@st.composite
def _mutated(draw: st.DrawFn, compiled: CompiledSchema, instance: Any) -> Any:
    """One edit away from ``instance``: drop a required key, change a type, add a key."""
    if not isinstance(instance, dict):
        return draw(JSON)
    out = dict(instance)
    required = [k for k in compiled.schema.get("required", ()) if k in out]
    edits = ["extra", "json"] + (["drop"] if required else []) + (["retype"] if out else [])
    edit = draw(st.sampled_from(edits))
    if edit == "drop":
        del out[draw(st.sampled_from(required))]
    elif edit == "retype":
        key = draw(st.sampled_from(sorted(out)))
        out[key] = draw(st.sampled_from([w for w in WRONG_TYPES if type(w) is not type(out[key])]))
    elif edit == "extra":
        out["zz_not_declared"] = draw(JSON)
    else:
        return draw(JSON)
    return out


def _check_sampled(
    schemas: list[tuple[str, CompiledSchema]],
    data: st.DataObject,
    seen: set[bool],
    generate: bool = True,
) -> None:
    name, compiled = data.draw(st.sampled_from(schemas), label="schema")
    if generate and not _recursive(thaw(compiled.schema)):  # else arbitrary JSON only
        valid = data.draw(_valid_strategy(compiled), label="generated")
        _agree(name, compiled, valid, seen)
        _agree(name, compiled, data.draw(_mutated(compiled, valid), label="mutated"), seen)
    _agree(name, compiled, data.draw(JSON, label="arbitrary"), seen)


def _corpus_or_skip() -> list[tuple[str, CompiledSchema]]:
    corpus_or_skip()
    return _load_corpus()


def test_corpus_compiles_on_the_fast_backend() -> None:
    schemas = _corpus_or_skip()
    assert len(schemas) > 1000
    slow = sorted(name for name, c in schemas if c.backend != "jsonschema-rs")
    # Only schemas written in an older draft without declaring it leave the fast path.
    assert slow == ["repo_livemcpbench_tools:read_pdf"]
    assert {c.backend for _, c in schemas} == {"jsonschema-rs", "jsonschema (Draft4)"}


def test_corpus_fixed_instances_agree() -> None:
    seen: set[bool] = set()
    for name, compiled in _corpus_or_skip():
        for instance in ({}, {"zz_not_declared": 1}, {"a": None}, [], "text"):
            _agree(name, compiled, instance, seen)
    assert seen == {True, False}


def test_corpus_generated_instances_agree() -> None:
    schemas = _corpus_or_skip()
    seen: set[bool] = set()

    @SETTINGS
    @given(st.data())
    def run(data: st.DataObject) -> None:
        _check_sampled(schemas, data, seen)

    run()
    assert seen == {True, False}


def test_synthetic_generated_instances_agree() -> None:
    seen: set[bool] = set()

    @settings(SETTINGS, max_examples=250)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        _check_sampled(COMPILED_SYNTHETIC, data, seen)
        _check_sampled(COMPILED_NO_GENERATOR, data, seen, generate=False)

    run()
    assert seen == {True, False}


@pytest.mark.parametrize(
    ("schema", "instance", "valid"),
    [
        pytest.param({"pattern": r"^AS\d+$"}, "AS\u0c6f", True, id="pattern-unicode-digit"),
        pytest.param({"pattern": r"^\w+$"}, "é", True, id="pattern-unicode-word"),
        pytest.param({"pattern": "^a$"}, "a\n", True, id="pattern-dollar-before-newline"),
        pytest.param({"pattern": "^.$"}, "\u2028", True, id="pattern-dot-line-separator"),
        pytest.param({"pattern": r"^\s$"}, "\ufeff", False, id="pattern-space-bom"),
        pytest.param(
            {"propertyNames": {"pattern": r"^\d$"}},
            {"\u0c6f": 1},
            True,
            id="property-names-pattern",
        ),
        pytest.param({"multipleOf": 0.1}, 0.3, False, id="multiple-of-float-artefact"),
        pytest.param({"multipleOf": 0.01}, 19.99, False, id="multiple-of-cents"),
        pytest.param({"multipleOf": 0.5}, 2**70, True, id="multiple-of-big-int"),
        pytest.param({"multipleOf": 2}, True, True, id="multiple-of-ignores-bool"),
        pytest.param({"multipleOf": 0.5}, 1e308, True, id="multiple-of-quotient-overflows"),
        pytest.param({"multipleOf": 0.3}, 1e308, False, id="multiple-of-overflow-not-multiple"),
        pytest.param(
            {"$schema": "http://json-schema.org/draft-07/schema#", "format": "date"},
            "x",
            True,
            id="draft7-format-not-asserted",
        ),
        pytest.param({"type": "string"}, "\ud800", True, id="lone-surrogate"),
        pytest.param(
            {"patternProperties": {r"^\d$": {"type": "integer"}}},
            {"\u0c6f": "x"},
            False,
            id="pattern-properties-unicode",
        ),
        pytest.param({"type": "integer", "maximum": 10}, 2**70, False, id="big-int"),
    ],
)
def test_known_divergences_follow_jsonschema(
    schema: dict[str, Any], instance: Any, valid: bool
) -> None:
    """Places where jsonschema-rs alone would differ from jsonschema (found by this suite)."""
    compiled = compile_schema("t", schema)
    assert compiled.reference.is_valid(instance) is valid
    assert compiled.is_valid(instance) is valid


@pytest.mark.parametrize(
    ("schema", "instance", "valid"),
    [
        ({"type": "array", "items": {"type": "integer"}}, (1, 2), True),
        ({"type": "object", "properties": {"a": {"const": [1]}}}, {"a": (1,)}, True),
        ({"type": "array", "maxItems": 1}, (1, 2), False),
    ],
)
def test_frozen_arrays_count_as_arrays(schema: dict[str, Any], instance: Any, valid: bool) -> None:
    """Frozen arguments (tuples) forwarded to another call validate like the lists they were."""
    compiled = compile_schema("t", schema)
    assert compiled.is_valid(instance) is valid
    assert (not compiled.problems(instance)) is valid


def test_pattern_properties_use_the_reference_backend() -> None:
    assert compile_schema("t", {"patternProperties": {"^a": {}}}).backend == "jsonschema"
    assert compile_schema("t", {"properties": {"p": {"pattern": "^a"}}}).backend == "jsonschema-rs"
