"""Errors for values no anyOf/oneOf alternative accepts: what each alternative expects,
the closest one's own problem, one problem (not the union's and its branch's), bounded,
and the same from preflight (literal arguments) and from the dispatch pipeline."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tool_corpus import corpus_or_skip

from codemode.dispatch.schema import PROBLEM_TEXT, argument_problem, compile_schema

_TARGET = {"oneOf": [
    {"type": "object", "properties": {"kind": {"const": "user"}, "id": {"type": "integer"}},
     "required": ["kind", "id"]},
    {"type": "object", "properties": {"kind": {"const": "team"}, "slug": {"type": "string"}},
     "required": ["kind", "slug"]}]}
_SCHEMA = {
    "type": "object",
    "properties": {
        "state": {"anyOf": [{"type": "string", "enum": ["open", "closed"]}, {"type": "null"}]},
        "target": _TARGET,
        "at": {"anyOf": [{"$ref": "#/$defs/point"}, {"type": "null"}]},
    },
    "$defs": {"point": {"title": "Point", "type": "object", "required": ["x", "y"]}},
}


def _both(name: str, value: Any) -> str:
    """The runtime message, checked equal to preflight's (where and what)."""
    problems = compile_schema("t", _SCHEMA).problems({name: value})
    assert len(problems) == 1, problems
    inner, message = argument_problem(_SCHEMA, name, value) or ("?", "valid")
    assert (f"$.{name}{inner}", message) == (problems[0].path, problems[0].message)
    return str(problems[0])


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("state", "opne", "$.state: 'opne' is not one of ['open', 'closed']"),
    ("state", 5, '$.state: 5 (integer) matches none of 2 alternatives: (1) one of "open", '
                 '"closed"; (2) null'),
    ("target", {"kind": "user"},
     '$.target: {"kind": "user"} (object) matches none of 2 alternatives: (1) object with '
     'kind="user" requiring kind, id; (2) object with kind="team" requiring kind, slug; '
     "closest (1): 'id' is a required property"),
    ("target", {"kind": "org", "id": 1},
     '$.target: {"id": 1, "kind": "org"} (object) matches none of 2 alternatives: (1) '
     'object with kind="user" requiring kind, id; (2) object with kind="team" requiring '
     "kind, slug; closest (1) at .kind: 'user' was expected"),
    ("at", {"x": 1}, "$.at: 'y' is a required property"),
    ("at", "here", '$.at: "here" (string) matches none of 2 alternatives: (1) Point: object '
                   "requiring x, y; (2) null"),
])
def test_a_union_failure_says_what_each_alternative_expects(
        name: str, value: Any, expected: str) -> None:
    """Before: '... is not valid under any of the given schemas', or (best_match) one
    branch's complaint alone (``'team' was expected`` for a user missing ``id``), and at
    runtime the enum complaint followed by the bare union one."""
    assert _both(name, value) == expected


def test_many_alternatives_and_values_stay_bounded() -> None:
    schema = {"type": "object", "properties": {"v": {"anyOf": [
        {"type": "string", "enum": [f"value-{i}" for i in range(1000)]}] + [
        {"type": "object", "required": [f"k{i}" * 50]} for i in range(300)]}}}
    (problem,) = compile_schema("t", schema).problems({"v": 1.5})
    assert "… (994 more)" in problem.message and "… (299 more)" in problem.message
    assert len(problem.message) <= PROBLEM_TEXT


def _union_arguments(schema: dict[str, Any]) -> list[str]:
    props = schema.get("properties") or {}
    return [k for k, v in props.items() if isinstance(v, dict) and (
        {"anyOf", "oneOf"} & v.keys() or {"anyOf", "oneOf"} & (v.get("items") or {}).keys())]


_PROBES: list[Any] = [{"zz_probe": 1}, 3.5, "probe", [{"zz_probe": 1}], True]


def test_corpus_union_arguments_get_bounded_agreeing_messages() -> None:
    """Every published tool argument with anyOf/oneOf (at its top or in its items), given
    values of each JSON type: no bare 'not valid under any' message, none clipped, and
    preflight and the pipeline's validator say the same thing at the same place."""
    folder = corpus_or_skip()
    checked = 0
    for path in sorted(folder.glob("*.json")):
        for tool in json.loads(path.read_text()):
            schema = tool.get("inputSchema") or {}
            names = _union_arguments(schema)
            if not names:
                continue
            compiled = compile_schema(tool["name"], schema)
            for name in names:
                for probe in _PROBES:
                    runtime = [(p.path, p.message) for p in compiled.problems({name: probe})
                               if p.path.startswith(f"$.{name}")]  # not others' "required"
                    found = argument_problem(schema, name, probe)
                    if found is None:
                        assert runtime == []
                        continue
                    inner, message = found
                    assert (f"$.{name}{inner}", message) in runtime
                    assert "is not valid under any of the given schemas" not in message
                    assert len(message) <= PROBLEM_TEXT, message
                    checked += 1
    assert checked >= 300


_PAGED = {"type": "object", "required": ["owner"],
          "properties": {"owner": {"type": "string"}, "after": {"type": "string"},
                         "filter": {"type": "object", "properties": {"tag": {"type": "string"}}}}}


@pytest.mark.parametrize(("name", "value", "expected"), [
    ("after", None, "$.after: None is not of type 'string' (`after` is optional: leave it "
                    "out rather than pass None)"),
    ("owner", None, "$.owner: None is not of type 'string'"),  # required: no way around it
    ("after", 5, "$.after: 5 is not of type 'string'"),
    ("filter", {"tag": None}, "$.filter.tag: None is not of type 'string'"),
])
def test_none_for_an_optional_argument_says_to_leave_it_out(
        name: str, value: Any, expected: str) -> None:
    """``after=cursor`` with no cursor yet: the model's fix is to omit the argument (the
    SDK sends nothing for one left out); preflight and runtime say the same."""
    problems = compile_schema("t", _PAGED).problems({"owner": "o", name: value})
    assert [str(p) for p in problems] == [expected]
    inner, message = argument_problem(_PAGED, name, value) or ("?", "valid")
    assert (f"$.{name}{inner}", message) == (problems[0].path, problems[0].message)
