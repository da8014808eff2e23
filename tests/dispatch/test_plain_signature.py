"""``@tool`` over plain JSON types without pydantic: the schema pydantic writes, key for key
in order, the values its validation hands the function, and a process that never imports
it (importing pydantic and building the model was ~170 ms of a fresh process)."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import textwrap
from typing import Annotated, Any, Literal, Optional, Union

import pydantic
import pytest

from codemode.dispatch.plain_signature import plain_schema

Param = tuple[str, Any, Any, "str | None"]

PLAIN: list[list[Param]] = [
    [("city", str, ..., "The city."), ("unit", str, "C", "C or F.")],
    [("n", int, 1, None), ("x", float, 0.5, ""), ("flag", bool, False, None)],
    [("tags", list[str], [], None), ("opt", int | None, None, None),
     ("lit", Literal["a", "b"], "a", "d")],
    [("d", dict[str, int] | None, None, None), ("anyv", Any, None, None),
     ("o2", Optional[str], None, None)],  # noqa: UP045 - the spelling under test
    [("li", list[int] | None, None, None), ("req", str | None, ..., None),
     ("nolist", list, [], None), ("nodict", dict, {}, None)],
    [("la", list[Any], ..., None), ("da", dict[str, Any], ..., None),
     ("df", dict[str, float], {"a": 1}, None),
     ("u", Union[None, int], 3, "x")],  # noqa: UP007 - the spelling under test
    [],
    [("a", Any, ..., None)],
    [("f", float | None, 2, None), ("lf", list[float], [1, 2.5], None),
     ("lb", list[bool], ..., None)],
]
ARGUMENTS: list[dict[str, Any]] = [
    {"city": "Oslo"},
    {"n": 2.0, "x": 1, "flag": True},
    {"tags": ["a"], "opt": 3.0, "lit": "b"},
    {"d": {"k": 1.0}, "anyv": [1, {"x": None}], "o2": None},
    {"li": [1.0, 2], "req": None, "nolist": [1, "a"], "nodict": {"a": [1]}},
    {"la": [1.5], "da": {"z": 2}, "df": {"a": 2, "b": 0.5}, "u": None},
    {},
    {"a": 7},
    {"f": 3, "lf": [1, 2.0], "lb": [True]},
]


def _stripped(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _stripped(v) for k, v in schema.items()
                if not (k == "title" and isinstance(v, str))}
    if isinstance(schema, list):
        return [_stripped(v) for v in schema]
    return schema


def _pydantic(params: list[Param]) -> tuple[dict[str, Any], type[pydantic.BaseModel]]:
    """What ``@tool`` made of the signature through pydantic (and still does for others)."""
    model = pydantic.create_model("t_arguments", **{  # type: ignore[call-overload]
        name: (hint, pydantic.Field(default, description=doc))
        for name, hint, default, doc in params})
    schema = _stripped(model.model_json_schema())
    schema["additionalProperties"] = False
    return schema, model


@pytest.mark.parametrize(("params", "arguments"), list(zip(PLAIN, ARGUMENTS, strict=True)))
def test_a_plain_signature_reads_as_pydantic_reads_it(params: list[Param],
                                                       arguments: dict[str, Any]) -> None:
    found = plain_schema(params)
    assert found is not None
    schema, converter = found
    expected, model = _pydantic(params)
    assert json.dumps(schema) == json.dumps(expected)  # the same keys in the same order
    parsed = model.model_validate(arguments)
    want = {key: getattr(parsed, key) for key in arguments}
    got = converter.convert(dict(arguments))
    assert got == want
    assert json.dumps(got) == json.dumps(want)  # 1.0 stays 1.0, 2 stays 2


@pytest.mark.parametrize("hint", [
    datetime.date, Annotated[int, pydantic.Field(ge=0)], int | str, Literal[1, 2],
    Literal["only"], list[list[int]], dict[int, str], tuple[int, int], set[str],
    list[int | None], pydantic.BaseModel, bytes,
], ids=str)
def test_other_hints_are_pydantics(hint: Any) -> None:
    assert plain_schema([("x", hint, ..., None)]) is None


@pytest.mark.parametrize("default", [(1, 2), float("nan"), {1: "a"}, datetime.date(2024, 1, 1)],
                         ids=repr)
def test_a_default_that_is_no_plain_json_is_pydantics(default: Any) -> None:
    assert plain_schema([("x", Any, default, None)]) is None


def _imports_pydantic(body: str) -> bool:
    script = textwrap.dedent("""
        import sys, anyio
        import codemode as cm
        {body}
        reg = cm.ToolRegistry()
        reg.register(t)
        async def main():
            r = await reg.execute(cm.ToolCall(call_id="c", name="t", arguments={{"a": 1}}))
            assert not r.is_error, r.text
            print(r.text)
        anyio.run(main)
        print("pydantic" in sys.modules)
    """).format(body=textwrap.dedent(body))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    *answer, imported = done.stdout.split()
    assert answer
    return imported == "True"


def test_a_process_defining_plain_tools_never_imports_pydantic() -> None:
    assert not _imports_pydantic("""
        @cm.tool
        async def t(a: float, tags: list[str] | None = None) -> dict:
            '''Halve.'''
            return {"half": a / 2, "type": type(a).__name__}
    """)
    assert _imports_pydantic("""
        import datetime
        @cm.tool
        async def t(a: int, day: datetime.date | None = None) -> dict:
            '''Dated.'''
            return {"a": a}
    """)


BIG = [10**400, -(10**400), 2**1024, 2**1024 - 1, 2**1024 - 2**970, 2**1024 - 2**970 - 1,
       2**53 + 1, 1e300, -1e300, 1e20, 2.0**63, -(2.0**63), 2.0**63 - 1024, -(2.0**63) + 1024,
       1.7976931348623157e308, -0.0, 3.0]
RANGE_HINTS = [int, float, list[int], list[float], dict[str, int], dict[str, float],
               int | None, float | None]


def _shaped(hint: Any, value: Any) -> Any:
    origin = getattr(hint, "__origin__", None)
    return [value] if origin is list else {"k": value} if origin is dict else value


@pytest.mark.parametrize("hint", RANGE_HINTS, ids=str)
@pytest.mark.parametrize("value", BIG, ids=repr)
def test_numbers_past_a_types_range_are_refused_where_pydantic_refuses_them(
        hint: Any, value: Any) -> None:
    """A ``float`` given an int past float's range failed in the handler as OverflowError,
    and an ``int`` given ``1e300`` arrived as a 997-bit int (pydantic refuses both). Now the
    plain path takes what pydantic takes, as the same values, and refuses the rest naming
    the argument."""
    import jsonschema

    found = plain_schema([("x", hint, ..., None)])
    assert found is not None
    schema, converter = found
    arguments = {"x": _shaped(hint, value)}
    assert jsonschema.Draft202012Validator(schema).is_valid(arguments)  # reaches conversion
    _, model = _pydantic([("x", hint, ..., None)])
    try:
        want: Any = model.model_validate(arguments).x
    except pydantic.ValidationError:
        want = None
    if want is None:
        with pytest.raises(ValueError, match=r"^argument 'x': "):
            converter.convert(dict(arguments))
    else:
        got = converter.convert(dict(arguments))["x"]
        assert (got, json.dumps(got)) == (want, json.dumps(want))
