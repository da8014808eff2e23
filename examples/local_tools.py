"""A registry of real local tools for the examples: files, a SQLite shop, text utilities.

Everything a script can touch lives under one workspace directory::

    <root>/files/...   text, markdown and CSV files (the file tools are confined here)
    <root>/shop.db     SQLite database with `customers` and `orders` (read-only to tools)

`build_registry(root)` registers the tools; `seed(root)` writes a small,
deterministic dataset. `registry` (module attribute, built on first access)
is a registry over `examples/data/`, seeded if absent, for
`codemode run SCRIPT --tools examples/local_tools.py:registry`.

This file is self-contained (stdlib + codemode) so it can be loaded by path.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import re
import sqlite3
import statistics
import tempfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from codemode import (
    CardResult,
    Deny,
    DiffCard,
    ExecContext,
    FileDiff,
    GenericCard,
    Location,
    Tool,
    ToolRegistry,
    tool,
    with_cards,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from codemode.dispatch.cards import CardKind

__all__ = [
    "CARDS",
    "DATA_DIR",
    "WorkspaceError",
    "build_registry",
    "deny_deletes",
    "ensure_seeded",
    "seed",
]

DATA_DIR = Path(__file__).resolve().parent / "data"
"""Where the module-level `registry` keeps its seeded workspace (git-ignored)."""

MAX_ROWS = 200
MAX_MATCHES = 100
MAX_READ = 200_000


class WorkspaceError(Exception):
    """A tool refused a request; the message tells the model what to do instead."""


def _files_root(root: Path) -> Path:
    return root / "files"


def _db_path(root: Path) -> Path:
    return root / "shop.db"


def _confined(base: Path, relative: str) -> Path:
    """`base / relative` resolved, refusing anything that ends up outside `base`."""
    if not relative or relative.strip() != relative:
        raise WorkspaceError(f"path {relative!r} is empty or has surrounding spaces")
    candidate = Path(relative)
    if candidate.is_absolute() or candidate.drive:
        raise WorkspaceError(f"path {relative!r} is absolute; use a path relative to the "
                             "workspace root, like 'notes/standup.md'")
    resolved = (base / candidate).resolve()
    if not resolved.is_relative_to(base.resolve()):
        raise WorkspaceError(f"path {relative!r} is outside the workspace root; "
                             "'..' and links out of the workspace are refused")
    return resolved


def _relative(base: Path, path: Path) -> str:
    return path.relative_to(base.resolve()).as_posix()


_FILE_ENTRY = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "size": {"type": "integer"}},
    "required": ["path", "size"],
}
_MATCH = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "line": {"type": "integer"},
                   "text": {"type": "string"}},
    "required": ["path", "line", "text"],
}
_NUMBER_SUMMARY = {
    "type": "object",
    "properties": {name: {"type": "number"} for name in
                   ("count", "sum", "mean", "median", "min", "max", "stdev")},
    "required": ["count", "sum", "mean", "median", "min", "max", "stdev"],
}


def _file_tools(registry: ToolRegistry, root: Path) -> None:
    base = _files_root(root)

    @tool(output_schema={"type": "object", "properties": {
        "files": {"type": "array", "items": _FILE_ENTRY}}, "required": ["files"]})
    def list_files(pattern: str = "**/*", directory: str = ".") -> dict[str, Any]:
        """List files in the workspace, sorted by path.

        Args:
            pattern: Glob relative to `directory`, e.g. `*.md` or `**/*.csv`.
            directory: Directory inside the workspace to list.
        """
        start = base.resolve() if directory in ("", ".") else _confined(base, directory)
        if not start.is_dir():
            raise WorkspaceError(f"directory {directory!r} does not exist")
        files = [
            {"path": _relative(base, p), "size": p.stat().st_size}
            for p in sorted(start.glob(pattern))
            if p.is_file() and p.resolve().is_relative_to(base.resolve())
        ]
        return {"files": files}

    @tool
    def read_file(path: str) -> str:
        """Read a UTF-8 text file from the workspace.

        Args:
            path: Path relative to the workspace root, e.g. `notes/standup.md`.
        """
        target = _confined(base, path)
        if not target.is_file():
            raise WorkspaceError(f"no file {path!r} in the workspace; list_files shows what exists")
        data = target.read_bytes()
        if len(data) > MAX_READ:
            raise WorkspaceError(f"{path!r} is {len(data)} bytes; the limit is {MAX_READ}")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise WorkspaceError(f"{path!r} is not a UTF-8 text file") from None

    @tool(output_schema={"type": "object", "properties": {
        "path": {"type": "string"}, "bytes": {"type": "integer"}}, "required": ["path", "bytes"]})
    def write_file(path: str, content: str) -> dict[str, Any]:
        """Create or overwrite a UTF-8 text file in the workspace (parent folders are created).

        Args:
            path: Path relative to the workspace root.
            content: The full new text of the file.
        """
        target = _confined(base, path)
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8")
        target.write_bytes(data)
        return {"path": _relative(base, target), "bytes": len(data)}

    @tool(output_schema={"type": "object", "properties": {
        "matches": {"type": "array", "items": _MATCH}, "truncated": {"type": "boolean"}},
        "required": ["matches", "truncated"]})
    def search_text(query: str, pattern: str = "**/*", regex: bool = False,
                    ignore_case: bool = True) -> dict[str, Any]:
        """Find lines containing `query` in workspace files (1-based line numbers).

        Args:
            query: Text to find, or a regular expression when `regex` is true.
            pattern: Glob of the files to search, e.g. `**/*.md`.
            regex: Treat `query` as a Python regular expression.
            ignore_case: Match regardless of case.
        """
        flags = re.IGNORECASE if ignore_case else 0
        try:
            matcher = re.compile(query if regex else re.escape(query), flags)
        except re.error as exc:
            raise WorkspaceError(f"invalid regular expression {query!r}: {exc}") from None
        matches: list[dict[str, Any]] = []
        for file in sorted(base.resolve().glob(pattern)):
            if not file.is_file():
                continue
            try:
                lines = file.read_text(encoding="utf-8").splitlines()
            except UnicodeDecodeError:
                continue
            for number, line in enumerate(lines, start=1):
                if matcher.search(line):
                    if len(matches) == MAX_MATCHES:
                        return {"matches": matches, "truncated": True}
                    matches.append({"path": _relative(base, file), "line": number, "text": line})
        return {"matches": matches, "truncated": False}

    @tool(output_schema={"type": "object", "properties": {"deleted": {"type": "string"}},
                         "required": ["deleted"]})
    def delete_file(path: str) -> dict[str, Any]:
        """Delete a file from the workspace (denied by this workspace's policy).

        Args:
            path: Path relative to the workspace root.
        """
        target = _confined(base, path)
        if not target.is_file():
            raise WorkspaceError(f"no file {path!r} in the workspace")
        target.unlink()
        return {"deleted": _relative(base, target)}

    for made in (list_files, read_file, write_file, search_text, delete_file):
        registry.register(_carded(made))


_ALLOWED_SQL = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
                          getattr(sqlite3, "SQLITE_RECURSIVE", 33)})


def _read_only(action: int, *_: object) -> int:
    return sqlite3.SQLITE_OK if action in _ALLOWED_SQL else sqlite3.SQLITE_DENY


def _connect(db: Path, *, untrusted: bool = True) -> sqlite3.Connection:
    """A read-only connection; for model-written SQL an authorizer also refuses all but reads."""
    if not db.is_file():
        raise WorkspaceError("the shop database does not exist; seed the workspace first")
    conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
    if untrusted:
        conn.set_authorizer(_read_only)
    return conn


def _table_names(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                        "AND name NOT LIKE 'sqlite_%' ORDER BY name").fetchall()
    return [row[0] for row in rows]


def _sql_tools(registry: ToolRegistry, root: Path) -> None:
    db = _db_path(root)

    @tool(output_schema={"type": "object", "properties": {
        "columns": {"type": "array", "items": {"type": "string"}},
        "rows": {"type": "array", "items": {"type": "object"}},
        "truncated": {"type": "boolean"}}, "required": ["columns", "rows", "truncated"]})
    def query(sql: str, params: list[str | int | float | None] | None = None,
              max_rows: Annotated[int, Field(ge=1, le=MAX_ROWS)] = MAX_ROWS) -> dict[str, Any]:
        """Run one read-only SQL SELECT on the shop database; rows come back as objects.

        Args:
            sql: A single SELECT (or WITH ... SELECT) statement; use `?` placeholders.
            params: Values for the `?` placeholders, in order.
            max_rows: Stop after this many rows (`truncated` tells you if there were more).
        """
        conn = _connect(db)
        try:
            cursor = conn.execute(sql, params or [])
            columns = [d[0] for d in cursor.description or ()]
            fetched = cursor.fetchmany(max_rows + 1)
        except sqlite3.DatabaseError as exc:
            if "not authorized" in str(exc):
                raise WorkspaceError("the database is read-only: only SELECT statements are "
                                     "allowed") from None
            raise WorkspaceError(f"SQL error: {exc}") from None
        except sqlite3.ProgrammingError as exc:
            raise WorkspaceError(f"SQL error: {exc}") from None
        finally:
            conn.close()
        rows = [dict(zip(columns, row, strict=True)) for row in fetched[:max_rows]]
        return {"columns": columns, "rows": rows, "truncated": len(fetched) > max_rows}

    @tool(output_schema={"type": "object", "properties": {
        "tables": {"type": "array", "items": {"type": "string"}}}, "required": ["tables"]})
    def list_tables() -> dict[str, Any]:
        """List the tables of the shop database."""
        conn = _connect(db)
        try:
            return {"tables": _table_names(conn)}
        finally:
            conn.close()

    @tool(output_schema={"type": "object", "properties": {
        "table": {"type": "string"}, "row_count": {"type": "integer"},
        "columns": {"type": "array", "items": {"type": "object"}}},
        "required": ["table", "row_count", "columns"]})
    def describe_table(table: str) -> dict[str, Any]:
        """Columns (name, type, not_null, primary_key) and row count of one table.

        Args:
            table: Table name, as `list_tables` returns it.
        """
        conn = _connect(db, untrusted=False)
        try:
            names = _table_names(conn)
            if table not in names:
                raise WorkspaceError(f"no table {table!r}; tables are: {', '.join(names)}")
            info = conn.execute(f'PRAGMA table_info("{table}")').fetchall()
            count = conn.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0]
        finally:
            conn.close()
        columns = [{"name": c[1], "type": c[2], "not_null": bool(c[3]), "primary_key": bool(c[5])}
                   for c in info]
        return {"table": table, "row_count": count, "columns": columns}

    for made in (query, list_tables, describe_table):
        registry.register(_carded(made))


_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")


def words_of(text: str) -> list[str]:
    """Lower-cased words, as `word_count` counts them."""
    return [w.lower() for w in _WORD.findall(text)]


def emails_in(text: str) -> list[str]:
    """Unique lower-cased e-mail addresses, sorted, as `extract_emails` returns them."""
    return sorted({e.lower().rstrip(".") for e in _EMAIL.findall(text)})


def _text_tools(registry: ToolRegistry) -> None:
    @tool(output_schema={"type": "object", "properties": {
        "words": {"type": "integer"}, "lines": {"type": "integer"},
        "characters": {"type": "integer"},
        "top_words": {"type": "array", "items": {"type": "object"}}},
        "required": ["words", "lines", "characters", "top_words"]})
    def word_count(text: str, top: Annotated[int, Field(ge=0, le=50)] = 5) -> dict[str, Any]:
        """Count words, lines and characters; list the most frequent words.

        Args:
            text: The text to measure.
            top: How many of the most frequent words to return.
        """
        words = words_of(text)
        ranked = sorted(Counter(words).items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        return {"words": len(words), "lines": len(text.splitlines()), "characters": len(text),
                "top_words": [{"word": w, "count": n} for w, n in ranked]}

    @tool(output_schema={"type": "object", "properties": {
        "emails": {"type": "array", "items": {"type": "string"}}}, "required": ["emails"]})
    def extract_emails(text: str) -> dict[str, Any]:
        """Unique e-mail addresses found in the text, lower-cased and sorted.

        Args:
            text: The text to scan.
        """
        return {"emails": emails_in(text)}

    @tool(output_schema=_NUMBER_SUMMARY)
    def summarize_numbers(values: Annotated[list[float], Field(min_length=1)]) -> dict[str, Any]:
        """Count, sum, mean, median, min, max and (sample) standard deviation, rounded to 4 places.

        Args:
            values: The numbers to summarise (at least one).
        """
        return {
            "count": len(values), "sum": round(sum(values), 4),
            "mean": round(statistics.fmean(values), 4),
            "median": round(statistics.median(values), 4),
            "min": min(values), "max": max(values),
            "stdev": round(statistics.stdev(values), 4) if len(values) > 1 else 0.0,
        }

    for made in (word_count, extract_emails, summarize_numbers):
        registry.register(_carded(made))


def _data(result: CardResult) -> Any:
    """A result's JSON data (tools here answer JSON), or None for text and errors."""
    if result.is_error:
        return None
    try:
        return json.loads(result.text)
    except ValueError:
        return None


def _failed(title: str, result: CardResult) -> GenericCard | None:
    return GenericCard(title=title, content=result.error) if result.is_error else None


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}{'es' if word.endswith('ch') else 's'}"


def _list_files_result(args: Mapping[str, Any], result: CardResult) -> GenericCard:
    files = (_data(result) or {}).get("files", [])
    where = args.get("directory", ".")
    return _failed(f"List files in {where}", result) or GenericCard(
        title=f"Listed {_plural(len(files), 'file')} in {where}", kind="search",
        content="\n".join(f["path"] for f in files) or None,
        locations=tuple(Location(path=f["path"]) for f in files[:20]))


def _read_file_result(args: Mapping[str, Any], result: CardResult) -> GenericCard:
    lines = len(result.text.splitlines())
    return _failed(f"Read {args['path']}", result) or GenericCard(
        title=f"Read {args['path']} ({_plural(lines, 'line')})", kind="read",
        locations=(Location(path=args["path"]),))


def _write_file_call(args: Mapping[str, Any]) -> DiffCard:
    # old_text is None: a pure presenter cannot read what the file held before.
    return DiffCard(title=f"Write {args['path']}",
                    diffs=(FileDiff(path=args["path"], old_text=None, new_text=args["content"]),),
                    locations=(Location(path=args["path"]),))


def _write_file_result(args: Mapping[str, Any], result: CardResult) -> DiffCard | GenericCard:
    data = _data(result)
    if data is None:
        return _failed(f"Write {args['path']}", result) or GenericCard(title="Write")
    return DiffCard(title=f"Wrote {data['path']} ({_plural(data['bytes'], 'byte')})",
                    diffs=(FileDiff(path=data["path"], old_text=None, new_text=args["content"]),),
                    locations=(Location(path=data["path"]),))


def _search_result(args: Mapping[str, Any], result: CardResult) -> GenericCard:
    data = _data(result) or {}
    matches = data.get("matches", [])
    more = " (truncated)" if data.get("truncated") else ""
    return _failed(f"Search {args['query']!r}", result) or GenericCard(
        title=f"Search {args['query']!r}: {_plural(len(matches), 'match')}{more}", kind="search",
        content="\n".join(f"{m['path']}:{m['line']}: {m['text']}" for m in matches) or None,
        locations=tuple(Location(path=m["path"], line=m["line"]) for m in matches[:20]))


def _sql_title(sql: str) -> str:
    first = " ".join(sql.split())
    return first if len(first) <= 60 else first[:59] + "…"


def _query_result(args: Mapping[str, Any], result: CardResult) -> GenericCard:
    data = _data(result) or {}
    rows = data.get("rows", [])
    return _failed(f"SQL: {_sql_title(args['sql'])}", result) or GenericCard(
        title=f"SQL: {_sql_title(args['sql'])} → {_plural(len(rows), 'row')}", kind="read")


def _describe_result(args: Mapping[str, Any], result: CardResult) -> GenericCard:
    data = _data(result) or {}
    columns = ", ".join(c["name"] for c in data.get("columns", []))
    return _failed(f"Describe table {args['table']}", result) or GenericCard(
        title=f"Table {args['table']}: {_plural(data.get('row_count', 0), 'row')}",
        kind="read", content=columns or None)


def _text_result(title: Callable[[Mapping[str, Any]], str],
                 kind: CardKind) -> Callable[..., GenericCard]:
    def present(args: Mapping[str, Any], result: CardResult) -> GenericCard:
        return _failed(title(args), result) or GenericCard(
            title=title(args), kind=kind, content=result.text)

    return present


CARDS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "list_files": (lambda a: GenericCard(title=f"List {a.get('pattern', '**/*')} in "
                                               f"{a.get('directory', '.')}", kind="search"),
                   _list_files_result),
    "read_file": (lambda a: GenericCard(title=f"Read {a['path']}", kind="read",
                                        locations=(Location(path=a["path"]),)),
                  _read_file_result),
    "write_file": (_write_file_call, _write_file_result),
    "search_text": (lambda a: GenericCard(title=f"Search {a['query']!r} in "
                                                f"{a.get('pattern', '**/*')}", kind="search"),
                    _search_result),
    "delete_file": (lambda a: GenericCard(title=f"Delete {a['path']}", kind="delete",
                                          locations=(Location(path=a["path"]),)),
                    lambda a, r: _failed(f"Delete {a['path']}", r) or GenericCard(
                        title=f"Deleted {a['path']}", kind="delete")),
    "query": (lambda a: GenericCard(title=f"SQL: {_sql_title(a['sql'])}", kind="read",
                                    raw_input=dict(a)),
              _query_result),
    "list_tables": (lambda a: GenericCard(title="List tables", kind="read"),
                    lambda a, r: _failed("List tables", r) or GenericCard(
                        title="Tables", kind="read",
                        content=", ".join((_data(r) or {}).get("tables", [])) or None)),
    "describe_table": (lambda a: GenericCard(title=f"Describe table {a['table']}", kind="read"),
                       _describe_result),
    "word_count": (lambda a: GenericCard(
        title=f"Count words in {_plural(len(a['text']), 'character')}", kind="think"),
        _text_result(lambda a: f"Word count of {_plural(len(a['text']), 'character')}",
                     "think")),
    "extract_emails": (lambda a: GenericCard(
        title=f"Find emails in {_plural(len(a['text']), 'character')}", kind="search"),
        _text_result(lambda a: f"Emails in {_plural(len(a['text']), 'character')}", "search")),
    "summarize_numbers": (lambda a: GenericCard(
        title=f"Summarize {_plural(len(a['values']), 'number')}", kind="think"),
        _text_result(lambda a: f"Summary of {_plural(len(a['values']), 'number')}", "think")),
}
"""Each tool's editor cards: (present_call, present_result); pure functions of their inputs."""


def _carded(made: Tool) -> Tool:
    present_call, present_result = CARDS[made.name]
    return with_cards(made, present_call=present_call, present_result=present_result)


def deny_deletes(ctx: ExecContext) -> Deny | None:
    """The workspace policy: nothing may delete files, whether called directly or from code."""
    if ctx.name == "delete_file":
        return Deny("deleting files is not allowed in this workspace")
    return None


def build_registry(root: Path) -> ToolRegistry:
    """A registry with every local tool over the workspace at `root`, and the delete policy."""
    registry = ToolRegistry()
    _file_tools(registry, root)
    _sql_tools(registry, root)
    _text_tools(registry)
    registry.pre_execute(deny_deletes)
    return registry


_FILES: dict[str, str] = {
    "README.md": """\
# Workspace

Shared folder of the Harbor Tea Company operations team.

- `notes/` meeting notes, one file per meeting
- `data/` exports from the inventory system (CSV)
- `todo.txt` open items

Questions go to ops@harbortea.example.
""",
    "todo.txt": """\
restock oolong before the spring promotion
ask billing@harbortea.example about the duplicated invoice
archive last year's returns export
""",
    "notes/2024-03-04-standup.md": """\
# Standup 2024-03-04

Attendees: Mira Okafor (mira@harbortea.example), Tom Lind (tom.lind@harbortea.example)

- Shipping backlog is down to 12 orders.
- The warehouse counted 340 tins of sencha; the system says 352.
- Tom will call the courier about the two lost parcels.
""",
    "notes/2024-03-11-retro.md": """\
# Retro 2024-03-11

Attendees: Mira Okafor, Ana Duarte (ana.duarte@harbortea.example)

What went well: the new packaging cut breakage, returns fell from 9 to 4.
What did not: two customers were charged twice; billing@harbortea.example is on it.
Action: Ana drafts the refund e-mail, Mira reviews it.
""",
    "notes/2024-03-18-planning.md": """\
# Planning 2024-03-18

Attendees: Mira Okafor, Tom Lind, Ana Duarte, Sven Berg (sven@partner-logistics.example)

Spring promotion starts April 2: 15% off oolong and jasmine.
Expected volume: 180 orders in the first week.
Sven confirms the courier can handle 40 parcels a day.
Open question for ops@harbortea.example: do we ship to Norway?
""",
}

_PRODUCTS = [
    ("TEA-001", "Sencha", 8.50), ("TEA-002", "Oolong", 12.00), ("TEA-003", "Jasmine", 9.75),
    ("TEA-004", "Earl Grey", 7.25), ("TEA-005", "Pu-erh", 15.50), ("TEA-006", "Rooibos", 6.80),
]
_CUSTOMERS = [
    ("Alice Martin", "alice@example.com", "FR"), ("Bruno Costa", "bruno@example.com", "PT"),
    ("Chen Wei", "chen.wei@example.com", "DE"), ("Dana Novak", "dana@example.com", "DE"),
    ("Emil Strand", "emil@example.com", "SE"), ("Fatima Zahra", "fatima@example.com", "FR"),
    ("Gustav Lind", "gustav@example.com", "SE"), ("Hana Sato", "hana@example.com", "JP"),
    ("Ivan Petrov", "ivan@example.com", "DE"), ("Julia Rossi", "julia@example.com", "IT"),
]
_STATUSES = ["shipped", "shipped", "shipped", "delivered", "delivered", "pending", "cancelled"]


def _inventory_csv(rng: random.Random) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["sku", "product", "stock", "unit_price"])
    for sku, name, price in _PRODUCTS:
        writer.writerow([sku, name, rng.randint(8, 60), f"{price:.2f}"])
    return out.getvalue()


def _write_db(path: Path, rng: random.Random) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.executescript("""
            CREATE TABLE customers (
                id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE,
                country TEXT NOT NULL, joined TEXT NOT NULL);
            CREATE TABLE orders (
                id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL REFERENCES customers(id),
                sku TEXT NOT NULL, product TEXT NOT NULL, quantity INTEGER NOT NULL,
                unit_price REAL NOT NULL, status TEXT NOT NULL, ordered_at TEXT NOT NULL);
        """)
        for number, (name, email, country) in enumerate(_CUSTOMERS, start=1):
            conn.execute("INSERT INTO customers VALUES (?, ?, ?, ?, ?)",
                         (number, name, email, country, f"2023-{number:02d}-15"))
        for order_id in range(1, 61):
            sku, product, price = rng.choice(_PRODUCTS)
            conn.execute("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (
                order_id, rng.randint(1, len(_CUSTOMERS)), sku, product, rng.randint(1, 6),
                price, rng.choice(_STATUSES),
                f"2024-{rng.randint(1, 3):02d}-{rng.randint(1, 28):02d}"))
        conn.commit()
    finally:
        conn.close()


def seed(root: Path) -> Path:
    """Write the example dataset under `root` (replacing it); same bytes every time."""
    rng = random.Random(2024)
    files = _files_root(root)
    for relative, content in _FILES.items():
        target = files / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    (files / "data").mkdir(parents=True, exist_ok=True)
    (files / "data" / "inventory.csv").write_text(_inventory_csv(rng), encoding="utf-8")
    fd, tmp = tempfile.mkstemp(dir=root, suffix=".db.tmp")
    os.close(fd)
    try:
        Path(tmp).unlink()
        _write_db(Path(tmp), rng)
        os.replace(tmp, _db_path(root))
    finally:
        Path(tmp).unlink(missing_ok=True)
    return root


def ensure_seeded(root: Path) -> Path:
    """Seed `root` unless it already holds the database."""
    if not _db_path(root).is_file():
        root.mkdir(parents=True, exist_ok=True)
        seed(root)
    return root


def __getattr__(name: str) -> Any:
    """`registry`: built on first access over `DATA_DIR` (seeded if absent)."""
    if name == "registry":
        built = build_registry(ensure_seeded(DATA_DIR))
        globals()["registry"] = built
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
