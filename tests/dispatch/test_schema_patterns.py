"""A tool's ``pattern`` cannot hold the host: a script controls the strings it is matched
against, and Python's ``re`` can neither be stopped nor let go of the GIL (``^(a|aa)+$``
on 40 ``a`` and a ``b`` is minutes). Patterns are searched by ``regex`` in its
``re``-compatible mode, each for at most ``PATTERN_TIMEOUT`` and all of one validation's
for at most ``PATTERN_BUDGET``; a string past that is refused, and the message says so.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

import codemode as cm
from codemode.dispatch.schema import PATTERN_TIMEOUT, compile_schema

SLOW = "^(a|aa)+$"
SLOW_TEXT = "a" * 40 + "b"


def _schema(pattern: str, *, many: bool = False) -> dict[str, Any]:
    item = {"type": "string", "pattern": pattern}
    return {"type": "object", "properties": {
        "s": {"type": "array", "items": item} if many else item}}


@pytest.mark.parametrize(("pattern", "text"), [
    ("^[a-z]+$", "abc"), ("^[a-z]+$", "abC"), (r"^\d{3}-\d{4}$", "555-1234"),
    (r"\bword\b", "a word here"), ("^(a+)+$", "aaa"), (r"^\w+$", "héllo"),
    (r"^\s*$", "\u00a0"), ("(?i)^abc$", "ABC"), ("^a.c$", "a\nc"), ("x$", "x\n"),
])
def test_matches_as_re_does(pattern: str, text: str) -> None:
    compiled = compile_schema("t", _schema(pattern))
    expected = re.search(pattern, text) is not None
    assert compiled.is_valid({"s": text}) is expected
    assert (compiled.problems({"s": text}) == []) is expected


def test_a_catastrophic_pattern_refuses_the_string_and_says_why() -> None:
    compiled = compile_schema("t", _schema(SLOW))
    assert compiled.is_valid({"s": "aaaa"})
    assert not compiled.is_valid({"s": SLOW_TEXT})
    [problem] = compiled.problems({"s": SLOW_TEXT})
    assert problem.path == "$.s"
    assert problem.message.endswith(f"took more than {PATTERN_TIMEOUT} s to match {SLOW!r}")


def test_one_validation_shares_one_budget() -> None:
    """A thousand slow strings are not a thousand timeouts: past the budget each further
    search counts as timed out at once (all are reported)."""
    compiled = compile_schema("t", _schema(SLOW, many=True))
    problems = compiled.problems({"s": [SLOW_TEXT] * 1000})
    assert len(problems) == 1000
    assert all("took more than" in p.message for p in problems)
    assert compiled.problems({"s": ["aa", "a"]}) == []  # the next validation has its own


def _keyed(pattern: str, *, additional: Any = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object",
                              "patternProperties": {pattern: {"type": "integer"}}}
    if additional is not None:
        schema["additionalProperties"] = additional
    return schema


@pytest.mark.parametrize("additional", [None, False, {"type": "string"}])
@pytest.mark.parametrize(("pattern", "key", "value"), [
    ("^x_", "x_a", 1), ("^x_", "x_a", "one"), ("^x_", "y", 1), ("^x_", "y", "one"),
    ("^(a+)+$", "a" * 30 + "b", 1), ("^(a+)+$", "aaa", "one"), (r"^\w+$", "héllo", 1),
])
def test_pattern_properties_match_as_re_does(pattern: str, key: str, value: Any,
                                             additional: Any) -> None:
    """r38: ``patternProperties`` (and ``additionalProperties`` beside it) searched a
    script's keys with Python's ``re``: ``^(a+)+$`` on 24 ``a`` and a ``b`` held the host's
    loop for 1.4 s. Now the same answers, by the bounded search."""
    compiled = compile_schema("t", _keyed(pattern, additional=additional))
    # re itself takes minutes on the 31-character key, which cannot match (it ends in b)
    matched = re.search(pattern, key) is not None if len(key) < 20 else False
    if matched:
        expected = isinstance(value, int)
    elif additional is None:
        expected = True
    elif additional is False:
        expected = False
    else:
        expected = isinstance(value, str)
    assert compiled.is_valid({key: value}) is expected
    assert (compiled.problems({key: value}) == []) is expected


@pytest.mark.parametrize("additional", [None, False])
def test_a_catastrophic_pattern_property_refuses_the_key_and_says_why(additional: Any) -> None:
    compiled = compile_schema("t", _keyed(SLOW, additional=additional))
    assert compiled.is_valid({"aaaa": 1})
    assert not compiled.is_valid({SLOW_TEXT: 1})
    problems = compiled.problems({SLOW_TEXT: 1})
    assert problems and all("took more than" in p.message for p in problems), problems


@pytest.mark.parametrize(("parameters", "slow", "fine", "taken"), [
    # a string value against ``pattern``
    (_schema(SLOW), "s = 'a' * 40 + 'b'\nawait tools.take(s=s)\n",
     "await tools.take(s='aaa')\n", {"s": "aaa"}),
    # a key against ``patternProperties``
    (_keyed(SLOW), "k = 'a' * 40 + 'b'\nawait tools.take(**{k: 1})\n",
     "await tools.take(**{'aaa': 1})\n", {"aaa": 1}),
    # and the keys unevaluatedProperties skips (r40)
    ({**_keyed(SLOW), "unevaluatedProperties": False},
     "k = 'a' * 40 + 'b'\nawait tools.take(**{k: 1})\n",
     "await tools.take(**{'aaa': 1})\n", {"aaa": 1}),
])
async def test_a_scripts_argument_against_a_slow_pattern_fails_its_call(
        parameters: dict[str, Any], slow: str, fine: str, taken: dict[str, Any]) -> None:
    seen: list[Any] = []

    async def take(args: Any, ctx: cm.ExecContext) -> Any:
        seen.append(args)
        return "ok"

    registry = cm.ToolRegistry()
    registry.register(cm.define_tool(name="take", execute=take, parameters=parameters))
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(registry, executor=executor)
        refused = await mode.run(slow)
        answered = await mode.run(fine)
    assert refused.error is not None and "took more than" in refused.error.message, \
        refused.error
    assert answered.error is None and answered.value == "ok", answered.error
    assert seen == [taken]


_DRAFT_2019 = "https://json-schema.org/draft/2019-09/schema"
_INT = {"type": "integer"}
_UNEVALUATED: list[Any] = [
    pytest.param({"patternProperties": {"^x_": _INT}, "unevaluatedProperties": False},
                 id="beside"),
    pytest.param({"allOf": [{"patternProperties": {"^x_": _INT}}],
                  "unevaluatedProperties": False}, id="in-allOf"),
    pytest.param({"anyOf": [{"patternProperties": {"^x_": _INT}}, {"required": ["z"]}],
                  "unevaluatedProperties": {"type": "string"}}, id="in-anyOf-typed"),
    pytest.param({"$defs": {"p": {"patternProperties": {"^x_": _INT}}}, "$ref": "#/$defs/p",
                  "unevaluatedProperties": False}, id="through-ref"),
    pytest.param({"if": {"required": ["k"]}, "then": {"patternProperties": {"^x_": _INT}},
                  "else": {"properties": {"y": {}}}, "unevaluatedProperties": False},
                 id="if-then-else"),
    pytest.param({"dependentSchemas": {"k": {"patternProperties": {"^x_": {}}}},
                  "properties": {"k": {}}, "unevaluatedProperties": False},
                 id="dependent"),
    pytest.param({"properties": {"y": {}}, "additionalProperties": _INT,
                  "unevaluatedProperties": False}, id="additional"),
    pytest.param({"$schema": _DRAFT_2019, "allOf": [{"patternProperties": {"^x_": _INT}}],
                  "properties": {"y": True}, "unevaluatedProperties": False},
                 id="draft-2019-09"),
]


@pytest.mark.parametrize("instance", [
    {}, {"x_a": 1}, {"x_a": "one"}, {"y": 1}, {"k": 1, "x_a": 1}, {"k": 1, "y": 2, "z": "s"},
    {"x_a": 1, "z": "s"}, {"héllo": "s", "x_é": 2},
])
@pytest.mark.parametrize("schema", _UNEVALUATED)
def test_unevaluated_properties_answer_as_jsonschema_does(schema: dict[str, Any],
                                                          instance: dict[str, Any]) -> None:
    """The bounded walk for ``unevaluatedProperties`` finds the keys jsonschema's own walk
    finds, in both drafts that have the keyword."""
    import jsonschema

    full = {"type": "object", **schema}
    reference = jsonschema.validators.validator_for(full)(full)
    expected = reference.is_valid(instance)
    compiled = compile_schema("t", full)
    assert compiled.is_valid(instance) is expected
    problems = compiled.problems(instance)
    assert (problems == []) is expected
    # (the pipeline words anyOf failures its own way; the keyword's messages are jsonschema's)
    ours = [p.message for p in problems if p.message.startswith("Unevaluated")]
    theirs = [e.message for e in reference.iter_errors(instance)
              if e.validator == "unevaluatedProperties"]
    assert sorted(ours) == sorted(theirs)


@pytest.mark.parametrize(("pattern", "key", "said"), [
    # re backtracks for minutes on this key (it cannot match: it ends in b); regex does not
    ("^(a+)+$", "a" * 30 + "b", "Unevaluated properties are not allowed"),
    # slow for both: the key is refused as too slow to search
    (SLOW, SLOW_TEXT, "took more than"),
])
@pytest.mark.parametrize("schema", _UNEVALUATED[:2] + _UNEVALUATED[-1:])
def test_a_catastrophic_pattern_under_unevaluated_properties_is_searched_bounded(
        schema: dict[str, Any], pattern: str, key: str, said: str) -> None:
    """jsonschema finds the keys ``unevaluatedProperties`` may skip with Python's ``re``:
    ``^(a+)+$`` on a script's 27-character key held the host's loop for 2.75 s (31, for
    minutes: this test then ran into its timeout). The same walk with the bounded search
    answers at once."""
    slow = json.loads(json.dumps({"type": "object", **schema}).replace("^x_", pattern))
    compiled = compile_schema("t", slow)
    assert compiled.is_valid({"aaaa": 1})
    assert not compiled.is_valid({key: 1})
    problems = compiled.problems({key: 1})
    assert any(said in p.message for p in problems), problems
