"""The example tools, called directly through the registry; expectations come from the data."""

from __future__ import annotations

import re
import sqlite3
import statistics
from collections import Counter
from contextlib import closing
from typing import TYPE_CHECKING, Any

import pytest

import examples.local_tools as local_tools
from codemode import ToolCall, ToolRegistry, ToolResult, thaw
from examples.local_tools import build_registry, emails_in, seed, words_of

if TYPE_CHECKING:
    from pathlib import Path


async def call(registry: ToolRegistry, name: str, **arguments: Any) -> ToolResult:
    return await registry.execute(ToolCall(call_id="t", name=name, arguments=arguments))


def data(result: ToolResult) -> Any:
    """The result's structured data as plain lists and dicts."""
    assert not result.is_error, result.text
    return thaw(result.structured)


def files_of(workspace: Path) -> Path:
    return workspace / "files"


def sql(workspace: Path, statement: str, *params: Any) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(workspace / "shop.db")) as conn:
        return conn.execute(statement, params).fetchall()


def test_registry_has_every_tool(local_registry: ToolRegistry) -> None:
    assert [s.name for s in local_registry.specs()] == [
        "list_files", "read_file", "write_file", "search_text", "delete_file",
        "query", "list_tables", "describe_table",
        "word_count", "extract_emails", "summarize_numbers"]


@pytest.mark.parametrize(("arguments", "glob"), [
    ({}, "**/*"),
    ({"directory": "notes", "pattern": "*.md"}, "notes/*.md"),
    ({"pattern": "**/*.csv"}, "**/*.csv"),
])
async def test_list_files(local_registry: ToolRegistry, workspace: Path,
                          arguments: dict[str, Any], glob: str) -> None:
    base = files_of(workspace)
    expected = [{"path": p.relative_to(base).as_posix(), "size": p.stat().st_size}
                for p in sorted(base.glob(glob)) if p.is_file()]
    result = await call(local_registry, "list_files", **arguments)
    assert data(result) == {"files": expected}
    assert expected


async def test_read_and_write_round_trip(local_registry: ToolRegistry, workspace: Path) -> None:
    readme = await call(local_registry, "read_file", path="README.md")
    assert readme.text == (files_of(workspace) / "README.md").read_text()
    written = await call(local_registry, "write_file", path="out/new.md", content="héllo\n")
    assert data(written) == {"path": "out/new.md", "bytes": len("héllo\n".encode())}
    assert (files_of(workspace) / "out" / "new.md").read_text() == "héllo\n"


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("read_file", {"path": "../shop.db"}, "outside the workspace root"),
    ("read_file", {"path": "notes/../../shop.db"}, "outside the workspace root"),
    ("read_file", {"path": "/etc/passwd"}, "is absolute"),
    ("read_file", {"path": "escape/shop.db"}, "outside the workspace root"),
    ("write_file", {"path": "../evil.txt", "content": "x"}, "outside the workspace root"),
    ("list_files", {"directory": ".."}, "outside the workspace root"),
    ("read_file", {"path": "notes/nope.md"}, "no file 'notes/nope.md'"),
])
async def test_paths_outside_the_root_are_refused(
        local_registry: ToolRegistry, workspace: Path, tool: str, arguments: dict[str, Any],
        message: str) -> None:
    (files_of(workspace) / "escape").symlink_to(workspace, target_is_directory=True)
    result = await call(local_registry, tool, **arguments)
    assert result.is_error
    assert message in result.text
    assert not (workspace / "evil.txt").exists()


async def test_list_files_skips_links_out_of_the_root(local_registry: ToolRegistry,
                                                      workspace: Path) -> None:
    (files_of(workspace) / "escape").symlink_to(workspace, target_is_directory=True)
    result = await call(local_registry, "list_files")
    assert not any(f["path"].startswith("escape/") for f in data(result)["files"])


async def test_search_text_matches_an_independent_scan(local_registry: ToolRegistry,
                                                       workspace: Path) -> None:
    base = files_of(workspace)
    expected = [{"path": p.relative_to(base).as_posix(), "line": n, "text": line}
                for p in sorted(base.glob("**/*")) if p.is_file()
                for n, line in enumerate(p.read_text().splitlines(), start=1)
                if "oolong" in line.lower()]
    result = await call(local_registry, "search_text", query="Oolong")
    assert data(result) == {"matches": expected, "truncated": False}
    assert len(expected) >= 2


async def test_search_text_rejects_a_bad_regex(local_registry: ToolRegistry) -> None:
    result = await call(local_registry, "search_text", query="(", regex=True)
    assert result.is_error and "invalid regular expression" in result.text


async def test_query_returns_rows_as_objects(local_registry: ToolRegistry,
                                             workspace: Path) -> None:
    statement = ("SELECT c.country, COUNT(*) AS orders, SUM(o.quantity * o.unit_price) AS total "
                 "FROM orders o JOIN customers c ON c.id = o.customer_id "
                 "WHERE o.status = ? GROUP BY c.country ORDER BY c.country")
    expected = [{"country": c, "orders": n, "total": t}
                for c, n, t in sql(workspace, statement, "shipped")]
    result = await call(local_registry, "query", sql=statement, params=["shipped"])
    assert data(result) == {"columns": ["country", "orders", "total"], "rows": expected,
                                 "truncated": False}


async def test_query_truncates_at_max_rows(local_registry: ToolRegistry, workspace: Path) -> None:
    result = await call(local_registry, "query", sql="SELECT id FROM orders ORDER BY id",
                        max_rows=5)
    assert data(result)["rows"] == [{"id": i} for (i,) in sql(
        workspace, "SELECT id FROM orders ORDER BY id LIMIT 5")]
    assert data(result)["truncated"] is True


@pytest.mark.parametrize("statement", [
    "DELETE FROM orders",
    "UPDATE orders SET status = 'x'",
    "INSERT INTO customers (name, email, country, joined) VALUES ('a', 'b', 'c', 'd')",
    "DROP TABLE orders",
    "CREATE TABLE t (x)",
    "PRAGMA writable_schema = 1",
    "ATTACH DATABASE ':memory:' AS other",
])
async def test_query_is_read_only(local_registry: ToolRegistry, workspace: Path,
                                  statement: str) -> None:
    before = sql(workspace, "SELECT COUNT(*), group_concat(status) FROM orders")
    result = await call(local_registry, "query", sql=statement)
    assert result.is_error
    assert "read-only" in result.text
    assert sql(workspace, "SELECT COUNT(*), group_concat(status) FROM orders") == before
    assert sql(workspace, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") == [
        ("customers",), ("orders",)]


@pytest.mark.parametrize(("statement", "message"), [
    ("SELECT 1; SELECT 2", "one statement at a time"),
    ("SELECT nope FROM orders", "no such column: nope"),
])
async def test_query_reports_sql_errors(local_registry: ToolRegistry, statement: str,
                                        message: str) -> None:
    result = await call(local_registry, "query", sql=statement)
    assert result.is_error and "SQL error" in result.text and message in result.text


async def test_tables_are_listed_and_described(local_registry: ToolRegistry,
                                               workspace: Path) -> None:
    tables = await call(local_registry, "list_tables")
    assert data(tables) == {"tables": ["customers", "orders"]}
    described = await call(local_registry, "describe_table", table="orders")
    info = sql(workspace, "PRAGMA table_info(orders)")
    assert data(described) == {
        "table": "orders",
        "row_count": sql(workspace, "SELECT COUNT(*) FROM orders")[0][0],
        "columns": [{"name": c[1], "type": c[2], "not_null": bool(c[3]),
                     "primary_key": bool(c[5])} for c in info]}
    missing = await call(local_registry, "describe_table", table="orders; DROP TABLE orders")
    assert missing.is_error and "tables are: customers, orders" in missing.text


async def test_text_utilities(local_registry: ToolRegistry, workspace: Path) -> None:
    text = (files_of(workspace) / "notes" / "2024-03-18-planning.md").read_text()
    counted = await call(local_registry, "word_count", text=text, top=2)
    words = re.findall(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?", text)
    top = sorted(Counter(w.lower() for w in words).items(), key=lambda kv: (-kv[1], kv[0]))[:2]
    assert data(counted) == {
        "words": len(words), "lines": len(text.splitlines()), "characters": len(text),
        "top_words": [{"word": w, "count": n} for w, n in top]}
    emails = await call(local_registry, "extract_emails", text=text)
    assert data(emails) == {"emails": ["ops@harbortea.example",
                                            "sven@partner-logistics.example"]}


@pytest.mark.parametrize("values", [[3], [1, 2, 3.5, 10], [-2.5, 0, 2.5]])
async def test_summarize_numbers(local_registry: ToolRegistry, values: list[float]) -> None:
    result = await call(local_registry, "summarize_numbers", values=values)
    assert data(result) == {
        "count": len(values), "sum": pytest.approx(sum(values)),
        "mean": pytest.approx(statistics.fmean(values), abs=1e-4),
        "median": pytest.approx(statistics.median(values)), "min": min(values),
        "max": max(values),
        "stdev": pytest.approx(statistics.stdev(values) if len(values) > 1 else 0, abs=1e-4)}


async def test_summarize_numbers_needs_values(local_registry: ToolRegistry) -> None:
    result = await call(local_registry, "summarize_numbers", values=[])
    assert result.error is not None
    assert (result.error.kind, result.error.path) == ("invalid_arguments", "$.values")


async def test_delete_file_is_denied_by_policy(local_registry: ToolRegistry,
                                               workspace: Path) -> None:
    result = await call(local_registry, "delete_file", path="todo.txt")
    assert result.error is not None and result.error.kind == "denied"
    assert "deleting files is not allowed" in result.text
    assert (files_of(workspace) / "todo.txt").is_file()


def test_helpers_agree_with_the_tools() -> None:
    assert words_of("Don't stop: it's 2024!") == ["don't", "stop", "it's", "2024"]
    assert emails_in("a@x.example, A@X.example. b.c@y.example") == ["a@x.example",
                                                                   "b.c@y.example"]


def test_seed_is_deterministic(tmp_path: Path) -> None:
    first, second = seed(tmp_path / "a"), seed(tmp_path / "b")
    files = sorted(p.relative_to(first) for p in first.glob("files/**/*") if p.is_file())
    assert files == sorted(p.relative_to(second) for p in second.glob("files/**/*")
                           if p.is_file())
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)

    def dump(root: Path) -> list[str]:
        with closing(sqlite3.connect(root / "shop.db")) as conn:
            return list(conn.iterdump())

    assert dump(first) == dump(second)
    assert sql(first, "SELECT COUNT(*) FROM customers")[0][0] == 10
    assert sql(first, "SELECT COUNT(*) FROM orders")[0][0] == 60
    assert {s for (s,) in sql(first, "SELECT DISTINCT status FROM orders")} == {
        "shipped", "delivered", "pending", "cancelled"}
    assert not list(first.glob("*.tmp"))


def test_module_registry_seeds_its_data_dir_once(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_tools, "DATA_DIR", tmp_path / "data")
    monkeypatch.delitem(vars(local_tools), "registry", raising=False)
    registry = local_tools.registry
    assert isinstance(registry, ToolRegistry) and "query" in registry
    assert (tmp_path / "data" / "shop.db").is_file()
    assert local_tools.registry is registry
    monkeypatch.delitem(vars(local_tools), "registry")


async def test_query_without_a_database_explains(tmp_path: Path) -> None:
    result = await call(build_registry(tmp_path), "query", sql="SELECT 1")
    assert result.is_error and "seed the workspace first" in result.text
    assert not (tmp_path / "shop.db").exists()
