"""Compat round 12: scripts models write for other Code Mode hosts, against real tool schemas.

The tools are registered with the corpus's own listings (GitHub MCP's
``search_repositories``, ``list_commits``, ``get_file_contents``, ``list_issues``,
``issue_read``, ``create_issue``; LiveMCPBench's Yahoo Finance, npm and Bing tools), so
every call is validated against what those servers publish; the handlers answer small
fixed data. Each row is a script in one host's style (smolagents' CodeAgent, Anthropic's
programmatic tool calling, pydantic-ai / Monty) and runs next to CPython with the same
handlers as plain functions (``smol``: sync bare names; ``async``: bare names and
``tools.x`` awaited); rows in a dialect without a CPython meaning (LangChain,
Cloudflare) run next to their canonical script. Value, output and (for the dialects) the
call trace must be equal.
"""

# ruff: noqa: E501 - the rows are scripts as models write them

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm
from tests.mode.corpus_tools import listings, registry
from tests.mode.cpython_side import run_with_tools

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

pytestmark = pytest.mark.anyio

_LISTINGS = {"repo_github_mcp_server_toolsnaps.json": (
    "search_repositories", "list_commits", "get_file_contents", "list_issues", "issue_read",
    "create_issue"),
    "repo_livemcpbench_tools.json": (
    "get_current_stock_price", "get_historical_stock_prices", "npmSearch", "npmVersions",
    "bing_search")}

REPOS = [("octo/fastq", 5120, "Python", "2024-05-02T10:00:00Z", ["async", "queue"]),
         ("acme/ledger", 830, "Rust", "2024-04-11T08:30:00Z", ["finance"]),
         ("ada/notebook", 2210, "Python", "2023-12-30T23:59:59Z", ["jupyter", "async"]),
         ("grace/cobol-lsp", 95, "TypeScript", "2024-05-01T12:00:00Z", [])]
COMMITS = [(f"{i:02x}" * 20, msg, who, f"2024-05-{10 - i:02d}T0{i}:15:00Z")
           for i, (msg, who) in enumerate([
               ("fix: retry on 502 (#41)", "ada"), ("feat: add batch API", "alan"),
               ("docs: typo in README", "ada"), ("fix(queue): drop stale leases", "grace"),
               ("chore: bump deps", "dependabot[bot]"), ("feat!: new config format", "alan")])]
FILES = {"README.md": "# fastq\n\nA fast queue.\n\n## Install\n\n    pip install fastq\n\n## Usage\n\nSee docs.\n",
         "pyproject.toml": '[project]\nname = "fastq"\nversion = "1.4.2"\ndependencies = ["anyio>=4", "attrs"]\n',
         "package.json": '{"name": "fastq-ui", "version": "0.3.0", "dependencies": {"react": "^18.2.0", "zod": "3.22.4"}}'}
ISSUES = [{"number": n, "title": t, "state": s, "labels": [{"name": x} for x in lb],
           "user": {"login": u}, "comments": c, "created_at": f"2024-04-{n:02d}T09:00:00Z"}
          for n, t, s, lb, u, c in [
              (3, "Crash on empty queue", "OPEN", ["bug"], "ada", 5),
              (7, "Docs: install section", "CLOSED", ["docs"], "alan", 1),
              (9, "Lease expiry too short", "OPEN", ["bug", "p1"], "grace", 8),
              (12, "Add metrics", "OPEN", ["enhancement"], "ada", 0),
              (15, "Flaky test on 3.13", "OPEN", ["bug", "ci"], "linus", 2)]]
PRICES = {"AAPL": 189.87, "MSFT": 415.5, "NVDA": 903.56, "TSLA": 171.05}


def search_repositories(query: str, sort: str | None = None, order: str = "desc",
                        page: int = 1, perPage: int = 30, minimal_output: bool = True) -> dict[str, Any]:
    words = query.lower().split()
    hits = [{"full_name": n, "stargazers_count": s, "language": lang, "updated_at": u, "topics": t}
            for n, s, lang, u, t in REPOS
            if any(w in n or w == lang.lower() or w in t for w in words)]
    if sort == "stars":
        hits.sort(key=lambda r: r["stargazers_count"], reverse=order != "asc")
    start = (page - 1) * perPage
    return {"total_count": len(hits), "incomplete_results": False, "items": hits[start:start + perPage]}


def list_commits(owner: str, repo: str, sha: str | None = None, author: str | None = None,
                 page: int = 1, perPage: int = 30, **_: Any) -> list[dict[str, Any]]:
    rows = [{"sha": h, "html_url": f"https://github.com/{owner}/{repo}/commit/{h[:7]}",
             "commit": {"message": m, "author": {"name": a, "date": d}}}
            for h, m, a, d in COMMITS if author in (None, a)]
    start = (page - 1) * perPage
    return rows[start:start + perPage]


def get_file_contents(owner: str, repo: str, path: str = "/", ref: str | None = None,
                      **_: Any) -> Any:
    if path in ("/", ""):
        return [{"type": "file", "name": n, "path": n, "size": len(c)} for n, c in FILES.items()] + [
            {"type": "dir", "name": "src", "path": "src", "size": 0}]
    if path not in FILES:
        raise FileNotFoundError(f"{owner}/{repo}: no {path}")
    return FILES[path]


def list_issues(owner: str, repo: str, state: str | None = None, labels: list[str] | None = None,
                perPage: int = 2, after: str | None = None, **_: Any) -> dict[str, Any]:
    rows = [i for i in ISSUES if state in (None, i["state"])
            and all(x in [lb["name"] for lb in i["labels"]] for x in labels or [])]
    start = int(after or 0)
    page = rows[start:start + perPage]
    more = start + perPage < len(rows)
    return {"issues": page, "pageInfo": {"hasNextPage": more, "endCursor": str(start + perPage) if more else None},
            "totalCount": len(rows)}


def issue_read(method: str, owner: str, repo: str, issue_number: int, **_: Any) -> Any:
    issue = next(i for i in ISSUES if i["number"] == issue_number)
    if method == "get_comments":
        return [{"id": issue_number * 100 + k, "user": {"login": ["ada", "bot", "grace"][k % 3]},
                 "body": f"comment {k} on #{issue_number}"} for k in range(issue["comments"] % 4)]
    if method == "get_labels":
        return issue["labels"]
    return {**issue, "body": f"Steps to reproduce #{issue_number}:\n1. start\n2. wait"}


def create_issue(owner: str, repo: str, title: str, body: str = "") -> dict[str, Any]:
    number = 100 + len(title) % 50
    return {"number": number, "html_url": f"https://github.com/{owner}/{repo}/issues/{number}",
            "title": title, "body_length": len(body)}


def get_current_stock_price(symbol: str) -> float:
    if symbol not in PRICES:
        raise LookupError(f"unknown symbol {symbol}")
    return PRICES[symbol]


def get_historical_stock_prices(symbol: str, period: str = "1mo", interval: str = "1d") -> list[dict[str, Any]]:
    base = PRICES.get(symbol, 10.0)
    days = {"5d": 5, "1mo": 8}.get(period, 4)
    return [{"Date": f"2024-05-{d + 1:02d}", "Close": round(base * (1 + ((d * 7) % 5 - 2) / 100), 2),
             "Volume": 1000 * (d + 3)} for d in range(days)]


def npmSearch(query: str, limit: int = 10) -> dict[str, Any]:
    names = ["zod", "yup", "joi", "valibot", "superstruct", "ajv"]
    return {"total": len(names), "objects": [
        {"package": {"name": n, "version": f"{i + 1}.{i * 3}.{i}", "description": f"{n}: {query} library"},
         "score": {"final": round(0.95 - i * 0.11, 2)}} for i, n in enumerate(names[:limit])]}


def npmVersions(packages: list[str]) -> dict[str, Any]:
    return {p: {"latest": f"{len(p)}.{sum(map(ord, p)) % 10}.0",
                "versions": [f"{len(p)}.{k}.0" for k in range(sum(map(ord, p)) % 10 + 1)]} for p in packages}


def bing_search(query: str, num_results: int = 5) -> list[dict[str, Any]]:
    return [{"id": f"r{i}", "title": f"{query.title()} - result {i}", "link": f"https://site{i}.example/{query.replace(' ', '-')}",
             "snippet": f"{query} ... {i * 13} reviews, rated {3 + i % 3}.{i}/5"} for i in range(1, num_results + 1)]


FUNCTIONS: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn in (
    search_repositories, list_commits, get_file_contents, list_issues, issue_read, create_issue,
    get_current_stock_price, get_historical_stock_prices, npmSearch, npmVersions, bing_search)}


def _specs() -> dict[str, dict[str, Any]]:
    found = listings(_LISTINGS)
    assert set(found) == set(FUNCTIONS), sorted(set(FUNCTIONS) - set(found))
    return found


def cpython(script: str, style: str) -> tuple[Any, str]:
    """The row in CPython with this module's tools."""
    return run_with_tools(script, style, FUNCTIONS)


def _registry() -> cm.ToolRegistry:
    return registry(_specs(), FUNCTIONS)


@pytest.fixture(scope="module")
async def mode() -> AsyncIterator[cm.CodeMode]:
    async with cm.InProcessExecutor() as executor:
        yield cm.CodeMode(_registry(), executor=executor)


@pytest.fixture(scope="module", params=["inprocess", "pool"])
async def either(request: pytest.FixtureRequest) -> AsyncIterator[cm.CodeMode]:
    """Both executors: what the dialects add to a run travels to a worker too."""
    executor = cm.InProcessExecutor() if request.param == "inprocess" else cm.WorkerPoolExecutor()
    async with executor:
        yield cm.CodeMode(_registry(), executor=executor)


# (name, CPython style, script): value and output as in CPython
CPYTHON_ROWS: list[tuple[str, str, str]] = [
    ("smol_repo_table_fstrings", "smol", r"""
res = search_repositories(query="async python", sort="stars", perPage=10)
print(f"{'repo':<16}|{'stars':>7}|lang")
for r in res["items"]:
    print(f"{r['full_name']:<16}|{r['stargazers_count']:>7,}|{r['language']}")
final_answer(res["items"][0]["full_name"])
"""),
    ("smol_commit_types_counter", "smol", r"""
import re
from collections import Counter
commits = list_commits(owner="octo", repo="fastq", perPage=50)
kinds = Counter()
for c in commits:
    m = re.match(r"^(\w+)(?:\(([^)]+)\))?(!)?:", c["commit"]["message"])
    kinds[m.group(1) if m else "other"] += 1
print(kinds.most_common(2))
print(type(kinds), type(commits[0]["sha"]).__name__)
final_answer(dict(sorted(kinds.items())))
"""),
    ("smol_readme_sections", "smol", r"""
readme = get_file_contents(owner="octo", repo="fastq", path="README.md")
sections = [line.lstrip("#").strip() for line in readme.splitlines() if line.startswith("## ")]
print("Sections:", ", ".join(sections))
install = readme.split("## Install")[1].split("##")[0].strip()
final_answer({"sections": sections, "install": install})
"""),
    ("smol_pyproject_parse", "smol", r"""
import re
text = get_file_contents(owner="octo", repo="fastq", path="pyproject.toml")
version = re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)
deps = re.findall(r'"([A-Za-z0-9_.-]+)(?:[<>=!~].*?)?"', text.split("dependencies", 1)[1])
major, minor, patch = map(int, version.split("."))
print(f"v{major}.{minor + 1}.0 next; deps={deps}")
final_answer({"version": version, "deps": deps, "bumped": f"{major}.{minor + 1}.0"})
"""),
    ("smol_package_json_loads", "smol", r"""
import json
pkg = json.loads(get_file_contents(owner="octo", repo="fastq", path="package.json"))
names = sorted(pkg["dependencies"])
latest = npmVersions(packages=names)
report = {}
for name in names:
    wanted = pkg["dependencies"][name].lstrip("^~")
    report[name] = {"wanted": wanted, "latest": latest[name]["latest"],
                    "outdated": tuple(map(int, wanted.split("."))) < tuple(map(int, latest[name]["latest"].split(".")))}
print(json.dumps(report, indent=2, sort_keys=True))
final_answer(report)
"""),
    ("smol_paginate_cursor", "smol", r"""
issues, cursor, pages = [], None, 0
while True:
    kwargs = {"owner": "octo", "repo": "fastq", "state": "OPEN", "perPage": 2}
    if cursor:
        kwargs["after"] = cursor
    page = list_issues(**kwargs)
    pages += 1
    issues.extend(page["issues"])
    if not page["pageInfo"]["hasNextPage"]:
        break
    cursor = page["pageInfo"]["endCursor"]
print(f"{len(issues)} open issues in {pages} pages")
final_answer([i["number"] for i in issues])
"""),
    ("smol_issue_triage_dates", "smol", r"""
from datetime import datetime, timezone
now = datetime(2024, 5, 20, tzinfo=timezone.utc)
stale = []
for issue in list_issues(owner="octo", repo="fastq", state="OPEN", perPage=10)["issues"]:
    created = datetime.fromisoformat(issue["created_at"].replace("Z", "+00:00"))
    age = (now - created).days
    if age > 40:
        stale.append((issue["number"], age))
    print(f"#{issue['number']:>3} {age:>3}d {created:%b %d}")
final_answer(stale)
"""),
    ("smol_comments_try_except", "smol", r"""
summary = {}
for n in [3, 9, 42]:
    try:
        comments = issue_read(method="get_comments", owner="octo", repo="fastq", issue_number=n)
    except Exception as e:
        summary[n] = f"error: {type(e).__name__}"
        continue
    summary[n] = sorted({c["user"]["login"] for c in comments})
print(summary)
final_answer(summary)
"""),
    ("smol_stock_stats", "smol", r"""
import statistics
rows = get_historical_stock_prices(symbol="NVDA", period="1mo", interval="1d")
closes = [r["Close"] for r in rows]
returns = [(b - a) / a * 100 for a, b in zip(closes, closes[1:])]
print(f"mean={statistics.mean(closes):.2f} stdev={statistics.stdev(closes):.3f} median={statistics.median(closes)}")
best = max(range(len(returns)), key=returns.__getitem__)
final_answer({"best_day": rows[best + 1]["Date"], "best_return": round(returns[best], 3),
              "volatility": round(statistics.pstdev(returns), 4)})
"""),
    ("smol_portfolio_decimal", "smol", r"""
from decimal import Decimal, ROUND_HALF_UP
holdings = {"AAPL": 12, "MSFT": 3, "TSLA": 7}
total = Decimal("0")
lines = []
for sym, qty in holdings.items():
    price = Decimal(str(get_current_stock_price(symbol=sym)))
    value = (price * qty).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    total += value
    lines.append(f"{sym:5} {qty:>3} x {price:>8} = {value:>10}")
print("\n".join(lines))
print(type(total), repr(total))
final_answer({"total": str(total), "weights": {s: float(round(Decimal(str(get_current_stock_price(symbol=s))) * q / total, 4)) for s, q in holdings.items()}})
"""),
    ("smol_unknown_symbol_fallback", "smol", r"""
prices = {}
for sym in ["AAPL", "GOOG", "MSFT"]:
    try:
        prices[sym] = get_current_stock_price(symbol=sym)
    except Exception:
        prices[sym] = None
known = {k: v for k, v in prices.items() if v is not None}
print(f"missing: {[k for k, v in prices.items() if v is None]}")
final_answer({"avg": round(sum(known.values()) / len(known), 2), "n": len(known)})
"""),
    ("smol_npm_ranking_dataclass", "smol", r"""
from dataclasses import dataclass, field, asdict

@dataclass(order=True)
class Pkg:
    score: float
    name: str = field(compare=False)
    version: str = field(compare=False, default="0.0.0")

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

res = npmSearch(query="schema validation", limit=5)
pkgs = sorted((Pkg(o["score"]["final"], o["package"]["name"], o["package"]["version"]) for o in res["objects"]), reverse=True)
for p in pkgs[:3]:
    print(p)
print(type(pkgs[0]).__name__, type(pkgs[0]).__qualname__, type(pkgs[0]).__module__)
final_answer([asdict(p) | {"major": p.major} for p in pkgs[:3]])
"""),
    ("smol_bing_snippets_regex", "smol", r"""
import re
results = bing_search(query="best mechanical keyboard", num_results=4)
scored = []
for r in results:
    m = re.search(r"(\d+) reviews, rated ([\d.]+)/5", r["snippet"])
    reviews, rating = int(m[1]), float(m[2])
    scored.append({"title": r["title"], "score": round(rating * (1 + reviews / 100), 3)})
scored.sort(key=lambda d: d["score"], reverse=True)
for s in scored:
    print(f"{s['score']:6.3f}  {s['title']}")
final_answer(scored[0])
"""),
    ("smol_itertools_groupby_authors", "smol", r"""
from itertools import groupby
from operator import itemgetter
commits = list_commits(owner="octo", repo="fastq")
rows = sorted(({"author": c["commit"]["author"]["name"], "day": c["commit"]["author"]["date"][:10]} for c in commits), key=itemgetter("author"))
by_author = {a: [r["day"] for r in g] for a, g in groupby(rows, key=itemgetter("author"))}
print(*by_author.items(), sep="\n")
final_answer({a: len(d) for a, d in by_author.items()})
"""),
    ("smol_create_issue_markdown", "smol", r"""
bugs = list_issues(owner="octo", repo="fastq", state="OPEN", labels=["bug"], perPage=10)["issues"]
body = "\n".join(f"- [ ] #{i['number']} {i['title']} ({i['comments']} comments)" for i in sorted(bugs, key=lambda i: -i["comments"]))
issue = create_issue(owner="octo", repo="fastq", title=f"Bug sweep: {len(bugs)} open", body=f"## Open bugs\n\n{body}")
print(body)
final_answer(issue["html_url"])
"""),
    ("ptc_gather_prices", "async", r"""
import asyncio
symbols = ["AAPL", "MSFT", "NVDA"]
prices = await asyncio.gather(*[get_current_stock_price(symbol=s) for s in symbols])
table = dict(zip(symbols, prices))
print(max(table, key=table.get), min(table.values()))
{"table": table, "spread": round(max(prices) - min(prices), 2)}
"""),
    ("ptc_main_asyncio_run", "async", r"""
import asyncio
import json

async def repo_activity(full_name):
    owner, repo = full_name.split("/")
    commits = await tools.list_commits(owner=owner, repo=repo, perPage=3)
    return {"repo": full_name, "last": commits[0]["commit"]["author"]["date"], "n": len(commits)}

async def main():
    found = await tools.search_repositories(query="python", sort="stars")
    activity = await asyncio.gather(*(repo_activity(r["full_name"]) for r in found["items"]))
    print(json.dumps(activity, indent=2))
    return sorted(activity, key=lambda a: a["last"], reverse=True)[0]["repo"]

asyncio.run(main())
"""),
    ("ptc_gather_return_exceptions", "async", r"""
import asyncio
paths = ["README.md", "setup.py", "pyproject.toml"]
results = await asyncio.gather(*[tools.get_file_contents(owner="octo", repo="fastq", path=p) for p in paths], return_exceptions=True)
ok = {p: len(r) for p, r in zip(paths, results) if not isinstance(r, Exception)}
failed = [p for p, r in zip(paths, results) if isinstance(r, Exception)]
print(f"read {len(ok)}, failed {failed}")
{"sizes": ok, "failed": failed}
"""),
    ("ptc_semaphore_bounded", "async", r"""
import asyncio
sem = asyncio.Semaphore(2)

async def comments(n):
    async with sem:
        rows = await tools.issue_read(method="get_comments", owner="octo", repo="fastq", issue_number=n)
        return n, len(rows)

open_issues = (await tools.list_issues(owner="octo", repo="fastq", state="OPEN", perPage=10))["issues"]
counts = dict(await asyncio.gather(*[comments(i["number"]) for i in open_issues]))
print(counts)
result = {"busiest": max(counts, key=counts.get), "total": sum(counts.values())}
"""),
    ("ptc_dir_listing_sizes", "async", r"""
entries = await tools.get_file_contents(owner="octo", repo="fastq", path="/")
files = [e for e in entries if e["type"] == "file"]
dirs = [e["name"] for e in entries if e["type"] == "dir"]
biggest = max(files, key=lambda e: e["size"])
print(f"{len(files)} files, {len(dirs)} dirs; biggest {biggest['name']} ({biggest['size']} B)")
{"exts": sorted({f["name"].rsplit(".", 1)[-1] for f in files}), "dirs": dirs}
"""),
    ("ptc_as_completed_first", "async", r"""
import asyncio
tasks = [asyncio.create_task(tools.get_current_stock_price(symbol=s)) for s in ["AAPL", "TSLA"]]
done = []
for fut in asyncio.as_completed(tasks):
    done.append(await fut)
print(sorted(done))
sum(done) > 300
"""),
    ("monty_top_level_await_walrus", "async", r"""
if (res := await search_repositories(query="rust finance"))["total_count"]:
    top = res["items"][0]
    summary = f"{top['full_name']} ({top['language']}, {top['stargazers_count']}★)"
else:
    summary = "none"
print(summary)
summary
"""),
    ("monty_match_statement", "async", r"""
async def describe(n):
    issue = await issue_read(method="get", owner="octo", repo="fastq", issue_number=n)
    match issue:
        case {"state": "CLOSED"}:
            return f"#{n} closed"
        case {"labels": [{"name": "bug"}, *rest]} if rest:
            return f"#{n} bug+{len(rest)}"
        case {"labels": [{"name": "bug"}]}:
            return f"#{n} bug"
        case _:
            return f"#{n} other"

[await describe(n) for n in (3, 7, 9, 12)]
"""),
    ("monty_class_with_async_methods", "async", r"""
class Repo:
    def __init__(self, owner, name):
        self.owner, self.name = owner, name
        self.cache = {}

    async def file(self, path):
        if path not in self.cache:
            self.cache[path] = await get_file_contents(owner=self.owner, repo=self.name, path=path)
        return self.cache[path]

    def __repr__(self):
        return f"Repo({self.owner!r}, {self.name!r}, cached={len(self.cache)})"

r = Repo("octo", "fastq")
lines = (await r.file("README.md")).count("\n")
again = await r.file("README.md")
print(r, type(r), type(r).__name__)
{"lines": lines, "same": again is r.cache["README.md"], "repr": repr(r)}
"""),
    ("monty_textwrap_report", "async", r"""
import textwrap
issue = await issue_read(method="get", owner="octo", repo="fastq", issue_number=9)
header = f"#{issue['number']}: {issue['title']}".upper()
body = textwrap.indent(issue["body"], "  > ")
print(header)
print(body)
textwrap.shorten(header + " " + issue["body"].replace("\n", " "), width=40, placeholder="...")
"""),
    ("monty_typed_dict_and_enum", "async", r"""
from enum import Enum
from typing import TypedDict

class Trend(Enum):
    UP = "up"
    DOWN = "down"
    FLAT = "flat"

class Row(TypedDict):
    symbol: str
    trend: Trend

async def trend(sym) -> Row:
    hist = await get_historical_stock_prices(symbol=sym, period="5d")
    first, last = hist[0]["Close"], hist[-1]["Close"]
    t = Trend.UP if last > first * 1.005 else Trend.DOWN if last < first * 0.995 else Trend.FLAT
    return {"symbol": sym, "trend": t}

rows = [await trend(s) for s in ("AAPL", "MSFT", "ZZZ")]
print([f"{r['symbol']}={r['trend'].name}" for r in rows], type(rows[0]["trend"]))
{r["symbol"]: r["trend"].value for r in rows}
"""),
    ("monty_fraction_and_math", "async", r"""
import math
from fractions import Fraction
versions = await npmVersions(packages=["zod", "react", "ajv"])
counts = {p: len(v["versions"]) for p, v in versions.items()}
share = {p: Fraction(n, sum(counts.values())) for p, n in counts.items()}
print(share, type(share["zod"]))
{"share": {p: str(f) for p, f in share.items()}, "gcd": math.gcd(*counts.values()), "lcm": math.lcm(*counts.values()), "log": round(math.log2(sum(counts.values())), 6)}
"""),
    ("smol_stdlib_tour_on_prices", "smol", r"""
import json, math, statistics, itertools
from datetime import datetime, timedelta, date
from decimal import Decimal
rows = get_historical_stock_prices(symbol="AAPL", period="1mo")
print(type(rows) is list, type(rows[0]) == dict, isinstance(rows[0]["Close"], (int, float)))
dates = [datetime.strptime(r["Date"], "%Y-%m-%d").date() for r in rows]
gaps = [b - a for a, b in itertools.pairwise(dates)]
print(str(gaps[0]), repr(gaps[0]), dates[0].isoformat(), dates[0].isocalendar()[1], dates[-1].strftime("%A %d %B"))
closes = [r["Close"] for r in rows]
print(statistics.quantiles(closes, n=4), math.isclose(sum(closes) / len(closes), statistics.fmean(closes)))
print(list(itertools.accumulate(closes, max))[:3], list(itertools.islice(itertools.cycle("ab"), 5)))
print(json.dumps({"d": Decimal("1.10"), "t": dates[0]}, default=str), json.dumps(rows[0], indent=None, separators=(",", ":")))
print(format(1234.5, ",.2f"), "%s: %5.1f%%" % ("up", 12.345), f"{closes[0]!r:>10}|{'x':^5}|")
print(*sorted({r["Date"][:7] for r in rows}), sep=", ", end="!\n")
try:
    {}["missing"]
except KeyError as e:
    print("KeyError", e, repr(e), e.args)
print(repr(ValueError("bad")), str(timedelta(days=1, seconds=3661)), timedelta(hours=36).total_seconds())
matrix = [[1, 2, 3], [4, 5, 6]]
print(list(zip(*matrix)), [list(c) for c in itertools.combinations("abc", 2)], list(itertools.product([0, 1], repeat=2)))
print(round(1234.5678, -2), round(2.675, 2), divmod(-7, 2), -7 // 2, 7 % -3, int("0x1f", 16), float("1e3"), 10 ** -2)
print("a,b,,c".split(","), "k=v=w".partition("="), "x".zfill(3), "Straße".casefold(), "prefix_x".removeprefix("prefix_"))
print(sum([[1], [2]], []), any([]), all([]), max([], default=None), min("bca"), sorted("bca", reverse=True))
final_answer({"n": len(rows), "first": dates[0].isoformat()})
"""),
    ("ptc_taskgroup_versions_classes", "async", r"""
import asyncio
from dataclasses import dataclass, field
from functools import total_ordering, reduce, lru_cache
from typing import Optional, List

@total_ordering
class Version:
    __slots__ = ("parts",)
    def __init__(self, text):
        self.parts = tuple(int(p) for p in text.split("."))
    @classmethod
    def parse(cls, text):
        return cls(text.lstrip("v^~"))
    @staticmethod
    def valid(text):
        return all(p.isdigit() for p in text.lstrip("v^~").split("."))
    def __eq__(self, other):
        return self.parts == other.parts
    def __lt__(self, other):
        return self.parts < other.parts
    def __hash__(self):
        return hash(self.parts)
    def __str__(self):
        return ".".join(map(str, self.parts))
    def __repr__(self):
        return f"Version('{self}')"

@dataclass
class Package:
    name: str
    versions: List[Version] = field(default_factory=list)
    note: Optional[str] = None

    @property
    def latest(self):
        return max(self.versions) if self.versions else None

async def load(name):
    data = await tools.npmVersions(packages=[name])
    return Package(name, [Version.parse(v) for v in data[name]["versions"] if Version.valid(v)])

async def main():
    async with asyncio.TaskGroup() as tg:
        tasks = [tg.create_task(load(n)) for n in ["zod", "react", "vite"]]
    pkgs = [t.result() for t in tasks]
    for p in pkgs:
        print(p.name, p.latest, repr(p.latest), len(set(p.versions)), p)
    price = await asyncio.wait_for(tools.get_current_stock_price(symbol="TSLA"), timeout=5)
    print(vars(pkgs[0]).keys(), getattr(pkgs[0], "missing", "dflt"), hasattr(pkgs[0], "latest"))
    total = reduce(lambda a, b: a + len(b.versions), pkgs, 0)
    print(sorted(pkgs, key=lambda p: p.latest)[0].name, Version("1.2") <= Version("1.10"), total, price)
    return {p.name: str(p.latest) for p in pkgs}

@lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

print(fib(60), fib.cache_info().hits)
result = asyncio.run(main())
"""),
    ("smol_collections_and_dataclasses", "smol", r"""
import heapq, bisect
from collections import Counter, defaultdict, deque, OrderedDict, namedtuple
from dataclasses import dataclass, field, asdict, astuple, replace
res = npmSearch(query="validation", limit=6)
scores = {o["package"]["name"]: o["score"]["final"] for o in res["objects"]}
c = Counter({k: int(v * 100) for k, v in scores.items()})
print(c, c.most_common(2), c.total(), (c + Counter(zod=1))["zod"], +c == c)
dd = defaultdict(list)
for k in scores:
    dd[len(k)].append(k)
print(dd, dict(dd), sorted(dd.items()))
dq = deque(scores, maxlen=3)
print(dq, OrderedDict(sorted(scores.items())), scores.keys(), list(scores.values())[:2], range(2, 5))
print(heapq.nlargest(2, scores.items(), key=lambda kv: kv[1]), bisect.bisect_left(sorted(scores.values()), 0.5))
Hit = namedtuple("Hit", ["name", "score"], defaults=[0.0])
h = Hit("zod")
print(h, h._replace(score=1.0), h._asdict(), Hit._fields)
@dataclass(frozen=True)
class Pkg:
    name: str
    tags: tuple = ()
    meta: dict = field(default_factory=dict, repr=False, compare=False)
p = Pkg("zod", ("ts",))
print(p, asdict(p), astuple(p), replace(p, name="yup"), p == Pkg("zod", ("ts",)), hash(p) == hash(Pkg("zod", ("ts",))))
try:
    p.name = "x"
except Exception as e:
    print(type(e).__name__, e)
print(sorted({3, 1, 2}), {1: "a"} | {2: "b"}, {1, 2} ^ {2, 3}, [*range(3), *"ab"], {**{"a": 1}, "b": 2})
print(list(enumerate("ab", start=1)), dict(zip("ab", range(2))), list(reversed([1, 2])), "-".join(map(str, range(3))))
final_answer(c.most_common(1)[0][0])
"""),
    ("ptc_queue_workers_async_for", "async", r"""
import asyncio

async def worker(name, queue, out):
    while True:
        sym = await queue.get()
        try:
            out[sym] = await get_current_stock_price(symbol=sym)
        except Exception as e:
            out[sym] = f"error: {type(e).__name__}"
        finally:
            queue.task_done()

async def pages():
    for n in (3, 9):
        yield await issue_read(method="get", owner="o", repo="r", issue_number=n)

class Timer:
    async def __aenter__(self):
        self.n = 0
        return self
    async def __aexit__(self, *exc):
        print("closed", self.n)
        return False

async def main():
    queue, out = asyncio.Queue(), {}
    for s in ["AAPL", "XXX", "MSFT", "NVDA"]:
        queue.put_nowait(s)
    workers = [asyncio.create_task(worker(f"w{i}", queue, out)) for i in range(2)]
    await queue.join()
    for w in workers:
        w.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    titles = [i["title"] async for i in pages()]
    async with Timer() as t:
        t.n = len(titles)
    task = asyncio.create_task(search_repositories(query="python"))
    await asyncio.sleep(0)
    done, pending = await asyncio.wait([task], timeout=5)
    print(len(done), len(pending), sorted(out.items(), key=lambda kv: kv[0]))
    return {"titles": titles, "found": task.result()["total_count"]}

if __name__ == "__main__":
    result = asyncio.run(main())
"""),
    ("monty_defaultdict_nested", "async", r"""
from collections import defaultdict, OrderedDict
issues = (await list_issues(owner="octo", repo="fastq", perPage=10))["issues"]
by = defaultdict(lambda: defaultdict(list))
for i in issues:
    for lb in i["labels"]:
        by[i["state"]][lb["name"]].append(i["number"])
ordered = OrderedDict(sorted(((s, dict(v)) for s, v in by.items()), key=lambda kv: kv[0]))
print(type(by), type(ordered), len(ordered))
ordered
"""),
    # compat13: more pydantic-ai/Monty and Anthropic PTC scripts
    ("ptc_gather_prices_dataclass_report", "async", r"""
import asyncio
import json
from dataclasses import dataclass, field, asdict

@dataclass(order=True)
class Quote:
    change: float
    symbol: str = field(compare=False)
    closes: list = field(default_factory=list, compare=False, repr=False)

symbols = ["AAPL", "MSFT", "NVDA", "TSLA"]
histories = await asyncio.gather(*[get_historical_stock_prices(symbol=s, period="5d") for s in symbols])
quotes = []
for sym, hist in zip(symbols, histories):
    closes = [row["Close"] for row in hist]
    quotes.append(Quote(round((closes[-1] - closes[0]) / closes[0] * 100, 3), sym, closes))
quotes.sort(reverse=True)
for q in quotes:
    print(f"{q.symbol:<5} {q.change:+7.3f}% {q!r}")
print(json.dumps([asdict(q) for q in quotes[:2]], indent=1, sort_keys=True))
{"best": quotes[0].symbol, "worst": quotes[-1].symbol}
"""),
    ("ptc_gather_return_exceptions", "async", r"""
import asyncio
symbols = ["AAPL", "ZZZZ", "NVDA"]
results = await asyncio.gather(*(get_current_stock_price(symbol=s) for s in symbols), return_exceptions=True)
ok, failed = {}, []
for s, r in zip(symbols, results):
    if isinstance(r, Exception):
        failed.append(s)
        print(f"{s}: failed ({type(r).__name__})")
    else:
        ok[s] = r
total = sum(ok.values())
print(f"total={total:.2f} mean={total / len(ok):.3f}")
{"ok": ok, "failed": failed}
"""),
    ("monty_commit_timeline_datetime", "async", r"""
from datetime import datetime, timedelta, timezone
from collections import defaultdict
commits = await list_commits(owner="octo", repo="fastq", perPage=20)
by_day = defaultdict(list)
stamps = []
for c in commits:
    when = datetime.fromisoformat(c["commit"]["author"]["date"].replace("Z", "+00:00"))
    stamps.append(when)
    by_day[when.date().isoformat()].append(c["sha"][:7])
span = max(stamps) - min(stamps)
print(span, span.days, span.total_seconds() // 3600)
print(min(stamps).strftime("%a %d %b %Y %H:%M %Z"), min(stamps).tzinfo == timezone.utc)
recent = [s.isoformat() for s in stamps if max(stamps) - s < timedelta(days=3)]
{"days": dict(sorted(by_day.items())), "recent": recent, "weekday": max(stamps).weekday()}
"""),
    ("monty_readme_sections_regex", "async", r"""
import re
readme = await get_file_contents(owner="octo", repo="fastq", path="README.md")
sections = re.findall(r"^##\s+(.+)$", readme, flags=re.M)
code = re.search(r"\n\n((?: {4}.*\n)+)", readme)
words = re.split(r"\W+", readme.lower())
print(sections, repr(code.group(1).strip()) if code else None)
print(len([w for w in words if w]), re.sub(r"\s+", " ", readme)[:40])
{"sections": sections, "install": code.group(1).strip() if code else None, "title": re.match(r"#\s*(\w+)", readme).group(1)}
"""),
    ("ptc_paginate_while_loop", "async", r"""
issues = []
cursor = None
pages = 0
while True:
    extra = {"after": cursor} if cursor else {}
    page = await list_issues(owner="octo", repo="fastq", state="OPEN", perPage=2, **extra)
    issues.extend(page["issues"])
    pages += 1
    if not page["pageInfo"]["hasNextPage"]:
        break
    cursor = page["pageInfo"]["endCursor"]
hot = sorted(issues, key=lambda i: (-i["comments"], i["number"]))[:3]
print(f"{pages} pages, {len(issues)} open issues")
for i in hot:
    labels = ", ".join(lb["name"] for lb in i["labels"]) or "-"
    print(f"#{i['number']:>3} {i['title'][:20]:<20} [{labels}] ({i['comments']} comments)")
[i["number"] for i in hot]
"""),
    ("monty_semaphore_comments_counter", "async", r"""
import asyncio
from collections import Counter
sem = asyncio.Semaphore(2)
async def comments_for(n):
    async with sem:
        return n, await issue_read(method="get_comments", owner="octo", repo="fastq", issue_number=n)
listing = await list_issues(owner="octo", repo="fastq", perPage=10)
pairs = await asyncio.gather(*[comments_for(i["number"]) for i in listing["issues"]])
authors = Counter(c["user"]["login"] for _, cs in pairs for c in cs)
per_issue = {n: len(cs) for n, cs in pairs}
print(authors.most_common(), sum(authors.values()))
print(max(per_issue, key=per_issue.get), sorted(per_issue.items()))
{"authors": dict(authors), "per_issue": per_issue}
"""),
    ("ptc_pyproject_parse_and_compare", "async", r"""
import json
import re
tree = await get_file_contents(owner="octo", repo="fastq", path="/")
names = [f["name"] for f in tree if f["type"] == "file"]
pyproject = await get_file_contents(owner="octo", repo="fastq", path="pyproject.toml")
package = json.loads(await get_file_contents(owner="octo", repo="fastq", path="package.json"))
version = re.search(r'^version\s*=\s*"([^"]+)"', pyproject, re.M).group(1)
deps = re.findall(r'"([A-Za-z0-9_-]+)', pyproject.split("dependencies", 1)[1])
major, minor, patch = map(int, version.split("."))
js = {k: v.lstrip("^~") for k, v in package["dependencies"].items()}
print(f"py {version} ({major}.{minor + 1}.0 next), js {package['version']}")
print(sorted(names), deps, js)
{"python_deps": deps, "js_deps": js, "bump": f"{major}.{minor}.{patch + 1}"}
"""),
    ("monty_npm_typed_dict_ranking", "async", r"""
from typing import TypedDict
import asyncio

class Pkg(TypedDict):
    name: str
    score: float
    latest: str

found = await npmSearch(query="schema validation", limit=4)
names = [o["package"]["name"] for o in found["objects"]]
versions = await npmVersions(packages=names)
pkgs: list[Pkg] = [Pkg(name=o["package"]["name"], score=o["score"]["final"],
                       latest=versions[o["package"]["name"]]["latest"]) for o in found["objects"]]
ranked = sorted(pkgs, key=lambda p: (p["score"], p["name"]), reverse=True)
for rank, p in enumerate(ranked, 1):
    print(f"{rank}. {p['name']:<12} {p['score']:.2f} v{p['latest']}")
counts = {p["name"]: len(versions[p["name"]]["versions"]) for p in pkgs}
{"top": ranked[0]["name"], "versions": counts}
"""),
    ("ptc_search_dedupe_sets_enumerate", "async", r"""
import asyncio
queries = ["python async", "python queue", "rust"]
results = await asyncio.gather(*[search_repositories(query=q, perPage=5) for q in queries])
seen = set()
unique = []
for q, res in zip(queries, results):
    names = {r["full_name"] for r in res["items"]}
    print(q, "->", sorted(names), "new:", sorted(names - seen))
    for r in res["items"]:
        if r["full_name"] not in seen:
            seen.add(r["full_name"])
            unique.append(r)
langs = {r["language"] for r in unique}
stars = sum(r["stargazers_count"] for r in unique)
print(f"{len(unique)} unique repos, {stars:,} stars, languages: {', '.join(sorted(langs))}")
{"unique": [r["full_name"] for r in unique], "common": sorted(set.intersection(*[{r["full_name"] for r in res["items"]} for res in results[:2]]))}
"""),
    ("monty_create_issue_summary_try", "async", r"""
import json
from dataclasses import dataclass

@dataclass(frozen=True)
class Finding:
    number: int
    title: str
    labels: tuple

listing = await list_issues(owner="octo", repo="fastq", labels=["bug"], perPage=10)
findings = [Finding(i["number"], i["title"], tuple(lb["name"] for lb in i["labels"])) for i in listing["issues"]]
body = "\n".join(f"- #{f.number} {f.title} ({'/'.join(f.labels)})" for f in findings)
try:
    missing = await get_file_contents(owner="octo", repo="fastq", path="CHANGELOG.md")
except Exception as e:
    missing = None
    print("no changelog:", type(e).__name__)
created = await create_issue(owner="octo", repo="fastq", title=f"Bug triage: {len(findings)} open", body=body)
print(body)
print(json.dumps(created, sort_keys=True))
print(findings[0], hash(findings[0]) == hash(Finding(**{"number": findings[0].number, "title": findings[0].title, "labels": findings[0].labels})))
{"issue": created["number"], "count": len(findings), "changelog": missing}
"""),
]


@pytest.mark.parametrize(("name", "style", "script"), CPYTHON_ROWS, ids=[r[0] for r in CPYTHON_ROWS])
async def test_corpus_tool_script_runs_as_in_cpython(mode: cm.CodeMode, name: str, style: str,
                                                     script: str) -> None:
    run = await mode.run(script)
    assert run.error is None, run.error
    assert run.calls
    assert (json.loads(json.dumps(run.value)), run.output) == cpython(script, style)


# (name, the dialect, its canonical script): no CPython meaning, compared with the canonical
CANONICAL_ROWS: list[tuple[str, str, str]] = [
    ("langchain_alias_invoke", r"""
search = search_repositories
repos = search.invoke({"query": "async", "sort": "stars"})
print(search.name, len(search.description) > 20)
[r["full_name"] for r in repos["items"]]
""", r"""
repos = await tools.search_repositories(query="async", sort="stars")
print("search_repositories", True)
[r["full_name"] for r in repos["items"]]
"""),
    ("langchain_invoke_dict_beyond_the_order", r"""
repos = search_repositories.invoke({"query": "python", "sort": "stars", "perPage": 2})
commits = list_commits.invoke(input={"owner": "octo", "repo": "fastq", "author": "ada"})
[[r["full_name"] for r in repos["items"]], len(commits)]
""", r"""
repos = await tools.search_repositories(query="python", sort="stars", perPage=2)
commits = await tools.list_commits(owner="octo", repo="fastq", author="ada")
[[r["full_name"] for r in repos["items"]], len(commits)]
"""),
    ("langchain_tool_list_loop", r"""
tool_list = [get_current_stock_price, npmSearch]
names = {t.name: t for t in tool_list}
price = await names["get_current_stock_price"].ainvoke({"symbol": "MSFT"})
top = await names["npmSearch"].arun("forms")
print(sorted(names))
[price, top["objects"][0]["package"]["name"]]
""", r"""
price = await tools.get_current_stock_price(symbol="MSFT")
top = await tools.npmSearch(query="forms")
print(["get_current_stock_price", "npmSearch"])
[price, top["objects"][0]["package"]["name"]]
"""),
    ("cloudflare_codemode_dicts", r"""
async def main():
    bugs = await codemode.list_issues({"owner": "octo", "repo": "fastq", "labels": ["bug"], "perPage": 5})
    first = bugs["issues"][0]
    detail = await codemode.issue_read({"method": "get", "owner": "octo", "repo": "fastq", "issue_number": first["number"]})
    return {"title": detail["title"], "steps": detail["body"].count("\n")}
""", r"""
async def main():
    bugs = await tools.list_issues(owner="octo", repo="fastq", labels=["bug"], perPage=5)
    first = bugs["issues"][0]
    detail = await tools.issue_read(method="get", owner="octo", repo="fastq", issue_number=first["number"])
    return {"title": detail["title"], "steps": detail["body"].count("\n")}

await main()
"""),
    ("smol_tool_alias_sync", r"""
prices = get_current_stock_price
hist = get_historical_stock_prices
now = prices(symbol="AAPL")
week = hist(symbol="AAPL", period="5d")
final_answer(round(now - week[0]["Close"], 2))
""", r"""
now = await tools.get_current_stock_price(symbol="AAPL")
week = await tools.get_historical_stock_prices(symbol="AAPL", period="5d")
round(now - week[0]["Close"], 2)
"""),
]


def trace(run: cm.ScriptResult) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, dict(c.arguments)) for c in run.calls]


@pytest.mark.parametrize(("name", "script", "canonical"), CANONICAL_ROWS,
                         ids=[r[0] for r in CANONICAL_ROWS])
async def test_corpus_tool_dialect_runs_as_its_canonical_script(
        either: cm.CodeMode, name: str, script: str, canonical: str) -> None:
    run, expected = await either.run(script), await either.run(canonical)
    assert run.error is None, run.error
    assert expected.error is None, expected.error
    assert expected.calls
    assert (run.value, run.output, trace(run)) == (expected.value, expected.output, trace(expected))


async def test_a_tools_description_is_its_listings(either: cm.CodeMode) -> None:
    """``tool.description`` reads the text the corpus listing gives (the prompt's)."""
    run = await either.run("t = tools.npmSearch\n[t.name, t.description]")
    assert run.error is None, run.error
    assert run.value == ["npmSearch", _specs()["npmSearch"]["description"]]


# (name, script): plain Python models print while they explore, no tools: as in CPython
PLAIN_ROWS: list[tuple[str, str]] = [
    ("types_of_numbers_and_contexts", r"""
from decimal import Decimal, getcontext
from fractions import Fraction
ctx = getcontext()
d = Decimal("2.50")
print(type(d), type(Fraction(1, 3)), type(ctx), type(ctx.traps), type(ctx.flags))
print(type(d).__name__, type(d).__qualname__, type(d).__module__, Decimal.__module__)
print(type(d)("1.25") + d, type(d) is Decimal, isinstance(d, type(d)), f"{type(ctx)!r}")
"""),
    ("types_of_script_classes", r"""
import collections
from dataclasses import dataclass

@dataclass
class Row:
    n: int

class Plain:
    def method(self):
        return 1

P = collections.namedtuple("P", "x y")
print(Row, type(Row(1)), P, type(P(1, 2)), Row.__module__, Row.__qualname__, Plain.method.__qualname__)
print(type(collections.Counter()), type(collections.deque()), type(collections.ChainMap()))
"""),
    ("types_of_library_objects", r"""
import re, io, uuid, random, string, itertools, functools, hashlib

def gen():
    yield 1

async def coro():
    return 1

print(type(re.compile("a")), type(io.StringIO()), type(uuid.UUID(int=1)), type(random.Random(1)), type(string.Template("x")))
print(type(itertools.count()), type(functools.partial(print)), type(hashlib.sha256(b"x")))
print(type(gen), type(gen()), type(coro), type(print), type(len), type("a".upper), type({}.values()), type(...), type(NotImplemented))
print(gen.__qualname__, gen.__module__, coro.__module__, io.StringIO.__name__, type(uuid.uuid4()).__module__)
"""),
    ("deep_chainmap_repr_is_a_recursion_error", r"""
from collections import ChainMap
c = ChainMap({"a": 1})
for _ in range(5000):
    c = ChainMap(c)
try:
    repr(c)
    outcome = "rendered"
except RecursionError:
    outcome = "RecursionError"
print(outcome)
"""),
    ("data_special_methods_as_functions", r"""
scores = {"ada": 3, "alan": 9, "grace": 7}
seen = {"ada", "grace"}
order = [5, 1, 4]
print(max(scores, key=scores.__getitem__), sorted(scores, key=scores.__getitem__))
print(list(filter(seen.__contains__, scores)), order.__len__(), "abc".__getitem__(slice(1, None)))
print(sorted(range(3), key=order.__getitem__), [1, 2].__contains__(2))
"""),
]


@pytest.mark.parametrize(("name", "script"), PLAIN_ROWS, ids=[r[0] for r in PLAIN_ROWS])
async def test_plain_python_prints_as_in_cpython(mode: cm.CodeMode, name: str,
                                                 script: str) -> None:
    run = await mode.run(script)
    assert run.error is None, run.error
    assert (json.loads(json.dumps(run.value)), run.output) == cpython(script, "smol")


async def test_a_shown_type_is_no_constructor_and_reads_nothing(mode: cm.CodeMode) -> None:
    """``type(ctx.traps)`` and ``type(gen())`` print as CPython's classes but hand out
    neither the sandbox's class nor the real one: no instance, no attribute."""
    for script in ("import decimal\ntype(decimal.getcontext().traps)()",
                   "def g():\n    yield 1\ntype(g())()",
                   "def g():\n    yield 1\ntype(g()).send",
                   "import decimal\ntype(decimal.getcontext().traps).__init__"):
        run = await mode.run(script)
        assert run.error is not None, script
        assert run.error.type in {"TypeError", "AttributeError", "PreflightError"}, run.error
        assert run.calls == ()
