"""Result normalisation: every handler return shape, and what becomes ``is_error``."""

from __future__ import annotations

import collections
import dataclasses
import enum
import inspect
import json
import math
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

import pytest

import codemode as cm
from codemode.dispatch.frozen import HEAVY_VALUES, freeze, heavy, thaw

from .support import call

if TYPE_CHECKING:
    from collections.abc import Iterator

IMAGE = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
AUDIO = {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"}
RESOURCE = {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}}
LINK = {"type": "resource_link", "uri": "file:///b", "name": "b"}


async def run(registry: cm.ToolRegistry, value: Any, **options: Any) -> cm.ToolResult:
    async def handler(args: Any, ctx: cm.ExecContext) -> Any:
        return value

    registry.register(cm.define_tool(name="t", execute=handler, **options))
    return await registry.execute(call("t"))


@pytest.mark.parametrize(
    ("value", "content", "structured"),
    [
        pytest.param("hello", ({"type": "text", "text": "hello"},), None, id="str"),
        pytest.param(cm.text("hi"), ({"type": "text", "text": "hi"},), None, id="text-block"),
        pytest.param(IMAGE, (IMAGE,), None, id="image-block"),
        pytest.param(cm.audio("aGk=", "audio/wav"), (AUDIO,), None, id="audio-block"),
        pytest.param(cm.resource("file:///a", text="body"), (RESOURCE,), None, id="resource-block"),
        pytest.param(LINK, (LINK,), None, id="resource-link-block"),
        pytest.param(
            [cm.text("a"), IMAGE], ({"type": "text", "text": "a"}, IMAGE), None, id="list-of-blocks"
        ),
        pytest.param(
            {"a": [1, 2], "b": None},
            ({"type": "text", "text": '{"a":[1,2],"b":null}'},),
            {"a": (1, 2), "b": None},
            id="structured-object",
        ),
        pytest.param(
            [1, "x"], ({"type": "text", "text": '[1,"x"]'},), (1, "x"), id="structured-array"
        ),
        pytest.param(42, ({"type": "text", "text": "42"},), 42, id="structured-number"),
        pytest.param(None, ({"type": "text", "text": "null"},), None, id="none"),
        pytest.param([], ({"type": "text", "text": "[]"},), (), id="empty-list"),
        pytest.param(
            cm.Envelope("body"),
            ({"type": "text", "text": "body"},),
            None,
            id="envelope-content-only",
        ),
        pytest.param(  # a plain dict is data, whatever its keys (issue #13)
            {"content": "body"},
            ({"type": "text", "text": '{"content":"body"}'},),
            {"content": "body"},
            id="dict-with-content-key-is-data",
        ),
        *(pytest.param(  # r46: a JSON schema's "type" (a list, an object) is data: it raised
            value,         # TypeError (unhashable type) out of registry.execute
            ({"type": "text", "text": json.dumps(value, separators=(",", ":"))},),
            freeze(value),
            id=name,
        ) for name, value in (
            ("dict-with-a-list-type-is-data", {"type": ["string", "null"], "title": "x"}),
            ("dict-with-an-object-type-is-data", {"type": {"text": 1}}),
            ("list-of-dicts-with-list-types-is-data", [{"type": ["text"]}, IMAGE]),
        )),
        pytest.param(
            cm.Envelope([IMAGE], structured={"n": 1}),
            (IMAGE,),
            {"n": 1},
            id="envelope-structured",
        ),
    ],
)
async def test_result_shapes_are_normalised(
    registry: cm.ToolRegistry, value: Any, content: tuple[Any, ...], structured: Any
) -> None:
    result = await run(registry, value)
    assert not result.is_error, result.text
    assert result.content == content
    assert result.structured == structured
    assert result.meta is None
    assert all(isinstance(block, cm.FrozenDict) for block in result.content)


async def test_meta_is_kept_on_the_result_but_not_in_the_content(registry: cm.ToolRegistry) -> None:
    result = await run(registry, cm.Envelope("visible", meta={"cost": 3, "ids": [1]}))
    assert result.content == ({"type": "text", "text": "visible"},)
    assert result.meta == {"cost": 3, "ids": (1,)}
    assert isinstance(result.meta, cm.FrozenDict)
    assert "cost" not in result.text


async def test_envelope_can_report_a_domain_error(registry: cm.ToolRegistry) -> None:
    result = await run(registry, cm.Envelope("no such file", is_error=True, meta={"k": 1}))
    assert result.is_error and result.error is not None
    assert (result.error.kind, result.error.message) == ("handler_error", "no such file")
    assert result.meta == {"k": 1}


@pytest.mark.parametrize(("text", "message"), [
    ("quota exceeded", 'quota exceeded\n{"code":429}'),
    ('quota exceeded: {"code":429}', 'quota exceeded: {"code":429}'),  # said once
    ('quota exceeded: {"code": 429}', 'quota exceeded: {"code": 429}'),
    ("", '{"code":429}'),
])
async def test_an_errors_details_as_data_are_in_its_message(
        registry: cm.ToolRegistry, text: Any, message: str) -> None:
    """A caller that reads only the message (a script's ``ToolCallError``) read none of an
    error's structured data; nor is that data held to the tool's output schema."""
    result = await run(registry, cm.Envelope(text, structured={"code": 429}, is_error=True),
                       output_schema={"type": "object", "required": ["rows"]})
    assert result.error is not None
    assert (result.error.kind, result.error.message) == ("handler_error", message)
    assert result.structured == {"code": 429}


async def test_data_with_an_is_error_key_is_just_data(registry: cm.ToolRegistry) -> None:
    result = await run(registry, {"is_error": True, "count": 1})
    assert not result.is_error
    assert result.structured == {"is_error": True, "count": 1}


class Opaque:
    pass


_SELF_HOLDING: list[Any] = []
_SELF_HOLDING.append(_SELF_HOLDING)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        pytest.param(
            b"\x89PNG",
            "bytes is not JSON data (wrap binary data in an image/audio/resource",
            id="bytes",
        ),
        pytest.param({1, 2}, "set is not JSON data", id="set"),
        pytest.param(_SELF_HOLDING, "nested too deeply for JSON (or it holds itself)",
                     id="list-holding-itself"),
        pytest.param(10**5000, "JSON text cannot hold: Exceeds the limit (4300 digits)",
                     id="int-past-the-digit-limit"),
        pytest.param({"n": [10**5000]}, "JSON text cannot hold", id="nested-int-past-the-limit"),
        pytest.param(Opaque(), "Opaque is not JSON data", id="object"),
        pytest.param(math.nan, "$: float is not JSON data", id="nan"),
        pytest.param({"x": [math.inf]}, "$.x[0]: float is not JSON data", id="nested-inf"),
        pytest.param(
            {"type": "image", "data": "aGk="},
            "image block is missing mimeType",
            id="block-missing-key",
        ),
        pytest.param(
            {"type": "text", "text": 5}, "text block's 'text' must be a string", id="text-not-str"
        ),
        pytest.param(
            {"type": "image", "data": b"raw", "mimeType": "image/png"},
            "content block is not JSON",
            id="block-with-bytes",
        ),
        pytest.param(
            cm.Envelope("x", meta="not an object"),  # type: ignore[arg-type]
            "'meta' must be an object",
            id="meta-not-object",
        ),
        pytest.param(
            cm.Envelope("x", meta={"f": Opaque()}), "'meta' is not JSON", id="meta-not-json"
        ),
        pytest.param(
            cm.Envelope("x", structured={1, 2}),
            "'structured' is not JSON",
            id="structured-not-json",
        ),
        # a truthy stand-in read as "no error" would report a failure as a success
        pytest.param(cm.Envelope("disk full", is_error=1),  # type: ignore[arg-type]
                     "'is_error' must be True or False, not int", id="is-error-int"),
        pytest.param(cm.Envelope("disk full", is_error="yes"),  # type: ignore[arg-type]
                     "'is_error' must be True or False, not str", id="is-error-str"),
    ],
)
async def test_non_json_results_become_errors(
    registry: cm.ToolRegistry, value: Any, message: str
) -> None:
    seen: list[cm.ToolResult] = []
    registry.on_result(seen.append)
    result = await run(registry, value)
    assert result.is_error and result.error is not None
    assert result.error.kind == "invalid_result"
    assert message in result.text
    assert result.text.startswith("'t' returned an invalid result: ")
    assert seen == [result]


async def test_a_coroutine_returned_unawaited_is_closed_and_named(
        registry: cm.ToolRegistry) -> None:
    async def pause() -> None:
        pass

    forgotten = pause()
    result = await run(registry, forgotten)
    assert result.error is not None and result.error.kind == "invalid_result"
    assert result.text.endswith("(a coroutine: the tool misses an await)")
    assert inspect.getcoroutinestate(forgotten) == inspect.CORO_CLOSED  # no warning later


class Unprintable:
    """An exception argument whose text raises: the failure keeps its own kind."""

    def __str__(self) -> str:
        raise RuntimeError("no text")

    __repr__ = __str__


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        (ValueError("bad input"), "ValueError: bad input"),
        (KeyError("k"), "KeyError: 'k'"),
        (cm.ToolCallError("inner", "failed"), "ToolCallError: inner: failed"),
        (ValueError(Unprintable()), "ValueError: <unprintable ValueError>"),
    ],
)
async def test_exceptions_become_errors(
    registry: cm.ToolRegistry, exc: Exception, text: str
) -> None:
    async def handler(args: Any, ctx: cm.ExecContext) -> Any:
        raise exc

    registry.register(cm.define_tool(name="t", execute=handler))
    result = await registry.execute(call("t"))
    assert result.is_error and result.error is not None
    assert (result.error.kind, result.text) == ("handler_error", text)


async def test_sync_handler_exceptions_become_errors(registry: cm.ToolRegistry) -> None:
    def handler(args: Any) -> Any:
        return 1 / 0

    registry.register(cm.define_tool(name="t", execute=handler))
    result = await registry.execute(call("t"))
    assert result.is_error and result.text == "ZeroDivisionError: division by zero"


OUTPUT = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.mark.parametrize(
    ("value", "ok", "detail"),
    [
        ({"n": 1}, True, None),
        (cm.Envelope("shown", structured={"n": 2}), True, None),
        ("plain text skips the output check", True, None),
        ({"n": "one"}, False, "$.n: 'one' is not of type 'integer'"),
        ({"m": 1}, False, "$: 'n' is a required property"),
        ([1], False, "$: [1] is not of type 'object'"),
    ],
)
async def test_structured_results_are_checked_against_the_output_schema(
    registry: cm.ToolRegistry, value: Any, ok: bool, detail: str | None
) -> None:
    result = await run(registry, value, output_schema=OUTPUT)
    assert result.is_error is not ok
    if not ok:
        assert result.error is not None and result.error.kind == "invalid_result"
        assert result.text == (f"'t' returned data that does not match its output schema: {detail}")


async def test_a_returned_tool_result_is_renormalised(registry: cm.ToolRegistry) -> None:
    forged = cm.ToolResult(
        call_id="someone-else",
        name="other",
        content=({"type": "text", "text": "hi"},),
        meta={"ids": [1]},
        structured={"a": [1]},
    )
    result = await run(registry, forged)
    assert (result.call_id, result.name) != ("someone-else", "other")
    assert result.name == "t"
    assert isinstance(result.content[0], cm.FrozenDict)
    assert result.meta == {"ids": (1,)} and isinstance(result.meta, cm.FrozenDict)
    assert result.structured == {"a": (1,)}


async def test_a_returned_tool_result_with_bad_content_is_an_error(
    registry: cm.ToolRegistry,
) -> None:
    forged = cm.ToolResult(call_id="x", name="t", content=({"not": "a block"},))
    result = await run(registry, forged)
    assert result.is_error and "must be content blocks" in result.text


async def test_results_are_immutable(registry: cm.ToolRegistry) -> None:
    result = await run(registry, cm.Envelope([cm.text("a")], meta={"k": [1]}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.is_error = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.content[0]["text"] = "b"  # type: ignore[index]
    with pytest.raises(TypeError):
        result.meta["k"] = 2  # type: ignore[index]
    assert result.call_id.startswith("c") and result.duration > 0


async def test_text_property_joins_text_blocks_only(registry: cm.ToolRegistry) -> None:
    result = await run(registry, [cm.text("a"), IMAGE, cm.text("b")])
    assert result.text == "a\nb"


class _Level(enum.IntEnum):
    HIGH = 3


class _Colour(enum.StrEnum):
    RED = "red"


class _Point(NamedTuple):
    x: int
    y: float


class _Loud(str):
    """A str subclass whose own ``__str__`` must never run on the host's behalf."""

    calls: ClassVar[list[str]] = []

    def __str__(self) -> str:
        _Loud.calls.append("str")
        return "overridden"


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(_Level.HIGH, id="int-enum"),
        pytest.param({"c": _Colour.RED, "n": [_Level.HIGH]}, id="enums-nested"),
        pytest.param(_Point(1, 2.5), id="named-tuple"),
        pytest.param([_Point(1, 2.5), _Point(3, 4.0)], id="named-tuples-in-a-list"),
        pytest.param(collections.OrderedDict(b=1, a=[2]), id="ordered-dict"),
        pytest.param(collections.defaultdict(list, a=[1, 2]), id="defaultdict"),
        pytest.param(collections.Counter("abca"), id="counter"),
        pytest.param({"k": _Loud("plain")}, id="str-subclass"),
        pytest.param({_Colour.RED: 1}, id="str-enum-key"),
    ],
)
async def test_subclasses_of_json_types_are_data_as_json_dumps_writes_them(
        registry: cm.ToolRegistry, value: Any) -> None:
    _Loud.calls.clear()
    result = await run(registry, value)
    assert not result.is_error, result.text
    expected = json.loads(json.dumps(value))
    assert json.loads(result.text) == expected
    assert thaw(result.structured) == expected
    assert _Loud.calls == []  # the base type's own copy, not the subclass's __str__


class _Exploding(collections.UserDict[str, Any]):
    def __iter__(self) -> Iterator[str]:
        raise RuntimeError("iteration exploded")


async def test_a_mapping_that_raises_when_read_is_an_invalid_result_that_says_why(
        registry: cm.ToolRegistry) -> None:
    result = await run(registry, {"rows": _Exploding(a=1)})
    assert result.error is not None and result.error.kind == "invalid_result"
    assert "$.rows: reading _Exploding raised RuntimeError: iteration exploded" in result.text


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        pytest.param({"a": [1, "x"]}, False, id="plain-data-is-measured"),
        pytest.param(_Colour.RED, False, id="a-str-subclass-is-a-leaf"),
        pytest.param(collections.OrderedDict(a=1), True, id="ordered-dict"),
        pytest.param({"a": collections.defaultdict(int)}, True, id="nested-defaultdict"),
        pytest.param([_Point(1, 2.0)], True, id="named-tuple"),
    ],
)
def test_containers_of_other_types_are_copied_off_the_loop(value: Any, expected: bool) -> None:
    # a 400,000-key defaultdict result held an in-process host's loop for 2.0 s while it
    # was frozen there (plain dicts are measured first and go to a thread past the limit)
    assert heavy(value, HEAVY_VALUES) is expected
