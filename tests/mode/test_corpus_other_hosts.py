"""Compat round 15: scripts models write for other Code Mode hosts, in styles the
earlier rounds did not cover, against more of the corpus's real schemas.

The tools (``other_host_tools``) are BFCL's trading, travel, ticket and math APIs, the
Hacker News, Wikipedia, Time and LeetCode MCP servers and VS Code Copilot's file tools,
registered with their published listings so every call is validated as the host would.
Each row runs in the sandbox on both executors and in CPython with the same handlers as
plain functions (``smol``: bare names sync; ``async``: bare names and ``tools.x``
awaited): value and printed output must be equal.
"""

# ruff: noqa: E501 - the rows are scripts as models write them

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

import codemode as cm
from tests.mode.corpus_tools import registry
from tests.mode.cpython_side import run_with_tools
from tests.mode.other_host_tools import FUNCTIONS, specs

if TYPE_CHECKING:
    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio


@pytest.fixture
def mode(executor: Executor) -> cm.CodeMode:
    """Both executors (conftest's ``executor``): what the dialects add to a run travels
    to a worker too."""
    return cm.CodeMode(registry(specs(), FUNCTIONS), executor=executor)


async def _runs_as_in_cpython(mode: cm.CodeMode, script: str, style: str) -> None:
    run = await mode.run(script)
    assert run.error is None, run.error
    assert run.calls
    assert (json.loads(json.dumps(run.value)), run.output) == run_with_tools(script, style, FUNCTIONS)


# (name, CPython style, script): value and output as in CPython
ROWS: list[tuple[str, str, str]] = [
    ("smol_retry_backoff_sleep", "smol", r"""
import time

def fetch_with_retry(story_id, attempts=3, delay=0.01):
    '''Fetch a story, retrying transient failures with exponential backoff.'''
    last_error = None
    for attempt in range(1, attempts + 1):
        try:
            return getStory(id=story_id)
        except Exception as exc:  # the tool raised
            last_error = exc
            print(f"attempt {attempt} for {story_id} failed: {exc}")
            time.sleep(delay * 2 ** (attempt - 1))
    raise RuntimeError(f"giving up on {story_id}") from last_error

stories = []
for sid in [40404, 99999, 40401]:
    try:
        stories.append(fetch_with_retry(sid))
    except RuntimeError as err:
        print(err, "| cause:", type(err.__cause__).__name__)
final_answer([s["title"] for s in stories])
"""),
    ("smol_partial_of_a_tool", "smol", r"""
from functools import partial

# same date and class for every leg
quote = partial(get_flight_cost, travel_date="2024-11-15", travel_class="economy")
legs = [("SFO", "JFK"), ("JFK", "LHR"), ("LHR", "HND")]
costs = {f"{a}->{b}": min(quote(travel_from=a, travel_to=b)["travel_cost_list"]) for a, b in legs}
for leg, cost in costs.items():
    print(f"{leg:<10} ${cost:>9,.2f}")
final_answer(round(sum(costs.values()), 2))
"""),
    ("ptc_partial_async_gather", "async", r"""
import asyncio
from functools import partial

to_eur = partial(tools.compute_exchange_rate, base_currency="USD", target_currency="EUR")
amounts = [100, 250.5, 1999.99]
converted = await asyncio.gather(*(to_eur(value=a) for a in amounts))
table = dict(zip(amounts, (c["exchanged_value"] for c in converted), strict=True))
print(table)
table
"""),
    ("smol_fstring_debug_and_nested_specs", "smol", r"""
info = get_stock_info(symbol="NVDA")
price = info["price"]
ma5, ma20 = info["MA(5)"], info["MA(20)"]
width, prec = 10, 3
print(f"{price=}")
print(f"{ma5 = :.1f}, {ma20=!r}")
print(f"[{price:>{width}.{prec}f}] [{price:^{width}}] [{price:<{width},.1f}]")
print(f"{info['percent_change']:+.2%} {info['volume']:e} {len(info)=}")
spread = ma20 - ma5
final_answer(f"{spread=:.2f}")
"""),
    ("ptc_as_completed_with_wait_for", "async", r"""
import asyncio

async def story_or_none(sid: int):
    try:
        return await asyncio.wait_for(tools.getStory(id=sid), timeout=10)
    except asyncio.TimeoutError:
        return None
    except ToolCallError as e:
        print("missing:", sid, e.message if hasattr(e, "message") else e)
        return None

ids = [40401, 40402, 1, 40406]
found = []
for fut in asyncio.as_completed([story_or_none(i) for i in ids]):
    story = await fut
    if story is not None:
        found.append(story)
found.sort(key=lambda s: (-s["score"], s["id"]))
print("\n".join(f"{s['score']:>5} {s['title']}" for s in found))
{"count": len(found), "top": found[0]["title"]}
"""),
    ("ptc_taskgroup_dict_results", "async", r"""
import asyncio

async def main() -> dict[str, float]:
    symbols = ["AAPL", "GOOG", "MSFT"]
    async with asyncio.TaskGroup() as tg:
        tasks = {s: tg.create_task(tools.get_stock_info(symbol=s)) for s in symbols}
    prices = {s: t.result()["price"] for s, t in tasks.items()}
    # buy one share of the cheapest
    cheapest = min(prices, key=prices.get)
    order = await tools.place_order(order_type="Buy", symbol=cheapest, price=prices[cheapest], amount=1)
    details = await tools.get_order_details(order_id=order["order_id"])
    print(f"placed #{order['order_id']} ({order['status']}) -> {details['status']}")
    return prices | {"cheapest": cheapest, "order": order["order_id"]}

if __name__ == "__main__":
    result = asyncio.run(main())
"""),
    ("smol_typeddict_total_false_and_literals", "smol", r"""
from typing import Any, Literal, TypedDict, NotRequired

class Flight(TypedDict):
    route: str
    cls: Literal["economy", "business", "first"]
    cheapest: float
    note: NotRequired[str]

class Options(TypedDict, total=False):
    budget: float
    currency: str

opts: Options = {"budget": 2500.0}
results: list[Flight] = []
src = get_nearest_airport_by_city(location="Boston")["nearest_airport"]
dst = get_nearest_airport_by_city(location="Paris")["nearest_airport"]
for cls in ("economy", "business", "first"):
    costs: list[float] = get_flight_cost(travel_from=src, travel_to=dst, travel_date="2024-12-01", travel_class=cls)["travel_cost_list"]
    row: Flight = {"route": f"{src}-{dst}", "cls": cls, "cheapest": min(costs)}
    if row["cheapest"] > opts.get("budget", float("inf")):
        row["note"] = "over budget"
    results.append(row)
print(*results, sep="\n")
final_answer([r for r in results if "note" not in r])
"""),
    ("smol_groupby_counter_most_common", "smol", r"""
from collections import Counter, defaultdict
from itertools import groupby
from operator import itemgetter

stories = getStories(type="top", limit=10)
by_author = Counter(s["by"] for s in stories)
print(by_author.most_common(1))
hosts = defaultdict(list)
for s in stories:
    host = s["url"].removeprefix("https://").split("/", 1)[0]
    hosts[host.removeprefix("www.")].append(s["id"])
rows = sorted(stories, key=itemgetter("by", "score"))
for author, group in groupby(rows, key=itemgetter("by")):
    group = list(group)
    print(f"{author:<10} {len(group)} {sum(map(itemgetter('score'), group))}")
final_answer({"hosts": dict(sorted(hosts.items())), "prolific": by_author.most_common(1)[0][0]})
"""),
    ("ptc_convert_time_print_json_answer", "async", r"""
import asyncio, json

pairs = [("America/New_York", "Asia/Kolkata"), ("Europe/Berlin", "America/Los_Angeles")]
replies = await asyncio.gather(*[
    tools.convert_time(source_timezone=a, time="09:30", target_timezone=b) for a, b in pairs])
summary = []
for (a, b), raw in zip(pairs, replies, strict=True):
    r = json.loads(raw)
    summary.append({"from": a, "to": b, "at": r["target"]["datetime"][11:16], "diff": r["time_difference"]})
print(json.dumps(summary, indent=2))
"""),
    ("smol_regex_named_groups_sub_callback", "smol", r"""
import re

hits = copilot_findTextInFiles(query=r"#\s*(TODO|FIXME)", isRegexp=True, includePattern="**/*.py")
pattern = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):\s*#\s*(?P<tag>TODO|FIXME)(?:\((?P<who>\w+)\))?:?\s*(?P<text>.*)$")
todos = []
for m in map(pattern.match, hits.splitlines()):
    if m:
        todos.append(m.groupdict() | {"line": int(m["line"])})
shout = re.sub(r"\b(\w)(\w*)", lambda m: m.group(1).upper() + m.group(2), todos[0]["text"])
print(shout)
for t in todos:
    print(f"{t['path'].rsplit('/', 1)[-1]}:{t['line']:<3} {t['tag']:<5} {t['who'] or '-':<4} {t['text']}")
final_answer(sorted({t["tag"] for t in todos}))
"""),
    ("smol_read_file_ranges_textwrap", "smol", r"""
import textwrap

listing = copilot_findTextInFiles(query="def ", isRegexp=False, includePattern="src/**")
defs = [line.split(":", 2) for line in listing.splitlines()]
for path, lineno, text in defs:
    start = int(lineno)
    body = copilot_readFile(filePath=path, startLine=start, endLine=start + 3)
    print(f"--- {path}:{start}")
    print(textwrap.indent(textwrap.dedent(body), "  | "))
summary = textwrap.shorten(" ".join(t.strip() for _, _, t in defs), width=40, placeholder=" …")
final_answer(summary)
"""),
    ("ptc_wikipedia_summaries_statistics", "async", r"""
import asyncio
import statistics as st

found = await tools.search_wikipedia(query="programming language", limit=5)
titles = [r["title"] for r in found["results"]]
summaries = await asyncio.gather(*(tools.get_summary(title=t) for t in titles))
lengths = {t: len(s.split()) for t, s in zip(titles, summaries)}
print(f"median={st.median(lengths.values())} mean={st.fmean(lengths.values()):.2f}")
longest = max(lengths.items(), key=lambda kv: kv[1])
{"titles": titles, "longest": longest[0], "first_sentences": [s.split(". ")[0] + "." for s in summaries]}
"""),
    ("smol_positional_dict_and_kwargs_calls", "smol", r"""
params = {"base_currency": "GBP", "target_currency": "JPY", "value": 80}
a = compute_exchange_rate(**params)
b = compute_exchange_rate("GBP", "JPY", 80)
c = get_stock_info("AAPL")
args = dict(symbol="MSFT")
d = get_stock_info(**args)
print(a == b, c["price"], d["price"])
final_answer([a["exchanged_value"], c["MA(5)"], d["MA(20)"]])
"""),
    ("smol_contextlib_suppress_and_else_finally", "smol", r"""
import contextlib

tickets = {}
for tid in [1015, 42, 1021]:
    with contextlib.suppress(Exception):
        tickets[tid] = get_ticket(ticket_id=tid)
print(sorted(tickets))
attempts = 0
try:
    attempts += 1
    t = get_ticket(ticket_id=7)
except Exception as e:
    print("not found:", e)
    t = None
else:
    print("found", t["id"])
finally:
    print("attempts:", attempts)
final_answer({k: v["status"] for k, v in tickets.items()} | {"missing": t})
"""),
    ("smol_create_tickets_enumerate_start", "smol", r"""
problems = [
    ("Login page times out", 4),
    ("Typo on pricing page", 1),
    ("Export to CSV drops rows", 5),
]
created = []
for i, (title, prio) in enumerate(problems, start=1):
    t = create_ticket(title=f"[{i}/{len(problems)}] {title}", description=f"Reported by agent, item {i}", priority=prio)
    created.append(t)
    print(f"{i}. #{t['id']} p{t['priority']} {t['title']!r}")
urgent = [t["id"] for t in created if t["priority"] >= 4]
final_answer({"created": [t["id"] for t in created], "urgent": urgent, "odd": [t["id"] for t in created][::2]})
"""),
    ("ptc_math_tools_compare_with_statistics", "async", r"""
import math
import statistics

closes = [227.16, 229.5, 226.1, 231.75, 230.0, 233.4]
m = (await tools.mean(numbers=closes))["result"]
sd = (await tools.standard_deviation(numbers=closes))["result"]
print(math.isclose(m, statistics.fmean(closes)), math.isclose(sd, statistics.pstdev(closes)))
z = [round((x - m) / sd, 3) for x in closes]
print(f"{m=:.3f} {sd=:.3f} z={z}")
{"mean": round(m, 4), "sd": round(sd, 4), "outliers": [x for x, s in zip(closes, z) if abs(s) > 1.2], "fsum": math.fsum(closes)}
"""),
    ("smol_sync_main_guard_dataclass_asdict", "smol", r"""
from dataclasses import dataclass, asdict, field
from operator import attrgetter

@dataclass(order=True)
class Holding:
    value: float
    symbol: str = field(compare=False)
    shares: int = field(default=0, compare=False)

def main() -> list[dict]:
    shares = {"AAPL": 10, "TSLA": 3, "NVDA": 25}
    holdings = []
    for sym, n in shares.items():
        price = get_stock_info(symbol=sym)["price"]
        holdings.append(Holding(round(price * n, 2), sym, n))
    holdings.sort(reverse=True)
    print(*map(attrgetter("symbol"), holdings))
    print(max(holdings, key=attrgetter("shares")))
    return [asdict(h) for h in holdings]

if __name__ == "__main__":
    result = main()
"""),
    ("smol_while_else_for_else_walrus", "smol", r"""
names = ["Apple", "Samsung", "Tesla", "Nvidia"]
found = {}
for name in names:
    if (sym := get_symbol_by_name(name=name)["symbol"]) == "Stock not found":
        print(f"{name!s:>8}: not listed")
        continue
    found[name] = sym
else:
    print("checked", len(names))
for sym in found.values():
    if get_stock_info(symbol=sym)["percent_change"] < 0:
        print("first loser:", sym)
        break
else:
    print("no losers")
final_answer(found)
"""),
    ("ptc_semaphore_queue_of_story_ids", "async", r"""
import asyncio
from collections import deque

ids = [s["id"] for s in await tools.getStories(type="new", limit=6)]
sem = asyncio.Semaphore(2)
recent = deque(maxlen=3)

async def fetch(i: int) -> dict:
    async with sem:
        story = await tools.getStory(id=i)
        recent.append(story["id"])
        return story

stories = await asyncio.gather(*map(fetch, ids))
by_comments = sorted(stories, key=lambda s: s["descendants"], reverse=True)
print([s["descendants"] for s in by_comments][:3], len(recent))
{"hot": [s["title"] for s in by_comments[:2]], "ids": ids[::-1]}
"""),
    ("smol_str_methods_chain_translate", "smol", r"""
import string

text = get_summary(title="Guido van Rossum")
words = text.translate(str.maketrans("", "", string.punctuation)).casefold().split()
caps = [w.strip("()") for w in text.split() if w[:1].isupper()]
print(text.partition(" is ")[0], "|", text.rpartition("(")[2].rstrip(".)"))
print(" ".join(words[:5]).title().center(40, "*"))
print(text.count("Python"), text.find("BDFL"), text.startswith(("Guido", "X")), "-".join(caps[:3]).swapcase())
final_answer({"unique": len(set(words)), "acronyms": [w for w in caps if w.isupper()], "long": max(words, key=len)})
"""),
    ("smol_heapq_and_bisect_on_costs", "smol", r"""
import heapq
import bisect

routes = [("SFO", "JFK"), ("LAX", "ORD"), ("BOS", "LHR"), ("JFK", "CDG")]
quotes = []
for src, dst in routes:
    for c in get_flight_cost(travel_from=src, travel_to=dst, travel_date="2024-10-20", travel_class="business")["travel_cost_list"]:
        quotes.append((c, f"{src}-{dst}"))
cheapest = heapq.nsmallest(3, quotes)
priciest = heapq.nlargest(2, quotes, key=lambda q: q[0])
prices = sorted(c for c, _ in quotes)
budget = 3000
print(f"{bisect.bisect_right(prices, budget)} of {len(prices)} under {budget}")
final_answer({"cheap": cheapest, "dear": [r for _, r in priciest]})
"""),
    ("ptc_exception_group_from_taskgroup", "async", r"""
import asyncio

async def main():
    try:
        async with asyncio.TaskGroup() as tg:
            good = tg.create_task(tools.get_ticket(ticket_id=1005))
            tg.create_task(tools.get_ticket(ticket_id=3))
    except ExceptionGroup as eg:
        errors = [str(e) for e in eg.exceptions]
        print(f"{len(eg.exceptions)} failed:", errors)
        return {"errors": errors, "good_cancelled_or_done": good.done()}
    return {"errors": []}

result = await main()
"""),
    ("smol_random_seeded_sample", "smol", r"""
import random

rng = random.Random(42)
problems = search_problems(limit=20)["questions"]
pick = rng.sample(problems, k=3)
random.seed(7)
order = list(range(5))
random.shuffle(order)
print([p["titleSlug"] for p in pick], order, random.randint(1, 100), round(random.random(), 6))
final_answer({"pick": sorted(p["title"] for p in pick), "choice": rng.choice(["a", "b", "c"])})
"""),
    ("ptc_datetime_epoch_and_isocalendar", "async", r"""
from datetime import datetime, timezone, timedelta

stories = await tools.getStories(type="top", limit=4)
rows = []
for s in stories:
    posted = datetime.fromtimestamp(s["time"], tz=timezone.utc)
    rows.append((posted, s["title"]))
rows.sort()
span = rows[-1][0] - rows[0][0]
print(f"span {span} = {span.total_seconds() / 60:.1f} min; week {rows[0][0].isocalendar().week}")
for when, title in rows:
    print(when.strftime("%Y-%m-%d %H:%M:%S %Z"), "|", title[:30])
deadline = rows[0][0] + timedelta(days=3, hours=6)
{"first": rows[0][0].isoformat(), "deadline": deadline.strftime("%A %d %B"), "weekday": deadline.weekday()}
"""),
    ("ptc_async_retry_decorator", "async", r"""
import asyncio
import functools

def retry(times: int = 3, delay: float = 0.0):
    def deco(fn):
        @functools.wraps(fn)
        async def wrapper(*args, **kwargs):
            for attempt in range(1, times + 1):
                try:
                    return await fn(*args, **kwargs)
                except ToolCallError as exc:
                    print(f"{fn.__name__} attempt {attempt}: {exc}")
                    if attempt == times:
                        raise
                    await asyncio.sleep(delay)
        return wrapper
    return deco

@retry(times=2)
async def summary(title):
    return await tools.get_summary(title=title)

out = {}
for t in ["Rust (programming language)", "Go (programming language)"]:
    try:
        out[t] = (await summary(t))[:20]
    except ToolCallError as e:
        out[t] = None
print(summary.__name__)
out
"""),
    ("smol_namedtuple_class_and_sum_start", "smol", r"""
from typing import NamedTuple

class Leg(NamedTuple):
    src: str
    dst: str
    cost: float = 0.0

    def label(self) -> str:
        return f"{self.src}→{self.dst}"

cities = ["Chicago", "London", "Tokyo"]
codes = [get_nearest_airport_by_city(location=c)["nearest_airport"] for c in cities]
legs = [Leg(a, b, min(get_flight_cost(travel_from=a, travel_to=b, travel_date="2024-09-05", travel_class="first")["travel_cost_list"]))
        for a, b in zip(codes, codes[1:])]
for leg in legs:
    print(leg.label(), leg, leg._replace(cost=0)._asdict())
total = sum((leg.cost for leg in legs), start=0.0)
final_answer({"legs": [leg.label() for leg in legs], "total": round(total, 2), "max": max(legs, key=lambda l: l.cost).label()})
"""),
    ("ptc_hn_ask_show_stats_divmod", "async", r"""
import asyncio

kinds = ["ask", "show", "top"]
lists = dict(zip(kinds, await asyncio.gather(*(tools.getStories(type=k, limit=10) for k in kinds))))
for kind, rows in lists.items():
    total = sum(r["descendants"] for r in rows)
    hours, minutes = divmod(total, 60)
    print(f"{kind:>5}: {len(rows)} stories, {total} comments ({hours}h{minutes:02d})")
ratio = {k: round(sum(r["score"] for r in v) / max(len(v), 1), 1) for k, v in lists.items()}
{"ratio": ratio, "empty": [k for k, v in lists.items() if not v], "any_rust": any("Rust" in r["title"] for r in lists["top"])}
"""),
    ("smol_print_sep_end_and_json_indent", "smol", r"""
import json

watch = get_watchlist()["watchlist"]
print("watch:", end=" ")
print(*watch, sep=", ", end=".\n")
added = add_to_watchlist(stock="MSFT")["watchlist"]
diff = sorted(set(added) - set(watch))
report = {"before": watch, "after": added, "new": diff, "nested": {"n": len(added), "ok": True, "none": None}}
print(json.dumps(report, indent=2, sort_keys=True))
print(json.dumps(report, separators=(",", ":")))
final_answer(report)
"""),
    ("ptc_dict_union_and_comprehension_filters", "async", r"""
import asyncio

symbols = ["AAPL", "GOOG", "TSLA", "MSFT"]
infos = dict(zip(symbols, await asyncio.gather(*[tools.get_stock_info(symbol=s) for s in symbols]), strict=True))
defaults = {"currency": "USD", "exchange": "NASDAQ"}
enriched = {s: defaults | {k: v for k, v in info.items() if not k.startswith("MA")} for s, info in infos.items()}
movers = {s for s, i in infos.items() if abs(i["percent_change"]) > 0.15}
ma_cross = [s for s, i in infos.items() if i["MA(5)"] < i["price"] < i["MA(20)"]]
print(sorted(movers), ma_cross)
enriched["TSLA"] |= {"note": "volatile"}
{"enriched": enriched, "movers": sorted(movers)}
"""),
    ("smol_leetcode_difficulty_buckets", "smol", r"""
from collections import defaultdict, OrderedDict

buckets = defaultdict(list)
for diff in ("EASY", "MEDIUM", "HARD"):
    res = search_problems(difficulty=diff, limit=10)
    for q in res["questions"]:
        buckets[diff].append((q["acRate"], q["title"]))
ordered = OrderedDict(sorted(buckets.items(), key=lambda kv: len(kv[1]), reverse=True))
for diff, rows in ordered.items():
    best = max(rows)
    print(f"{diff.capitalize():<7}{len(rows):>2}  best: {best[1]} ({best[0]:.1f}%)")
tags = sorted({t["slug"] for q in search_problems(tags="dynamic-programming")["questions"] for t in q["topicTags"]})
final_answer({"order": list(ordered), "tags": tags})
"""),
    ("smol_lru_cache_on_tool_helper", "smol", r"""
from functools import lru_cache

@lru_cache(maxsize=None)
def airport(city: str) -> str:
    print("lookup", city)
    return get_nearest_airport_by_city(location=city)["nearest_airport"]

trips = [("Boston", "London"), ("London", "Paris"), ("Boston", "Paris")]
codes = [(airport(a), airport(b)) for a, b in trips]
print(airport.cache_info().hits)
final_answer(codes)
"""),
    ("smol_walrus_in_comprehension_tool_calls", "smol", r"""
names = ["Apple", "Samsung", "Tesla", "Sony", "Nvidia"]
listed = [sym for n in names if (sym := get_symbol_by_name(name=n)["symbol"]) != "Stock not found"]
expensive = all(get_stock_info(symbol=s)["price"] > 100 for s in listed)
some_down = any(get_stock_info(symbol=s)["percent_change"] < 0 for s in listed)
print(listed, expensive, some_down)
final_answer({"listed": listed, "all_over_100": expensive, "any_down": some_down})
"""),
    ("smol_classmethod_from_api_property_str", "smol", r"""
class Story:
    def __init__(self, id, title, score, comments):
        self.id, self.title, self.score, self.comments = id, title, score, comments

    @classmethod
    def from_api(cls, data: dict) -> "Story":
        return cls(data["id"], data["title"], data["score"], data.get("descendants", 0))

    @property
    def ratio(self) -> float:
        return self.comments / self.score if self.score else 0.0

    def __str__(self):
        return f"{self.title[:25]:<25} {self.score:>5} pts {self.ratio:.2f} c/pt"

stories = [Story.from_api(d) for d in getStories(type="best", limit=4)]
for s in sorted(stories, key=lambda s: s.ratio, reverse=True):
    print(s)
final_answer({"most_discussed": max(stories, key=lambda s: s.ratio).id, "n": len(stories)})
"""),
    ("smol_recursive_pagination_and_setdefault", "smol", r"""
def collect(difficulty, skip=0, acc=None):
    acc = {} if acc is None else acc
    page = search_problems(difficulty=difficulty, limit=1, skip=skip)
    for q in page["questions"]:
        for tag in q["topicTags"]:
            acc.setdefault(tag["slug"], []).append(q["titleSlug"])
    if skip + 1 < page["total"]:
        return collect(difficulty, skip + 1, acc)
    return acc

tags = collect("MEDIUM")
print(len(tags), "tags")
final_answer({k: v for k, v in sorted(tags.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:3]})
"""),
    ("smol_str_format_and_format_map", "smol", r"""
info = get_stock_info(symbol="GOOG")
row = "{sym:<6}|{price:>{w}.2f}|{chg:+.1%}"
print(row.format(sym="GOOG", price=info["price"], chg=info["percent_change"] / 100, w=10))
print("{0} {1} {0}".format("a", "b"), "{:,}".format(1234567), "{!r:>8}".format("x"))
print("MA5={MA(5)} vol={volume}".replace("MA(5)", "ma5").format_map({"ma5": info["MA(5)"], "volume": info["volume"]}))
print("%-6s %8.2f %d%%" % ("GOOG", info["price"], 42))
final_answer(format(info["price"], "_.1f"))
"""),
    ("ptc_async_generator_async_for", "async", r"""
import asyncio

async def stories(ids):
    for i in ids:
        try:
            yield await tools.getStory(id=i)
        except ToolCallError:
            continue

titles = []
async for story in stories([40403, 12, 40405]):
    titles.append(story["title"])
lengths = [len(t) async for t in (s["title"] async for s in stories([40401, 40402]))] if False else []
print(titles)
{"titles": titles, "n": len(titles)}
"""),
    ("ptc_wait_for_gather_timeout", "async", r"""
import asyncio

symbols = ["AAPL", "TSLA", "NVDA"]
try:
    infos = await asyncio.wait_for(asyncio.gather(*(tools.get_stock_info(symbol=s) for s in symbols)), timeout=30)
except asyncio.TimeoutError:
    infos = []
prices = {s: i["price"] for s, i in zip(symbols, infos)}
orders = await asyncio.gather(*(tools.place_order(order_type="Buy", symbol=s, price=p, amount=2) for s, p in prices.items()))
print(*[f"{o['order_id']}:{o['status']}" for o in orders])
{"orders": [o["order_id"] for o in orders], "spent": round(sum(o["price"] * o["amount"] for o in orders), 2)}
"""),
    ("smol_exceptions_tuple_and_raise_from", "smol", r"""
class TradeError(Exception):
    pass

def buy(symbol, budget):
    try:
        info = get_stock_info(symbol=symbol)
    except (KeyError, Exception) as exc:
        raise TradeError(f"cannot price {symbol}") from exc
    shares = int(budget // info["price"])
    if shares == 0:
        raise TradeError(f"{symbol} too expensive: {info['price']}")
    return place_order(order_type="Buy", symbol=symbol, price=info["price"], amount=shares)

log = []
for sym, budget in [("AAPL", 1000), ("GOOG", 1000), ("NOPE", 50)]:
    try:
        o = buy(sym, budget)
        log.append((sym, o["amount"]))
    except TradeError as e:
        log.append((sym, str(e), e.__cause__ is not None))
print(*log, sep="\n")
final_answer(log)
"""),
    ("smol_pprint_and_global_counter", "smol", r"""
from pprint import pprint, pformat

CALLS = 0

def ticket(tid):
    global CALLS
    CALLS += 1
    return get_ticket(ticket_id=tid)

board = {}
for tid in range(1001, 1007):
    t = ticket(tid)
    board.setdefault(t["status"], []).append(t["id"])
pprint(board)
pprint({"calls": CALLS, "statuses": sorted(board)}, width=30)
final_answer(pformat(board, width=40).count("\n"))
"""),
    ("ptc_items_keys_as_attributes_on_results", "async", r"""
rates = {}
for target in ["EUR", "GBP"]:
    r = await tools.compute_exchange_rate(base_currency="USD", target_currency=target, value=1000)
    rates[target] = r["exchanged_value"]
res = await tools.search_wikipedia(query="python", limit=3)
for key, value in res.items():
    print(key, type(value).__name__)
print(list(rates.keys()), max(rates.values()))
{"rates": rates, "keys": sorted(res.keys())}
"""),
    ("smol_math_rounding_and_enumerate_zip", "smol", r"""
import math

prices = [get_stock_info(symbol=s)["price"] for s in ("AAPL", "MSFT", "NVDA")]
for i, (sym, p) in enumerate(zip(("AAPL", "MSFT", "NVDA"), prices), 1):
    print(i, sym, math.floor(p), math.ceil(p), round(p, -1), round(p), f"{p:.0f}")
lots = [math.ceil(5000 / p) for p in prices]
print(math.prod(lots), math.gcd(*lots), math.dist((0, 0), (3, 4)), round(2.5), round(3.5))
final_answer({"lots": lots, "cost": round(math.fsum(l * p for l, p in zip(lots, prices)), 2)})
"""),
    ("monty_print_json_default_str", "async", r"""
import json
from datetime import datetime, timezone

story = await getStory(id=40404)
record = {"id": story["id"], "posted": datetime.fromtimestamp(story["time"], timezone.utc), "tags": {"db", "release"}}
print(json.dumps(record, default=lambda o: sorted(o) if isinstance(o, set) else str(o), indent=1))
print(json.dumps({"t": story["title"]}, ensure_ascii=False))
"""),
    ("smol_tool_calls_inside_fstrings_and_conditionals", "smol", r"""
sym = "TSLA"
print(f"{sym}: {get_stock_info(symbol=sym)['price']:.2f} (nearest airport to Tokyo: {get_nearest_airport_by_city(location='Tokyo')['nearest_airport']})")
note = "up" if get_stock_info(symbol="AAPL")["percent_change"] > 0 else get_symbol_by_name(name="Apple")["symbol"]
assert get_watchlist()["watchlist"], "empty watchlist"
if (t := get_ticket(ticket_id=1002))["status"] != "Closed" and t["priority"] > 1:
    print("open ticket", t["id"], sep=" #")
ids = {get_symbol_by_name(name=n)["symbol"]: n for n in ("Google", "Nvidia")}
print(get_stock_info(symbol="GOOG")["price"] < get_stock_info(symbol="MSFT")["price"] * 10 < 5000)
final_answer({"note": note, "ids": ids})
"""),
    ("smol_class_with_methods_calling_tools", "smol", r"""
class Portfolio:
    '''A tiny portfolio that prices itself through the trading tools.'''

    def __init__(self, cash: float):
        self.cash = cash
        self.positions: dict[str, int] = {}

    def quote(self, symbol: str) -> float:
        return get_stock_info(symbol=symbol)["price"]

    def buy(self, symbol: str, amount: int) -> dict:
        price = self.quote(symbol)
        if price * amount > self.cash:
            raise ValueError(f"not enough cash for {amount} {symbol}")
        order = place_order(order_type="Buy", symbol=symbol, price=price, amount=amount)
        self.cash -= price * amount
        self.positions[symbol] = self.positions.get(symbol, 0) + amount
        return order

    def value(self) -> float:
        return round(self.cash + sum(self.quote(s) * n for s, n in self.positions.items()), 2)

p = Portfolio(cash=5000)
for sym, n in [("AAPL", 5), ("GOOG", 2), ("NVDA", 3)]:
    try:
        print(p.buy(sym, n)["order_id"])
    except ValueError as e:
        print("skipped:", e)
final_answer({"cash": round(p.cash, 2), "positions": p.positions, "value": p.value()})
"""),
    ("smol_itertools_tour_on_problems", "smol", r"""
from itertools import chain, islice, accumulate, pairwise, combinations, product

pages = [search_problems(limit=3, skip=s)["questions"] for s in (0, 3, 6)]
everything = list(chain.from_iterable(pages))
first_four = [q["titleSlug"] for q in islice(everything, 4)]
running = list(accumulate(q["acRate"] for q in everything))
jumps = [round(b["acRate"] - a["acRate"], 1) for a, b in pairwise(everything)]
hard = [q["title"] for q in everything if q["difficulty"] == "HARD"]
pairs = [f"{a[:5]}+{b[:5]}" for a, b in combinations(hard, 2)]
grid = list(product(["EASY", "HARD"], [1, 2]))
print(first_four, round(running[-1], 1), jumps[:3], pairs, grid[:2], sep="\n")
final_answer({"n": len(everything), "max_jump": max(jumps, key=abs)})
"""),
    ("smol_dataclass_post_init_replace_validation", "smol", r"""
from dataclasses import dataclass, field, replace

@dataclass
class Ticket:
    title: str
    priority: int = 1
    tags: list[str] = field(default_factory=list)

    def __post_init__(self):
        if not 1 <= self.priority <= 5:
            raise ValueError(f"priority {self.priority} out of range")
        self.title = self.title.strip().capitalize()

drafts = [Ticket("  checkout fails on safari ", 5, ["web"]), Ticket("slow dashboard", 3)]
try:
    drafts.append(Ticket("bad", 9))
except ValueError as e:
    print("rejected:", e)
created = [create_ticket(title=t.title, description=", ".join(t.tags) or "untagged", priority=t.priority) for t in drafts]
bumped = replace(drafts[1], priority=4)
print(bumped, drafts[1].priority)
final_answer([(c["id"], c["title"], c["description"]) for c in created])
"""),
    ("ptc_gather_return_exceptions_isinstance", "async", r"""
import asyncio

async def main():
    ids = [1003, 5, 1010, 77]
    results = await asyncio.gather(*(tools.get_ticket(ticket_id=i) for i in ids), return_exceptions=True)
    ok, failed = {}, {}
    for tid, res in zip(ids, results):
        if isinstance(res, Exception):
            failed[tid] = str(res).split(":", 1)[0]
        else:
            ok[tid] = res["status"]
    print(f"{len(ok)} ok, {len(failed)} failed")
    return {"ok": ok, "failed": failed}

asyncio.run(main())
"""),
    ("smol_enum_strenum_and_dict_dispatch", "smol", r"""
from enum import Enum, StrEnum, auto

class Kind(StrEnum):
    TOP = auto()
    BEST = auto()
    ASK = auto()

class Level(Enum):
    LOW = 1
    HIGH = 2

def level(score: int) -> Level:
    return Level.HIGH if score > 300 else Level.LOW

handlers = {
    Kind.TOP: lambda rows: [r["title"] for r in rows[:2]],
    Kind.BEST: lambda rows: [r["descendants"] for r in rows[:2]],
    Kind.ASK: lambda rows: len(rows),
}
out = {}
for kind in Kind:
    rows = getStories(type=kind.value, limit=5)
    out[str(kind)] = handlers[kind](rows)
    print(kind, kind.name, repr(kind.value), [level(r["score"]).name for r in rows][:3])
final_answer(out)
"""),
    ("smol_regex_split_fullmatch_flags", "smol", r"""
import re

text = copilot_readFile(filePath="/ws/src/app.py", startLine=1, endLine=14)
names = re.findall(r"^def (\w+)\(", text, flags=re.M)
comments = [c.strip() for c in re.split(r"\n\s*#", text)[1:]]
ok = [bool(re.fullmatch(r"[a-z_]+", n)) for n in names]
marks = re.findall(r"(?i)(todo|fixme)", text)
print(names, ok, [c.split("\n")[0] for c in comments], marks)
print(re.sub(r"\s+", " ", text)[:40], re.escape("a.b*c"), re.search(r"log\.(\w+)", text).span())
final_answer({"functions": names, "marks": [m.upper() for m in marks]})
"""),
    ("ptc_timeout_context_and_sleep_between_calls", "async", r"""
import asyncio
import time

start = time.monotonic()
done = []
async with asyncio.timeout(30):
    for city in ["Chicago", "Boston", "Rome"]:
        code = (await tools.get_nearest_airport_by_city(location=city))["nearest_airport"]
        done.append((city, code))
        await asyncio.sleep(0.01)  # be gentle with the API
elapsed = time.monotonic() - start
print(len(done), elapsed >= 0.02)
dict(done)
"""),
    ("smol_typing_everywhere_cast_final_annotated", "smol", r"""
from typing import Annotated, Any, Final, Optional, Union, cast

MAX_RESULTS: Final[int] = 2
Query = Annotated[str, "a wikipedia query"]

def lookup(q: Query, limit: Optional[int] = None) -> list[dict[str, Any]]:
    res = cast(dict[str, Any], search_wikipedia(query=q, limit=limit or MAX_RESULTS))
    return res["results"]

def first_title(rows: list[dict[str, Any]]) -> Union[str, None]:
    return rows[0]["title"] if rows else None

found: dict[str, Optional[str]] = {q: first_title(lookup(q)) for q in ["rust", "guido", "cobol"]}
print(found)
final_answer(found)
"""),
    ("monty_chained_awaits_and_nested_comprehensions", "async", r"""
top = await getStories(type="top", limit=3)
details = [await getStory(id=s["id"]) for s in top]
matrix = [[len(w) for w in d["title"].split()[:3]] for d in details]
flat = [n for row in matrix for n in row if n > 3]
by_host = {d["url"].split("/")[2]: [x["id"] for x in details if x["url"].split("/")[2] == d["url"].split("/")[2]] for d in details}
summary = {d["id"]: {"t": d["title"][:15], "ok": d["score"] > 400} for d in details}
(matrix, flat, by_host, summary)
"""),
    ("smol_match_class_patterns_dataclass", "smol", r"""
from dataclasses import dataclass
from typing import Literal, Optional

@dataclass(frozen=True)
class Quote:
    symbol: str
    price: float = 0.0
    change: float = 0.0

@dataclass(frozen=True)
class Missing:
    symbol: str
    reason: Optional[str] = None

def load(symbol: str) -> Quote | Missing:
    try:
        info = get_stock_info(symbol=symbol)
    except Exception as e:
        return Missing(symbol, str(e))
    return Quote(symbol, info["price"], info["percent_change"])

Signal = Literal["buy", "sell", "hold", "skip"]

def signal(item: Quote | Missing) -> Signal:
    match item:
        case Quote(change=c) if c > 0.2:
            return "buy"
        case Quote(symbol=s, change=c) if c < 0:
            print(f"{s} is down {c}")
            return "sell"
        case Quote():
            return "hold"
        case Missing(symbol=s, reason=r):
            print(f"skip {s}: {r}")
            return "skip"

final_answer({s: signal(load(s)) for s in ["NVDA", "TSLA", "AAPL", "ZZZZ"]})
"""),
    ("ptc_match_nested_positional_patterns", "async", r"""
import asyncio
from dataclasses import dataclass
from typing import NamedTuple

class Leg(NamedTuple):
    src: str
    dst: str

@dataclass
class Fare:
    leg: Leg
    cls: str
    cost: float

plan = [(Leg("SFO", "JFK"), c) for c in ("economy", "first")] + [(Leg("JFK", "LHR"), "first")]
quotes = await asyncio.gather(*(tools.get_flight_cost(travel_from=l.src, travel_to=l.dst, travel_date="2024-11-20", travel_class=c)
                                for l, c in plan))
fares = [Fare(l, c, min(q["travel_cost_list"])) for (l, c), q in zip(plan, quotes)]
notes = []
for fare in fares:
    match fare:
        case Fare(Leg("SFO", dst), "economy", cost):
            notes.append(f"cheap from SFO to {dst}: {cost}")
        case Fare(Leg(src=s) as leg, "first", cost) if cost > 2000:
            notes.append(f"{s}-{leg.dst} first is dear ({cost:,.0f})")
        case Fare(cls=c) as f:
            notes.append(f"{c}: {f.cost}")
print(*notes, sep="\n")
notes
"""),
    ("smol_partials_mapped_and_of_own_helpers", "smol", r"""
from functools import partial

to_eur = partial(compute_exchange_rate, "USD", "EUR")
eur = [r["exchanged_value"] for r in map(to_eur, [10, 20, 99.5])]
apple = partial(get_stock_info, "AAPL")

def convert(base, target, value):
    '''Convert `value` from `base` to `target` through the travel API.'''
    return compute_exchange_rate(base_currency=base, target_currency=target, value=value)["exchanged_value"]

from_usd = partial(convert, "USD")
print(eur, apple()["MA(5)"], to_eur(value=1)["exchanged_value"])
final_answer({"jpy": from_usd("JPY", 10), "gbp": from_usd(target="GBP", value=10), "eur": eur})
"""),
    ("smol_partial_of_a_partial_and_its_alias", "smol", r"""
import functools

from_usd = functools.partial(compute_exchange_rate, "USD")
to_eur = functools.partial(from_usd, "EUR")
convert = to_eur
print(to_eur(value=2)["exchanged_value"])
final_answer([convert(value=1), [r["exchanged_value"] for r in map(convert, [3, 4])]])
"""),
    ("smol_cached_tool_helper_parameters_and_negative_maxsize", "smol", r"""
import functools

@functools.lru_cache(maxsize=2, typed=True)
def airport(city):
    return get_nearest_airport_by_city(location=city)["nearest_airport"]

@functools.lru_cache(maxsize=-1)
def symbol(name):
    return get_symbol_by_name(name=name)["symbol"]

codes = [airport(c) for c in ["Boston", "London", "Boston"]]
names = [symbol(n) for n in ["Apple", "Apple"]]
print(airport.cache_parameters(), symbol.cache_info())
final_answer([codes, names, airport.cache_info().hits, symbol.cache_parameters()])
"""),
    ("smol_tool_handed_to_retry_helper_seeded_jitter", "smol", r"""
import random, time
random.seed(1234)

def with_jitter(fn, *args, retries=3, **kwargs):
    for attempt in range(retries):
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            wait = 0.001 * (2 ** attempt) + random.uniform(0, 0.001)
            print(f"retry {attempt + 1} after {type(exc).__name__}")
            time.sleep(wait)
    return None

a = with_jitter(get_summary, title="Rust (programming language)")
b = with_jitter(get_summary, title="Nope")
c = with_jitter(getStory, 40402)
final_answer({"a": a[:10], "b": b, "c": c["by"], "r": round(random.random(), 6)})
"""),    ("smol_generator_pages_yield_from", "smol", r"""
def paged(tags, page_size=2):
    skip = 0
    while True:
        page = search_problems(tags=tags, limit=page_size, skip=skip)
        yield from page["questions"]
        skip += page_size
        if skip >= page["total"]:
            return

final_answer([p["titleSlug"] for p in paged("dynamic-programming")][::2])
"""),
    ("smol_closure_factory_returned", "smol", r"""
def make_converter(base):
    calls = 0
    def convert(target, value):
        nonlocal calls
        calls += 1
        return compute_exchange_rate(base_currency=base, target_currency=target, value=value)["exchanged_value"]
    return convert

usd = make_converter("USD")
final_answer({"EUR": usd("EUR", 100), "JPY": usd("JPY", 100)})
"""),
]


@pytest.mark.parametrize(("name", "style", "script"), ROWS, ids=[r[0] for r in ROWS])
async def test_other_host_script_runs_as_in_cpython(mode: cm.CodeMode, name: str, style: str,
                                                    script: str) -> None:
    await _runs_as_in_cpython(mode, script, style)


# (name, style, script the sandbox refuses, what the message must say, the script
# rewritten as the message says): refused before any call, and the rewrite runs as in
# CPython (one round)
REFUSED: list[tuple[str, str, str, str, str]] = [
    ("monty_zoneinfo_meeting_times", "async", r"""
import json
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

now = datetime.fromisoformat(json.loads(await get_current_time(timezone="Asia/Tokyo"))["datetime"])
meeting = now.replace(hour=9, minute=0) + timedelta(days=1)
{tz: meeting.astimezone(ZoneInfo(tz)).isoformat() for tz in ["UTC", "Asia/Tokyo"]}
""", "use a fixed offset, `datetime.timezone(datetime.timedelta(hours=2))`", r"""
import json
from datetime import datetime, timedelta, timezone

now = datetime.fromisoformat(json.loads(await get_current_time(timezone="Asia/Tokyo"))["datetime"])
meeting = now.replace(hour=9, minute=0) + timedelta(days=1)
zones = {"UTC": timezone.utc, "Asia/Tokyo": timezone(timedelta(hours=9))}
{tz: meeting.astimezone(z).isoformat() for tz, z in zones.items()}
"""),
    ("ptc_except_star_taskgroup", "async", r"""
import asyncio

try:
    async with asyncio.TaskGroup() as tg:
        ok = tg.create_task(tools.get_ticket(ticket_id=1004))
        tg.create_task(tools.get_ticket(ticket_id=2))
except* ToolCallError as eg:
    print(len(eg.exceptions), "ticket lookups failed")
ok.done()
""", "`except*` is not available in the sandbox: write `except ExceptionGroup as eg:` and test its members", r"""
import asyncio

try:
    async with asyncio.TaskGroup() as tg:
        ok = tg.create_task(tools.get_ticket(ticket_id=1004))
        tg.create_task(tools.get_ticket(ticket_id=2))
except ExceptionGroup as eg:
    failed = [e for e in eg.exceptions if isinstance(e, ToolCallError)]
    print(len(failed), "ticket lookups failed")
ok.done()
"""),
    ("smol_thread_pool_map", "smol", r"""
from concurrent.futures import ThreadPoolExecutor

ids = [40401, 40404, 40406]
with ThreadPoolExecutor(max_workers=3) as pool:
    stories = list(pool.map(lambda i: getStory(id=i), ids))
final_answer({s["id"]: s["score"] for s in stories})
""", "tool calls run concurrently through asyncio, not threads: `results = await asyncio.gather(*[tools.<name>(...) for x in items])`", r"""
import asyncio

ids = [40401, 40404, 40406]
stories = await asyncio.gather(*[tools.getStory(id=i) for i in ids])
final_answer({s["id"]: s["score"] for s in stories})
"""),
]


@pytest.mark.parametrize(("name", "style", "script", "says", "fixed"), REFUSED,
                         ids=[r[0] for r in REFUSED])
async def test_a_refused_script_says_the_one_round_fix(mode: cm.CodeMode, name: str, style: str,
                                                      script: str, says: str, fixed: str) -> None:
    refused = await mode.run(script)
    assert refused.error is not None
    assert refused.error.type == "PreflightError", refused.error
    assert says in refused.error.message, refused.error.message
    assert refused.calls == ()
    await _runs_as_in_cpython(mode, fixed, style)


async def test_a_cached_async_def_caches_values_not_coroutines(mode: cm.CodeMode) -> None:
    """``@lru_cache`` over an ``async def`` (what a smol-style cached helper becomes):
    a hit is awaitable again and gives the value without a call; a failure is not kept;
    what the script holds is a coroutine like its own (no frame, nothing to drive)."""
    run = await mode.run(r"""
import asyncio, functools

@functools.lru_cache(maxsize=8)
async def info(sym):
    return await tools.get_stock_info(symbol=sym)

first = await info("AAPL")
again = await info("AAPL")
both = await asyncio.gather(info("AAPL"), info("TSLA"))
failed = []
for _ in range(2):
    try:
        await info("NOPE")
    except ToolCallError as e:
        failed.append(e.message)
held = info("AAPL")
try:
    getattr(held, "cr_frame")
    frame = "reached"
except AttributeError:
    frame = "hidden"
await held
print(held, info.cache_info())
[first == again == both[0], both[1]["price"], len(failed), frame]
""")
    assert run.error is None, run.error
    assert run.value == [True, FUNCTIONS["get_stock_info"]("TSLA")["price"], 2, "hidden"]
    assert [c.arguments["symbol"] for c in run.calls] == ["AAPL", "TSLA", "NOPE", "NOPE"]
    assert run.output == "<coroutine info> CacheInfo(hits=3, misses=4, maxsize=8, currsize=2)\n"


async def test_a_method_named_like_a_field_says_to_rename_it(mode: cm.CodeMode) -> None:
    """A smol-style class whose tool-calling method shares its name with another object's
    field (``Api.price(s)`` and ``q.price``): the two reads cannot be told apart, so the
    method is not made async; the message says to rename it, and the renamed script runs
    as in CPython."""
    script = r"""
from dataclasses import dataclass

@dataclass
class Q:
    symbol: str
    price: float

class Api:
    @staticmethod
    def {method}(sym):
        return get_stock_info(symbol=sym)["price"]

qs = [Q(s, Api.{method}(s)) for s in ["AAPL", "TSLA"]]
final_answer([q.price for q in qs])
"""
    refused = await mode.run(script.replace("{method}", "price"))
    assert refused.error is not None and refused.calls == ()
    assert ("if `.price` there is another object's attribute, give the method a name of its "
            "own") in refused.error.message
    await _runs_as_in_cpython(mode, script.replace("{method}", "quote"), "smol")
