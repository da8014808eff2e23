"""@tool hands handlers their annotated types, stays a plain function, and can run threaded."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import threading
import uuid
from typing import Any

import anyio
import pydantic
import pytest

import codemode as cm

from .support import call


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(pydantic.BaseModel):
    city: str
    zip: str | None = None


class Customer(pydantic.BaseModel):
    name: str
    address: Address
    tags: list[str] = []


SEEN: list[dict[str, Any]] = []


@cm.tool
async def create_order(
    customer: Customer,
    when: datetime.date,
    at: datetime.datetime,
    color: Color,
    order_id: uuid.UUID,
    extras: list[Address] | None = None,
) -> dict[str, Any]:
    """Create an order."""
    SEEN.append({"customer": customer, "when": when, "at": at, "color": color,
                 "order_id": order_id, "extras": extras})
    return {"customer": customer, "day": when + datetime.timedelta(days=1), "color": color,
            "id": order_id}


ORDER = {
    "customer": {"name": "Ada", "address": {"city": "Oslo"}},
    "when": "2026-12-01",
    "at": "2026-12-01T13:45:00+00:00",
    "color": "blue",
    "order_id": "12345678-1234-5678-1234-567812345678",
    "extras": [{"city": "Rome", "zip": "00100"}],
}


async def test_arguments_arrive_as_their_annotated_types(registry: cm.ToolRegistry) -> None:
    SEEN.clear()
    registry.register(create_order)
    result = await registry.execute(call("create_order", ORDER))
    assert not result.is_error, result.text
    got = SEEN[-1]
    assert got["customer"] == Customer(name="Ada", address=Address(city="Oslo"))
    assert type(got["customer"]) is Customer and type(got["customer"].address) is Address
    assert type(got["when"]) is datetime.date and got["when"] == datetime.date(2026, 12, 1)
    assert got["at"] == datetime.datetime(2026, 12, 1, 13, 45, tzinfo=datetime.UTC)
    assert got["color"] is Color.BLUE
    assert got["order_id"] == uuid.UUID(ORDER["order_id"])
    assert got["extras"] == [Address(city="Rome", zip="00100")]


async def test_such_values_in_the_result_go_back_as_json(registry: cm.ToolRegistry) -> None:
    registry.register(create_order)
    result = await registry.execute(call("create_order", ORDER))
    assert cm.thaw(result.structured) == {
        "customer": {"name": "Ada", "address": {"city": "Oslo", "zip": None}, "tags": []},
        "day": "2026-12-02",
        "color": "blue",
        "id": ORDER["order_id"],
    }



@dataclasses.dataclass
class Line:
    sku: str
    qty: int
    since: datetime.date | None = None


@cm.tool
def restock(line: Line, more: int) -> list[Line]:
    """Restock a line."""
    assert type(line) is Line
    return [dataclasses.replace(line, qty=line.qty + more, since=datetime.date(2026, 12, 3))]


@cm.tool
def line_class() -> object:
    """Return the dataclass itself, not an instance."""
    return Line


async def test_dataclass_instances_arrive_and_go_back_as_json(
        registry: cm.ToolRegistry) -> None:
    registry.register(restock)
    registry.register(line_class)
    result = await registry.execute(call("restock", {"line": {"sku": "a", "qty": 1}, "more": 2}))
    assert not result.is_error, result.text
    assert cm.thaw(result.structured) == [{"sku": "a", "qty": 3, "since": "2026-12-03"}]
    bad = await registry.execute(call("line_class", {}))  # a class is no JSON data
    assert bad.error is not None and bad.error.kind == "invalid_result"

def test_the_schema_still_says_what_the_wire_carries() -> None:
    props = create_order.spec.parameters["properties"]
    assert props["when"] == {"type": "string", "format": "date"}
    assert props["order_id"] == {"type": "string", "format": "uuid"}
    assert props["customer"] == {"$ref": "#/$defs/Customer"}


async def test_invalid_arguments_never_reach_the_function(registry: cm.ToolRegistry) -> None:
    SEEN.clear()
    registry.register(create_order)
    bad = await registry.execute(call("create_order", {**ORDER, "color": "green"}))
    assert bad.error is not None and bad.error.kind == "invalid_arguments"
    assert SEEN == []


@cm.tool
def scale(value: float, factor: int = 3, *, unit: str = "m") -> str:
    """Scale a value."""
    return f"{value * factor}{unit}"


DEFAULT_TAGS = ["a"]
GOT_TAGS: list[object] = []


@cm.tool
def tagged(tags: list[str] = DEFAULT_TAGS) -> int:  # its identity is the point
    """Record which list came in."""
    GOT_TAGS.append(tags)
    return len(tags)


async def test_omitted_arguments_take_the_functions_own_defaults(
    registry: cm.ToolRegistry,
) -> None:
    registry.register(scale)
    registry.register(tagged)
    result = await registry.execute(call("scale", {"value": 2}))
    assert result.text == "6.0m"
    await registry.execute(call("tagged", {}))
    await registry.execute(call("tagged", {"tags": ["a"]}))
    assert GOT_TAGS[0] is DEFAULT_TAGS and GOT_TAGS[1] is not DEFAULT_TAGS  # not a copy


async def test_the_decorated_function_stays_callable_as_python() -> None:
    assert scale(1.5) == "4.5m"
    assert scale(2, factor=2, unit="cm") == "4cm"
    order = await create_order(
        customer=Customer(name="Bo", address=Address(city="Lund")),
        when=datetime.date(2026, 1, 2), at=datetime.datetime(2026, 1, 2),
        color=Color.RED, order_id=uuid.UUID(int=1),
    )
    assert order["customer"].name == "Bo"  # a plain call: no JSON conversion
    assert order["day"] == datetime.date(2026, 1, 3)


def test_a_tool_from_define_tool_is_not_a_function() -> None:
    made = cm.define_tool(name="noop", execute=lambda args: None)
    with pytest.raises(TypeError, match="define_tool"):
        made()


LOOP_THREADS: set[int] = set()
BARRIER = threading.Barrier(4, timeout=10)


@cm.tool(threaded=True)
def blocking(n: int) -> int:
    """Blocks until four calls wait together: only worker threads can do that."""
    LOOP_THREADS.add(threading.get_ident())
    BARRIER.wait()
    return n * 2


async def test_threaded_sync_tools_run_off_the_event_loop(registry: cm.ToolRegistry) -> None:
    registry.register(blocking)
    results: dict[int, Any] = {}

    async def one(n: int) -> None:
        results[n] = await registry.execute(call("blocking", {"n": n}))

    async with anyio.create_task_group() as group:
        for n in range(4):
            group.start_soon(one, n)
    assert {n: r.structured for n, r in results.items()} == {0: 0, 1: 2, 2: 4, 3: 6}
    assert threading.get_ident() not in LOOP_THREADS and len(LOOP_THREADS) == 4
    assert blocking.threaded and not scale.threaded


def test_threaded_is_for_sync_functions_only() -> None:
    async def fetch(url: str) -> str:
        return url

    with pytest.raises(cm.ToolDefinitionError, match="sync handlers only"):
        cm.tool(threaded=True)(fetch)
