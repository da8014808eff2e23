"""Every example script, run for real; expectations are computed from the seeded data directly."""

from __future__ import annotations

import csv
import re
import sqlite3
import statistics
from collections import Counter
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from codemode import CodeMode, ToolRegistry
from codemode.sandbox import InProcessExecutor, ScriptResult
from codemode.testing import RunCode, ToolEvents, assert_script_ok

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

SCRIPTS = Path(__file__).resolve().parents[2] / "examples" / "scripts"
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")


def source(name: str) -> str:
    return (SCRIPTS / f"{name}.py").read_text()


def rows(workspace: Path, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(workspace / "shop.db")) as conn:
        return conn.execute(statement, params).fetchall()


@pytest.fixture
async def mode(local_registry: ToolRegistry) -> AsyncIterator[CodeMode]:
    async with InProcessExecutor() as executor:
        yield CodeMode(local_registry, executor=executor)


async def run(mode: CodeMode, name: str) -> ScriptResult:
    return await mode.run(source(name))


def test_every_script_is_covered() -> None:
    tested = {"revenue_by_country", "parallel_notes", "error_handling", "denied_delete",
              "low_stock_report"}
    assert {p.stem for p in SCRIPTS.glob("*.py")} == tested


def test_every_script_passes_preflight(local_registry: ToolRegistry) -> None:
    mode = CodeMode(local_registry)
    for path in sorted(SCRIPTS.glob("*.py")):
        assert mode.check(path.read_text()) == [], path.name


async def test_revenue_by_country(mode: CodeMode, workspace: Path) -> None:
    result = await run(mode, "revenue_by_country")
    value = assert_script_ok(result)
    paid = "o.status IN ('shipped', 'delivered')"
    by_country = rows(workspace, "SELECT c.country, SUM(o.quantity * o.unit_price) FROM orders o "
                      f"JOIN customers c ON c.id = o.customer_id WHERE {paid} "
                      "GROUP BY c.country ORDER BY c.country")
    by_customer = rows(workspace, "SELECT c.name, SUM(o.quantity * o.unit_price) AS total "
                       f"FROM orders o JOIN customers c ON c.id = o.customer_id WHERE {paid} "
                       "GROUP BY c.name ORDER BY total DESC")
    assert value["revenue_by_country"] == {c: pytest.approx(round(t, 2)) for c, t in by_country}
    assert value["top_customers"] == [{"name": n, "revenue": pytest.approx(round(t, 2))}
                                      for n, t in by_customer[:3]]
    assert value["mean_per_customer"] == pytest.approx(
        statistics.fmean(t for _, t in by_customer), abs=1e-4)
    orders = rows(workspace, "SELECT COUNT(*) FROM orders")[0][0]
    assert result.output == f"{orders} orders, {len(by_customer)} customers with revenue\n"
    assert [c.name for c in result.calls] == ["query", "query", "summarize_numbers"]


async def test_parallel_notes(mode: CodeMode, workspace: Path) -> None:
    value = assert_script_ok(await run(mode, "parallel_notes"))
    notes = sorted((workspace / "files" / "notes").glob("*.md"))
    texts = [p.read_text() for p in notes]
    counts = [[w.lower() for w in WORD.findall(t)] for t in texts]
    assert value["notes"] == [
        {"path": f"notes/{p.name}", "words": len(words),
         "top": sorted(Counter(words).items(), key=lambda kv: (-kv[1], kv[0]))[0][0]}
        for p, words in zip(notes, counts, strict=True)]
    assert value["total_words"] == sum(map(len, counts))
    assert value["contacts"] == sorted({e.lower() for e in EMAIL.findall("\n".join(texts))})


async def test_parallel_notes_really_fans_out(mode: CodeMode) -> None:
    result = await run(mode, "parallel_notes")
    assert_script_ok(result)
    names = [c.name for c in result.calls]
    assert names.count("read_file") == 3 and names.count("word_count") == 3


async def test_error_handling(mode: CodeMode, workspace: Path) -> None:
    result = await run(mode, "error_handling")
    value = assert_script_ok(result)
    assert rows(workspace, "SELECT COUNT(*) FROM orders WHERE quantity > 100")[0][0] == 0
    latest = sorted((workspace / "files" / "notes").glob("*.md"))[-1]
    assert value["fallback_note_lines"] == len(latest.read_text().splitlines())
    assert value["big_order_stats"] is None
    problems = value["problems"]
    assert [p["tool"] for p in problems] == ["read_file", "read_file", "query",
                                             "summarize_numbers"]
    assert "no file 'notes/2024-03-25-standup.md'" in problems[0]["message"]
    assert "outside the workspace root" in problems[1]["message"]
    assert "read-only" in problems[2]["message"]
    assert problems[3]["path"] == "$.values"
    assert result.output == "4 problem(s) handled\n"
    assert rows(workspace, "SELECT COUNT(*) FROM orders WHERE status = 'pending'")[0][0] > 0


async def test_denied_delete_is_refused_before_anything_runs(mode: CodeMode,
                                                             workspace: Path) -> None:
    result = await run(mode, "denied_delete")
    todo = workspace / "files" / "todo.txt"
    assert result.error is not None
    assert result.error.type == "PreflightError"  # the policy preflight, on by default
    assert result.error.line == 6
    assert "deleting files is not allowed in this workspace" in result.error.message
    assert todo.is_file()
    assert not (workspace / "files" / "archive" / "todo-2024-03.txt").exists()
    assert result.output == "" and result.calls == ()


async def test_low_stock_report(mode: CodeMode, workspace: Path) -> None:
    value = assert_script_ok(await run(mode, "low_stock_report"))
    with (workspace / "files" / "data" / "inventory.csv").open() as f:
        stock = {r["sku"]: (r["product"], int(r["stock"])) for r in csv.DictReader(f)}
    pending = rows(workspace, "SELECT sku, SUM(quantity) FROM orders WHERE status = 'pending' "
                   "GROUP BY sku ORDER BY sku")
    low = [(sku, stock[sku][1] - units, units) for sku, units in pending
           if stock[sku][1] - units < 25]
    assert low, "the seeded data should make the report non-empty"
    assert value == {"report": "reports/low-stock.md", "low": [s for s, _, _ in low],
                     "checked": len(pending)}
    report = (workspace / "files" / "reports" / "low-stock.md").read_text()
    assert report == "# Low stock\n\n" + "".join(
        f"- {stock[s][0]} ({s}): {left} left after {units} pending\n" for s, left, units in low)


@pytest.mark.parametrize("name", ["revenue_by_country", "parallel_notes", "error_handling",
                                  "denied_delete", "low_stock_report"])
async def test_scripts_through_run_code(local_registry: ToolRegistry, mode: CodeMode,
                                        name: str) -> None:
    local_registry.register(mode.as_tool())
    events = ToolEvents(local_registry)
    result = await RunCode(local_registry)(source(name), call_id="outer")
    run_token = events.token_of("outer")
    events.assert_complete()
    assert result.is_error is (name == "denied_delete")
    if name == "denied_delete":  # refused up front: no nested call was dispatched
        assert result.text.startswith("error: PreflightError at line 6")
        assert events.calls() == events.calls("run_code")
        return
    nested = events.assert_parent("outer:code:", run_token)
    assert len(nested) == len((result.meta or {})["calls"]) > 0
    assert result.text.startswith("value: ")
