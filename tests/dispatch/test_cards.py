# ruff: noqa: E501 - the snapshots hold exact card texts, long lines included
"""Presentation cards: exact views of every example tool, the soft-validating fallback, the
card tree of a script's nested calls, and a replayed session log rendering the same cards."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from inline_snapshot import snapshot

import codemode as cm
from codemode.dispatch.cards import card_from_json
from examples import background
from examples.local_tools import CARDS, build_registry, seed

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def registry(tmp_path: Path) -> cm.ToolRegistry:
    reg = build_registry(seed(tmp_path / "ws"))
    reg.register(background.count_primes_tool())
    return reg


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_files", {"pattern": "*.md", "directory": "notes"}),
    ("read_file", {"path": "notes/2024-03-04-standup.md"}),
    ("write_file", {"path": "out/hello.txt", "content": "hi\nthere\n"}),
    ("search_text", {"query": "courier", "pattern": "**/*.md"}),
    ("delete_file", {"path": "README.md"}),
    ("query", {"sql": "SELECT country, COUNT(*) AS n FROM customers GROUP BY country "
                      "ORDER BY n DESC LIMIT 2"}),
    ("list_tables", {}),
    ("describe_table", {"table": "orders"}),
    ("word_count", {"text": "to be or not to be", "top": 2}),
    ("extract_emails", {"text": "mail ana@example.com or bo@example.org"}),
    ("summarize_numbers", {"values": [1, 2, 3, 4]}),
]


def test_every_example_tool_has_cards(registry: cm.ToolRegistry) -> None:
    names = {spec.name for spec in registry.specs()} - {"count_primes"}
    assert names == set(CARDS) == {name for name, _ in CALLS}
    assert all(registry.get(name).present_call is not None
               and registry.get(name).present_result is not None for name in names)


async def _cards(registry: cm.ToolRegistry, name: str, args: dict[str, Any]) -> dict[str, Any]:
    events: list[cm.ToolEvent] = []
    unsubscribe = registry.subscribe(events.append)
    try:
        await registry.execute(cm.ToolCall(call_id=name, name=name, arguments=args))
    finally:
        unsubscribe()
    [node] = cm.render_session(events, registry.get)
    return {"call": node.call.to_json(),
            "result": None if node.result is None else node.result.to_json()}


async def test_example_cards_exact_views(registry: cm.ToolRegistry) -> None:
    views = {name: await _cards(registry, name, args) for name, args in CALLS}
    assert views == snapshot({
    "list_files": {
        "call": {"card": "generic", "title": "List *.md in notes", "kind": "search"},
        "result": {
            "card": "generic",
            "title": "Listed 3 files in notes",
            "kind": "search",
            "content": """\
notes/2024-03-04-standup.md
notes/2024-03-11-retro.md
notes/2024-03-18-planning.md\
""",
            "locations": [
                {"path": "notes/2024-03-04-standup.md"},
                {"path": "notes/2024-03-11-retro.md"},
                {"path": "notes/2024-03-18-planning.md"},
            ],
        },
    },
    "read_file": {
        "call": {
            "card": "generic",
            "title": "Read notes/2024-03-04-standup.md",
            "kind": "read",
            "locations": [{"path": "notes/2024-03-04-standup.md"}],
        },
        "result": {
            "card": "generic",
            "title": "Read notes/2024-03-04-standup.md (7 lines)",
            "kind": "read",
            "locations": [{"path": "notes/2024-03-04-standup.md"}],
        },
    },
    "write_file": {
        "call": {
            "card": "diff",
            "title": "Write out/hello.txt",
            "diffs": [
                {
                    "path": "out/hello.txt",
                    "old_text": None,
                    "new_text": """\
hi
there
""",
                }
            ],
            "locations": [{"path": "out/hello.txt"}],
        },
        "result": {
            "card": "diff",
            "title": "Wrote out/hello.txt (9 bytes)",
            "diffs": [
                {
                    "path": "out/hello.txt",
                    "old_text": None,
                    "new_text": """\
hi
there
""",
                }
            ],
            "locations": [{"path": "out/hello.txt"}],
        },
    },
    "search_text": {
        "call": {
            "card": "generic",
            "title": "Search 'courier' in **/*.md",
            "kind": "search",
        },
        "result": {
            "card": "generic",
            "title": "Search 'courier': 2 matches",
            "kind": "search",
            "content": """\
notes/2024-03-04-standup.md:7: - Tom will call the courier about the two lost parcels.
notes/2024-03-18-planning.md:7: Sven confirms the courier can handle 40 parcels a day.\
""",
            "locations": [
                {"path": "notes/2024-03-04-standup.md", "line": 7},
                {"path": "notes/2024-03-18-planning.md", "line": 7},
            ],
        },
    },
    "delete_file": {
        "call": {
            "card": "generic",
            "title": "Delete README.md",
            "kind": "delete",
            "locations": [{"path": "README.md"}],
        },
        "result": {
            "card": "generic",
            "title": "Delete README.md",
            "content": "call to 'delete_file' denied: deleting files is not allowed in this workspace",
        },
    },
    "query": {
        "call": {
            "card": "generic",
            "title": "SQL: SELECT country, COUNT(*) AS n FROM customers GROUP BY count…",
            "kind": "read",
            "raw_input": {
                "sql": "SELECT country, COUNT(*) AS n FROM customers GROUP BY country ORDER BY n DESC LIMIT 2"
            },
        },
        "result": {
            "card": "generic",
            "title": "SQL: SELECT country, COUNT(*) AS n FROM customers GROUP BY count… → 2 rows",
            "kind": "read",
        },
    },
    "list_tables": {
        "call": {"card": "generic", "title": "List tables", "kind": "read"},
        "result": {
            "card": "generic",
            "title": "Tables",
            "kind": "read",
            "content": "customers, orders",
        },
    },
    "describe_table": {
        "call": {"card": "generic", "title": "Describe table orders", "kind": "read"},
        "result": {
            "card": "generic",
            "title": "Table orders: 60 rows",
            "kind": "read",
            "content": "id, customer_id, sku, product, quantity, unit_price, status, ordered_at",
        },
    },
    "word_count": {
        "call": {
            "card": "generic",
            "title": "Count words in 18 characters",
            "kind": "think",
        },
        "result": {
            "card": "generic",
            "title": "Word count of 18 characters",
            "kind": "think",
            "content": '{"words":6,"lines":1,"characters":18,"top_words":[{"word":"be","count":2},{"word":"to","count":2}]}',
        },
    },
    "extract_emails": {
        "call": {
            "card": "generic",
            "title": "Find emails in 38 characters",
            "kind": "search",
        },
        "result": {
            "card": "generic",
            "title": "Emails in 38 characters",
            "kind": "search",
            "content": '{"emails":["ana@example.com","bo@example.org"]}',
        },
    },
    "summarize_numbers": {
        "call": {"card": "generic", "title": "Summarize 4 numbers", "kind": "think"},
        "result": {
            "card": "generic",
            "title": "Summary of 4 numbers",
            "kind": "think",
            "content": '{"count":4,"sum":10.0,"mean":2.5,"median":2.5,"min":1.0,"max":4.0,"stdev":1.291}',
        },
    },
})


def test_malformed_or_old_args_fall_back_to_a_generic_card(registry: cm.ToolRegistry) -> None:
    read = registry.get("read_file")
    for args in ({"file": "notes/standup.md"}, {"path": 3}, ["notes"], None):
        assert cm.present_call(read, args) is None
        assert cm.present_result(read, args, cm.CardResult()) is None
    assert cm.fallback_card("read_file", {"file": "x"}).to_json() == snapshot({"card": "generic", "title": "read_file", "raw_input": {"file": "x"}})
    assert cm.fallback_card("read_file", ["x", {1, 2}]).to_json() == snapshot({"card": "generic", "title": "read_file", "raw_input": "['x', {1, 2}]"})


def test_a_presenter_that_raises_or_returns_junk_gives_none() -> None:
    def boom(args: Any) -> Any:
        raise KeyError("path")

    raising = cm.define_tool(name="t", parameters={}, execute=lambda a: "x", present_call=boom,
                             present_result=lambda a, r: {"card": "generic"})
    assert cm.present_call(raising, {}) is None
    assert cm.present_result(raising, {}, cm.CardResult()) is None
    plain = cm.define_tool(name="p", parameters={}, execute=lambda a: "x")
    assert cm.present_call(plain, {}) is None
    with pytest.raises(cm.ToolDefinitionError):
        cm.define_tool(name="bad", execute=lambda a: "x", present_call="nope")  # type: ignore[arg-type]


def test_terminal_and_diff_cards_round_trip_through_json() -> None:
    terminal = cm.TerminalCard(title="pytest -q", description="Run the tests", cwd="/repo",
                               output="3 passed\n", exit_code=0)
    diff = cm.DiffCard(title="Edit a.py", diffs=(cm.FileDiff(path="a.py", old_text="x = 1\n",
                                                             new_text="x = 2\n"),),
                       locations=(cm.Location(path="a.py", line=1),))
    assert terminal.to_json() == snapshot({
    "card": "terminal",
    "title": "pytest -q",
    "description": "Run the tests",
    "cwd": "/repo",
    "output": "3 passed\n",
    "exit_code": 0,
})
    for card in (terminal, diff, cm.GenericCard(title="t", kind="read", raw_input={"a": 1})):
        assert card_from_json(card.to_json()) == card
    with pytest.raises(ValueError, match="not a card"):
        card_from_json({"card": "acp_tool_call"})


async def test_nested_calls_render_under_their_run_code_card_and_replay_identically(
        registry: cm.ToolRegistry, tmp_path: Path) -> None:
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(registry, executor=executor)
        registry.register(mode.as_tool())
        live: list[cm.ToolEvent] = []
        registry.subscribe(live.append)
        log_path = tmp_path / "session.jsonl"
        with cm.JsonlSessionLog(log_path) as log:
            registry.subscribe(log)
            script = ("files = await tools.list_files(pattern='*.md', directory='notes')\n"
                      "text = await tools.read_file(path=files['files'][0]['path'])\n"
                      "await tools.write_file(path='out/n.txt', content=text[:12])\n"
                      "len(text)")
            result = await registry.execute(cm.ToolCall(call_id="run", name="run_code",
                                                        arguments={"code": script}))
            assert not result.is_error, result.text
    live_view = [node.to_json() for node in cm.render_session(live, registry.get)]
    replayed = [node.to_json() for node in
                cm.render_session(cm.read_session(log_path), registry.get)]
    assert replayed == live_view
    [run] = live_view
    assert [child["name"] for child in run["children"]] == ["list_files", "read_file",
                                                           "write_file"]
    assert run["call"] == {"card": "generic", "title": "Run a script (4 lines)",
                           "kind": "execute", "content": script}
    assert run["result"]["title"] == "Script finished · 3 tool calls"
    assert run["children"] == snapshot([
    {
        "call_id": "run:code:1",
        "name": "list_files",
        "call": {"card": "generic", "title": "List *.md in notes", "kind": "search"},
        "result": {
            "card": "generic",
            "title": "Listed 3 files in notes",
            "kind": "search",
            "content": """\
notes/2024-03-04-standup.md
notes/2024-03-11-retro.md
notes/2024-03-18-planning.md\
""",
            "locations": [
                {"path": "notes/2024-03-04-standup.md"},
                {"path": "notes/2024-03-11-retro.md"},
                {"path": "notes/2024-03-18-planning.md"},
            ],
        },
    },
    {
        "call_id": "run:code:2",
        "name": "read_file",
        "call": {
            "card": "generic",
            "title": "Read notes/2024-03-04-standup.md",
            "kind": "read",
            "locations": [{"path": "notes/2024-03-04-standup.md"}],
        },
        "result": {
            "card": "generic",
            "title": "Read notes/2024-03-04-standup.md (7 lines)",
            "kind": "read",
            "locations": [{"path": "notes/2024-03-04-standup.md"}],
        },
    },
    {
        "call_id": "run:code:3",
        "name": "write_file",
        "call": {
            "card": "diff",
            "title": "Write out/n.txt",
            "diffs": [
                {"path": "out/n.txt", "old_text": None, "new_text": "# Standup 20"}
            ],
            "locations": [{"path": "out/n.txt"}],
        },
        "result": {
            "card": "diff",
            "title": "Wrote out/n.txt (12 bytes)",
            "diffs": [
                {"path": "out/n.txt", "old_text": None, "new_text": "# Standup 20"}
            ],
            "locations": [{"path": "out/n.txt"}],
        },
    },
])
    gone = [node.to_json() for node in
            cm.render_session(cm.read_session(log_path), lambda name: None)]
    assert gone[0]["children"][0]["call"] == snapshot({
    "card": "generic",
    "title": "list_files",
    "raw_input": {"pattern": "*.md", "directory": "notes"},
})  # a tool no longer registered
