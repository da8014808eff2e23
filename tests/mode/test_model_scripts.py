"""Scripts as real models write them for other Code Mode hosts, each run next to CPython.

A corpus in the styles models bring: smolagents' CodeAgent (bare sync-style tool calls,
``final_answer``, print-heavy), Anthropic's programmatic tool calling and Cloudflare's
code mode in Python (``async def main()``, ``asyncio.gather``, ``asyncio.run(main())``),
and pydantic-ai / Monty (top-level ``await``, dataclasses, classes, ``match``, walrus,
generators, closures, the stdlib stand-ins). Every row runs through ``CodeMode`` and
through CPython, whose ``tools`` (async, keyword arguments) and bare tool functions
(sync, positional too) wrap the same handlers: the values and the printed output must be
equal. The second table is what the sandbox refuses, with the message that lets a model
fix its script in one round, found before any tool runs.
"""

# ruff: noqa: E501 - the rows are scripts as models write them, long lines included

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm
from codemode.sandbox.language.facades import FACADE_NAMES
from tests.mode.cpython_side import final_answer, run_in_cpython

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

pytestmark = pytest.mark.anyio

USERS = {1: ("Ada Lovelace", "ada@example.com", "2023-03-14", "gold"),
         2: ("Alan Turing", "alan@example.org", "2024-01-02", "silver"),
         3: ("Grace Hopper", "grace@example.com", "2022-11-30", "gold"),
         4: ("Linus T", "linus@example.net", "2024-06-01", "bronze")}
ORDERS = {uid: [{"id": uid * 100 + i, "total": round(9.5 * i + uid, 2),
                 "status": ["paid", "shipped", "refunded"][i % 3],
                 "date": f"2024-0{1 + i % 9}-1{i % 10}"} for i in range(uid * 2 + 1)]
          for uid in USERS}
FILES = {"data/sales.csv": "region,amount\nnorth,120\nsouth,80\nnorth,45\neast,300\nsouth,20\n",
         "config.json": '{"retries": 3, "regions": ["north", "south"], "debug": false}',
         "app.log": "2024-05-01 10:00:01 INFO start\n2024-05-01 10:00:05 ERROR db timeout\n"
                    "2024-05-01 10:01:00 WARN slow\n2024-05-01 10:02:00 ERROR db timeout\n"
                    "2024-05-01 10:03:00 INFO done\n"}


def search(query: str, limit: int = 5) -> list[dict[str, Any]]:
    """Web search; returns [{title, url, snippet}]."""
    first = (query.split() or ["x"])[0]
    return [{"title": f"{query.title()} result {i}", "url": f"https://ex.com/{first}/{i}",
             "snippet": f"About {query}: fact number {i * 7}."} for i in range(1, limit + 1)]


def get_user(user_id: int) -> dict[str, Any]:
    """Get a user by id."""
    if user_id not in USERS:
        raise LookupError(f"no user {user_id}")
    name, email, signup, tier = USERS[user_id]
    return {"id": user_id, "name": name, "email": email, "signup": signup, "tier": tier}


def list_users() -> list[dict[str, Any]]:
    """All users (id and name)."""
    return [{"id": i, "name": u[0]} for i, u in USERS.items()]


def list_orders(user_id: int, page: int = 1, page_size: int = 2) -> dict[str, Any]:
    """One page of a user's orders; next_page is None on the last page."""
    rows = ORDERS.get(user_id, [])
    start = (page - 1) * page_size
    return {"orders": rows[start:start + page_size],
            "next_page": page + 1 if start + page_size < len(rows) else None}


def get_weather(city: str, units: str = "metric") -> dict[str, Any]:
    """Current weather of a city."""
    temp: float = 5 + 3 * len(city)
    if units == "imperial":
        temp = temp * 9 / 5 + 32
    return {"city": city, "temperature": temp,
            "condition": ["sunny", "rain", "cloudy"][len(city) % 3], "humidity": 40 + len(city)}


def read_file(path: str) -> str:
    """Read a text file of the workspace."""
    if path not in FILES:
        raise FileNotFoundError(path)
    return FILES[path]


def send_message(args: dict[str, Any]) -> dict[str, Any]:
    return {"sent": True, "to": args["to"], "chars": len(args["body"])}


TOOLS: list[Callable[..., Any]] = [search, get_user, list_users, list_orders, get_weather,
                                   read_file]


def registry() -> cm.ToolRegistry:
    reg = cm.ToolRegistry()
    for fn in TOOLS:
        reg.register(cm.tool(fn))
    reg.register(cm.define_tool(
        name="send_message", description="Send a chat message.",
        parameters={"to": {"type": "string", "required": True},
                    "body": {"type": "string", "required": True}},
        execute=send_message))
    return reg


# -- CPython's side -------------------------------------------------------------------------


class CPythonToolError(Exception):
    """What a failed call raises in CPython (the sandbox's ``ToolCallError``)."""


def _as_tool(fn: Callable[..., Any], json_text: bool = False) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:
            raise CPythonToolError(f"{type(exc).__name__}: {exc}") from None
        return json.dumps(value) if json_text else value
    return call


def _as_async_tool(fn: Callable[..., Any], json_text: bool = False) -> Callable[..., Any]:
    sync = _as_tool(fn, json_text)

    async def call(**kwargs: Any) -> Any:
        return sync(**kwargs)
    return call


def _namespace(json_text: bool = False) -> dict[str, Any]:
    """The CPython side's globals; ``json_text``: tools answer JSON text, as a host of
    Anthropic's programmatic tool calling does."""
    functions = {fn.__name__: fn for fn in TOOLS}
    functions["send_message"] = lambda **kw: send_message(kw)
    tools = type("Tools", (), {})()
    namespace: dict[str, Any] = {"__name__": "__main__", "ToolCallError": CPythonToolError,
                                 "tools": tools}
    for name, fn in functions.items():
        setattr(tools, name, _as_async_tool(fn, json_text))
        namespace[name] = _as_tool(fn, json_text)

    namespace["final_answer"] = final_answer
    return namespace


def cpython(script: str, json_text: bool = False) -> tuple[Any, str]:
    """The row in CPython (see :func:`run_in_cpython`)."""
    return run_in_cpython(script, _namespace(json_text))


@pytest.fixture(scope="module")
async def executor() -> AsyncIterator[cm.InProcessExecutor]:
    async with cm.InProcessExecutor() as impl:
        yield impl


@pytest.fixture
def mode(executor: cm.InProcessExecutor) -> cm.CodeMode:
    return cm.CodeMode(registry(), executor=executor)


# -- the corpus -----------------------------------------------------------------------------

CORPUS: list[tuple[str, str]] = []


def s(name: str, script: str) -> None:
    CORPUS.append((name, script.strip("\n") + "\n"))


# ---------------- smolagents CodeAgent style ----------------
s("smol_search_print", '''
results = search(query="python asyncio tutorial", limit=3)
for r in results:
    print(r["title"], "-", r["url"])
final_answer(results[0]["url"])
''')

s("smol_users_regex", '''
import re
emails = []
for uid in [1, 2, 3, 4]:
    user = get_user(user_id=uid)
    m = re.match(r"(?P<local>[^@]+)@(?P<domain>.+)", user["email"])
    emails.append((m.group("local"), m.group("domain")))
    print(f"User {uid}: {user['name']:<15} {m['domain']}")
domains = sorted({d for _, d in emails})
final_answer({"domains": domains, "count": len(emails)})
''')

s("smol_paging_while", '''
all_orders = []
page = 1
while True:
    resp = list_orders(user_id=3, page=page)
    all_orders.extend(resp["orders"])
    print(f"page {page}: {len(resp['orders'])} orders")
    if resp["next_page"] is None:
        break
    page = resp["next_page"]
total = sum(o["total"] for o in all_orders)
final_answer(f"Grace has {len(all_orders)} orders totalling ${total:,.2f}")
''')

s("smol_counter_statuses", '''
from collections import Counter, defaultdict
import statistics
statuses = Counter()
by_status = defaultdict(list)
for uid in range(1, 5):
    page = 1
    while page:
        data = list_orders(uid, page)
        for o in data["orders"]:
            statuses[o["status"]] += 1
            by_status[o["status"]].append(o["total"])
        page = data["next_page"]
print(statuses.most_common())
summary = {k: round(statistics.mean(v), 2) for k, v in sorted(by_status.items())}
print("mean by status:", summary)
final_answer(summary)
''')

s("smol_weather_compare", '''
cities = ["Paris", "Tokyo", "Lima", "Reykjavik"]
temps = {}
for city in cities:
    w = get_weather(city)
    temps[city] = w["temperature"]
    print(f"{city}: {w['temperature']}°C, {w['condition']}")
warmest = max(temps, key=temps.get)
coldest = min(temps.items(), key=lambda kv: kv[1])[0]
final_answer(f"Warmest: {warmest} ({temps[warmest]}°C); coldest: {coldest}")
''')

s("smol_csv_parse", '''
text = read_file("data/sales.csv")
lines = text.strip().split("\\n")
header = lines[0].split(",")
rows = [dict(zip(header, line.split(","))) for line in lines[1:]]
totals = {}
for row in rows:
    totals[row["region"]] = totals.get(row["region"], 0) + int(row["amount"])
print(totals)
best = sorted(totals.items(), key=lambda x: -x[1])
final_answer(best)
''')

s("smol_json_config", '''
import json
config = json.loads(read_file("config.json"))
print(json.dumps(config, indent=2, sort_keys=True))
config["retries"] += 1
config.setdefault("timeout", 30)
final_answer(json.dumps(config, sort_keys=True))
''')

s("smol_log_errors", '''
import re
from collections import Counter
log = read_file("app.log")
pattern = re.compile(r"^(\\S+) (\\S+) (INFO|WARN|ERROR) (.*)$", re.MULTILINE)
levels = Counter(m.group(3) for m in pattern.finditer(log))
errors = [m.group(4) for m in pattern.finditer(log) if m.group(3) == "ERROR"]
print("levels:", dict(levels))
print("unique errors:", set(errors))
final_answer({"levels": dict(levels), "errors": sorted(set(errors))})
''')

s("smol_try_missing_file", '''
for path in ["missing.txt", "config.json"]:
    try:
        content = read_file(path)
        print(f"read {path}: {len(content)} chars")
        break
    except Exception as e:
        print(f"could not read {path}")
final_answer(path)
''')

s("smol_datetime_signup", '''
import datetime
today = datetime.date(2024, 7, 1)
ages = {}
for uid in [1, 2, 3]:
    u = get_user(uid)
    signup = datetime.datetime.strptime(u["signup"], "%Y-%m-%d").date()
    ages[u["name"]] = (today - signup).days
    print(u["name"], "joined", signup.strftime("%B %d, %Y"), "-", ages[u["name"]], "days ago")
oldest = max(ages, key=ages.get)
final_answer(oldest)
''')

s("smol_math_stats", '''
import math, statistics
temps = [get_weather(c)["temperature"] for c in ["Rome", "Oslo", "Cairo", "Bogota", "Seoul"]]
mu = statistics.mean(temps)
sd = statistics.stdev(temps)
print(f"mean={mu:.2f} sd={sd:.3f} median={statistics.median(temps)}")
z = [round((t - mu) / sd, 3) for t in temps]
final_answer({"z": z, "hyp": round(math.hypot(3, 4), 1), "ceil": math.ceil(mu), "isclose": math.isclose(sum(z), 0, abs_tol=1e-9)})
''')

s("smol_itertools", '''
import itertools
users = list_users()
pairs = list(itertools.combinations([u["name"].split()[0] for u in users], 2))
print(len(pairs), "pairs")
first_three = list(itertools.islice(itertools.cycle("AB"), 5))
chained = list(itertools.chain.from_iterable([[1, 2], [3], []]))
acc = list(itertools.accumulate([1, 2, 3, 4]))
final_answer({"pairs": pairs[:3], "cycle": first_three, "chain": chained, "acc": acc})
''')

s("smol_groupby", '''
from itertools import groupby
from operator import itemgetter
orders = []
for uid in [1, 2]:
    orders += list_orders(uid, 1, 10)["orders"]
orders.sort(key=itemgetter("status"))
grouped = {k: [o["id"] for o in g] for k, g in groupby(orders, key=itemgetter("status"))}
print(grouped)
final_answer(grouped)
''')

s("smol_string_methods", '''
results = search("climate change effects", limit=4)
titles = [r["title"] for r in results]
print("\\n".join(f"{i}. {t}" for i, t in enumerate(titles, 1)))
snippet = results[0]["snippet"]
words = snippet.lower().replace(":", "").replace(".", "").split()
caps = " ".join(w.capitalize() for w in words)
final_answer({"caps": caps, "starts": snippet.startswith("About"), "count": snippet.count("a"),
              "title": titles[-1].upper().center(30, "*"), "strip": "  x  ".strip(), "part": snippet.partition(":")[2].strip()})
''')

s("smol_percent_format", '''
u = get_user(2)
line = "%s <%s> tier=%-8s|" % (u["name"], u["email"], u["tier"])
num = "%05.1f%%" % 42.123
hexs = "%x %o %e" % (255, 8, 12345.678)
print(line)
final_answer([line, num, hexs, "%(name)s is %(tier)s" % u])
''')

s("smol_str_format", '''
u = get_user(1)
msg = "{name} ({id}) signed up on {signup}".format(**u)
tbl = "{:>6}|{:^8}|{:<6}".format("a", "b", "c")
num = "{:,.3f} {:08.2f} {:+d} {:.1%} {:e}".format(1234567.891, 3.14159, 5, 0.256, 1234.5)
pos = "{0} {1} {0}".format("x", "y")
final_answer([msg, tbl, num, pos, "{:b}".format(10), format(1234.5, ",.1f")])
''')

s("smol_random_seed", '''
import random
random.seed(42)
users = list_users()
pick = random.choice(users)
random.shuffle(users)
nums = [random.randint(1, 100) for _ in range(5)]
final_answer({"pick": pick["id"], "order": [u["id"] for u in users], "nums": nums, "r": round(random.random(), 6)})
''')

s("smol_textwrap", '''
import textwrap
r = search("large language models", 1)[0]
text = r["snippet"] * 3
wrapped = textwrap.wrap(text, width=30)
print(textwrap.fill(text, width=40))
short = textwrap.shorten(text, width=40, placeholder="...")
final_answer({"lines": len(wrapped), "short": short, "indent": textwrap.indent("a\\nb", "> "), "dedent": textwrap.dedent("   x\\n   y")})
''')

s("smol_no_final_answer_print", '''
user = get_user(user_id=4)
print(user)
print(f"Name: {user['name']!r}, tier: {user['tier']}")
user
''')

s("smol_positional_dialect", '''
w = get_weather("Berlin", "imperial")
print(round(w["temperature"], 1))
final_answer(round(w["temperature"], 1))
''')

s("smol_send_message", '''
u = get_user(3)
body = f"Hi {u['name'].split()[0]}, your tier is {u['tier']}."
res = send_message(to=u["email"], body=body)
print(res)
final_answer(res)
''')

s("smol_namedtuple", '''
from collections import namedtuple
City = namedtuple("City", ["name", "temp", "cond"])
rows = [City(c, **{k: v for k, v in [("temp", get_weather(c)["temperature"]), ("cond", get_weather(c)["condition"])]}) for c in ["Nice", "Bern"]]
hot = [c.name for c in rows if c.temp > 15]
print(rows[0])
final_answer({"hot": hot, "first": rows[0]._asdict(), "repr": repr(rows[1])})
''')

s("smol_deque_window", '''
from collections import deque
window = deque(maxlen=3)
out = []
for c in ["A", "Bb", "Ccc", "Dddd", "Eeeee"]:
    window.append(get_weather(c)["temperature"])
    out.append(round(sum(window) / len(window), 2))
window.rotate(1)
final_answer({"moving": out, "window": list(window), "left": window[0]})
''')

s("smol_enumerate_zip", '''
users = list_users()
names = [u["name"] for u in users]
ids = [u["id"] for u in users]
table = []
for rank, (i, n) in enumerate(zip(ids, names), start=1):
    table.append(f"{rank:>2}. #{i:03d} {n}")
print(*table, sep="\\n")
final_answer(list(zip(*[(1, "a"), (2, "b")])))
''')

s("smol_dict_sorting", '''
users = [get_user(i) for i in range(1, 5)]
by_tier = sorted(users, key=lambda u: ({"gold": 0, "silver": 1, "bronze": 2}[u["tier"]], u["name"]))
names = [u["name"] for u in by_tier]
rev = sorted(names, key=len, reverse=True)
inverted = {v: k for k, v in {u["id"]: u["name"] for u in users}.items()}
final_answer({"by_tier": names, "longest": rev[0], "inv": inverted["Ada Lovelace"]})
''')

s("smol_slicing", '''
results = search("quantum computing", limit=5)
urls = [r["url"] for r in results]
final_answer({"first2": urls[:2], "last": urls[-1], "every_other": urls[::2], "rev": urls[::-1][:1],
              "sub": urls[0][8:14], "neg": urls[0][-3:]})
''')

s("main_gather", '''
import asyncio

async def main():
    users = await tools.list_users()
    details = await asyncio.gather(*[tools.get_user(user_id=u["id"]) for u in users])
    gold = [d["name"] for d in details if d["tier"] == "gold"]
    print(f"{len(gold)} gold users")
    return {"gold": gold}

asyncio.run(main())
''')

s("main_await_main", '''
import asyncio

async def fetch_all_orders(user_id: int) -> list[dict]:
    orders, page = [], 1
    while page is not None:
        resp = await tools.list_orders(user_id=user_id, page=page, page_size=2)
        orders.extend(resp["orders"])
        page = resp["next_page"]
    return orders

async def main():
    ids = [1, 2, 3]
    all_orders = await asyncio.gather(*(fetch_all_orders(i) for i in ids))
    return {str(i): len(o) for i, o in zip(ids, all_orders)}

await main()
''')

s("main_semaphore", '''
import asyncio

sem = asyncio.Semaphore(2)

async def weather(city):
    async with sem:
        w = await tools.get_weather(city=city)
        return city, w["temperature"]

async def main():
    pairs = await asyncio.gather(*[weather(c) for c in ["Oslo", "Rome", "Lagos", "Quito"]])
    return dict(sorted(pairs, key=lambda p: p[1], reverse=True))

result = await main()
result
''')

s("main_return_exceptions", '''
import asyncio

async def main():
    ids = [1, 2, 99, 3]
    results = await asyncio.gather(*[tools.get_user(user_id=i) for i in ids], return_exceptions=True)
    ok, failed = [], []
    for i, r in zip(ids, results):
        if isinstance(r, Exception):
            failed.append(i)
        else:
            ok.append(r["name"])
    return {"ok": ok, "failed": failed}

asyncio.run(main())
''')

s("main_try_finally", '''
log = []

async def main():
    try:
        u = await tools.get_user(user_id=42)
        log.append("found")
    except Exception as e:
        log.append("missing")
        return {"error": True, "log": log}
    finally:
        log.append("done")

await main()
''')

s("main_wait_for", '''
import asyncio

async def main():
    try:
        w = await asyncio.wait_for(tools.get_weather(city="Delhi"), timeout=5)
    except asyncio.TimeoutError:
        return "timeout"
    return f"{w['city']}: {w['condition']}"

if __name__ == "__main__":
    out = asyncio.run(main())
out
''')

s("main_create_task", '''
import asyncio

async def main():
    t1 = asyncio.create_task(tools.get_weather(city="Madrid"))
    t2 = asyncio.create_task(tools.search(query="madrid events", limit=2))
    w, hits = await t1, await t2
    return {"temp": w["temperature"], "events": [h["title"] for h in hits]}

asyncio.run(main())
''')

s("main_json_result", '''
import json

async def main():
    users = await tools.list_users()
    rows = []
    for u in users:
        page = await tools.list_orders(user_id=u["id"], page=1, page_size=50)
        rows.append({"user": u["name"], "spent": round(sum(o["total"] for o in page["orders"]), 2)})
    rows.sort(key=lambda r: r["spent"], reverse=True)
    print(json.dumps(rows[:2], indent=1))
    return rows

await main()
''')

s("main_helper_chain", '''
import asyncio
from typing import Any

async def enrich(user: dict[str, Any]) -> dict[str, Any]:
    orders = (await tools.list_orders(user_id=user["id"], page_size=100))["orders"]
    return {**user, "orders": len(orders), "refunds": sum(1 for o in orders if o["status"] == "refunded")}

async def main() -> list[dict[str, Any]]:
    users = await asyncio.gather(*[tools.get_user(user_id=i) for i in (1, 2, 3, 4)])
    enriched = await asyncio.gather(*map(enrich, users))
    return [{"name": e["name"], "refunds": e["refunds"]} for e in enriched if e["refunds"]]

asyncio.run(main())
''')

s("main_gather_dict_items", '''
import asyncio

async def main():
    cities = {"fr": "Paris", "jp": "Tokyo", "pe": "Lima"}
    keys = list(cities)
    results = await asyncio.gather(*(tools.get_weather(city=cities[k]) for k in keys))
    return {k: r["condition"] for k, r in zip(keys, results)}

asyncio.run(main())
''')

s("main_async_with_lock", '''
import asyncio
lock = asyncio.Lock()
counter = {"n": 0}

async def bump(uid):
    u = await tools.get_user(user_id=uid)
    async with lock:
        counter["n"] += len(u["name"])

async def main():
    await asyncio.gather(*[bump(i) for i in [1, 2, 3]])
    return counter["n"]

asyncio.run(main())
''')

s("main_sleep_retry", '''
import asyncio

async def with_retry(fn, *, attempts=3, **kwargs):
    last = None
    for n in range(attempts):
        try:
            return await fn(**kwargs)
        except Exception as e:
            last = e
            await asyncio.sleep(0.001 * (2 ** n))
    raise RuntimeError(f"failed after {attempts} attempts") from last

async def main():
    ok = await with_retry(tools.get_user, user_id=2)
    try:
        await with_retry(tools.get_user, user_id=77, attempts=2)
        bad = None
    except RuntimeError as e:
        bad = str(e)
    return {"ok": ok["name"], "bad": bad}

asyncio.run(main())
''')

# ---------------- pydantic-ai / Monty style ----------------
s("monty_dataclass", '''
from dataclasses import dataclass, field

@dataclass
class Summary:
    name: str
    orders: int = 0
    tags: list[str] = field(default_factory=list)

summaries = []
for uid in [1, 2]:
    user = await tools.get_user(user_id=uid)
    page = await tools.list_orders(user_id=uid, page_size=100)
    summaries.append(Summary(user["name"], len(page["orders"]), [user["tier"]]))
[repr(s) for s in summaries] + [summaries[0] == Summary("Ada Lovelace", 3, ["gold"])]
''')

s("monty_walrus_match", '''
events = []
for uid in [1, 2, 3, 4]:
    user = await tools.get_user(user_id=uid)
    match user:
        case {"tier": "gold", "name": name}:
            events.append(f"VIP {name}")
        case {"tier": "silver" | "bronze" as t}:
            events.append(t)
        case _:
            events.append("?")
if (n := len(events)) > 3:
    events.append(f"total {n}")
events
''')

s("monty_class_props", '''
class Account:
    fee = 0.5

    def __init__(self, user: dict, orders: list[dict]):
        self.user = user
        self._orders = orders

    @property
    def total(self) -> float:
        return round(sum(o["total"] for o in self._orders), 2)

    @property
    def net(self):
        return round(self.total - self.fee * len(self._orders), 2)

    def __repr__(self):
        return f"Account({self.user['name']!r}, total={self.total})"

    def __eq__(self, other):
        return isinstance(other, Account) and self.total == other.total

    def __lt__(self, other):
        return self.total < other.total

accounts = []
for uid in (1, 2, 3):
    u = await tools.get_user(user_id=uid)
    o = (await tools.list_orders(user_id=uid, page_size=99))["orders"]
    accounts.append(Account(u, o))
best = max(accounts)
[repr(best), best.net, sorted(accounts)[0].user["name"], accounts[0] == accounts[0]]
''')

s("monty_inheritance_super", '''
class Shape:
    def __init__(self, name):
        self.name = name
    def area(self):
        raise NotImplementedError
    def describe(self):
        return f"{self.name} with area {self.area():.2f}"

class Rect(Shape):
    def __init__(self, w, h):
        super().__init__("rect")
        self.w, self.h = w, h
    def area(self):
        return self.w * self.h

class Square(Rect):
    def __init__(self, side):
        super().__init__(side, side)
        self.name = "square"
    def describe(self):
        return super().describe().upper()

shapes = [Rect(2, 3.5), Square(3)]
try:
    Shape("x").area()
    err = None
except NotImplementedError:
    err = "abstract"
[s.describe() for s in shapes] + [err, isinstance(shapes[1], Shape), issubclass(Square, Rect)]
''')

s("monty_generators", '''
def paginate(user_id):
    page = 1
    while page is not None:
        yield page
        page = page + 1 if page < 3 else None

def chunks(seq, n):
    for i in range(0, len(seq), n):
        yield seq[i:i + n]

orders = []
for p in paginate(3):
    resp = await tools.list_orders(user_id=3, page=p)
    orders.extend(resp["orders"])
gen = (o["total"] for o in orders)
[list(chunks([o["id"] for o in orders], 4)), round(sum(gen), 2), next(iter(chunks("abc", 2)))]
''')

s("monty_closures_nonlocal", '''
def make_counter():
    count = 0
    def inc(by=1):
        nonlocal count
        count += by
        return count
    return inc

def memo(fn):
    cache = {}
    def wrapper(n):
        if n not in cache:
            cache[n] = fn(n)
        return cache[n]
    return wrapper

@memo
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

c = make_counter()
c(); c(5)
[c(), fib(30)]
''')

s("monty_functools", '''
from functools import reduce, partial, lru_cache, wraps
import operator

def logged(fn):
    @wraps(fn)
    def inner(*a, **k):
        return fn(*a, **k)
    return inner

@logged
def add(a, b):
    return a + b

@lru_cache(maxsize=None)
def ways(n):
    return 1 if n <= 1 else ways(n - 1) + ways(n - 2)

pow2 = partial(pow, 2)
[reduce(operator.mul, range(1, 6)), pow2(10), ways(40), add(2, 3), add.__name__]
''')

s("monty_fstring_specs", '''
w = await tools.get_weather(city="Amsterdam")
t = w["temperature"]
width = 10
[f"{t:.1f}", f"{t:>{width}}", f"{w['city']!r:^20}", f"{1234567:,}", f"{0.5:%}", f"{255:#x}", f"{42:08b}",
 f"{t=}", f"{'x' * 3}", f"{3.14159:.{2}f}", f"{-5:+}", f"{1e6:_.0f}", f"{'a':*<5}"]
''')

s("monty_dict_set_comprehension", '''
users = await tools.list_users()
by_initial = {}
for u in users:
    by_initial.setdefault(u["name"][0], []).append(u["id"])
lengths = {u["name"]: len(u["name"]) for u in users if len(u["name"]) > 8}
initials = {u["name"][0] for u in users}
nested = [[i * j for j in range(3)] for i in range(3)]
flat = [x for row in nested for x in row if x]
{"by_initial": by_initial, "lengths": lengths, "initials": sorted(initials), "flat": flat,
 "merged": {**lengths, "extra": 1} | {"more": 2}}
''')

s("monty_datetime_arith", '''
from datetime import datetime, timedelta, date, timezone
orders = (await tools.list_orders(user_id=2, page_size=50))["orders"]
dates = sorted(datetime.strptime(o["date"], "%Y-%m-%d") for o in orders)
gaps = [(b - a).days for a, b in zip(dates, dates[1:])]
start = datetime(2024, 1, 31, 12, 0, tzinfo=timezone.utc)
later = start + timedelta(days=1, hours=36)
[gaps, later.isoformat(), later.weekday(), (date(2024, 12, 25) - date(2024, 1, 1)).days,
 dates[0].strftime("%a %d %b"), timedelta(hours=50).total_seconds(), str(timedelta(minutes=90)),
 date.fromisoformat("2024-02-29").replace(year=2028).isoformat(), start.date().isocalendar()[1]]
''')

s("monty_sorted_multi_key", '''
orders = []
for uid in (1, 2, 3):
    orders.extend((await tools.list_orders(user_id=uid, page_size=20))["orders"])
top = sorted(orders, key=lambda o: (-o["total"], o["id"]))[:3]
by_status = sorted({o["status"] for o in orders}, key=str.lower)
[[o["id"] for o in top], by_status, min(orders, key=lambda o: o["total"])["id"],
 sorted([3, 1, 2], reverse=True), list(reversed(by_status))]
''')

s("monty_generator_send", '''
def averager():
    total = count = 0
    avg = None
    while True:
        value = yield avg
        total += value
        count += 1
        avg = total / count

avg = averager()
next(avg)
temps = []
for city in ["Nairobi", "Hanoi", "Kyiv"]:
    w = await tools.get_weather(city=city)
    temps.append(avg.send(w["temperature"]))
temps
''')

s("monty_context_manager", '''
class Timer:
    def __init__(self, label):
        self.label = label
        self.events = []
    def __enter__(self):
        self.events.append(f"start {self.label}")
        return self
    def __exit__(self, exc_type, exc, tb):
        self.events.append(f"end {self.label} {exc_type.__name__ if exc_type else 'ok'}")
        return exc_type is ValueError

with Timer("fetch") as t:
    u = await tools.get_user(user_id=1)
with Timer("bad") as t2:
    raise ValueError("swallowed")
t.events + t2.events
''')

s("monty_iter_protocol", '''
class Pages:
    def __init__(self, user_id, page_size=2):
        self.user_id = user_id
        self.page_size = page_size

    def __aiter__(self):
        self.page = 1
        return self

    async def __anext__(self):
        if self.page is None:
            raise StopAsyncIteration
        resp = await tools.list_orders(user_id=self.user_id, page=self.page, page_size=self.page_size)
        self.page = resp["next_page"]
        return resp["orders"]

sizes = []
async for batch in Pages(4):
    sizes.append(len(batch))
sizes
''')

s("monty_raise_from_none", '''
def parse(s):
    try:
        return int(s)
    except ValueError:
        raise ValueError(f"bad number: {s!r}") from None

out = []
for s in ["1", "x", "3"]:
    try:
        out.append(parse(s))
    except ValueError as e:
        out.append(str(e))
out
''')

s("monty_any_all_builtins", '''
users = [await tools.get_user(user_id=i) for i in range(1, 5)]
[any(u["tier"] == "bronze" for u in users), all("@" in u["email"] for u in users),
 sum(1 for u in users if u["email"].endswith(".com")), divmod(17, 5), abs(-3.5), round(2.675, 2),
 pow(2, 10, 1000), chr(65) + str(ord("a")), bin(10), hex(255), oct(8), int("ff", 16), float("1e3"),
 list(map(str.upper, ["a", "b"])), list(filter(None, [0, 1, "", "x"])), isinstance(True, int),
 sorted("banana"), max([], default="none"), hash("a") == hash("a"), callable(len)]
''')

s("monty_string_ops", '''
s = (await tools.search(query="Hello World", limit=1))[0]["snippet"]
[s.split(":")[0], s.rsplit(" ", 1)[-1], s.title(), s.swapcase()[:5], s.zfill(3)[:3], s.find("fact"),
 s.index("About"), s.isalpha(), "42".isdigit(), "  pad ".lstrip(), "x-y-z".replace("-", "+", 1),
 ",".join(["a", "b"]), "abc"[::-1], "a,b,,c".split(","), "line1\\nline2".splitlines(),
 "Straße".casefold(), "tab\\tx".expandtabs(4), "ab".ljust(4, ".") + "|", "%".join("ab"),
 "hello"[1:-1], "mississippi".count("ss"), "abc".encode().decode(), s.removeprefix("About ")[:5]]
''')

s("monty_json_options", '''
import json
u = await tools.get_user(user_id=3)
data = {"user": u, "scores": [1.5, 2.25], "ok": True, "none": None}
compact = json.dumps(data, separators=(",", ":"), sort_keys=True)
pretty = json.dumps(data["scores"], indent=4)
back = json.loads(compact)
try:
    json.loads("{bad json}")
except json.JSONDecodeError as e:
    err = f"{e.msg} at {e.pos}"
[len(compact), pretty, back == data, err, json.dumps("é"), json.dumps("é", ensure_ascii=False)]
''')

s("monty_re_ops", '''
import re
log = await tools.read_file(path="app.log")
times = re.findall(r"\\d{2}:\\d{2}:\\d{2}", log)
levels = re.sub(r"(INFO|WARN|ERROR)", lambda m: m.group(1).lower(), log.splitlines()[1])
parts = re.split(r"\\s+", "a  b\\tc")
m = re.search(r"(?P<lvl>ERROR) (?P<msg>.+)", log)
sub_n = re.subn(r"db", "database", log)[1]
pat = re.compile(r"timeout", re.IGNORECASE)
[times[:2], levels, parts, m.groupdict(), m.span(), sub_n, bool(pat.search("TIMEOUT")),
 re.fullmatch(r"[a-z]+", "abc") is not None, re.escape("a.b"), m.start("msg")]
''')

s("monty_statistics_more", '''
import statistics
orders = (await tools.list_orders(user_id=4, page_size=100))["orders"]
vals = [o["total"] for o in orders]
[statistics.median(vals), round(statistics.pstdev(vals), 4), statistics.mode([o["status"] for o in orders]),
 [round(q, 3) for q in statistics.quantiles(vals, n=4)], round(statistics.fmean(vals), 3), statistics.median_low(vals),
 round(statistics.harmonic_mean([1, 2, 4]), 4), round(statistics.geometric_mean([1, 2, 4]), 4)]
''')

s("monty_counter_ops", '''
from collections import Counter, OrderedDict, defaultdict
words = " ".join(r["snippet"] for r in await tools.search(query="data science", limit=3)).lower().split()
c = Counter(words)
c2 = Counter(a=1, about=5)
tree = lambda: defaultdict(tree)
t = tree()
t["a"]["b"]["c"] = 1
od = OrderedDict.fromkeys("abc")
od.move_to_end("a")
[c.most_common(2), (c & c2)["about"], (c + c2)["about"], sorted((c - c2).keys())[:2], list(od),
 dict(t["a"]["b"]), len(c), c["missing"]]
''')

s("monty_copy_heapq_bisect", '''
import copy, heapq, bisect
orders = (await tools.list_orders(user_id=3, page_size=100))["orders"]
totals = [o["total"] for o in orders]
top3 = heapq.nlargest(3, totals)
h = []
for t in totals:
    heapq.heappush(h, -t)
biggest = -heapq.heappop(h)
srt = sorted(totals)
pos = bisect.bisect_left(srt, 20)
deep = copy.deepcopy({"a": [1, [2]]})
deep["a"][1].append(3)
[top3, biggest, pos, deep]
''')

s("monty_match_sequence_class", '''
def classify(cmd):
    match cmd.split():
        case ["get", "user", uid] if uid.isdigit():
            return ("user", int(uid))
        case ["weather", *cities]:
            return ("weather", cities)
        case [single]:
            return ("single", single)
        case []:
            return ("empty",)
        case _:
            return ("unknown", cmd)

out = []
for cmd in ["get user 2", "weather Oslo Rome", "help", "", "x y z"]:
    kind, *rest = classify(cmd)
    if kind == "user":
        out.append((await tools.get_user(user_id=rest[0]))["name"])
    elif kind == "weather":
        out.append([(await tools.get_weather(city=c))["condition"] for c in rest[0]])
    else:
        out.append(kind)
out
''')

s("monty_global_dict_state", '''
CACHE = {}
calls = 0

async def cached_user(uid):
    global calls
    if uid not in CACHE:
        calls += 1
        CACHE[uid] = await tools.get_user(user_id=uid)
    return CACHE[uid]

for uid in [1, 2, 1, 1, 2]:
    await cached_user(uid)
[calls, sorted(CACHE)]
''')

s("monty_unpacking", '''
first, *middle, last = [u["name"] for u in await tools.list_users()]
(a, b), c = (1, 2), 3
head, tail = "key=value".split("=", 1)
def f(*args, sep="-", **kwargs):
    return sep.join(map(str, args)) + str(sorted(kwargs.items()))
d = {**{"x": 1}, **{"y": 2}}
[first, middle, last, a + b + c, head, tail, f(1, 2, sep="+", z=1), f(*[3, 4], **{"k": "v"}), d]
''')

s("monty_int_float_ops", '''
w = await tools.get_weather(city="Reykjavik", units="imperial")
t = w["temperature"]
[t // 10, t % 7, round(t), int(t), float(7), 7 / 2, -7 // 2, 2 ** -1, 10 ** 20, (1 << 40) >> 38, 5 & 3, 5 | 3, 5 ^ 3, ~5,
 round(1234.5678, -2), (0.1 + 0.2).__round__(2) if False else round(0.1 + 0.2, 2), 1_000_000, 3 == 3.0, 1 < 2 < 3,
 max(1, 2.5), min("b", "a"), float("inf") > 10 ** 100, int(-3.7), int("  42 "), complex(1, 2).real]
''')

s("monty_random_more", '''
import random
rng = random.Random(7)
data = list(range(10))
rng.shuffle(data)
[data, rng.sample(range(100), 3), round(rng.uniform(1, 2), 5), rng.choices("ab", k=4)]
''')

s("main_pydantic_style", '''
from dataclasses import dataclass, asdict

@dataclass(frozen=True)
class WeatherRow:
    city: str
    temperature: float
    condition: str

    @property
    def is_warm(self) -> bool:
        return self.temperature >= 20

rows = []
for city in ["Lisbon", "Helsinki", "Accra"]:
    w = await tools.get_weather(city=city)
    rows.append(WeatherRow(w["city"], w["temperature"], w["condition"]))
warm = [asdict(r) for r in rows if r.is_warm]
{"warm": warm, "count": len(rows)}
''')

s("smol_final_answer_in_loop", '''
for uid in range(1, 10):
    user = get_user(uid)
    if user["tier"] == "bronze":
        print("found", user["name"])
        final_answer(user["name"])
        break
''')

s("smol_nested_functions", '''
def fetch_total(uid):
    total = 0.0
    page = 1
    while page:
        resp = list_orders(user_id=uid, page=page)
        total += sum(o["total"] for o in resp["orders"])
        page = resp["next_page"]
    return round(total, 2)

totals = {get_user(uid)["name"]: fetch_total(uid) for uid in [1, 2]}
print(totals)
final_answer(totals)
''')

s("smol_zip_strict_lambda_sort", '''
users = list_users()
weather = [get_weather(city) for city in ["Baku", "Doha", "Riga", "Oslo"]]
pairs = list(zip([u["name"] for u in users], weather, strict=True))
pairs.sort(key=lambda p: (p[1]["humidity"], p[0]))
final_answer([f"{name}: {w['humidity']}%" for name, w in pairs])
''')

s("smol_string_table", '''
users = [get_user(i) for i in (1, 2, 3)]
header = f"{'Name':<15}|{'Tier':^8}|{'Email':>20}"
lines = [header, "-" * len(header)]
for u in users:
    lines.append(f"{u['name']:<15}|{u['tier']:^8}|{u['email']:>20}")
table = "\\n".join(lines)
print(table)
final_answer(table)
''')

s("main_async_generator_pages", '''
import asyncio

async def iter_orders(user_id):
    page = 1
    while page is not None:
        resp = await tools.list_orders(user_id=user_id, page=page)
        for o in resp["orders"]:
            yield o
        page = resp["next_page"]

async def main():
    refunded = [o["id"] async for o in iter_orders(4) if o["status"] == "refunded"]
    first = None
    async for o in iter_orders(2):
        first = o
        break
    return {"refunded": refunded, "first": first["id"]}

asyncio.run(main())
''')

s("monty_str_repr_builtins", '''
u = await tools.get_user(user_id=1)
[repr(u["name"]), str(3.0), repr([1, "a", None]), str({"a": (1,)}), ascii("é"), repr(1.1), str(True),
 f"{None}", repr({"x"}), str(b"ab"), repr(range(3)), str(1e20), str(0.1 + 0.2)]
''')

s("monty_while_else_for_else", '''
users = await tools.list_users()
for u in users:
    if u["name"].startswith("Z"):
        found = u
        break
else:
    found = None
n = 0
while n < 3:
    n += 1
else:
    n = -n
[found, n]
''')

s("monty_isinstance_dispatch", '''
def describe(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "text"
    if isinstance(v, dict):
        return "object:" + ",".join(sorted(v))
    if isinstance(v, list):
        return f"list[{len(v)}]"
    return type(v).__name__

u = await tools.get_user(user_id=2)
[describe(v) for v in [*u.values(), True, [1, 2], {"a": 1}, None, (1,)]]
''')

s("plain_print_json_result", '''
import json
users = await tools.list_users()
summary = {"count": len(users), "names": [u["name"] for u in users]}
print(json.dumps(summary))
''')

s("smol_sorted_items_lambda", '''
from collections import defaultdict
spend = defaultdict(float)
for uid in [1, 2, 3, 4]:
    for o in list_orders(uid, page_size=100)["orders"]:
        spend[uid] += o["total"]
ranked = sorted(spend.items(), key=lambda kv: kv[1], reverse=True)
for uid, amount in ranked:
    print(f"user {uid}: {amount:>8.2f}")
final_answer([uid for uid, _ in ranked])
''')

s("smol_total_ordering", '''
from functools import total_ordering

@total_ordering
class Score:
    def __init__(self, v):
        self.v = v
    def __eq__(self, o):
        return self.v == o.v
    def __lt__(self, o):
        return self.v < o.v

final_answer([Score(1) <= Score(2), Score(3) > Score(2), Score(2) >= Score(2), max([Score(1), Score(5)]).v])
''')

s("smol_assert_del_global", '''
config = {"a": 1, "b": 2}
del config["a"]
assert "a" not in config, "a should be gone"
try:
    assert len(config) > 5, f"too few keys: {len(config)}"
except AssertionError as e:
    msg = str(e)
x = [1, 2, 3]
del x[0]
final_answer([config, msg, x])
''')

s("smol_reraise_else", '''
def risky(n):
    if n > 2:
        raise ValueError(f"too big: {n}")
    return n * 2

out = []
for n in range(5):
    try:
        v = risky(n)
    except ValueError as e:
        out.append(e.args[0])
        continue
    else:
        out.append(v)
    finally:
        out.append("f")
try:
    try:
        risky(9)
    except ValueError:
        raise
except Exception as e:
    out.append(repr(e))
final_answer(out)
''')

s("smol_string_translate", '''
text = search("Hello, World! How's it going?", 1)[0]["title"]
table = str.maketrans("", "", ",!?'")
clean = text.translate(table)
vowels = sum(ch in "aeiou" for ch in clean.lower())
final_answer({"clean": clean, "vowels": vowels, "words": clean.split()[:3], "ord": [ord(c) for c in "az"], "isupper": "ABC".isupper(),
              "join": "-".join(sorted(set(clean.lower()) - {" "}))[:9], "format_map": "{a}-{b}".format_map({"a": 1, "b": 2})})
''')

s("smol_set_ops_frozenset", '''
gold = {u["id"] for u in (get_user(i) for i in range(1, 5)) if u["tier"] == "gold"}
early = {1, 2}
final_answer({"and": sorted(gold & early), "or": sorted(gold | early), "diff": sorted(gold - early), "sym": sorted(gold ^ early),
              "sub": {1}.issubset(gold), "fs": sorted(frozenset([3, 1])), "disjoint": gold.isdisjoint({9})})
''')

s("smol_math_more", '''
import math
final_answer([math.floor(-2.5), math.sqrt(16), round(math.log(100, 10), 6), round(math.log2(8)), math.gcd(12, 18), math.lcm(4, 6),
              math.inf > 1, math.isnan(float("nan")), round(math.pi, 4), math.fsum([0.1] * 10), math.trunc(-3.9), math.copysign(1, -0.0),
              round(math.degrees(math.pi), 1), math.dist((0, 0), (3, 4)), math.isqrt(17), math.prod([1, 2, 3, 4]), math.comb(5, 2), math.perm(5, 2)])
''')

s("smol_json_default_str", '''
import json, datetime
record = {"when": datetime.date(2024, 5, 1), "user": get_user(1)["name"], "tags": {"b", "a"}}
def default(o):
    if isinstance(o, (datetime.date, datetime.datetime)):
        return o.isoformat()
    if isinstance(o, set):
        return sorted(o)
    raise TypeError(f"not serializable: {type(o).__name__}")
final_answer(json.dumps(record, default=default, indent=None))
''')

s("monty_lambda_defaults_star", '''
adders = [lambda x, n=n: x + n for n in range(3)]
apply = lambda f, *args, **kw: f(*args, **kw)
compose = lambda *fs: (lambda x: [x := f(x) for f in fs][-1])
[ [a(10) for a in adders], apply(max, 1, 5, key=lambda v: -v), compose(str, len)(12345) ]
''')

s("monty_nested_comprehension_walrus", '''
users = await tools.list_users()
data = [(u["id"], n) for u in users if (n := len(u["name"])) > 8]
matrix = [[r * c for c in range(1, 4)] for r in range(1, 4)]
transposed = list(map(list, zip(*matrix)))
[data, transposed, [row[::-1] for row in matrix][0], sum(map(sum, matrix))]
''')

s("monty_chained_methods_datetime_now", '''
from datetime import datetime, timedelta, timezone
now = datetime.now(timezone.utc)
yesterday = now - timedelta(days=1)
[isinstance(now.year, int), (now - yesterday).days, now.tzinfo is not None, datetime.fromisoformat("2024-05-01T10:00:00").hour,
 datetime(2024, 5, 1).strftime("%Y-%m-%dT%H:%M:%S"), datetime(2024, 5, 1, 12).timestamp() > 0]
''')

s("monty_class_counter_iter", '''
class Inventory:
    def __init__(self):
        self.items = {}
    def add(self, name, qty=1):
        self.items[name] = self.items.get(name, 0) + qty
        return self
    def __len__(self):
        return sum(self.items.values())
    def __contains__(self, name):
        return name in self.items
    def __iter__(self):
        yield from sorted(self.items)
    def __getitem__(self, k):
        return self.items[k]
    def __bool__(self):
        return bool(self.items)

inv = Inventory().add("apple", 3).add("pear").add("apple")
[len(inv), "apple" in inv, list(inv), inv["apple"], bool(Inventory()), [x for x in inv if x != "pear"]]
''')

s("monty_recursion_tree", '''
tree = {"name": "root", "children": [{"name": "a", "children": [{"name": "a1", "children": []}]}, {"name": "b", "children": []}]}
def depth(node):
    return 1 + max((depth(c) for c in node["children"]), default=0)
def names(node, prefix=""):
    out = [prefix + node["name"]]
    for c in node["children"]:
        out.extend(names(c, prefix + "  "))
    return out
[depth(tree), names(tree)]
''')

s("monty_string_fmt_misc", '''
items = [("apple", 1.5, 3), ("kiwi", 0.25, 12)]
lines = ["{:<8}{:>6.2f}{:>4d}".format(*it) for it in items]
total = sum(p * q for _, p, q in items)
[lines, f"Total: {total:.2f}", "%-6s|%6.1f" % ("x", 2.25), f"{'%':>3}", "{0!r:>8}".format("a"), f"{{literal}}",
 "{:,}".format(10**6), "{:_x}".format(2**20), f"{3:03}", f"{12.5:g}", f"{1/3:.3}", "{:^9}".format("mid")]
''')

s("monty_deque_defaultdict_bfs", '''
from collections import deque, defaultdict
graph = defaultdict(list)
for a, b in [(1, 2), (1, 3), (2, 4), (3, 4), (4, 5)]:
    graph[a].append(b)
    graph[b].append(a)
def bfs(start):
    seen, order, q = {start}, [], deque([start])
    while q:
        n = q.popleft()
        order.append(n)
        for m in sorted(graph[n]):
            if m not in seen:
                seen.add(m)
                q.append(m)
    return order
[bfs(1), dict(graph)[5], len(graph)]
''')

s("main_gather_tuple_unpack", '''
import asyncio
async def main():
    user, orders, weather = await asyncio.gather(
        tools.get_user(user_id=2),
        tools.list_orders(user_id=2, page_size=10),
        tools.get_weather(city="London"),
    )
    return {"name": user["name"], "n": len(orders["orders"]), "cond": weather["condition"]}
asyncio.run(main())
''')

s("main_nested_async_defs", '''
import asyncio
async def main():
    async def fetch(uid):
        return (await tools.get_user(user_id=uid))["tier"]
    tiers = await asyncio.gather(*[fetch(i) for i in range(1, 5)])
    counts = {}
    for t in tiers:
        counts[t] = counts.get(t, 0) + 1
    return counts
result = asyncio.run(main())
''')

s("dc_frozen_order", '''
from dataclasses import dataclass, field, asdict, astuple, replace, fields, FrozenInstanceError
import dataclasses

@dataclass(frozen=True, order=True)
class Version:
    major: int
    minor: int = 0
    label: str = field(default="", compare=False, repr=False)

vs = sorted([Version(1, 2), Version(1, 0, "rc"), Version(0, 9)])
try:
    vs[0].major = 5
    err = None
except FrozenInstanceError as e:
    err = str(e)
try:
    vs[0].extra = 1
except AttributeError as e:
    err2 = type(e).__name__
[repr(v) for v in vs] + [err, err2, len({Version(1), Version(1, 0, "x")}), Version(1) < Version(1, 1),
 astuple(vs[0]), [f.name for f in fields(Version)], replace(vs[0], minor=7).minor,
 dataclasses.is_dataclass(vs[0]), dataclasses.is_dataclass(Version), dataclasses.is_dataclass(1)]
''')
s("dc_inherit_post_init", '''
from dataclasses import dataclass, field, asdict

@dataclass
class Base:
    id: int
    tags: list = field(default_factory=list)
    def __post_init__(self):
        self.tags = sorted(self.tags)

@dataclass
class User(Base):
    name: str = "anon"
    email: str = ""
    domain: str = field(init=False, default="")
    def __post_init__(self):
        super().__post_init__()
        self.domain = self.email.split("@")[-1] if self.email else None

u = User(1, ["b", "a"], "ada", email="ada@x.org")
u2 = User(2)
u2.tags.append("z")
[repr(u), asdict(u), User(3).tags, u == User(1, ["a", "b"], "ada", "ada@x.org"), u != u2, Base(5) == User(5)]
''')
s("dc_kw_only_nested", '''
from dataclasses import dataclass, field, asdict, KW_ONLY
from typing import ClassVar, Optional

@dataclass
class Point:
    x: float
    y: float

@dataclass(kw_only=True)
class Route:
    name: str
    points: list[Point] = field(default_factory=list)
    unit: ClassVar[str] = "km"
    note: Optional[str] = None

@dataclass
class Tagged:
    a: int
    _: KW_ONLY
    b: int = 2
    c: int

r = Route(name="r1", points=[Point(0, 0), Point(3, 4)])
try:
    Route("r2")
    e1 = None
except TypeError as e:
    e1 = "positional refused"
try:
    Point(1)
except TypeError as e:
    e2 = str(e)
try:
    Point(1, 2, z=3)
except TypeError as e:
    e3 = str(e)
t = Tagged(1, c=3)
[asdict(r), Route.unit, repr(r.points[1]), e1, e2, e3, repr(t), hash(Point) is not None]
''')
s("dc_unhashable_and_mutable_default", '''
from dataclasses import dataclass
@dataclass
class P:
    x: int
try:
    hash(P(1))
    h = "hashable"
except TypeError as e:
    h = str(e)
try:
    @dataclass
    class Q:
        items: list = []
    m = None
except ValueError as e:
    m = str(e)
try:
    @dataclass
    class R:
        a: int = 1
        b: int
    o = None
except TypeError as e:
    o = str(e)
[h, m, o]
''')
s("dc_module_style", '''
import dataclasses, json

@dataclasses.dataclass
class Row:
    city: str
    temp: float
    meta: dict = dataclasses.field(default_factory=dict)

rows = [Row(c, (await tools.get_weather(city=c))["temperature"]) for c in ["Oslo", "Lima"]]
json.dumps([dataclasses.asdict(r) for r in rows])
''')
s("dc_str_print", '''
from dataclasses import dataclass
@dataclass
class Item:
    name: str
    qty: int = 1
    def total(self, price):
        return self.qty * price
items = [Item("a"), Item("b", 3)]
print(items)
print(f"{items[1]}")
[str(items[0]), items[1].total(2.5), Item.qty]
''')


# ---------------- constructs added in round 11 ----------------
s("anthropic_as_completed", '''
import asyncio

async def main():
    users = await tools.list_users()
    done = []
    for next_user in asyncio.as_completed([tools.get_user(user_id=u["id"]) for u in users]):
        user = await next_user
        done.append((user["tier"], user["name"]))
    by_tier = {}
    for tier, name in sorted(done):
        by_tier.setdefault(tier, []).append(name)
    return by_tier

asyncio.run(main())
''')

s("cloudflare_task_group", '''
import asyncio

async def main():
    async with asyncio.TaskGroup() as tg:
        weather = {city: tg.create_task(tools.get_weather(city=city)) for city in ["Oslo", "Rome", "Lima"]}
    report = {city: task.result()["condition"] for city, task in weather.items()}
    print(f"fetched {len(report)} cities")
    return report

result = asyncio.run(main())
''')

s("pydantic_wait_first_completed", '''
import asyncio
pending = {asyncio.create_task(tools.get_user(user_id=i)) for i in [1, 2, 3, 99]}
names, failures = [], 0
while pending:
    done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
    for task in done:
        if task.exception() is not None:
            failures += 1
        else:
            names.append(task.result()["name"])
{"names": sorted(names), "failures": failures}
''')

s("pydantic_enum_statuses", '''
from enum import Enum, StrEnum, auto
from collections import Counter

class Status(StrEnum):
    PAID = auto()
    SHIPPED = auto()
    REFUNDED = auto()

class Size(Enum):
    SMALL = 1
    LARGE = 2
    def describe(self):
        return self.name.lower()

counts = Counter()
for uid in [1, 2]:
    page = await tools.list_orders(user_id=uid, page_size=10)
    for order in page["orders"]:
        counts[Status(order["status"])] += 1
print({str(k): v for k, v in sorted(counts.items())})
{"paid": counts[Status.PAID], "members": [s.value for s in Status], "size": Size(2).describe(),
 "is_str": Status.PAID == "paid"}
''')

s("monty_named_tuple_pprint", '''
import pprint
from typing import NamedTuple, Optional

class Row(NamedTuple):
    name: str
    total: float
    note: Optional[str] = None

rows = []
for uid in [1, 3]:
    user = await tools.get_user(user_id=uid)
    orders = (await tools.list_orders(user_id=uid, page_size=20))["orders"]
    rows.append(Row(user["name"], round(sum(o["total"] for o in orders), 2)))
rows.sort(key=lambda r: -r.total)
pprint.pprint([r._asdict() for r in rows], width=60)
[rows[0].name, rows[0]._replace(note="top").note, len(rows)]
''')

s("smol_dynamic_attributes", '''
class Profile:
    __slots__ = ("name", "email", "tier")
    def __init__(self, data):
        for key in ["name", "email", "tier"]:
            setattr(self, key, data[key])
    def __format__(self, spec):
        return format(f"{self.name} <{self.email}>", spec)

profiles = [Profile(get_user(user_id=i)) for i in [1, 2]]
for p in profiles:
    print(f"{p:>32}|")
final_answer([getattr(p, "tier") for p in profiles])
''')

s("chained_error_report", '''
class FetchError(Exception):
    pass

def fetch(uid):
    try:
        return get_user(user_id=uid)
    except ToolCallError as e:
        raise FetchError(f"user {uid} unavailable") from e

report = []
for uid in [2, 77]:
    try:
        report.append(fetch(uid)["name"])
    except FetchError as e:
        report.append(f"{e} (cause: {type(e.__cause__).__name__.replace('CPythonToolError', 'ToolCallError')})")
final_answer(report)
''')

# ---------------- idioms of every style, checked against CPython (round 2) ----------------
s("typed_builtin_generic_aliases", '''
from typing import Any, Optional
from collections import Counter, deque
Row = dict[str, Any]
Page = tuple[list[Row], Optional[int]]
Tally = Counter[str]
Window = deque[float]

def fetch_page(uid: int, page: int) -> Page:
    resp: Row = list_orders(user_id=uid, page=page)
    return resp["orders"], resp["next_page"]

def statuses(uid: int) -> Tally:
    tally: Tally = Counter()
    page: int | None = 1
    while page is not None:
        rows, page = fetch_page(uid, page)
        tally.update(r["status"] for r in rows)
    return tally

totals: dict[int, Tally] = {uid: statuses(uid) for uid in (2, 3)}
print({uid: dict(t) for uid, t in totals.items()}, isinstance(totals, dict))
final_answer({str(uid): t.most_common(1)[0][0] for uid, t in totals.items()})
''')

s("stats_regression_correlation", '''
import statistics
users = [get_user(user_id=i) for i in range(1, 5)]
n_orders = [len(list_orders(user_id=u["id"], page_size=50)["orders"]) for u in users]
ids = [u["id"] for u in users]
fit = statistics.linear_regression(ids, n_orders)
slope, intercept = fit
r = statistics.correlation(ids, n_orders)
print(f"slope={fit.slope:.2f} intercept={intercept:.2f} r={r:.3f}")
print("covariance:", statistics.covariance(ids, n_orders))
final_answer({"next": round(fit.intercept + fit.slope * 5, 1), "r": round(r, 4)})
''')

s("idiom_format_spec_table", '''
users = [get_user(user_id=i) for i in range(1, 5)]
print(f"{'Name':<15}|{'Tier':^8}|{'Id':>4}")
print("-" * 30)
for u in users:
    print(f"{u['name']:<15}|{u['tier']:^8}|{u['id']:>4d}")
rate = 0.4567
print(f"{rate:.1%} {1234567.891:,.2f} {255:#x} {255:08b} {3.14159:+.3f} {42:_>6}")
print(f"{'x'!r:>5} {12:e} {0.000123:g} {1e20:.3g}")
width, prec = 10, 3
print(f"{'total':{width}}|{sum(u['id'] for u in users) / 3:>{width}.{prec}f}|{'mid':*^{width * 2}}")
final_answer(len(users))
''')

s("idiom_datetime_formats", '''
from datetime import datetime, timedelta, date
d = datetime(2024, 3, 5, 14, 7, 9)
print(f"{d:%Y-%m-%d %H:%M}", f"{d:%A, %B %d}", "{:%d/%m/%Y}".format(d.date()))
print(d.strftime("%j %U %a %b %I%p"))
later = d + timedelta(days=30, hours=5)
print(later.isoformat(), later.weekday(), later.isoweekday())
print((later - d).total_seconds(), (later - d).days)
print(date(2024, 2, 29).replace(year=2025, day=28), repr(d), str(timedelta(hours=26, minutes=3)))
first = date.fromisoformat("2024-01-31")
next_month = (first.replace(day=1) + timedelta(days=32)).replace(day=1)
print(next_month, [(first + timedelta(days=i)).strftime("%a") for i in range(3)])
final_answer(d.isoformat())
''')

s("idiom_dataclass_orders", '''
from dataclasses import dataclass, field, asdict
from typing import List, Optional

@dataclass
class Order:
    id: int
    total: float
    status: str
    tags: List[str] = field(default_factory=list)
    note: Optional[str] = None

    @property
    def is_paid(self) -> bool:
        return self.status == "paid"

orders = []
for uid in [1, 2]:
    page = list_orders(user_id=uid, page=1, page_size=10)
    orders += [Order(o["id"], o["total"], o["status"]) for o in page["orders"]]
orders.sort(key=lambda o: (-o.total, o.id))
print(orders[0])
final_answer([asdict(o) for o in orders if o.is_paid])
''')

s("idiom_class_dunders_money", '''
class Money:
    def __init__(self, cents):
        self.cents = cents
    def __add__(self, other):
        return Money(self.cents + other.cents)
    def __radd__(self, other):
        if other == 0:
            return self
        return NotImplemented
    def __lt__(self, other):
        return self.cents < other.cents
    def __eq__(self, other):
        return isinstance(other, Money) and self.cents == other.cents
    def __hash__(self):
        return hash(self.cents)
    def __repr__(self):
        return f"Money({self.cents / 100:.2f})"
    def __bool__(self):
        return self.cents != 0

items = [Money(150), Money(99), Money(1000)]
total = sum(items)
print(total, sorted(items), max(items), bool(Money(0)))
print(len({Money(1), Money(1)}), Money(99) in items)
final_answer(repr(total))
''')

s("idiom_container_class", '''
class Inventory:
    def __init__(self):
        self._items = {}
    def __setitem__(self, key, value):
        self._items[key] = value
    def __getitem__(self, key):
        return self._items[key]
    def __contains__(self, key):
        return key in self._items
    def __iter__(self):
        return iter(sorted(self._items))
    def __len__(self):
        return len(self._items)
    def __delitem__(self, key):
        del self._items[key]

inv = Inventory()
for w in (get_weather(city=c) for c in ["Oslo", "Rome", "Lima"]):
    inv[w["city"]] = w["temperature"]
del inv["Rome"]
print(len(inv), "Oslo" in inv, list(inv), [inv[k] for k in inv])
final_answer(dict((k, inv[k]) for k in inv))
''')

s("idiom_walrus_regex_chunks", '''
import re
results = search(query="python typing guide", limit=5)
facts = [int(m.group(1)) for r in results if (m := re.search(r"number (\\d+)", r["snippet"]))]
data = [1, 5, 12, 7, 30]
if (n := len(data)) > 3:
    print(f"list is long ({n} elements)")
chunks = []
while (chunk := data[:2]):
    chunks.append(chunk)
    data = data[2:]
final_answer({"facts": facts, "chunks": chunks})
''')

s("idiom_match_guards_for_types", '''
def handle(cmd):
    match cmd.split():
        case ["go", direction]:
            return f"going {direction}"
        case ["take", *items] if items:
            return f"taking {', '.join(items)}"
        case ["quit" | "exit"]:
            return "bye"
        case [verb, *_]:
            return f"unknown verb {verb!r}"
        case []:
            return "empty"

def describe(ev):
    match ev:
        case {"type": "click", "pos": (x, y)}:
            return f"click at {x},{y}"
        case {"type": "key", "key": k} if isinstance(k, str):
            return f"key {k}"
        case num if isinstance(num, (int, float)) and num > 0:
            return f"positive {num}"
        case None:
            return "nothing"
        case _:
            return "other"

out = [handle(c) for c in ["go north", "take key lamp", "exit", "dance now", ""]]
out += [describe(e) for e in [{"type": "click", "pos": (1, 2)}, {"type": "key", "key": "q"}, 3.5, None, -1]]
final_answer(out)
''')

s("idiom_gather_helper_sorted_get", '''
import asyncio

async def fetch_city(city: str) -> tuple[str, float]:
    w = await tools.get_weather(city=city)
    return city, w["temperature"]

async def main():
    cities = ["Berlin", "Oslo", "Rome", "Madrid", "Cairo"]
    pairs = await asyncio.gather(*(fetch_city(c) for c in cities))
    temps = dict(pairs)
    avg = sum(temps.values()) / len(temps)
    above = sorted((c for c, t in temps.items() if t > avg), key=temps.get)
    print(f"average {avg:.1f}")
    return {"avg": round(avg, 2), "above": above}

asyncio.run(main())
''')

s("idiom_itertools_tour", '''
from itertools import accumulate, combinations, permutations, product, islice, count, cycle, starmap, zip_longest, takewhile, dropwhile, compress, repeat, groupby, chain, pairwise
nums = [3, 1, 4, 1, 5, 9, 2, 6]
print(list(accumulate(nums)), list(accumulate(nums, max)))
print(list(combinations("abc", 2)), len(list(permutations(range(4), 2))), list(product([0, 1], repeat=2)))
print(list(islice(count(10, 5), 4)), list(islice(cycle("ab"), 5)))
print(list(starmap(pow, [(2, 3), (3, 2)])), list(zip_longest("ab", "xyz", fillvalue="-")))
print(list(takewhile(lambda x: x < 5, nums)), list(dropwhile(lambda x: x < 5, nums)))
print(list(compress("abcdef", [1, 0, 1, 0, 1, 1])), list(repeat("z", 3)), list(pairwise(nums))[:3])
words = sorted(["apple", "avocado", "banana", "blueberry", "cherry"], key=lambda w: w[0])
groups = {k: list(g) for k, g in groupby(words, key=lambda w: w[0])}
final_answer({"groups": groups, "flat": list(chain.from_iterable(groups.values()))})
''')

s("idiom_collections_tour", '''
from collections import Counter, defaultdict, OrderedDict, deque
words = "the quick brown fox jumps over the lazy dog the end".split()
c = Counter(words)
print(c.most_common(2), c["the"], c["missing"], (c + Counter("the")).most_common(1), sum(c.values()))
c.update(["fox", "fox"])
print(+c, c - Counter(the=10))
dd = defaultdict(lambda: defaultdict(int))
for w in words:
    dd[len(w)][w[0]] += 1
print({k: dict(v) for k, v in sorted(dd.items())})
od = OrderedDict.fromkeys("abc", 0)
od.move_to_end("a")
print(list(od), od.popitem(last=False))
dq = deque(maxlen=3)
for i in range(5):
    dq.append(i)
dq.rotate(1)
print(dq, list(dq))
final_answer(dict(c))
''')

s("idiom_str_methods_tour", '''
text = "  Hello, World! Hello again.  "
print(text.strip().lower().replace("hello", "bye"), text.count("Hello"))
print(text.split(","), text.strip().rsplit(" ", 1), text.partition(","), text.rpartition("l"))
print("a-b_c d".title(), "snake_case_name".split("_"), "CamelCase".swapcase(), "ß".casefold())
print("42".zfill(5), "abc".center(9, "*"), "x".ljust(3, ".") + "|", "tab\\tsep".expandtabs(4))
print("report.final.pdf".removesuffix(".pdf"), "v1.2".removeprefix("v"), "abc".startswith(("x", "a")))
print("line1\\nline2\\r\\nline3".splitlines(), "a,b,,c".split(",", maxsplit=2))
print("Hello".find("l"), "Hello".rfind("l"), "Hello".index("e"), "123".isdigit(), "Ab1".isalnum())
print(" ".join(reversed("one two three".split())), "-".join(map(str, range(3))))
print("{name} is {age:>3} years".format(name="Ann", age=7), "{0}{1}{0}".format("a", "b"), "{:,}".format(10**6))
final_answer(text.strip()[::-1])
''')

s("idiom_slicing_unpacking", '''
nums = list(range(20))
print(nums[::3], nums[-3:], nums[5:1:-1], nums[:-15])
first, *middle, last = nums[:6]
a, (b, c) = 1, (2, 3)
print(first, middle, last, a, b, c)
nums[2:5] = ["x"]
del nums[::4]
print(nums)
matrix = [[i * 3 + j for j in range(3)] for i in range(3)]
transposed = [list(row) for row in zip(*matrix)]
head, tail = "key=value=x".split("=", 1)
print(head, tail, [*range(3), *"ab"], {**{"a": 1}, "b": 2}, "abcdef"[slice(1, 4)])
print([nums[i:i + 4] for i in range(0, len(nums), 4)], list(zip(*[iter(range(7))] * 3)))
final_answer(transposed)
''')

s("idiom_dict_set_ops", '''
a = {"x": 1, "y": 2, "z": 3}
b = {"y": 20, "w": 40}
merged = a | b
a |= {"q": 9}
print(merged, a, a.keys() & b.keys(), a.keys() - b.keys(), sorted(a.items() - {("x", 1)}))
print({v: k for k, v in a.items()}, dict(zip("abc", range(3))), dict.fromkeys(["a", "b"], []))
s1, s2 = {1, 2, 3}, {2, 3, 4}
print(s1 | s2, s1 & s2, s1 - s2, s1 ^ s2, s1 <= {1, 2, 3, 4}, s1.isdisjoint({9}))
s1.update([7, 8]); s1.discard(100); s1.add(0)
print(sorted(s1), a.pop("x"), a.pop("nope", None), a.popitem())
counts = {}
for ch in "mississippi":
    counts[ch] = counts.get(ch, 0) + 1
print(max(counts, key=counts.get), sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
nested = {"a": {"b": {"c": 1}}}
print(nested.get("a", {}).get("b", {}).get("c"), list(reversed(a)), next(iter(a)))
final_answer(counts)
''')

s("idiom_generator_pipeline", '''
def read_rows(text):
    for line in text.strip().splitlines()[1:]:
        region, amount = line.split(",")
        yield region, int(amount)

def only(rows, region):
    yield from (r for r in rows if r[0] == region)

def running_total(rows):
    total = 0
    for _, amt in rows:
        total += amt
        yield total

text = read_file(path="data/sales.csv")
gen = running_total(only(read_rows(text), "north"))
print(next(gen), list(gen))
print(sum(x * x for x in range(10)), any(x > 8 for x in range(10)))
it = iter([1, 2, 3])
print(next(it), next(it), next(it), next(it, "done"))
final_answer(list(read_rows(text)))
''')

s("idiom_except_clauses", '''
import json
results = []
for raw in ['{"a": 1}', "{bad json", "[1, 2]", "null"]:
    try:
        data = json.loads(raw)
        value = data["a"]
    except json.JSONDecodeError as e:
        results.append(f"decode error at pos {e.pos}: {e.msg}")
    except (KeyError, TypeError) as e:
        results.append(f"{type(e).__name__}: {e}")
    else:
        results.append(f"ok {value}")
    finally:
        pass
for bad in [lambda: int("abc"), lambda: {}["missing"], lambda: [][0], lambda: 1 / 0]:
    try:
        bad()
    except (ValueError, KeyError, IndexError, ZeroDivisionError) as e:
        results.append(f"{type(e).__name__}: {e!r} {e.args}")
final_answer(results)
''')

s("idiom_typing_everywhere", '''
from __future__ import annotations
from typing import Any, Dict, List, Optional, Callable, Sequence, TypedDict, Literal
Status = Literal["paid", "shipped", "refunded"]
Row = Dict[str, Any]

class Summary(TypedDict):
    user: str
    total: float

def fetch_all(uid: int) -> List[Row]:
    rows: List[Row] = []
    page: Optional[int] = 1
    while page is not None:
        resp: Row = list_orders(user_id=uid, page=page)
        rows.extend(resp["orders"])
        page = resp["next_page"]
    return rows

def summarize(uid: int, rows: Sequence[Row], pred: Callable[[Row], bool] = lambda r: True) -> Summary:
    return Summary(user=get_user(user_id=uid)["name"], total=round(sum(r["total"] for r in rows if pred(r)), 2))

out: list[Summary] = [summarize(u, fetch_all(u), lambda r: r["status"] != "refunded") for u in (1, 2)]
final_answer(out)
''')

s("idiom_sort_keys", '''
from operator import itemgetter
users = [get_user(user_id=i) for i in [1, 2, 3, 4]]
print([u["name"] for u in sorted(users, key=itemgetter("tier", "name"))])
print(sorted(users, key=lambda u: u["signup"], reverse=True)[0]["name"])
names = [u["name"] for u in users]
print(sorted(names, key=len), sorted(names, key=str.lower), sorted(names, key=lambda n: n.split()[-1]))
print(min(users, key=lambda u: u["id"])["email"], max(names, key=len))
tiers = {"gold": 0, "silver": 1, "bronze": 2}
users.sort(key=lambda u: (tiers[u["tier"]], -u["id"]))
pairs = [("b", 2), ("a", 2), ("c", 1)]
print(sorted(pairs, key=itemgetter(1)), sorted(pairs, key=lambda p: (-p[1], p[0])))
print(sorted({"b": 1, "a": 3}.items(), key=lambda kv: kv[1]), "".join(sorted("hello", reverse=True)))
final_answer([u["name"] for u in users])
''')

s("idiom_class_properties_factories", '''
class Temperature:
    scale = "C"
    count = 0
    def __init__(self, celsius):
        self.celsius = celsius
        Temperature.count += 1
    @classmethod
    def from_fahrenheit(cls, f):
        return cls((f - 32) * 5 / 9)
    @staticmethod
    def valid(v):
        return v > -273.15
    @property
    def fahrenheit(self):
        return self.celsius * 9 / 5 + 32
    @fahrenheit.setter
    def fahrenheit(self, value):
        self.celsius = (value - 32) * 5 / 9
    def __str__(self):
        return f"{self.celsius:.1f}°{self.scale}"

t = Temperature.from_fahrenheit(get_weather(city="Rome", units="imperial")["temperature"])
t2 = Temperature(20)
t2.fahrenheit = 50
print(t, t2, Temperature.valid(-300), Temperature.count, f"{t!s}")
final_answer([round(t.celsius, 2), t2.celsius, round(t.fahrenheit, 2)])
''')

s("idiom_anthropic_main_report", '''
import asyncio
import json

async def main():
    users = await tools.list_users()
    details = await asyncio.gather(*[tools.get_user(user_id=u["id"]) for u in users])
    by_tier = {}
    for d in details:
        by_tier.setdefault(d["tier"], []).append(d["name"])
    pages = await asyncio.gather(*(tools.list_orders(user_id=d["id"], page_size=100) for d in details))
    spend = {d["name"]: round(sum(o["total"] for o in p["orders"] if o["status"] != "refunded"), 2)
             for d, p in zip(details, pages)}
    top = max(spend.items(), key=lambda kv: kv[1])
    print(json.dumps({"tiers": by_tier, "top": top}, indent=2))
    return {"tiers": by_tier, "spend": spend}

asyncio.run(main())
''')

s("idiom_percent_and_print_forms", '''
row = {"name": "Ann", "score": 91.256, "n": 7}
print("%(name)s scored %(score).1f (%(n)03d)" % row)
print("%-10s|%5d|%x|%o|%e|%r|%c|%%" % ("left", 42, 255, 8, 12345.678, "r", 65))
print("a", "b", sep=", ", end="!\\n")
print(*range(5), sep="|")
print(f"{row['n']=}", f"{1+1 = }", repr("it's"), 0.1 + 0.2, 1/3, 2**0.5)
print(ascii("café"), ord("A"), chr(97), hex(255), bin(5), int("ff", 16), int("0b101", 0), format(1234.5, ",.1f"))
final_answer(row["n"])
''')


# ---------------- the compat modules: urllib.parse, hashlib, base64, collections.abc, contextlib
s("compat_search_links_query_strings", '''
from urllib.parse import urlencode, quote, quote_plus, unquote, urlparse, urljoin, parse_qs, parse_qsl
import urllib.parse
results = search(query="data pipelines", limit=3)
links = []
for r in results:
    u = urlparse(r["url"])
    print(u.scheme, u.netloc, u.path, u.hostname, u.port)
    links.append(urljoin(r["url"], "../about?lang=en"))
params = {"q": "café & crème", "page": 2, "tags": ["a b", "c"], "safe": True}
qs = urlencode(params, doseq=True)
print(qs)
print(urlencode({"q": "a/b c"}, quote_via=quote), quote("path with spaces/ü"), quote_plus("x=1&y=2"))
print(quote("a/b", safe=""), urllib.parse.unquote_plus("a+b%2Bc"), unquote("%E2%9C%93"))
print(parse_qs(qs), parse_qsl("a=1&a=2&b=&c=x%20y", keep_blank_values=True))
api = "https://api.example.com/v1/search?" + urlencode({"query": results[0]["title"], "limit": 10})
parsed = urlparse(api)
print(parsed.query, dict(parse_qsl(parsed.query)), parsed._replace(query="", fragment="top").geturl())
print(urllib.parse.urlsplit("http://u:p@h.com:81/x?y#z"), urllib.parse.urlunparse(("https", "h.com", "/p", "", "a=1", "")))
final_answer(links)
''')

s("compat_hash_dedupe_and_cache_keys", '''
import hashlib
import json
seen = {}
for q in ["python", "Python ", "rust", "python"]:
    for r in search(query=q.strip().lower(), limit=2):
        key = hashlib.md5(r["url"].encode("utf-8")).hexdigest()
        seen.setdefault(key, r["title"])
print(len(seen), sorted(seen)[:2])
payload = json.dumps({"user": 1, "tier": "gold"}, sort_keys=True)
print(hashlib.sha256(payload.encode()).hexdigest()[:16], hashlib.sha1(b"abc").hexdigest())
h = hashlib.sha256()
for chunk in [b"part one ", b"part two"]:
    h.update(chunk)
print(h.hexdigest() == hashlib.sha256(b"part one part two").hexdigest(), h.name, h.digest_size, len(h.digest()))
print(hashlib.new("sha512", b"x").hexdigest()[:12], hashlib.blake2b(b"x", digest_size=16).hexdigest(), hashlib.sha224(b"x").hexdigest()[:8])
final_answer({k[:8]: v for k, v in seen.items()})
''')

s("compat_base64_payloads", '''
import base64
import json
body = json.dumps({"to": "ada@example.com", "subject": "Hi ✓"}).encode("utf-8")
encoded = base64.b64encode(body).decode("ascii")
print(encoded[:24], len(encoded))
token = base64.urlsafe_b64encode(b"user:42:\\xff\\xfe").decode().rstrip("=")
padded = token + "=" * (-len(token) % 4)
print(token, base64.urlsafe_b64decode(padded))
print(json.loads(base64.b64decode(encoded))["subject"], base64.b64decode(encoded.encode()) == body)
print(base64.b32encode(b"otp-secret"), base64.b32decode("N52HALLTMVRXEZLU"), base64.b16encode(b"\\x00\\xff"), base64.b16decode("00ff", casefold=True))
print(base64.standard_b64encode(b"hi"), base64.standard_b64decode("aGk="))
try:
    base64.b64decode("not base64!", validate=True)
except ValueError as e:
    print("invalid:", type(e).__name__)
final_answer(encoded)
''')

s("compat_abc_checks_and_suppress", '''
from collections.abc import Mapping, Sequence, Iterable, MutableMapping
import collections.abc
from contextlib import suppress

def flatten(value, prefix=""):
    out = {}
    if isinstance(value, Mapping):
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(value, Sequence) and not isinstance(value, str):
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}{i}."))
    else:
        out[prefix.rstrip(".")] = value
    return out

user = get_user(user_id=2)
orders = list_orders(user_id=2, page=1)
flat = flatten({"user": user, "orders": orders["orders"]})
print(len(flat), flat["user.name"], flat["orders.0.status"])
print(isinstance(user, MutableMapping), isinstance(orders["orders"], Iterable), isinstance(5, Iterable))
print(isinstance("x", collections.abc.Sized), issubclass(dict, Mapping), issubclass(list, collections.abc.MutableSequence))
totals = []
for uid in [1, 99, 3]:
    with suppress(ToolCallError, KeyError):
        totals.append(get_user(user_id=uid)["tier"])
with suppress(ValueError):
    totals.append(int("n/a"))
print(totals)
final_answer(totals)
''')


# ---------------- round 15: more of each style, and the stdlib models reach for ----------------
s("c15_smol_report_class", '''
class Report:
    """Collects lines."""
    def __init__(self, title):
        self.title = title
        self.lines = []
    def add(self, *parts, sep=" "):
        self.lines.append(sep.join(str(p) for p in parts))
        return self
    def __str__(self):
        return "\\n".join([self.title, "=" * len(self.title), *self.lines])
    def __repr__(self):
        return f"Report({self.title!r}, {len(self.lines)} lines)"

r = Report("Users")
for u in list_users():
    info = get_user(user_id=u["id"])
    r.add(info["name"], info["tier"], sep=" | ")
print(r)
print(repr(r))
final_answer(str(r).splitlines()[2:])
''')

s("c15_smol_vars_dir_getattr", '''
class Config:
    retries = 3
    def __init__(self, **kw):
        for k, v in kw.items():
            setattr(self, k, v)
c = Config(host="x", port=80)
print(sorted(vars(c).items()))
print(getattr(c, "missing", "default"), getattr(c, "retries"), hasattr(c, "host"), hasattr(c, "nope"))
print([n for n in dir(c) if not n.startswith("_")])
final_answer(vars(c))
''')

s("c15_smol_datetime_strptime", '''
from datetime import datetime, timedelta
signups = []
for uid in range(1, 5):
    u = get_user(uid)
    d = datetime.strptime(u["signup"], "%Y-%m-%d")
    signups.append((d, u["name"]))
signups.sort()
first, *_, last = signups
gap = last[0] - first[0]
print(f"{first[1]} first on {first[0]:%B %d, %Y}; gap {gap.days} days ({gap.total_seconds() / 86400 / 7:.1f} weeks)")
print((first[0] + timedelta(days=30)).strftime("%a %d %b %Y"), first[0].isoformat(), first[0].weekday(), first[0].isocalendar()[1])
final_answer([d.strftime("%Y/%m/%d") for d, _ in signups])
''')

s("c15_smol_statistics_math", '''
import statistics, math
totals = []
for uid in [1, 2, 3, 4]:
    page = 1
    while page:
        resp = list_orders(user_id=uid, page=page, page_size=5)
        totals += [o["total"] for o in resp["orders"]]
        page = resp["next_page"]
print("n =", len(totals))
print("mean %.3f median %.2f stdev %.3f" % (statistics.mean(totals), statistics.median(totals), statistics.stdev(totals)))
print("pstdev", round(statistics.pstdev(totals), 4), "hmean", round(statistics.harmonic_mean(totals), 3))
print(math.isclose(sum(totals), math.fsum(totals)), math.floor(max(totals)), math.ceil(min(totals)), math.gcd(12, 18), math.lcm(4, 6))
print(statistics.quantiles(totals, n=4), statistics.median_low(totals), statistics.median_high(totals), statistics.mode([1, 1, 2]))
final_answer({"sum": round(sum(totals), 2), "hyp": math.hypot(3, 4), "dist": math.dist((0, 0), (3, 4)), "log": round(math.log(100, 10), 6)})
''')

s("c15_smol_print_file_sep_end", '''
print("a", "b", sep="-", end="!\\n")
print("no newline", end="")
print()
print(*[1, 2, 3], sep=", ")
print("flushed", flush=True)
final_answer("done")
''')

s("c15_ptc_gather_loads", '''
import asyncio
import json

async def fetch(uid):
    raw = await tools.get_user(user_id=uid)
    return raw if isinstance(raw, dict) else json.loads(raw)

async def main():
    users = await asyncio.gather(*(fetch(u) for u in [1, 2, 3, 4]))
    by_tier = {}
    for u in users:
        by_tier.setdefault(u["tier"], []).append(u["name"])
    for tier, names in sorted(by_tier.items()):
        print(f"{tier:>8}: {', '.join(names)}")
    return by_tier

result = asyncio.run(main())
''')

s("c15_ptc_gather_dict_zip_strict", '''
import asyncio
cities = ["Oslo", "Cairo", "Quito"]
results = await asyncio.gather(*[tools.get_weather(city=c, units="imperial") for c in cities])
table = {c: r["temperature"] for c, r in zip(cities, results, strict=True)}
hottest = max(table, key=table.get)
print(f"hottest: {hottest} at {table[hottest]:.1f}F")
avg = sum(table.values()) / len(table)
{"table": table, "avg": round(avg, 1), "above": sorted(c for c, t in table.items() if t > avg)}
''')

s("c15_ptc_error_handling_gather", '''
import asyncio, json
async def safe_user(uid: int) -> dict | None:
    try:
        return await tools.get_user(user_id=uid)
    except ToolCallError as exc:
        print(f"skip {uid}: {type(exc).__name__ != 'X'}")
        return None
    except Exception as exc:  # noqa
        print("other", exc)
        raise

async def main():
    found = [u for u in await asyncio.gather(*map(safe_user, [1, 5, 2])) if u]
    return json.dumps([u["id"] for u in found])

print(asyncio.run(main()))
''')

s("c15_cf_async_class_client", '''
import asyncio

class Client:
    def __init__(self, concurrency: int = 2):
        self.sem = asyncio.Semaphore(concurrency)
        self.calls = 0

    async def user(self, uid: int) -> dict:
        async with self.sem:
            self.calls += 1
            return await tools.get_user(user_id=uid)

    async def __aenter__(self):
        return self

    async def __aexit__(self, exc_type, exc, tb):
        print(f"closing after {self.calls} calls")
        return False

async def main():
    async with Client() as client:
        users = await asyncio.gather(*[client.user(i) for i in range(1, 5)])
    return [u["email"].split("@")[1] for u in users]

await main()
''')

s("c15_monty_typeddict_protocol", '''
from typing import TypedDict, Protocol, NotRequired, Literal, Iterator

class Row(TypedDict):
    region: str
    amount: int

class Sink(Protocol):
    def write(self, row: Row) -> None: ...

class ListSink:
    def __init__(self) -> None:
        self.rows: list[Row] = []
    def write(self, row: Row) -> None:
        self.rows.append(row)

def parse(text: str) -> Iterator[Row]:
    header, *lines = text.strip().splitlines()
    for line in lines:
        region, amount = line.split(",")
        yield Row(region=region, amount=int(amount))

sink: Sink = ListSink()
for row in parse(await tools.read_file(path="data/sales.csv")):
    sink.write(row)
Kind = Literal["north", "south"]
[r for r in sink.rows if r["amount"] > 50]
''')

s("c15_monty_enum_match", '''
from enum import Enum, auto
from dataclasses import dataclass

class Tier(Enum):
    GOLD = "gold"
    SILVER = "silver"
    BRONZE = "bronze"

    @property
    def discount(self) -> float:
        match self.value:
            case "gold":
                return 0.2
            case "silver":
                return 0.1
            case _:
                return 0.0

@dataclass
class Customer:
    name: str
    tier: Tier

customers = []
for uid in range(1, 5):
    u = await tools.get_user(user_id=uid)
    customers.append(Customer(u["name"], Tier(u["tier"])))
for c in customers:
    print(f"{c.name}: {c.tier.name.title()} -> {c.tier.discount:.0%}")
{c.name: c.tier.value for c in customers}
''')

s("c15_monty_generators_yield_from", '''
def walk(node, depth=0):
    yield depth, node["name"]
    for child in node.get("children", []):
        yield from walk(child, depth + 1)

tree = {"name": "root", "children": [{"name": "a", "children": [{"name": "a1"}]}, {"name": "b"}]}
for depth, name in walk(tree):
    print("  " * depth + name)

def take(n, it):
    for i, x in enumerate(it):
        if i >= n:
            return
        yield x

def naturals():
    n = 0
    while True:
        yield n
        n += 1

gen = (x * x for x in naturals() if x % 2)
list(take(4, gen))
''')

s("c15_monty_walrus_comprehensions", '''
import re
text = await tools.read_file(path="app.log")
hits = [m.group(1) for line in text.splitlines() if (m := re.search(r"(ERROR|WARN) (.+)$", line))]
counts = {k: v for k in sorted(set(hits)) if (v := hits.count(k)) > 0}
grid = [[i * j for j in range(1, 4)] for i in range(1, 4)]
flat = [x for row in grid for x in row if x % 2 == 0]
pairs = {(a, b) for a in range(3) for b in range(a)}
print(counts, flat, sorted(pairs))
while (chunk := text[:10]) and len(text) > 200:
    text = text[10:]
len(text), chunk
''')

s("c15_custom_exceptions_chain", '''
class AppError(Exception):
    def __init__(self, message, *, code=500):
        super().__init__(message)
        self.code = code
    def __str__(self):
        return f"[{self.code}] {self.args[0]}"

class NotFound(AppError):
    def __init__(self, what):
        super().__init__(f"{what} not found", code=404)

def load(uid):
    try:
        return get_user(uid)
    except ToolCallError as e:
        raise NotFound(f"user {uid}") from e

report = []
for uid in (1, 42):
    try:
        u = load(uid)
    except NotFound as e:
        report.append({"error": str(e), "code": e.code, "cause": isinstance(e.__cause__, ToolCallError), "is_app": isinstance(e, AppError)})
    else:
        report.append({"ok": u["name"]})
    finally:
        print("checked", uid)
final_answer(report)
''')

s("c15_class_dunders_sort_hash", '''
from functools import total_ordering

@total_ordering
class Version:
    __slots__ = ("major", "minor", "patch")
    def __init__(self, text):
        self.major, self.minor, self.patch = (int(p) for p in text.split("."))
    def _key(self):
        return (self.major, self.minor, self.patch)
    def __eq__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()
    def __lt__(self, other):
        return self._key() < other._key()
    def __hash__(self):
        return hash(self._key())
    def __repr__(self):
        return "Version(%r)" % ".".join(map(str, self._key()))

vs = [Version(t) for t in ["1.10.0", "1.2.3", "1.2.10", "0.9.9", "1.2.3"]]
print(sorted(vs))
print(max(vs), min(vs), len(set(vs)), Version("1.0.0") >= Version("0.9.9"), Version("1.0.0") != "1.0.0")
[repr(v) for v in sorted(set(vs), reverse=True)]
''')

s("c15_classmethod_staticmethod_property", '''
class Temperature:
    scale = "C"
    def __init__(self, celsius: float):
        self._c = celsius
    @property
    def celsius(self):
        return self._c
    @celsius.setter
    def celsius(self, value):
        if value < -273.15:
            raise ValueError("below absolute zero")
        self._c = value
    @property
    def fahrenheit(self):
        return self._c * 9 / 5 + 32
    @classmethod
    def from_f(cls, f):
        return cls((f - 32) * 5 / 9)
    @staticmethod
    def valid(v):
        return v >= -273.15

w = get_weather("Berlin")
t = Temperature(w["temperature"])
t.celsius += 1.5
try:
    t.celsius = -300
except ValueError as e:
    print("refused:", e)
t2 = Temperature.from_f(212)
print(f"{t.celsius:.1f}C = {t.fahrenheit:.1f}F; {t2.celsius:.0f}; {Temperature.valid(-500)}; {type(t2).__name__}")
final_answer(round(t.fahrenheit, 2))
''')

s("c15_inheritance_super_chain", '''
class Shape:
    def __init__(self, name):
        self.name = name
    def area(self):
        raise NotImplementedError
    def describe(self):
        return f"{self.name} with area {self.area():.2f}"

class Rect(Shape):
    def __init__(self, w, h, name="rect"):
        super().__init__(name)
        self.w, self.h = w, h
    def area(self):
        return self.w * self.h

class Square(Rect):
    def __init__(self, side):
        super().__init__(side, side, name="square")
    def describe(self):
        return super().describe().upper()

shapes = [Rect(2, 3), Square(4)]
for sh in shapes:
    print(sh.describe(), isinstance(sh, Rect), issubclass(type(sh), Shape))
try:
    Shape("x").area()
except NotImplementedError:
    print("abstract")
[type(s).__name__ for s in shapes]
''')
s("c15_itertools_functools_mix", '''
import itertools, functools, operator
users = list_users()
names = [u["name"] for u in users]
print(list(itertools.combinations(names[:3], 2)))
print(list(itertools.accumulate([3, 1, 4, 1, 5], operator.add)), list(itertools.accumulate([3, 1, 4], max)))
print(list(itertools.zip_longest("ab", "xyz", fillvalue="-")), list(itertools.starmap(pow, [(2, 3), (3, 2)])))
print(list(itertools.takewhile(lambda x: x < 3, [1, 2, 5, 1])), list(itertools.dropwhile(lambda x: x < 3, [1, 2, 5, 1])))
print(list(itertools.compress("abcdef", [1, 0, 1, 0, 1, 1])), list(itertools.permutations([1, 2, 3], 2))[:3])
print(list(itertools.repeat("x", 3)), list(itertools.islice(itertools.cycle("ab"), 5)), list(itertools.filterfalse(None, [0, 1, "", "a"])))
total = functools.reduce(lambda acc, u: acc + len(u), names, 0)
initials = functools.reduce(operator.concat, (n[0] for n in names))
@functools.lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print(fib(30), fib.cache_info().hits > 0)
final_answer({"total": total, "initials": initials, "cmp": sorted(names, key=functools.cmp_to_key(lambda a, b: len(a) - len(b)))})
''')

s("c15_collections_more", '''
from collections import Counter, OrderedDict, defaultdict, deque, namedtuple
words = "the quick brown fox jumps over the lazy dog the end".split()
c = Counter(words)
c2 = Counter("hello world")
print(c.most_common(2), (c + Counter(["fox"]))["fox"], (c - Counter(["the"]))["the"], c2["l"])
print(sorted((c & Counter(["the", "the", "fox"])).items()), sum(c.values()))
od = OrderedDict()
for w in words:
    od[w] = od.get(w, 0) + 1
od.move_to_end("the")
print(list(od)[-1], od.popitem(last=False))
tree = lambda: defaultdict(tree)
t = tree()
t["a"]["b"]["c"] = 1
dq = deque([1, 2, 3], maxlen=3)
dq.appendleft(0)
dq.rotate(1)
print(list(dq), dq[0], dq.count(1))
P = namedtuple("P", "x y", defaults=[0])
p = P(1)
print(p, p._replace(y=5), p._asdict(), P._fields)
cm = {**{"a": 2, "b": 3}, **{"a": 1}}
print(cm["a"], cm["b"], dict(cm))
final_answer(list(t["a"]["b"].items()))
''')

s("c15_string_module_textwrap", '''
import string, textwrap
user = get_user(user_id=3)
tmpl = "Dear {name}, your tier is {tier}."
print(tmpl.format(name=user["name"], tier=user["tier"]))
print(tmpl.format_map(user))
print(string.ascii_lowercase[:5], string.digits, string.punctuation[:4], string.capwords("hello big world"))
body = " ".join(r["snippet"] for r in search(query="compilers history", limit=4))
print(textwrap.fill(body, width=40, initial_indent="> ", subsequent_indent="  "))
print(textwrap.shorten(body, width=50, placeholder=" [...]"))
print(textwrap.indent(textwrap.dedent("""
    a
      b
"""), "| "))
final_answer(textwrap.wrap(body, 30)[:2])
''')

s("c15_urllib_hashlib_base64", '''
from urllib.parse import urlparse, urlencode, parse_qs, quote, urljoin
import hashlib, base64
hits = search(query="rust async runtime", limit=2)
out = []
for h in hits:
    u = urlparse(h["url"])
    q = urlencode({"ref": "agent", "q": h["title"]})
    full = f"{u.scheme}://{u.netloc}{u.path}?{q}"
    digest = hashlib.sha256(full.encode("utf-8")).hexdigest()[:12]
    token = base64.urlsafe_b64encode(h["title"].encode()).decode().rstrip("=")
    out.append({"host": u.hostname, "qs": parse_qs(q)["q"][0], "digest": digest, "token": token})
print(urljoin("https://ex.com/a/b", "../c"), quote("a b&c"), hashlib.md5(b"x").hexdigest())
final_answer(out)
''')

s("c15_heapq_bisect_copy_pprint", '''
import heapq, bisect, copy
from pprint import pprint, pformat
orders = list_orders(user_id=4, page_size=20)["orders"]
top3 = heapq.nlargest(3, orders, key=lambda o: o["total"])
cheap = heapq.nsmallest(2, (o["total"] for o in orders))
h = []
for o in orders:
    heapq.heappush(h, (o["total"], o["id"]))
first = heapq.heappop(h)
grades = [10, 20, 30]
print([bisect.bisect(grades, x) for x in (5, 20, 25, 99)])
ins = [1, 4, 9]
bisect.insort(ins, 5)
nested = {"a": [1, {"b": 2}]}
deep = copy.deepcopy(nested)
shallow = copy.copy(nested)
deep["a"][1]["b"] = 99
print(nested["a"][1]["b"], shallow["a"] is nested["a"], ins)
pprint({"top": [o["id"] for o in top3], "cheap": cheap, "first": first}, width=40)
print(pformat(list(range(30)), compact=True, width=30))
final_answer([o["id"] for o in top3])
''')

s("c15_format_specs_percent", '''
w = get_weather("Nairobi")
n = 1234567.891
print(f"{n:,.2f}|{n:>15,.1f}|{n:e}|{n:.3g}|{int(n):_}|{int(n):x}|{255:#o}|{255:08b}")
print(f"{'left':<8}|{'mid':^8}|{'right':>8}|{'fill':*^10}|{-3:+d}|{3: d}|{0.25:.1%}")
print(f"{w['city']!r:>12} {w['humidity']=} {w['temperature']:5.1f}")
print("%s is %d%% humid, %.1f degrees, %5s|%-5s|%05d|%x|%r" % (w["city"], w["humidity"], w["temperature"], "a", "b", 42, 255, "q"))
print("%(city)s: %(condition)s" % w)
print("{:>6}|{:<6}|{:^6}|{:06.2f}".format("a", "b", "c", 3.14159), "{name} {0}".format(1, name="x"), format(0.5, ".0%"), format(12, "03d"))
width = 10
print(f"{'dyn':>{width}}|{3.14159:.{2}f}")
final_answer(f"{w['temperature']:.2f}")
''')

s("c15_sort_slicing_unpack", '''
users = [get_user(i) for i in range(1, 5)]
by_tier = sorted(users, key=lambda u: ({"gold": 0, "silver": 1}.get(u["tier"], 9), u["name"]))
print([u["name"] for u in by_tier])
print([u["id"] for u in sorted(users, key=lambda u: u["signup"], reverse=True)])
first, second, *rest = by_tier
(a, b), c = (1, 2), 3
head, *_, tail = "abcdef"
print(first["name"], len(rest), a + b + c, head, tail)
s = "Hello, World"
print(s[::-1], s[7:], s[:-7], s[::2], s[-5:-1], list(range(10))[2:8:3])
nums = list(range(10))
nums[2:5] = ["x"]
del nums[::3]
print(nums)
x, y = y, x = 1, 2
print(x, y)
final_answer({"min": min(users, key=lambda u: u["signup"])["name"], "none": min([], default=None), "maxd": max([3, 1], default=0), "sum": sum([[1], [2]], start=[])})
''')

s("c15_builtins_misc", '''
vals = [3.14159, 2.5, 3.5, -2.5, 10]
print([round(v) for v in vals], round(3.14159, 2), round(1234, -2), divmod(17, 5), divmod(-7, 2), pow(2, 10, 1000))
print(abs(-3), any(v > 5 for v in vals), all(isinstance(v, (int, float)) for v in vals), isinstance("x", (int, str)))
print(type(3).__name__, type("s").__name__, type([]).__name__, type(None).__name__, type(vals[0]) is float)
print(list(enumerate("abc", start=1)), list(zip("ab", [1, 2], strict=True)), list(reversed([1, 2, 3])))
print(chr(65), ord("a"), hex(255), oct(8), bin(5), int("ff", 16), int("0b101", 0), float("1e3"), str(1.0), bool([]), bool("0"))
print(sum(range(101)), sum([0.1] * 10, start=1.0), max("apple", "kiwi", key=len), min(3, 1, 2), sorted("hello"), ascii("é"))
print(callable(len), callable(3), hash("a") == hash("a"), format(3, "b"), repr("it's"), list(map(str.upper, ["a"])), list(filter(str.isdigit, "a1b2")))
print(isinstance(True, int), issubclass(bool, int), 7 // 2, -7 // 2, 7 % -3, 2 ** -1, 1e300 * 10, float("nan") != float("nan"))
print(slice(1, 5, 2), list(range(10))[slice(1, 5, 2)], frozenset([1, 2]) | {3}, complex(1, 2) * 2, (0.1 + 0.2).is_integer(), (4.0).is_integer(), (10).bit_length())
final_answer(f"{len(vals)} values")
''')

s("c15_closures_global_nonlocal_args", '''
counter = 0
def bump(by=1):
    global counter
    counter += by
    return counter

def make_acc(start=0):
    total = start
    def add(*nums, scale=1, **labels):
        nonlocal total
        total += sum(nums) * scale
        return total, sorted(labels)
    return add

acc = make_acc(10)
print(acc(1, 2), acc(3, scale=2, tag="x", a=1))
bump(); bump(5)
def kwonly(a, b=2, *, c, d=4, **rest):
    return a + b + c + d + len(rest)
def posonly(a, b, /, c=0):
    return a - b + c
adders = [lambda x, i=i: x + i for i in range(3)]
print(counter, kwonly(1, c=3), kwonly(1, 1, c=1, d=1, z=0), posonly(5, 3, c=1), [f(10) for f in adders])
args = (1, 2)
kw = {"c": 5}
print(kwonly(*args, **kw), (lambda *a, **k: (a, k))(1, x=2))
final_answer(counter)
''')

s("c15_context_managers_script", '''
from contextlib import suppress
class Timer:
    def __init__(self, label):
        self.label = label
        self.events = []
    def __enter__(self):
        self.events.append("enter")
        return self
    def __exit__(self, exc_type, exc, tb):
        self.events.append(f"exit:{exc_type.__name__ if exc_type else None}")
        return exc_type is KeyError

with Timer("a") as t:
    x = {}["missing"]
with Timer("b") as t2, suppress(ZeroDivisionError):
    1 / 0
try:
    with Timer("c") as t3:
        raise ValueError("boom")
except ValueError as e:
    print("caught", e)
with suppress(ToolCallError):
    get_user(user_id=77)
print(t.events, t2.events, t3.events)
final_answer(t3.events)
''')

s("c15_generators_send_pipeline", '''
import re
def lines(text):
    yield from text.splitlines()

def grep(pattern, src):
    rx = re.compile(pattern)
    return (l for l in src if rx.search(l))

def numbered(src, start=1):
    for i, l in enumerate(src, start=start):
        yield f"{i:02d}: {l}"

log = read_file("app.log")
out = list(numbered(grep(r"ERROR|WARN", lines(log))))
print(*out, sep="\\n")
def running_avg():
    total = count = 0
    avg = None
    while True:
        v = yield avg
        total += v
        count += 1
        avg = total / count
g = running_avg()
next(g)
avgs = [g.send(v) for v in [10, 20, 60]]
gen = (i for i in range(3))
print(next(gen), next(gen), next(gen, "done"), next(gen, "done"))
final_answer({"lines": out, "avgs": avgs})
''')

s("c15_dataclass_full", '''
from dataclasses import dataclass, field, asdict, replace, astuple
from typing import ClassVar, Optional

@dataclass(order=True)
class Order:
    total: float
    id: int = field(compare=False)
    status: str = field(default="paid", compare=False)
    tags: list[str] = field(default_factory=list, compare=False, repr=False)
    currency: ClassVar[str] = "USD"
    note: Optional[str] = None

    @property
    def refunded(self) -> bool:
        return self.status == "refunded"

    def __post_init__(self):
        self.total = round(self.total, 2)

orders = [Order(o["total"], o["id"], o["status"]) for o in list_orders(user_id=2, page_size=10)["orders"]]
orders.sort(reverse=True)
print(orders[0], Order.currency, orders[0] == replace(orders[0], id=-1))
print(astuple(orders[-1]), [o.id for o in orders if o.refunded])
final_answer([asdict(o) for o in orders[:2]])
''')
s("c15_isinstance_union_types", '''
from typing import Union, Optional
def norm(v: int | str | None) -> str:
    if isinstance(v, int | float):
        return f"num:{v}"
    if isinstance(v, (str, bytes)):
        return f"text:{v}"
    return "none"
u = get_user(user_id=1)
print([norm(x) for x in (1, 2.5, "a", None)], isinstance(u, dict | list), issubclass(bool, int | str))
final_answer(norm(u["id"]))
''')

s("c15_dataclass_slots_kw", '''
from dataclasses import dataclass, field
@dataclass(slots=True, frozen=True)
class Point:
    x: float
    y: float = 0.0
    def dist(self, other: "Point") -> float:
        return ((self.x - other.x) ** 2 + (self.y - other.y) ** 2) ** 0.5

@dataclass
class Scaled:
    base: int
    factor: int = field(default=2, repr=False)
    value: int = field(init=False)
    def __post_init__(self):
        self.value = self.base * self.factor

pts = [Point(1, 2), Point(4, 6), Point(1, 2)]
print(pts[0].dist(pts[1]), pts[0] == pts[2], len(set(pts)), Scaled(3).value, Scaled(3, 5))
final_answer(Scaled(2, 10).value)
''')

s("c15_functools_cached_property_partial", '''
from functools import partial, reduce
class Account:
    def __init__(self, uid):
        self.uid = uid
        self.loads = 0
        self._profile = None
    @property
    def profile(self):
        if self._profile is None:
            self.loads += 1
            self._profile = PROFILES[self.uid]
        return self._profile
PROFILES = {u["id"]: get_user(u["id"]) for u in list_users()}
a = Account(2)
print(a.profile["name"], a.profile["tier"], a.loads)
fmt = partial("{}: {}".format, "user")
to_int = partial(int, base=2)
print(fmt(a.uid), to_int("1011"), fmt.func is not None)
final_answer(a.loads)
''')

s("c15_re_advanced", '''
import re
log = read_file(path="app.log")
rx = re.compile(r"""
    (?P<date>\\d{4}-\\d{2}-\\d{2})\\s+
    (?P<time>[\\d:]+)\\s+
    (?P<level>[A-Z]+)\\s+
    (?P<msg>.*)
""", re.VERBOSE)
entries = [m.groupdict() for m in rx.finditer(log)]
print(entries[1], rx.search(log).span(), rx.pattern.count("P<"))
masked = re.sub(r"\\d", lambda m: str(9 - int(m.group())), "a1b2c3")
parts = re.split(r"(,|;)\\s*", "a, b;c")
print(masked, parts, re.findall(r"(\\w)(\\d)", "a1 b2"), re.sub(r"(?i)ERROR", "E", log).count("E "))
print(bool(re.fullmatch(r"[a-z]+@[a-z]+\\.(com|org)", "ada@example.com")), re.escape("a.b"), re.subn("o", "0", "foo boo"))
m = re.search(r"(?<=db )\\w+", log)
print(m.group(0), m.start(), m.groups(), re.match(r"(a)(b)?", "a").groups(default="-"))
final_answer(sorted({e["level"] for e in entries}))
''')

s("c15_asyncio_patterns", '''
import asyncio

async def worker(name, queue_items, results):
    for uid in queue_items:
        u = await tools.get_user(user_id=uid)
        results.append((name, u["id"]))
        await asyncio.sleep(0)

async def main():
    results = []
    tasks = [asyncio.create_task(worker(f"w{i}", ids, results)) for i, ids in enumerate([[1, 2], [3], [4]])]
    await asyncio.gather(*tasks)
    try:
        await asyncio.wait_for(tools.get_weather(city="Rome"), timeout=5)
    except asyncio.TimeoutError:
        print("timeout")
    async with asyncio.timeout(10):
        w = await tools.get_weather(city="Lima")
    done = [t.done() for t in tasks]
    return sorted(r[1] for r in results), done, w["condition"]

if __name__ == "__main__":
    out = asyncio.run(main())
    print(out)
''')

s("c15_async_generator_for", '''
import asyncio
async def pages(uid):
    page = 1
    while page is not None:
        data = await tools.list_orders(user_id=uid, page=page)
        for o in data["orders"]:
            yield o
        page = data["next_page"]

async def main():
    totals = {}
    for uid in (1, 2):
        totals[uid] = round(sum([o["total"] async for o in pages(uid)]), 2)
    first = None
    async for o in pages(3):
        first = o
        break
    return {"totals": totals, "first": first["id"]}

result = await main()
''')

s("c15_str_bytes_methods", '''
u = get_user(user_id=2)
name = u["name"]
print(name.removeprefix("Alan ").removesuffix("x"), name.partition(" "), name.rpartition("n"), name.casefold(), "7".zfill(3))
print("a\\tb".expandtabs(4), "x\\ny\\n".splitlines(keepends=True), name.center(20, "."), name.ljust(14, "_") + "|", name.swapcase(), name.istitle())
b = name.encode()
print(b.hex(), len(b), b.decode("utf-8"), bytes.fromhex("4142"), b"abc".upper())
print(name.startswith(("Al", "Gr")), name.find("z"), name.rfind("n"), name.count("n"), name.index("T"), "-".join(reversed(name.split())), name.title(), "ß".upper())
print("%-6s|%6.2f|%c|%o|%e" % ("ab", 3.14159, 65, 8, 1234.5), "a,b,,c".split(","), "  x ".strip(), "xxhixx".strip("x"), "a b  c".split(None, 1))
final_answer(name[::-1].lower())
''')

s("c15_typing_generics_protocols", '''
from typing import Generic, TypeVar, Callable, Iterable, Iterator, Optional, Any, NamedTuple, Final, Annotated, overload, cast

T = TypeVar("T")
K = TypeVar("K")
MAX: Final = 3

class Stack(Generic[T]):
    def __init__(self) -> None:
        self._items: list[T] = []
    def push(self, item: T) -> None:
        self._items.append(item)
    def pop(self) -> T:
        return self._items.pop()
    def __len__(self) -> int:
        return len(self._items)
    def __iter__(self) -> Iterator[T]:
        return iter(reversed(self._items))

class Pair(NamedTuple):
    key: str
    value: int = 0

def group_by(items: Iterable[T], key: Callable[[T], K]) -> dict[K, list[T]]:
    out: dict[K, list[T]] = {}
    for it in items:
        out.setdefault(key(it), []).append(it)
    return out

st: Stack[int] = Stack()
for i in range(MAX):
    st.push(i * i)
Score = Annotated[int, "points"]
s2: Score = cast(int, "5")
users = [get_user(i) for i in range(1, 5)]
g = group_by(users, lambda u: u["tier"])
print(list(st), len(st), st.pop(), Pair("a"), Pair("b", 2)._asdict(), s2)
final_answer({k: [u["id"] for u in v] for k, v in g.items()})
''')

s("c15_enum_more", '''
from enum import Enum, IntEnum, auto, StrEnum
class Status(StrEnum):
    PAID = auto()
    SHIPPED = auto()
    REFUNDED = auto()
class Prio(IntEnum):
    LOW = 1
    HIGH = 3
class Color(Enum):
    RED = 1
    GREEN = 2
    @classmethod
    def parse(cls, s):
        return cls[s.upper()]
    def __str__(self):
        return self.name.lower()
orders = list_orders(user_id=3, page_size=10)["orders"]
counts = {st: sum(1 for o in orders if o["status"] == st) for st in Status}
print(counts, Status("paid") is Status.PAID, Status.PAID == "paid", Prio.HIGH > Prio.LOW, Prio(3).name, max(Prio))
print(Color.parse("red"), repr(Color.GREEN), [c.value for c in Color], Color.RED in Color, len(Color), f"{Color.RED}")
final_answer({str(k): v for k, v in counts.items()})
''')

s("c15_class_container_protocol", '''
class Inventory:
    def __init__(self, items=None):
        self._items = dict(items or {})
    def __getitem__(self, key):
        return self._items[key]
    def __setitem__(self, key, value):
        self._items[key] = value
    def __delitem__(self, key):
        del self._items[key]
    def __contains__(self, key):
        return key in self._items
    def __len__(self):
        return len(self._items)
    def __iter__(self):
        yield from sorted(self._items)
    def __bool__(self):
        return any(self._items.values())
    def __add__(self, other):
        merged = Inventory(self._items)
        for k in other:
            merged[k] = merged._items.get(k, 0) + other[k]
        return merged
    def __repr__(self):
        return f"Inventory({self._items!r})"

inv = Inventory({"apple": 3, "pear": 0})
inv["plum"] = 2
del inv["pear"]
both = inv + Inventory({"apple": 1, "kiwi": 5})
print(inv, len(inv), "plum" in inv, list(both), bool(Inventory({"x": 0})), sorted(both, key=lambda k: both[k]))
final_answer({k: both[k] for k in both})
''')

s("c15_json_roundtrip_dates", '''
import json
from datetime import date, datetime, timedelta
user = get_user(user_id=4)
signup = date.fromisoformat(user["signup"])
record = {"user": user["name"], "signup": signup, "renew": signup + timedelta(days=365), "tags": {"b", "a"}}
def enc(o):
    if isinstance(o, (date, datetime)):
        return o.isoformat()
    if isinstance(o, set):
        return sorted(o)
    raise TypeError(f"cannot encode {type(o).__name__}")
text = json.dumps(record, default=enc, indent=2)
print(text)
try:
    json.loads("{bad json}")
except json.JSONDecodeError as e:
    print("bad:", e.msg, e.pos)
back = json.loads(text)
print(datetime.strptime(back["renew"], "%Y-%m-%d").strftime("%d/%m/%y"), (date(2024, 3, 1) - date(2024, 2, 1)).days)
dt = datetime(2024, 1, 31, 23, 59) + timedelta(minutes=2)
print(dt, dt.date(), dt.time(), dt.replace(day=1), dt.strftime("%j %U %p %I"), datetime.fromisoformat("2024-05-01T10:00:00").hour)
final_answer(back)
''')

s("c15_ptc_fanout_summary", '''
import asyncio
import json
from collections import defaultdict

async def main():
    users = await tools.list_users()
    profiles, pages = await asyncio.gather(
        asyncio.gather(*[tools.get_user(user_id=u["id"]) for u in users]),
        asyncio.gather(*[tools.list_orders(user_id=u["id"], page_size=50) for u in users]),
    )
    spend = defaultdict(float)
    for profile, page in zip(profiles, pages):
        spend[profile["tier"]] += sum(o["total"] for o in page["orders"] if o["status"] != "refunded")
    summary = {tier: round(v, 2) for tier, v in sorted(spend.items(), key=lambda kv: kv[1], reverse=True)}
    print(json.dumps(summary))
    return summary

asyncio.run(main())
''')
s("c15_reprs_of_containers", '''
from collections import defaultdict, Counter, deque, OrderedDict, namedtuple
dd = defaultdict(list)
dd["a"].append(1)
Pt = namedtuple("Pt", ["x", "y"])
print(dd, Counter("aab"), deque([1, 2], maxlen=5), OrderedDict(a=1), Pt(1, 2))
print(type("x"), type(1), type([]), type({}), type(dd).__name__, type(Pt(1, 2)).__name__, str(int), repr(float))
print(repr(KeyError("k")), str(KeyError("k")), repr(ValueError("bad", 2)), ValueError("bad", 2).args, repr(Exception()))
print(0.1 + 0.2, 1e16, 1/3, 2.0, -0.0, 10**20, 1_000_000, float("inf"), round(2.675, 2), 3.0 * 1.1)
print({1, 2, 3}, frozenset({1}), set(), (1,), [None, True], {"k": (1, 2.5)}, range(0, 10, 2), b"\\x00ab", 3 + 4j)
final_answer(repr(dd))
''')

s("c15_iter_protocol_next_stop", '''
class Countdown:
    def __init__(self, start):
        self.n = start
    def __iter__(self):
        return self
    def __next__(self):
        if self.n <= 0:
            raise StopIteration
        self.n -= 1
        return self.n + 1

class Pages:
    def __init__(self, pages):
        self.pages = pages
    def __iter__(self):
        for data in self.pages:
            yield from data["orders"]

def load(uid):
    out, page = [], 1
    while page:
        data = list_orders(user_id=uid, page=page)
        out.append(data)
        page = data["next_page"]
    return out

print(list(Countdown(3)), sum(Countdown(4)), max(Countdown(2)), list(zip(Countdown(3), "abc")))
it = iter([1, 2])
print(next(it), next(it), next(it, None))
ids = [o["id"] for o in Pages(load(2))]
final_answer(ids)
''')

s("c15_decorators_with_args", '''
import functools
calls = []
def retry(times=3, exceptions=(Exception,)):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            last = None
            for attempt in range(1, times + 1):
                try:
                    return fn(*args, **kwargs)
                except exceptions as e:
                    last = e
                    calls.append((fn.__name__, attempt))
            raise RuntimeError(f"{fn.__name__} failed after {times} tries") from last
        return wrapper
    return deco

def register(cls):
    REGISTRY[cls.__name__.lower()] = cls
    return cls
REGISTRY = {}

@register
class Alpha:
    pass

attempts = {"n": 0}
@retry(times=4, exceptions=(ValueError,))
def flaky():
    attempts["n"] += 1
    if attempts["n"] < 3:
        raise ValueError("not yet")
    return "ok"

try:
    retry(times=2)(lambda: 1 / 0)()
except RuntimeError as e:
    print(e, type(e.__cause__).__name__)
print(flaky(), flaky.__name__, calls, sorted(REGISTRY))
final_answer(attempts["n"])
''')

s("c15_exception_details", '''
def check(u):
    assert u["tier"] in ("gold", "silver"), f"unexpected tier {u['tier']}"
    return u["name"]

out = []
for uid in range(1, 5):
    try:
        out.append(check(get_user(uid)))
    except AssertionError as e:
        out.append(f"assert: {e}")
try:
    {}["missing"]
except KeyError as e:
    out.append(f"{type(e).__name__}: {e} / {e.args[0]}")
try:
    int("x1")
except (TypeError, ValueError) as e:
    out.append(str(e))
def f():
    try:
        return "try"
    finally:
        out.append("finally ran")
out.append(f())
try:
    try:
        1 / 0
    except ZeroDivisionError:
        raise
except ArithmeticError as e:
    out.append(repr(e))
try:
    raise ExceptionGroup("many", [ValueError("a"), KeyError("b")])
except ExceptionGroup as eg:
    out.append(len(eg.exceptions))
err = None
try:
    [][0]
except IndexError as e:
    err = e
out.append(isinstance(err, LookupError))
final_answer(out)
''')

s("c15_dict_idioms", '''
users = {u["id"]: get_user(u["id"]) for u in list_users()}
by_tier = {}
for u in users.values():
    by_tier.setdefault(u["tier"], []).append(u["id"])
merged = {"a": 1} | {"b": 2}
merged |= {"a": 3}
inverted = {v: k for k, v in merged.items()}
print(dict(sorted(by_tier.items())), merged, inverted, dict.fromkeys("ab", 0), list(reversed(merged)), list(reversed(merged.items())))
print(dict(zip(["x", "y"], [1, 2])), {**merged, "c": 4}, merged.get("zz", "none"), "a" in merged, merged.pop("b"), merged.popitem())
nested = {"a": {"b": {"c": 1}}}
print(nested.get("a", {}).get("b", {}).get("c"), list(nested.keys()), len(nested), sorted(users, reverse=True))
print(set.union(*[{1}, {2}, {3}]), set.intersection({1, 2}, {2, 3}), str.join("-", ["a", "b"]), list(map(dict.keys, [{"q": 1}])), sorted(users.items(), key=lambda kv: kv[1]["signup"])[0][0])
final_answer({k: len(v) for k, v in by_tier.items()})
''')

s("c15_operator_itemgetter_sort", '''
from operator import itemgetter, attrgetter, methodcaller
from dataclasses import dataclass
@dataclass
class U:
    name: str
    tier: str
rows = [get_user(i) for i in range(1, 5)]
print([r["id"] for r in sorted(rows, key=itemgetter("tier", "name"))])
objs = [U(r["name"], r["tier"]) for r in rows]
print([o.name for o in sorted(objs, key=attrgetter("tier"))], list(map(methodcaller("upper"), ["a", "b"])))
pairs = [(3, "c"), (1, "a"), (2, "b")]
pairs.sort(key=itemgetter(0))
print(pairs, max(pairs, key=itemgetter(1)), list(map(itemgetter(1), pairs)))
final_answer(itemgetter(0, 2)(["x", "y", "z"]))
''')

s("c15_matrix_and_zip_star", '''
matrix = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
transposed = [list(col) for col in zip(*matrix)]
diag = [matrix[i][i] for i in range(len(matrix))]
flat = sum(matrix, [])
rotated = [list(r) for r in zip(*matrix[::-1])]
print(transposed, diag, flat, rotated)
table = [["name", "qty"], ["apple", 3], ["kiwi", 12]]
widths = [max(len(str(row[i])) for row in table) for i in range(2)]
for row in table:
    print(" | ".join(f"{str(c):<{w}}" for c, w in zip(row, widths)))
grid = [["."] * 3 for _ in range(2)]
grid[0][1] = "#"
print("\\n".join("".join(r) for r in grid))
final_answer(transposed)
''')

s("c15_smol_web_research", '''
queries = ["python 3.12 release", "asyncio taskgroup", "pattern matching pep"]
notes = {}
for q in queries:
    results = search(query=q, limit=2)
    print(f"## {q}")
    for i, r in enumerate(results, start=1):
        print(f"{i}. {r['title']} ({r['url']})")
        print(f"   {r['snippet'][:40]}...")
    notes[q] = [r["url"] for r in results]
print(f"Collected {sum(len(v) for v in notes.values())} links")
final_answer(notes)
''')

s("c15_recursion_and_memo", '''
from functools import lru_cache, cache
@cache
def ways(n, coins=(1, 2, 5)):
    if n == 0:
        return 1
    if n < 0 or not coins:
        return 0
    return ways(n - coins[0], coins) + ways(n, coins[1:])

def flatten(xs):
    out = []
    for x in xs:
        if isinstance(x, (list, tuple)):
            out.extend(flatten(x))
        else:
            out.append(x)
    return out

def permutations(s):
    if len(s) <= 1:
        return [s]
    return [c + p for i, c in enumerate(s) for p in permutations(s[:i] + s[i + 1:])]

@lru_cache(maxsize=128)
def collatz(n):
    return 0 if n == 1 else 1 + collatz(n // 2 if n % 2 == 0 else 3 * n + 1)

print(ways(20), flatten([1, [2, (3, [4])], 5]), permutations("abc"), max(range(1, 30), key=collatz))
final_answer(ways(10))
''')

s("c15_ptc_async_helpers_typed", '''
import asyncio
import json
from typing import Any

async def get_json(name: str, **kwargs: Any) -> Any:
    fn = getattr(tools, name)
    raw = await fn(**kwargs)
    return json.loads(raw) if isinstance(raw, str) else raw

async def main() -> dict[str, Any]:
    weather, users = await asyncio.gather(get_json("get_weather", city="Kyoto"), get_json("list_users"))
    print(f"{weather['city']}: {weather['condition']}")
    return {"humid": weather["humidity"] > 40, "n": len(users)}

result = asyncio.run(main())
''')

s("c15_class_attrs_and_counters", '''
class Node:
    count = 0
    registry: dict = {}
    def __init__(self, name, parent=None):
        Node.count += 1
        self.name = name
        self.parent = parent
        self.children = []
        if parent is not None:
            parent.children.append(self)
        type(self).registry[name] = self
    def path(self):
        return (self.parent.path() + "/" if self.parent else "") + self.name
    def __repr__(self):
        return f"Node({self.name!r})"
    def __eq__(self, other):
        return isinstance(other, Node) and self.path() == other.path()

root = Node("root")
a = Node("a", root)
b = Node("b", a)
print(Node.count, b.path(), root.children, Node.registry["b"] is b, a == Node("a", root), Node.count)
try:
    {a}
except TypeError as e:
    print("unhashable:", e)
final_answer([n.path() for n in Node.registry.values()])
''')
s("c15_bytes_and_hex", '''
import hashlib
text = read_file("config.json")
raw = text.encode("utf-8")
def kind(v):
    if isinstance(v, (bytes, int)):
        return "bytes"
    return type(v).__name__
chunks = [raw[i:i + 16] for i in range(0, len(raw), 16)]
print(kind(raw), kind(text), len(chunks), chunks[0].hex(), bytes.fromhex("7b7d").decode())
print(bytes([104, 105]).decode(), bytes(2), bytes("ok", "ascii"), raw[:1] == b"{", isinstance(b"", bytes))
final_answer(hashlib.sha1(raw).hexdigest()[:10])
''')


# ---------------- compat round 3: csv/io, sys streams, dotted case values, int bytes ----------------
s("c3_csv_dictreader", '''
import csv, io
text = read_file("data/sales.csv")
rows = list(csv.DictReader(io.StringIO(text)))
totals = {}
for r in rows:
    totals[r["region"]] = totals.get(r["region"], 0) + int(r["amount"])
print(rows[0])
totals
''')

s("c3_csv_reader_lines", '''
import csv
text = read_file(path="data/sales.csv")
reader = csv.reader(text.splitlines())
header = next(reader)
data = [row for row in reader]
[header, data[:2], len(data)]
''')

s("c3_csv_writer_stringio", '''
import csv, io
users = [get_user(i) for i in (1, 2, 3)]
buf = io.StringIO()
w = csv.DictWriter(buf, fieldnames=["id", "name", "tier"], extrasaction="ignore")
w.writeheader()
w.writerows(users)
out = buf.getvalue()
print(out)
out.splitlines()
''')

s("c3_csv_writer_stdout", '''
import csv, sys
w = csv.writer(sys.stdout, lineterminator="\\n")
w.writerow(["name", "note"])
w.writerow(["Ada", 'said "hi", then left'])
w.writerow([1, 2.5, None, True])
''')

s("c3_csv_quoting", '''
import csv, io
buf = io.StringIO()
csv.writer(buf, quoting=csv.QUOTE_NONNUMERIC).writerow(["a", 1, 2.5])
r = list(csv.reader(io.StringIO(buf.getvalue()), quoting=csv.QUOTE_NONNUMERIC))
[buf.getvalue(), r]
''')

s("c3_csv_semicolon", '''
import csv
lines = ["a;b;c", "1;2;3", "", "4;5"]
rows = list(csv.DictReader(lines, delimiter=";", restval="-"))
rows
''')

s("c3_stringio_print", '''
import io
buf = io.StringIO()
for u in list_users():
    print(u["id"], u["name"], sep=": ", file=buf)
buf.write("end\\n")
text = buf.getvalue()
buf.seek(0)
first = buf.readline()
rest = buf.read()
[text, first, rest.count("\\n"), buf.tell() == len(text)]
''')

s("c3_stringio_iter", '''
import io
f = io.StringIO("l1\\nl2\\nl3")
with f:
    lines = [line.rstrip() for line in f]
[lines, f.closed]
''')

s("c3_match_enum", '''
from enum import Enum
class Tier(Enum):
    GOLD = "gold"
    SILVER = "silver"
    BRONZE = "bronze"
def rank(t):
    match t:
        case Tier.GOLD:
            return 1
        case Tier.SILVER | Tier.BRONZE as other if other.value.startswith("s"):
            return 2
        case None | Tier.BRONZE:
            return 3
        case "x" | Tier.GOLD:
            return 4
        case _:
            return 5
users = [get_user(i) for i in range(1, 5)]
final_answer([rank(Tier(u["tier"])) for u in users] + [rank(None), rank("x"), rank(7)])
''')

s("c3_match_status_class_consts", '''
class Status:
    OK = 200
    NOT_FOUND = 404
def describe(code):
    match code:
        case Status.OK:
            return "ok"
        case Status.NOT_FOUND:
            return "missing"
        case _:
            return "other"
[describe(200), describe(404), describe(500)]
''')

s("c3_match_module_const", '''
import re
def f(x):
    match x:
        case re.IGNORECASE:
            return "i"
        case _:
            return "?"
[f(re.IGNORECASE), f(0)]
''')

s("c3_match_toplevel", '''
from enum import IntEnum
class P(IntEnum):
    LOW = 1
    HIGH = 2
out = []
for v in [1, 2, 3]:
    match v:
        case P.LOW:
            out.append("low")
        case P.HIGH:
            out.append("high")
        case other:
            out.append(f"n{other}")
out
''')

s("c3_from_bytes", '''
n = int.from_bytes(b"\\x01\\x02", "big")
m = int.from_bytes(b"\\x01\\x02", byteorder="little")
result = [n, m, (258).to_bytes(2, "big").hex()]
''')

s("c3_importerror_name", '''
try:
    import pandas as pd
except ImportError as e:
    print("missing", e.name)
    pd = None
result = pd is None
''')

s("c3_main_guard_assigns_result", '''
import asyncio
async def main():
    u = await tools.get_user(user_id=2)
    orders = await tools.list_orders(user_id=2, page_size=10)
    print(u["name"])
    return {"name": u["name"], "orders": len(orders["orders"])}
if __name__ == "__main__":
    result = asyncio.run(main())
''')

s("c3_sys_stdout_write_json", '''
import json, sys
users = [get_user(i) for i in (1, 3)]
sys.stdout.write(json.dumps([u["name"] for u in users]) + "\\n")
print("gold:", sum(u["tier"] == "gold" for u in users), file=sys.stdout)
sys.stdout.flush()
best = min(users, key=lambda u: u["signup"])["name"] if users else sys.maxsize
best
''')


# ---------------- compat round 4: time/html/string.Template/Flag/cached_property/uuid ----------------
s("c4_time_strftime_report", '''
import time
stamps = {"start": 1714557600, "end": 1714644000}
for label, ts in stamps.items():
    print(f"{label:>5}: {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(ts))}")
t = time.strptime("2024-03-14 09:30", "%Y-%m-%d %H:%M")
parsed = [t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_wday, t.tm_yday]
back = time.mktime(time.localtime(1714557600))
local = time.localtime(0)
final_answer({"parsed": parsed, "roundtrip": back, "epoch": time.asctime(time.gmtime(0)),
              "ctime": time.ctime(86400), "zone": [local.tm_zone, local.tm_gmtoff],
              "iso": time.strftime("%Y-%m-%dT%H:%M:%SZ", (2024, 5, 1, 10, 0, 0, 2, 122, 0)),
              "now_ok": len(time.strftime("%H:%M")) == 5 and time.time_ns() > 0})
''')

s("c4_html_escape_table", '''
import html
users = [get_user(user_id=i) for i in (1, 2)]
rows = []
for u in users:
    rows.append(f"<tr><td>{html.escape(u['name'])}</td><td>{html.escape(u['email'])}</td></tr>")
rows.append("<tr><td>" + html.escape('<script>alert("x")</script> & \\'q\\'') + "</td></tr>")
print("\\n".join(rows))
snippet = "Tom &amp; Jerry &lt;3 &#39;cartoons&#39; &eacute;t&eacute; &#x41;&#66;"
[html.unescape(snippet), html.escape("a < b & 'c'", quote=False)]
''')

s("c4_string_template_emails", '''
from string import Template
tpl = Template("Hi $name,\\nyour $tier plan renews on ${date}. Cost: $$${price}.")
out = []
for uid in (1, 2):
    u = get_user(uid)
    out.append(tpl.substitute(name=u["name"].split()[0], tier=u["tier"], date=u["signup"],
                              price=9.5 if u["tier"] == "gold" else 5))
partial = tpl.safe_substitute({"name": "Ada"}, tier="gold")
print(partial)
errors = []
for bad, values in ((tpl, {"name": "x"}), (Template("cost: $ 5"), {})):
    try:
        bad.substitute(values)
    except KeyError as e:
        errors.append(f"missing {e}")
    except ValueError as e:
        errors.append(str(e))
final_answer({"emails": out, "partial": partial, "errors": errors,
              "ids": tpl.get_identifiers(), "valid": [tpl.is_valid(), Template("$").is_valid()],
              "template": Template("$a-$b").template})
''')

s("c4_enum_flag_permissions", '''
from enum import Flag, IntFlag, auto

class Perm(Flag):
    READ = auto()
    WRITE = auto()
    EXEC = auto()
    RW = READ | WRITE

class Tier(IntFlag):
    FREE = 1
    GOLD = 2
    ADMIN = 4

grants = {"gold": Perm.READ | Perm.WRITE, "silver": Perm.READ, "bronze": Perm(0)}
report = {}
for uid in (1, 2, 4):
    u = get_user(user_id=uid)
    p = grants[u["tier"]]
    report[u["name"]] = {"perm": str(p), "can_write": Perm.WRITE in p, "any": bool(p),
                         "bits": [m.name for m in p], "n": len(p)}
t = Tier.GOLD | Tier.ADMIN
print(repr(Perm.RW), repr(~Perm.READ), repr(t), t, t | 8, repr(Tier.FREE & 0))
print([m.name for m in Perm], len(Perm), (Perm.READ | Perm.WRITE) is Perm.RW, Perm(5))
try:
    Perm(8)
except ValueError as e:
    print("invalid:", str(e).splitlines()[0])
final_answer({"report": report, "tier": int(t), "admin": bool(t & Tier.ADMIN),
              "sorted": sorted([Tier.ADMIN, Tier.FREE]), "json": t + 0})
''')

s("c4_cached_property_orders", '''
from functools import cached_property
from dataclasses import dataclass

class Customer:
    def __init__(self, user, orders):
        self.user = user
        self.orders = orders
        self.computed = 0

    @cached_property
    def lifetime_value(self):
        self.computed += 1
        return round(sum(o["total"] for o in self.orders if o["status"] != "refunded"), 2)

@dataclass(frozen=True)
class Summary:
    values: tuple

    @cached_property
    def best(self):
        print("computing best")
        return max(self.values)

customers = [Customer(get_user(uid), list_orders(uid, 1, 50)["orders"]) for uid in (1, 3)]
values = [c.lifetime_value for c in customers] + [c.lifetime_value for c in customers]
s = Summary(tuple(values))
del customers[0].lifetime_value
again = customers[0].lifetime_value
[values, s.best, s.best, [c.computed for c in customers], again,
 "lifetime_value" in vars(customers[1]), Customer.lifetime_value.attrname]
''')

s("c4_uuid_ids", '''
import uuid
records = []
for u in list_users():
    stable = uuid.uuid5(uuid.NAMESPACE_URL, f"https://ex.com/users/{u['id']}")
    records.append({"id": str(stable), "short": stable.hex[:8], "name": u["name"]})
rid = uuid.uuid4()
parsed = uuid.UUID("{12345678-1234-5678-1234-567812345678}")
checks = [len(str(rid)), rid.version, str(rid)[14], len(rid.hex), rid != uuid.uuid4(),
          parsed.int, repr(parsed), parsed.urn, uuid.UUID(int=parsed.int) == parsed,
          str(uuid.uuid3(uuid.NAMESPACE_DNS, "example.com")), isinstance(rid, uuid.UUID),
          str(uuid.UUID(bytes=bytes(range(16)))), sorted([parsed, uuid.UUID(int=1)])[0].int]
print(f"request {parsed}")
final_answer({"records": records, "checks": checks})
''')

s("c4_match_builtin_class_patterns", '''
def describe(value):
    match value:
        case {"id": int(uid), "name": str(name)} if uid > 2:
            return f"late user {name}"
        case {"id": int(uid)}:
            return f"user {uid}"
        case [str() as first, *rest]:
            return f"{first} and {len(rest)} more"
        case float(x) | int(x) if not isinstance(x, bool):
            return x * 2
        case bool(flag):
            return f"flag {flag}"
        case dict() | list():
            return "empty"
        case _:
            return "?"

items = [get_user(1), get_user(4), ["a", "b", "c"], 2.5, 7, True, {}, [], None]
[describe(v) for v in items]
''')

s("c4_exception_group_taskgroup", '''
import asyncio

async def main():
    found, failed = [], []
    try:
        async with asyncio.TaskGroup() as tg:
            for uid in (1, 99):
                tg.create_task(tools.get_user(user_id=uid))
    except ExceptionGroup as eg:
        failed = [isinstance(e, ToolCallError) for e in eg.exceptions]
    results = await asyncio.gather(*(tools.get_user(user_id=u) for u in (2, 97)),
                                   return_exceptions=True)
    found = [r["name"] if isinstance(r, dict) else "error" for r in results]
    return {"failed": failed, "found": found}

asyncio.run(main())
''')

s("c4_frozen_dataclass_derived_fields", '''
from dataclasses import dataclass, field

@dataclass(frozen=True)
class UserView:
    user_id: int
    name: str
    slug: str = field(init=False)
    _initials: str = field(init=False, repr=False)

    def __post_init__(self):
        object.__setattr__(self, "slug", self.name.lower().replace(" ", "-"))
        object.__setattr__(self, "_initials", "".join(p[0] for p in self.name.split()))

views = [UserView(u["id"], u["name"]) for u in list_users()]
for v in views:
    print(v)
[(v.slug, v._initials) for v in views]
''')

s("c4_stdlib_idioms_mix", '''
import itertools, json, math, operator, re, textwrap
from collections import namedtuple
from dataclasses import dataclass, asdict, astuple, replace, fields
from datetime import datetime, timezone
from typing import Literal, Optional

Row = namedtuple("Row", ["name", "score", "tag"], defaults=[None])
rows = [Row(u["name"], len(u["name"]) % 5) for u in list_users()]
ranked = sorted(rows, key=lambda r: (-r.score, r.name))
by_score = {k: [r.name for r in g] for k, g in itertools.groupby(ranked, key=operator.attrgetter("score"))}

@dataclass
class Item:
    name: str
    kind: Literal["a", "b"] = "a"
    note: Optional[str] = None

it = replace(Item("x"), note="n")
when = datetime.fromisoformat("2024-05-01T10:00:00Z")
x = 3.14159
print(f"{x=:.2f}", f"{'name':>10}|", f"{1234567:,}", f"{x:{8}.{3}f}", "%(a)s-%(b)05.1f" % {"a": "k", "b": 2.5})
print(json.dumps({"b": [1, 2], "a": when}, indent=2, sort_keys=True, default=str))
total = 0
def bump(n):
    global total
    total += n
for n in (1, 2, 3):
    bump(n)
final_answer({
    "ranked": [r._asdict() for r in ranked], "groups": by_score,
    "pairs": list(itertools.pairwise([1, 2, 4])), "acc": list(itertools.accumulate([1, 2, 3], operator.mul)),
    "item": [asdict(it), astuple(it), [f.name for f in fields(Item)]],
    "when": [when.isoformat(), datetime(2024, 1, 1, tzinfo=timezone.utc).isoformat()],
    "text": ["a-b c".translate(str.maketrans({"-": "_", " ": None})), textwrap.shorten("The quick brown fox jumps", 15), textwrap.dedent("  a\\n  b")],
    "re": re.sub(r"\\d+", lambda m: str(int(m.group()) * 2), "a1b22"),
    "math": [math.isclose(0.1 + 0.2, 0.3), math.prod([2, 3]), math.comb(5, 2)],
    "walrus": [y for v in (1, 5, 9) if (y := v * 2) > 4], "total": total,
})
''')



# ---------------- compat round 6: styles from smolagents' prompt examples, Anthropic's
# programmatic tool calling docs (early exit, conditional calls, filtering), Cloudflare /
# Monty-style async (Semaphore, wait_for, as_completed, TaskGroup, async generators) ----------
s("c6_smol_print_bare_call_in_args", '''
for city in ["Paris", "Lima"]:
    print(f"Weather {city}:", get_weather(city)["condition"])
print("\\n" + "=" * 20 + "\\n")
final_answer("done")
''')

s("c6_ptc_typing_annotations", '''
from typing import Any, Optional, TypedDict
import asyncio

class OrderSummary(TypedDict):
    user: str
    paid: float

async def summarize(uid: int) -> Optional[OrderSummary]:
    user: dict[str, Any] = await tools.get_user(user_id=uid)
    page: dict[str, Any] = await tools.list_orders(user_id=uid, page_size=50)
    paid: float = sum(o["total"] for o in page["orders"] if o["status"] == "paid")
    if not paid:
        return None
    return OrderSummary(user=user["name"], paid=round(paid, 2))

async def main() -> list[OrderSummary]:
    results = await asyncio.gather(*[summarize(uid) for uid in range(1, 5)])
    return [r for r in results if r is not None]

result = asyncio.run(main())
print(f"{len(result)=}")
''')

s("c6_monty_dataclass_field_order", '''
from dataclasses import dataclass, field
from functools import total_ordering

@total_ordering
@dataclass
class Ranked:
    name: str
    score: float
    tags: list[str] = field(default_factory=list)

    def __lt__(self, other: "Ranked") -> bool:
        return (self.score, self.name) < (other.score, other.name)

    @property
    def label(self) -> str:
        return f"{self.name} ({self.score:.1f})"

    @classmethod
    def from_user(cls, u: dict) -> "Ranked":
        return cls(u["name"], len(u["email"]) / 2, [u["tier"]])

    @staticmethod
    def header() -> str:
        return "name (score)"

ranked = sorted([Ranked.from_user(await tools.get_user(user_id=i)) for i in (1, 2, 3, 4)])
print(Ranked.header())
for r in ranked:
    print(r.label, r.tags)
[r.label for r in ranked], max(ranked).name, ranked[0] <= ranked[1]
''')

s("c6_cf_async_semaphore_wait_for", '''
import asyncio
sem = asyncio.Semaphore(2)
async def fetch(city):
    async with sem:
        w = await asyncio.wait_for(tools.get_weather(city=city), timeout=5)
        return city, w["temperature"]
pairs = await asyncio.gather(*(fetch(c) for c in ["Oslo", "Rome", "Cairo", "Quito"]))
temps = dict(pairs)
hottest = max(temps, key=temps.get)
print(f"hottest: {hottest} at {temps[hottest]:.1f}C")
{"temps": temps, "hottest": hottest}
''')

s("c6_cf_as_completed_collect", '''
import asyncio
results = {}
for coro in asyncio.as_completed([tools.get_user(user_id=i) for i in (3, 1, 2)]):
    u = await coro
    results[u["id"]] = u["name"].split()[0]
dict(sorted(results.items()))
''')

s("c6_ptc_taskgroup", '''
import asyncio
async def main():
    async with asyncio.TaskGroup() as tg:
        tasks = {uid: tg.create_task(tools.list_orders(user_id=uid, page_size=100)) for uid in (1, 2, 3)}
    counts = {uid: len(t.result()["orders"]) for uid, t in tasks.items()}
    print("counts", counts)
    return counts
asyncio.run(main())
''')

s("c6_monty_collections_mix", '''
from collections import Counter, defaultdict, deque, namedtuple, OrderedDict
User = namedtuple("User", ["id", "name", "tier"])
users = [User(u["id"], u["name"], get_user(u["id"])["tier"]) for u in list_users()]
tiers = Counter(u.tier for u in users)
by_tier = defaultdict(list)
for u in users:
    by_tier[u.tier].append(u.name)
recent = deque(maxlen=2)
for u in users:
    recent.append(u.id)
od = OrderedDict(sorted(tiers.items()))
od.move_to_end("gold")
print(tiers.most_common(1), dict(by_tier), list(recent))
result = {"tiers": dict(tiers), "od": list(od), "first": users[0]._asdict(), "replaced": users[1]._replace(tier="x").tier, "total": tiers.total()}
''')

s("c6_smol_statistics_itertools", '''
import statistics, itertools, operator
from functools import reduce, partial, lru_cache
temps = [get_weather(c)["temperature"] for c in ["Oslo", "Rome", "Cairo", "Lima", "Quito", "Bern"]]
q = statistics.quantiles(temps, n=4)
pairs = list(itertools.pairwise(sorted(temps)))
gaps = [b - a for a, b in pairs]
prod = reduce(operator.mul, [1, 2, 3, 4], 1)
to_f = partial(lambda t, scale: t * scale + 32, scale=1.8)

@lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

groups = {k: list(g) for k, g in itertools.groupby(sorted(temps), key=lambda t: t // 10)}
final_answer({"q": q, "gaps": gaps, "prod": prod, "f": [round(to_f(t), 1) for t in temps[:2]], "fib": fib(30), "groups": groups, "median": statistics.median_low(temps), "mode": statistics.mode([1, 1, 2]), "pstdev": round(statistics.pstdev(temps), 4)})
''')

s("c6_monty_datetime_tz", '''
from datetime import datetime, timedelta, timezone, date
u = get_user(2)
signup = datetime.fromisoformat(u["signup"]).replace(tzinfo=timezone.utc)
later = signup + timedelta(days=30, hours=5)
offset = later.astimezone(timezone(timedelta(hours=-5)))
weeks = (date(2024, 12, 25) - signup.date()).days // 7
print(f"{signup:%Y-%m-%d} -> {later.isoformat()} ({offset:%H:%M %z})")
[later.isoformat(), offset.isoformat(), weeks, later.weekday(), later.strftime("%a %d %b"), (later - signup).total_seconds(), signup.timestamp()]
''')

s("c6_ptc_json_indent_default", '''
import json
from datetime import date
orders = list_orders(user_id=1, page_size=5)["orders"]
def default(o):
    if isinstance(o, date):
        return o.isoformat()
    if isinstance(o, set):
        return sorted(o)
    raise TypeError(f"not serializable: {type(o).__name__}")
payload = {"when": date(2024, 5, 1), "statuses": {o["status"] for o in orders}, "n": len(orders)}
text = json.dumps(payload, indent=2, default=default, sort_keys=True)
print(text)
compact = json.dumps(payload, default=default, separators=(",", ":"))
json.loads(compact)
''')

s("c6_monty_match_walrus_fstrings", '''
import re
events = [{"type": "user", "id": 1}, {"type": "order", "user_id": 2, "page": 1}, {"type": "weather", "city": "Lima"}, {"type": "noop"}, ["ping", 3]]
out = []
for ev in events:
    match ev:
        case {"type": "user", "id": int(uid)}:
            out.append(f"user {get_user(uid)['name']!r}")
        case {"type": "order", "user_id": uid, **rest}:
            out.append(f"orders {len(list_orders(uid, rest.get('page', 1))['orders']):>3}")
        case {"type": "weather", "city": str(city)} if (w := get_weather(city))["temperature"] > 10:
            out.append(f"{city}: {w['temperature']:+.1f}°")
        case ["ping", n]:
            out.append(f"pong {n:03d}")
        case _:
            out.append("skip")
x = 42.0
print(f"{x=}, {x!r:>8}, {x:.2e}, {1234567:,}, {0.25:.0%}, {'hi':^6}|")
out
''')

s("c6_smol_try_else_finally_raise_from", '''
log = []
def load(uid):
    try:
        u = get_user(uid)
    except Exception as e:
        raise ValueError(f"user {uid} missing") from e
    else:
        log.append(f"ok {uid}")
        return u["name"]
    finally:
        log.append(f"done {uid}")
names = []
for uid in (1, 9):
    try:
        names.append(load(uid))
    except ValueError as e:
        names.append(f"{e} (caused: {e.__cause__ is not None})")
final_answer({"names": names, "log": log})
''')

s("c6_monty_generators_global_nonlocal", '''
calls = 0
def counted(fn):
    def wrapper(*a, **kw):
        global calls
        calls += 1
        return fn(*a, **kw)
    return wrapper
@counted
def title_of(r):
    return r["title"]
def pages(q):
    n = 0
    def bump():
        nonlocal n
        n += 1
        return n
    for r in found:
        bump()
        yield r
    yield {"title": f"<{n} results>"}
found = search("rust lang", 3)
titles = [title_of(r) for r in pages("rust lang")]
gen = (t.upper() for t in titles if "RESULT" in t.upper())
first = next(gen)
[titles, first, calls, list(gen)]
''')

s("c6_ptc_zip_strict_enumerate_sorted", '''
users = list_users()
weather = [get_weather(c) for c in ["A", "Bb", "Ccc", "Dddd"]]
rows = [(i, u["name"], w["humidity"]) for i, (u, w) in enumerate(zip(users, weather, strict=True), start=1)]
try:
    list(zip([1, 2], [1], strict=True))
except ValueError as e:
    err = str(e)
ranked = sorted(rows, key=lambda r: (-r[2], r[1]))
[ranked, err, sorted(users, key=lambda u: len(u["name"]), reverse=True)[0]["name"]]
''')

s("c6_ptc_class_repr_eq_super", '''
class Entity:
    def __init__(self, id):
        self.id = id
    def __eq__(self, other):
        return isinstance(other, Entity) and self.id == other.id
    def __hash__(self):
        return hash(self.id)
    def __repr__(self):
        return f"{type(self).__name__}(id={self.id})"

class Customer(Entity):
    def __init__(self, data):
        super().__init__(data["id"])
        self.name = data["name"]
        self.tier = data["tier"]
    def __repr__(self):
        return f"{super().__repr__()[:-1]}, tier={self.tier!r})"
    def __lt__(self, other):
        return self.name < other.name

customers = sorted(Customer(get_user(i)) for i in (4, 2, 3))
print(customers)
[repr(c) for c in customers], Customer(get_user(2)) == Entity(2), len({*customers, Customer(get_user(2))})
''')

s("c6_smol_re_textwrap_pprint", '''
import re, textwrap, pprint
log = read_file("app.log")
pat = re.compile(r"(?P<date>\\d{4}-\\d{2}-\\d{2}) (?P<time>[\\d:]+) (?P<level>[A-Z]+) (?P<msg>.*)")
entries = [m.groupdict() for m in pat.finditer(log)]
errs = [e for e in entries if e["level"] == "ERROR"]
pprint.pprint(errs[0], width=60)
summary = textwrap.shorten(" ".join(e["msg"] for e in entries), width=30)
report = textwrap.dedent("""
    Errors: {n}
    First: {first}
""").strip().format(n=len(errs), first=errs[0]["time"])
print(report)
[summary, re.sub(r"\\s+", " ", "a   b\\t c"), re.split(r"[,;]\\s*", "a, b;c"), pprint.pformat({"b": 1, "a": [1, 2]})]
''')

s("c6_ptc_async_generator_pages", '''
async def all_orders(uid):
    page = 1
    while page:
        resp = await tools.list_orders(user_id=uid, page=page)
        for o in resp["orders"]:
            yield o
        page = resp["next_page"]
totals = {}
for uid in (1, 2):
    async for o in all_orders(uid):
        totals[o["status"]] = round(totals.get(o["status"], 0) + o["total"], 2)
totals
''')

s("c6_monty_isinstance_union_and_unbound_methods", '''
data = [get_user(1), list_users(), "text", 3, None, 2.5]
kinds = []
for d in data:
    if isinstance(d, dict | list):
        kinds.append("container")
    elif isinstance(d, int | float):
        kinds.append("number")
    elif d is None:
        kinds.append("none")
    else:
        kinds.append(type(d).__name__)
names = sorted([u["name"] for u in list_users()], key=str.lower)
stripped = list(map(str.strip, ["  a ", "b  "]))
upper = list(map(str.upper, names))
[kinds, names, stripped, upper[:2], max(names, key=len)]
''')

s("c6_smol_assert_del_star_unpack", '''
users = list_users()
assert isinstance(users, list), "expected a list"
assert len(users) == 4
first, *middle, last = users
del middle[0]
a, (b, c) = 1, (2, 3)
nums = [3, 1, 2]
nums.sort(reverse=True)
lo, hi = min(nums), max(nums)
ok = lo < 2 < hi <= 3
final_answer({"first": first["name"], "last": last["name"], "middle": [m["id"] for m in middle], "abc": a + b + c, "ok": ok, "nums": nums})
''')

s("c6_ptc_custom_exception_from", '''
class ToolFailed(Exception):
    def __init__(self, tool, detail):
        super().__init__(f"{tool} failed: {detail}")
        self.tool = tool

def must_get(uid):
    try:
        return get_user(uid)
    except Exception as err:
        raise ToolFailed("get_user", f"user {uid}") from err

out = []
for uid in (2, 5):
    try:
        out.append(must_get(uid)["name"])
    except ToolFailed as e:
        out.append([str(e), e.tool, e.args[0], isinstance(e.__cause__, Exception)])
out
''')

s("c6_monty_set_ops_frozen_dataclass", '''
from dataclasses import dataclass, asdict, replace
@dataclass(frozen=True)
class Key:
    domain: str
    tier: str
keys = {Key(u["email"].split("@")[1], u["tier"]) for u in (get_user(i) for i in (1, 2, 3, 4))}
com = {k for k in keys if k.domain.endswith(".com")}
gold = {k for k in keys if k.tier == "gold"}
print(len(com & gold), len(com | gold), len(com - gold), len(com ^ gold))
k = sorted(keys, key=lambda k: (k.domain, k.tier))[0]
[asdict(k), replace(k, tier="x").tier, frozenset({1, 2}) <= {1, 2, 3}, hash(k) == hash(Key(k.domain, k.tier))]
''')

s("c6_smol_print_sep_end_sys_stdout", '''
import sys
users = list_users()
print(*[u["id"] for u in users], sep=", ")
for u in users:
    print(u["name"][:3], end=" | ")
print()
sys.stdout.write("done\\n")
print("a", "b", sep="")
final_answer(len(users))
''')

s("c6_ptc_gather_return_exceptions_isinstance", '''
import asyncio
results = await asyncio.gather(*[tools.get_user(user_id=i) for i in (1, 7, 3)], return_exceptions=True)
ok = [r["name"] for r in results if not isinstance(r, Exception)]
failed = [i for i, r in zip((1, 7, 3), results) if isinstance(r, Exception)]
{"ok": ok, "failed": failed}
''')

s("c6_monty_dict_union_get_chain", '''
u = get_user(3)
defaults = {"tier": "none", "lang": "en", "address": {}}
merged = defaults | u
merged |= {"lang": "fr"}
city = merged.get("address", {}).get("city", "unknown")
stats = {k: v for k, v in sorted(merged.items()) if not isinstance(v, dict)}
[merged["tier"], merged["lang"], city, list(stats), {**u, "id": 0}["id"]]
''')

s("c6_smol_string_misc", '''
u = get_user(4)
name = u["name"]
slug = "-".join(name.lower().split())
code = str(u["id"]).zfill(4)
email_user, _, domain = u["email"].partition("@")
final_answer([slug, code, name.removeprefix("Linus ").casefold(), domain.removesuffix(".net"), email_user.title(), name[::-1], name.find("T"), "x".join(map(str, range(3))), f"{u['id']:#06b}", hex(255), ord("A"), chr(66), int("ff", 16), divmod(17, 5), round(2.675, 2), name.isalpha(), "a,b,,c".split(","), " x ".rstrip()])
''')

s("c6_ptc_wait_for_gather_sleep", '''
import asyncio
async def main():
    await asyncio.sleep(0)
    users = await asyncio.wait_for(asyncio.gather(*(tools.get_user(user_id=i) for i in (1, 2))), timeout=10)
    return [u["tier"] for u in users]
if __name__ == "__main__":
    tiers = asyncio.run(main())
    print(tiers)
''')

s("c6_monty_enum_classvars", '''
from enum import Enum, auto
class Tier(Enum):
    GOLD = "gold"
    SILVER = "silver"
    BRONZE = "bronze"
    @property
    def rank(self):
        return list(Tier).index(self)
class Status(Enum):
    PAID = auto()
    SHIPPED = auto()
class Registry:
    count = 0
    def __init__(self):
        Registry.count += 1
users = [get_user(i) for i in (1, 2, 4)]
regs = [Registry() for _ in users]
tiers = sorted((Tier(u["tier"]) for u in users), key=lambda t: t.rank)
[[t.name for t in tiers], Tier.GOLD.value, Status.SHIPPED.value, Registry.count, Tier["SILVER"].rank, Tier.GOLD in Tier]
''')

s("c6_ptc_contextlib_suppress_try_import", '''
import contextlib
try:
    import numpy as np
except ImportError:
    np = None
ages = []
for uid in (1, 99, 2):
    with contextlib.suppress(Exception):
        ages.append(get_user(uid)["signup"][:4])
{"np": np is None, "ages": ages}
''')

s("c6_smol_operator_itemgetter_sort", '''
from operator import itemgetter, attrgetter
orders = list_orders(2, 1, 10)["orders"]
top = sorted(orders, key=itemgetter("total"), reverse=True)[:3]
by = sorted(orders, key=itemgetter("status", "id"))
ids = list(map(itemgetter("id"), top))
final_answer({"top": ids, "by": [o["id"] for o in by], "sum": sum(map(itemgetter("total"), orders))})
''')

s("c6_cf_hashlib_base64_uuid", '''
import hashlib, base64, json
u = get_user(1)
digest = hashlib.sha256(json.dumps(u, sort_keys=True).encode()).hexdigest()[:12]
token = base64.b64encode(u["email"].encode()).decode()
back = base64.b64decode(token).decode()
[digest, token, back == u["email"], hashlib.md5(b"x").hexdigest()]
''')

s("c6_monty_async_with_class", '''
import asyncio
class Timer:
    def __init__(self):
        self.events = []
    async def __aenter__(self):
        self.events.append("start")
        return self
    async def __aexit__(self, *exc):
        self.events.append("stop")
        return False
async def main():
    async with Timer() as t:
        users = [await tools.get_user(user_id=i) for i in (1, 2)]
        t.events.append(len(users))
    return t.events
await main()
''')

s("c6_edge_types_printed", '''
u = get_user(1)
print(type(u), type(u["name"]), type(1.5), type([]), type(None))
print(type(u) is dict, type(u).__name__)
print(str, int, len)
[str(type(u)), repr(type("x"))]
''')

s("c6_edge_fstring_eq_specs", '''
total = sum(o["total"] for o in list_orders(2, 1, 10)["orders"])
n = 3
print(f"{total=:.2f} {n=} {n = } {total!r:>12} {'Name':<6}|{'x':>4}| {n:{n}d} {3.14159:.{n}f}")
f"{total:,.1f}|{n:*^9}|{-n:+05d}|{n:x}|{n:o}|{n:e}|{1e-7:g}|{12345.678:_.2f}"
''')

s("c6_edge_loops_else_yield_from", '''
def walk(tree):
    for k, v in tree.items():
        if isinstance(v, dict):
            yield from walk(v)
        else:
            yield k
cfg = {"a": {"b": 1, "c": {"d": 2}}, "e": 3}
keys = list(walk(cfg))
for u in list_users():
    if u["name"].startswith("Z"):
        found = u
        break
else:
    found = None
i = 0
while i < 3:
    i += 1
else:
    done = True
fns = [lambda x=i: x * 10 for i in range(3)]
[keys, found, done, [f() for f in fns], dict.fromkeys("ab", 0), list(reversed([1, 2, 3]))]
''')

s("c6_edge_class_container_protocols", '''
class Page:
    __slots__ = ("rows",)
    def __init__(self, rows):
        self.rows = rows
    def __len__(self):
        return len(self.rows)
    def __iter__(self):
        for r in self.rows:
            yield r["id"]
    def __getitem__(self, i):
        if isinstance(i, slice):
            return Page(self.rows[i])
        return self.rows[i]
    def __contains__(self, oid):
        return any(r["id"] == oid for r in self.rows)
    def __str__(self):
        return f"Page({len(self)} rows)"
    def __bool__(self):
        return bool(self.rows)
p = Page(list_orders(3, 1, 10)["orders"])
print(p, p[1:3], bool(Page([])))
[len(p), list(p)[:3], 301 in p, 999 in p, p[0]["status"], getattr(p, "missing", "dflt"), hasattr(p, "rows")]
''')

s("c6_edge_memo_default_arg_recursion", '''
def ways(n, memo={}):
    if n in memo:
        return memo[n]
    if n <= 1:
        return 1
    memo[n] = ways(n - 1) + ways(n - 2)
    return memo[n]
a = b = []
a.append(1)
flat = sum([[1, 2], [3]], [])
nested = [[c * r for c in range(3)] for r in range(1, 3)]
[ways(40), b, flat, nested, [*flat, *b], {**{"x": 1}, **{"y": 2}}]
''')

s("c6_edge_numbers_misc", '''
import math, statistics
vals = [get_weather(c)["humidity"] for c in ["Oslo", "Rome", "Lima"]]
print(math.floor(2.7), math.ceil(2.1), math.log10(1000), math.sqrt(16), math.gcd(12, 18), math.pi.__round__(3) if False else round(math.pi, 3))
[statistics.fmean(vals), (255).bit_length(), (2.0).is_integer(), 7 // 2, -7 // 2, 7 % -3, 2 ** -1, abs(-3.5), int(3.99), float("1e3"), 10 / 4, pow(2, 10, 1000), sum(vals) / len(vals), min(vals, default=0), max([], default=None)]
''')

s("c6_ptc_early_termination_and_conditional", '''
for uid in [4, 2, 3]:
    u = await tools.get_user(user_id=uid)
    if u["tier"] == "gold":
        print(f"Found gold user: {u['name']}")
        break
info = await tools.get_weather(city="Reykjavik")
if info["temperature"] < 30:
    content = await tools.read_file(path="config.json")
else:
    content = await tools.read_file(path="app.log")
print(content[:20])
logs = (await tools.read_file(path="app.log")).splitlines()
errors = [log for log in logs if "ERROR" in log]
print(f"Found {len(errors)} errors")
for error in errors[-10:]:
    print(error)
''')

s("c6_ptc_regions_revenue", '''
regions = ["north", "south", "east"]
rows = [dict(zip(["region", "amount"], line.split(","))) for line in (await tools.read_file(path="data/sales.csv")).strip().splitlines()[1:]]
results = {}
for region in regions:
    data = [r for r in rows if r["region"] == region]
    results[region] = sum(int(row["amount"]) for row in data)
top_region = max(results.items(), key=lambda x: x[1])
print(f"Top region: {top_region[0]} with ${top_region[1]:,} in revenue")
results
''')


# ---------------- compat round 7 ----------------
s("c7_contextmanager_section_timer", '''
from contextlib import contextmanager
@contextmanager
def section(name):
    print(f"start {name}")
    try:
        yield name.upper()
    finally:
        print(f"end {name}")
with section("users") as tag:
    u = get_user(1)
    print(tag, u["name"])
u["tier"]
''')

s("c7_contextmanager_catches_tool_errors", '''
import contextlib
@contextlib.contextmanager
def catching(label, log):
    try:
        yield log
    except ToolCallError as e:
        log.append(f"{label}: failed")
    except KeyError as e:
        log.append(f"{label}: missing {e}")
        raise
log = []
for uid in [2, 77]:
    with catching(f"user {uid}", log):
        log.append(get_user(uid)["name"])
try:
    with catching("key", log):
        get_user(1)["nope"]
except KeyError:
    log.append("re-raised")
with contextlib.nullcontext(5) as five:
    log.append(five)
log
''')

s("c7_ordereddict_lru_move_to_end", '''
from collections import OrderedDict
d = {"a": 1} | {"b": 2}
d |= {"a": 3}
cache = OrderedDict()
for uid in [1, 2, 3, 1, 4]:
    if uid in cache:
        cache.move_to_end(uid)
    else:
        cache[uid] = get_user(uid)["name"]
        if len(cache) > 3:
            cache.popitem(last=False)
od = OrderedDict(x=1, y=2, z=3)
od.move_to_end("z", last=False)
[d, list(cache.items()), list(od), od.popitem(last=True)]
''')

s("c7_system_exit_caught", '''
import sys
try:
    raise SystemExit("bye")
except SystemExit as e:
    print("caught", e.code, e, type(e).__name__, e.args)
try:
    sys.exit(3)
except Exception:
    print("not an Exception")
except SystemExit as e:
    code = e.code
code
''')

s("c7_statistics_modes_and_counters", '''
import itertools, statistics
hum = [get_weather(c)["humidity"] for c in ["Oslo", "Rome", "Lima", "Paris", "Berlin"]]
ids = itertools.count(start=1)
labels = {next(ids): u["name"] for u in list_users()}
step = itertools.count(10, 5)
[statistics.multimode(hum), statistics.median_grouped(hum), statistics.median_low(hum),
 statistics.median_high(hum), round(statistics.pstdev(hum), 6), labels, [next(step) for _ in range(3)]]
''')

s("c7_format_map_with_a_mapping_class", '''
class Default:
    def __init__(self, data):
        self.data = data
    def __getitem__(self, key):
        return self.data.get(key, "{" + key + "}")
u = get_user(2)
"{name} <{email}> tier={tier} extra={extra}".format_map(Default(u))
''')


s("c7_asyncio_queue_producer_consumer", '''
import asyncio
q = asyncio.Queue(maxsize=2)
SENTINEL = None
async def producer():
    for city in ["Oslo", "Rome", "Lima"]:
        await q.put(city)
    await q.put(SENTINEL)
async def consumer():
    temps = []
    while (city := await q.get()) is not SENTINEL:
        w = await tools.get_weather(city=city)
        temps.append((city, w["temperature"]))
    return temps
_, temps = await asyncio.gather(producer(), consumer())
try:
    q.get_nowait()
except asyncio.QueueEmpty:
    print("drained", q.maxsize, q.full())
temps
''')

s("c7_asyncio_queue_workers_drain", '''
import asyncio
async def main():
    q = asyncio.Queue()
    for uid in [1, 2, 3, 4]:
        q.put_nowait(uid)
    results = {}
    async def worker():
        while not q.empty():
            uid = await q.get()
            u = await tools.get_user(user_id=uid)
            results[uid] = u["tier"]
            q.task_done()
    await asyncio.gather(*(worker() for _ in range(2)))
    await q.join()
    print(q.qsize(), q.empty())
    return dict(sorted(results.items()))
asyncio.run(main())
''')

s("c7_queue_workers_cancelled_then_gathered", '''
import asyncio
async def main():
    q = asyncio.Queue()
    for uid in [1, 2, 3]:
        q.put_nowait(uid)
    tiers = {}
    async def worker():
        while True:
            uid = await q.get()
            u = await tools.get_user(user_id=uid)
            tiers[uid] = u["tier"]
            q.task_done()
    workers = [asyncio.create_task(worker()) for _ in range(2)]
    await q.join()
    for w in workers:
        w.cancel()
    outcomes = await asyncio.gather(*workers, return_exceptions=True)
    print([type(o).__name__ for o in outcomes])
    try:
        await asyncio.gather(workers[0])
    except asyncio.CancelledError:
        print("gather of a cancelled task raises CancelledError")
    return dict(sorted(tiers.items()))
asyncio.run(main())
''')


# ---------------- compat round 8 ----------------
s("c8_tool_error_text_printed", '''
for uid in [1, 99]:
    try:
        u = get_user(user_id=uid)
        print(f"{uid}: {u['name']}")
    except Exception as e:
        print(f"Error fetching user {uid}: {e}")
        print("args:", e.args)
''')

s("c8_frozen_dataclass_bases_agree", '''
from dataclasses import dataclass, FrozenInstanceError
@dataclass(frozen=True)
class Money:
    amount: int
    currency: str = "EUR"
@dataclass(frozen=True)
class Price(Money):
    vat: int = 20
errors = []
try:
    @dataclass
    class Mutable(Money):
        note: str = ""
except TypeError as e:
    errors.append(str(e))
@dataclass
class Row:
    uid: int
try:
    @dataclass(frozen=True)
    class FrozenRow(Row):
        tier: str = "gold"
except TypeError as e:
    errors.append(str(e))
p = Price(10)
try:
    p.vat = 5
except FrozenInstanceError:
    errors.append("frozen")
[errors, repr(p), hash(p) == hash(Price(10))]
''')

s("c8_int_from_bytes_padding_and_lcm", '''
import math
sizes = [int.from_bytes(bytes(20000)), int.from_bytes(bytes(20000) + b"\\x01\\x00"),
         int.from_bytes(b"\\x05" + bytes(9000), "little"),
         int.from_bytes(b"\\xff" * 5000, "big", signed=True)]
[sizes, math.lcm(*range(1, 40)), math.lcm(), math.lcm(-6, 4), math.lcm(4, 0, 10**50),
 math.lcm(*range(1, 3000)).bit_length()]
''')


s("c8_smol_class_methods_call_tools", '''
class UserService:
    def __init__(self):
        self.cache = {}
        self.hits = 0
    def fetch(self, uid):
        if uid not in self.cache:
            self.cache[uid] = get_user(uid)
        else:
            self.hits += 1
        return self.cache[uid]
    def tiers(self, uids):
        return {u: self.fetch(u)["tier"] for u in uids}
class Report:
    @staticmethod
    def weather_line(city):
        w = get_weather(city)
        return f"{city}: {w['temperature']}"
    @classmethod
    def build(cls, cities):
        return [cls.weather_line(c) for c in cities]
    def total_orders(self, uid):
        page, n = 1, 0
        while page:
            data = list_orders(uid, page)
            n += len(data["orders"])
            page = data["next_page"]
        return n
class Scaled(Report):
    def total_orders(self, uid):
        return super().total_orders(uid) * 10
def summary():
    return {"lines": Report.build(["Oslo", "Rome"]), "orders": Scaled().total_orders(2)}
svc = UserService()
print(svc.fetch(1)["name"])
print(summary())
final_answer([svc.tiers([1, 2, 1]), svc.hits])
''')

s("c8_collections_itertools_statistics_wrangling", '''
from collections import defaultdict, Counter, OrderedDict, namedtuple
from itertools import groupby, chain, islice, accumulate, pairwise
import statistics
Row = namedtuple("Row", "uid status total")
rows = []
for u in list_users():
    page = 1
    while page:
        data = list_orders(u["id"], page, page_size=3)
        rows.extend(Row(u["id"], o["status"], o["total"]) for o in data["orders"])
        page = data["next_page"]
rows.sort(key=lambda r: (r.status, -r.total))
by_status = {k: [r.total for r in g] for k, g in groupby(rows, key=lambda r: r.status)}
stats = {k: {"n": len(v), "mean": round(statistics.fmean(v), 3), "stdev": round(statistics.pstdev(v), 3)}
         for k, v in by_status.items()}
running = list(accumulate(sorted(r.total for r in rows)))
gaps = [round(b - a, 2) for a, b in pairwise(sorted({r.total for r in rows}))][:5]
top = Counter(r.uid for r in rows).most_common(2)
print(f"{len(rows)} orders; top customers {top}")
per_user = defaultdict(float)
for r in rows:
    per_user[r.uid] += r.total
{"stats": stats, "last_running": round(running[-1], 2), "gaps": gaps,
 "per_user": {k: round(v, 2) for k, v in sorted(per_user.items())}, "first3": [r._asdict() for r in islice(rows, 3)],
 "chained": list(chain.from_iterable([[1, 2], (3,)]))}
''')

s("c8_re_heavy_log_parsing", '''
import re
log = read_file("app.log")
LINE = re.compile(r"^(?P<date>\\d{4}-\\d{2}-\\d{2}) (?P<time>[\\d:]+) (?P<level>[A-Z]+)\\s+(?P<msg>.+)$", re.M)
events = [m.groupdict() for m in LINE.finditer(log)]
errors = [e for e in events if e["level"] == "ERROR"]
words = re.findall(r"\\b[a-z]{4,}\\b", log)
redacted = re.sub(r"(\\d{2}):(\\d{2}):(\\d{2})", lambda m: f"{m[1]}h{m[2]}", log.splitlines()[1])
parts = re.split(r"[,;]\\s*", "a, b;c ,d")
times = [tuple(map(int, e["time"].split(":"))) for e in errors]
sub_n = re.subn(r"ERROR", "E", log)[1]
print(f"{len(events)} events, {len(errors)} errors, {sub_n} substitutions")
for e in errors:
    print(f"  {e['time']} {e['msg']!r}")
{"levels": sorted({e["level"] for e in events}), "words": sorted(set(words))[:6], "redacted": redacted,
 "parts": parts, "times": times, "escaped": re.escape("a.b*c"), "full": bool(re.fullmatch(r"\\w+", "abc_1"))}
''')

s("c8_datetime_arithmetic", '''
from datetime import datetime, date, timedelta, timezone
today = date(2024, 7, 1)
report = []
for uid in (1, 2, 3, 4):
    u = get_user(uid)
    signup = date.fromisoformat(u["signup"])
    age = today - signup
    anniversary = signup.replace(year=today.year)
    if anniversary < today:
        anniversary = anniversary.replace(year=today.year + 1)
    report.append({"name": u["name"], "days": age.days, "weeks": age // timedelta(weeks=1),
                   "next": anniversary.isoformat(), "weekday": signup.strftime("%A"),
                   "quarter": (signup.month - 1) // 3 + 1})
stamp = datetime(2024, 5, 1, 10, 0, 5, tzinfo=timezone.utc)
later = stamp + timedelta(hours=36, minutes=15)
print(later.isoformat(), later.strftime("%Y-%m-%d %H:%M %Z"), (later - stamp).total_seconds())
parsed = datetime.strptime("2024-05-01 10:02:00", "%Y-%m-%d %H:%M:%S")
print(parsed.date(), parsed.time(), parsed.timestamp() > 0)
sorted(report, key=lambda r: r["days"], reverse=True)
''')

s("c8_retry_with_backoff_around_tool_calls", '''
import asyncio
class TransientError(Exception):
    pass
attempts = {}
async def call_with_retry(uid: int, retries: int = 3, backoff: float = 0.001):
    last_exc = None
    for attempt in range(1, retries + 1):
        attempts[uid] = attempt
        try:
            user = await tools.get_user(user_id=uid)
            if attempt < 2 and uid % 2 == 0:
                raise TransientError(f"flaky on attempt {attempt}")
            return user
        except TransientError as exc:
            last_exc = exc
            print(f"retrying {uid} after {exc}")
            await asyncio.sleep(backoff * 2 ** attempt)
        except Exception as exc:
            print(f"giving up on {uid}: {exc}")
            return None
    raise RuntimeError(f"exhausted retries for {uid}") from last_exc
results = {}
for uid in [1, 2, 99]:
    user = await call_with_retry(uid)
    results[uid] = user["name"] if user else None
{"results": results, "attempts": attempts}
''')

s("c8_asyncio_wait_for_and_timeout", '''
import asyncio
async def slow_weather(city: str, delay: float):
    await asyncio.sleep(delay)
    return await tools.get_weather(city=city)
async def main():
    out = {}
    for city, delay in [("Oslo", 0.0), ("Rome", 5)]:
        try:
            w = await asyncio.wait_for(slow_weather(city, delay), timeout=0.2)
            out[city] = w["condition"]
        except asyncio.TimeoutError:
            out[city] = "timeout"
    try:
        async with asyncio.timeout(0.05):
            await asyncio.sleep(10)
        out["block"] = "finished"
    except TimeoutError:
        out["block"] = "timed out"
    return out
result = asyncio.run(main())
print(result)
result
''')

s("c8_as_completed_taskgroup_wait", '''
import asyncio
async def fetch(uid):
    u = await tools.get_user(user_id=uid)
    return uid, u["tier"]
async def main():
    tiers = {}
    for coro in asyncio.as_completed([fetch(uid) for uid in [4, 2, 3, 1]]):
        uid, tier = await coro
        tiers[uid] = tier
    async with asyncio.TaskGroup() as tg:
        tasks = {c: tg.create_task(tools.get_weather(city=c)) for c in ["Lima", "Oslo"]}
    temps = {c: t.result()["temperature"] for c, t in tasks.items()}
    done, pending = await asyncio.wait([asyncio.create_task(fetch(1))], timeout=5)
    return {"tiers": dict(sorted(tiers.items())), "temps": temps, "done": len(done), "pending": len(pending)}
asyncio.run(main())
''')

s("c8_class_properties_repr_ordering_hash_none", '''
class Account:
    """A user with their orders."""
    def __init__(self, user: dict, orders: list):
        self._user = user
        self._orders = orders
    @property
    def name(self) -> str:
        return self._user["name"]
    @property
    def total(self) -> float:
        return round(sum(o["total"] for o in self._orders), 2)
    @property
    def tier(self):
        return self._user["tier"]
    @tier.setter
    def tier(self, value):
        self._user = {**self._user, "tier": value}
    def __repr__(self) -> str:
        return f"Account({self.name!r}, total={self.total})"
    def __lt__(self, other: "Account") -> bool:
        return self.total < other.total
    def __eq__(self, other):
        return isinstance(other, Account) and self.name == other.name
    __hash__ = None
accounts = []
for uid in [1, 2, 3]:
    user = get_user(uid)
    orders = list_orders(uid, page_size=50)["orders"]
    accounts.append(Account(user, orders))
accounts[1].tier = "platinum"
print(sorted(accounts))
print(max(accounts), accounts[0] == Account({"name": "Ada Lovelace"}, []))
[repr(a) for a in sorted(accounts, reverse=True)] + [accounts[1].tier]
''')

s("c8_typing_annotations_everywhere", '''
from __future__ import annotations
from typing import Any, Optional, Union, TypedDict, Literal, Final, Iterable
from collections.abc import Mapping, Sequence
Tier = Literal["gold", "silver", "bronze"]
LIMIT: Final[int] = 3
class Summary(TypedDict):
    name: str
    tier: Tier
    orders: int
def summarize(user: Mapping[str, Any], orders: Sequence[dict[str, Any]]) -> Summary:
    return {"name": user["name"], "tier": user["tier"], "orders": len(orders)}
def first_gold(items: Iterable[Summary]) -> Optional[Summary]:
    for item in items:
        if item["tier"] == "gold":
            return item
    return None
def scale(x: Union[int, float], by: int | float = 2) -> float:
    return float(x * by)
summaries: list[Summary] = []
uid: int
for uid in range(1, LIMIT + 1):
    user: dict[str, Any] = get_user(uid)
    page: dict[str, Any] = list_orders(uid, page_size=100)
    summaries.append(summarize(user, page["orders"]))
best: Summary | None = first_gold(reversed(summaries))
{"summaries": summaries, "best": best, "scaled": scale(3), "typed": isinstance(summaries[0], dict)}
''')

s("c8_fstring_conversion_and_format_specs", '''
users = list_users()
print(f"{'#':>3} | {'name':<14} | {'repr':>16} | {'len':^5}")
print("-" * 46)
for i, u in enumerate(users, start=1):
    name = u["name"]
    print(f"{i:>3} | {name:<14} | {name!r:>16} | {len(name):^5}")
w = get_weather("Oslo")
print(f"{w['temperature']:08.3f} {w['humidity']:+d} {w['humidity']:#x} {0.25:.1%} {1234567.891:,.2f} {w['city']!s:*^10}")
print(f"{'left':<8}|{'right':>8}|{3.14159:e}|{42:b}|{w!r:.20}")
value = 7
print(f"{value=} {value * 2 = } {'x'!a}")
''')

s("c8_sorted_tuple_keys_zip_strict_dict_union", '''
users = [get_user(i) for i in (1, 2, 3, 4)]
ranked = sorted(users, key=lambda u: ({"gold": 0, "silver": 1, "bronze": 2}[u["tier"]], -len(u["name"]), u["name"]))
for rank, u in enumerate(ranked, start=1):
    print(rank, u["name"], u["tier"])
emails = [u["email"] for u in users]
domains = [e.split("@")[1] for e in emails]
pairs = list(zip(emails, domains, strict=True))
try:
    list(zip(emails, domains[:-1], strict=True))
except ValueError as e:
    print("zip:", e)
defaults = {"units": "metric", "limit": 5}
override = {"limit": 10, "lang": "en"}
merged = defaults | override
merged |= {"units": "imperial"}
names = [u["name"].removeprefix("Alan ").removesuffix(" T") for u in users]
{"ranked": [u["id"] for u in ranked], "pairs": pairs[:2], "merged": merged, "names": names,
 "by_dom": {d: [e for e, dd in pairs if dd == d] for d in sorted(set(domains))}}
''')

s("c8_textwrap_report", '''
import textwrap
import json
results = search("python packaging best practices", limit=3)
for r in results:
    print(textwrap.fill(r["snippet"] * 3, width=40, initial_indent="* ", subsequent_indent="  "))
print(textwrap.shorten(" ".join(r["title"] for r in results), width=50, placeholder=" [...]"))
block = textwrap.dedent("""
    Summary:
      first line
      second line
""").strip()
print(textwrap.indent(block, "> "))
print(textwrap.wrap("a b c d e f g h", width=5))
json.dumps({"block": block, "n": len(results)}, indent=2)
''')

s("c8_json_dumps_indent_default_str", '''
import json
from datetime import date, datetime
from dataclasses import dataclass, asdict
@dataclass
class Snapshot:
    user: str
    taken: date
    tags: set
u = get_user(3)
snap = Snapshot(u["name"], date(2024, 7, 1), {"vip"})
text = json.dumps({"snap": asdict(snap), "at": datetime(2024, 7, 1, 12, 30)}, indent=2, default=str, sort_keys=True)
print(text)
compact = json.dumps(u, separators=(",", ":"), ensure_ascii=False)
back = json.loads(text)
[back["snap"]["taken"], back["at"], len(compact), json.dumps([1.5, None, True, "é"])]
''')

s("c8_semaphore_namedtuple_results", '''
import asyncio
from typing import NamedTuple
class Result(NamedTuple):
    city: str
    ok: bool
    detail: str
async def probe(city: str) -> Result:
    try:
        w = await tools.get_weather(city=city, units="imperial")
        return Result(city, True, f"{w['temperature']:.1f}F")
    except Exception as exc:
        return Result(city, False, str(exc))
async def main() -> list[Result]:
    sem = asyncio.Semaphore(2)
    async def guarded(city):
        async with sem:
            return await probe(city)
    return await asyncio.gather(*(guarded(c) for c in ["Oslo", "Lima", "Paris"]))
results = asyncio.run(main())
for r in results:
    print(f"{r.city:<6} {'OK' if r.ok else 'FAIL':<4} {r.detail}")
[r._asdict() for r in results]
''')

s("c8_itertools_functools_operator", '''
import itertools, functools, operator
orders = []
for uid in range(1, 5):
    orders += [dict(o, uid=uid) for o in list_orders(uid, page_size=20)["orders"]]
by_uid = {k: list(g) for k, g in itertools.groupby(sorted(orders, key=operator.itemgetter("uid")), key=operator.itemgetter("uid"))}
combos = list(itertools.combinations(sorted(by_uid), 2))
product = list(itertools.product("ab", repeat=2))
batches = [list(b) for b in itertools.batched(range(7), 3)] if hasattr(itertools, "batched") else [[0, 1, 2], [3, 4, 5], [6]]
totals = {uid: functools.reduce(lambda acc, o: acc + o["total"], rows, 0) for uid, rows in by_uid.items()}
first_refund = next((o["id"] for o in orders if o["status"] == "refunded"), None)
counts = dict(itertools.starmap(lambda k, g: (k, sum(1 for _ in g)), itertools.groupby(sorted(o["status"] for o in orders))))
ziplong = list(itertools.zip_longest([1, 2, 3], "ab", fillvalue="-"))
{"combos": combos, "product": product, "batches": batches, "totals": {k: round(v, 2) for k, v in totals.items()},
 "first_refund": first_refund, "counts": counts, "ziplong": ziplong, "cycle": list(itertools.islice(itertools.cycle("xy"), 5))}
''')

s("c8_ptc_main_guard_create_task_gather", '''
import asyncio
import json
async def main():
    raw_users = await tools.list_users()
    print(json.dumps(raw_users[:2], indent=2))
    tasks = [asyncio.create_task(tools.list_orders(user_id=u["id"], page_size=50)) for u in raw_users]
    pages = await asyncio.gather(*tasks, return_exceptions=True)
    summary = {}
    for user, page in zip(raw_users, pages, strict=True):
        if isinstance(page, Exception):
            summary[user["name"]] = f"error: {page}"
            continue
        paid = [o for o in page["orders"] if o["status"] == "paid"]
        summary[user["name"]] = {"paid": len(paid), "sum": round(sum(o["total"] for o in paid), 2)}
    return summary
if __name__ == "__main__":
    print(json.dumps(asyncio.run(main()), indent=2, sort_keys=True))
''')

s("c8_template_deque_send_messages", '''
from collections import deque
from string import Template
defaults = {"greeting": "Hello", "sign": "-- bot"}
history = deque(maxlen=2)
messages = []
for uid in (1, 2, 3):
    u = get_user(user_id=uid)
    ctx = defaults | {"name": u["name"].split()[0]}
    body = Template("$greeting, $name! Your tier: ${tier}. $sign").safe_substitute(ctx, tier=u["tier"].upper())
    r = send_message(to=u["email"], body=body)
    history.append(r["to"])
    messages.append((r["chars"], body))
print(*messages, sep="\\n")
{"last_two": list(history), "longest": max(messages)[1], "lengths": [m[0] for m in messages]}
''')


s("c9_money_decimal_invoice", """
from decimal import Decimal, ROUND_HALF_UP
import json
TAX = Decimal("0.0825")
lines = []
for uid in (1, 2):
    page = list_orders(user_id=uid, page_size=10)
    for o in page["orders"]:
        if o["status"] == "refunded":
            continue
        amount = Decimal(str(o["total"]))
        tax = (amount * TAX).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
        lines.append({"id": o["id"], "amount": amount, "tax": tax})
subtotal = sum((l["amount"] for l in lines), Decimal("0"))
tax_total = sum(l["tax"] for l in lines)
for l in sorted(lines, key=lambda l: (-l["amount"], l["id"])):
    print(f"{l['id']:>5} {l['amount']:>8.2f} {l['tax']:>6}")
print(f"subtotal={subtotal:,.2f} tax={tax_total} total={subtotal + tax_total:.2f}")
final_answer(json.dumps({"total": str(subtotal + tax_total), "n": len(lines), "max": float(max(l["amount"] for l in lines))}))
""")

s("c9_decimal_context_split", """
import asyncio
from decimal import Decimal, getcontext, localcontext, ROUND_DOWN, InvalidOperation
async def main():
    users = await tools.list_users()
    getcontext().prec = 12
    budget = Decimal("1000")
    share = budget / len(users)
    with localcontext() as ctx:
        ctx.rounding = ROUND_DOWN
        cents = [share.quantize(Decimal("0.01")) for _ in users]
    leftover = budget - sum(cents)
    try:
        Decimal("12,50")
    except InvalidOperation:
        print("not a number: 12,50")
    print(share, cents[0], leftover, getcontext().prec, repr(leftover))
    return {u["name"]: str(c) for u, c in zip(users, cents)} | {"_left": str(leftover)}
asyncio.run(main())
""")

s("c9_fraction_ratios", """
from fractions import Fraction
from collections import Counter
statuses = Counter()
for uid in range(1, 5):
    for o in list_orders(user_id=uid, page_size=20)["orders"]:
        statuses[o["status"]] += 1
total = sum(statuses.values())
shares = {k: Fraction(v, total) for k, v in statuses.items()}
for k, f in sorted(shares.items(), key=lambda kv: kv[1], reverse=True):
    print(f"{k:<9} {str(f):>6} = {float(f):.1%}")
assert sum(shares.values()) == 1
ratio = shares["paid"] / shares["refunded"]
{"ratio": [ratio.numerator, ratio.denominator], "approx": str(Fraction(3.14159).limit_denominator(100)), "half": Fraction("0.5") == 0.5}
""")

s("c9_decimal_stats_rounding", """
from decimal import Decimal
import statistics
temps = {}
for city in ["Oslo", "Lisbon", "Rome"]:
    w = get_weather(city=city, units="imperial")
    temps[city] = Decimal(str(w["temperature"]))
avg = sum(temps.values()) / len(temps)
rounded = {c: round(t, 1) for c, t in temps.items()}
print("avg", avg.quantize(Decimal("0.001")), "median", statistics.median([float(t) for t in temps.values()]))
print(max(temps, key=temps.get), min(temps.values()), Decimal("0.1") + Decimal("0.2") == Decimal("0.3"))
{"rounded": {c: str(v) for c, v in rounded.items()}, "int": int(avg), "neg": str(-avg.copy_abs())[:6], "cmp": Decimal("2.5") > 2}
""")


s("c10_decimal_classmethods_and_signals", """
import decimal
from decimal import Decimal, localcontext
from fractions import Fraction
temps = [get_weather(city=c)["temperature"] for c in ("Oslo", "Lima")]
exact = [Decimal.from_float(t / 7) for t in temps]
D = type(exact[0])
with localcontext() as ctx:
    ctx.traps[decimal.DivisionByZero] = False
    ctx.prec = 6
    inf = Decimal(1) / 0
    short = +exact[0]
    flagged = [ctx.flags[decimal.DivisionByZero], ctx.flags[decimal.Inexact], ctx.traps[decimal.Overflow]]
errors = []
for bad in ("x", None, [1]):
    try:
        exact[0] + bad
    except TypeError as e:
        errors.append(str(e))
print(str(short), str(inf), flagged, isinstance(exact[1], D), D is Decimal)
{"ratio": str(Fraction.from_float(0.125)), "dec": str(Fraction.from_decimal(Decimal("2.50"))),
 "from_d": str(D.from_float(0.5)), "errors": errors, "n": len(str(exact[1]))}
""")

s("c10_chainmap_layered_config", """
import json
from collections import ChainMap
defaults = {"units": "metric", "limit": 3, "verbose": False}
file_cfg = json.loads(read_file("config.json"))
overrides = {"limit": 2}
cfg = ChainMap(overrides, file_cfg, defaults)
print(f"limit={cfg['limit']} units={cfg['units']} retries={cfg.get('retries', 0)} keys={len(cfg)}")
run_cfg = cfg.new_child({"verbose": True})
results = []
for region in cfg["regions"][: run_cfg["limit"]]:
    hits = search(query=f"{region} sales", limit=run_cfg["limit"])
    results.append({"region": region, "top": hits[0]["title"], "n": len(hits)})
print(repr(cfg.parents))
{"cfg": dict(run_cfg), "results": results, "has_debug": "debug" in cfg, "sources": len(run_cfg.maps)}
""")

s("c10_chainmap_scopes_copy", """
import copy
from collections import ChainMap
scope = ChainMap({"user": get_user(user_id=2)["name"]})
frames = []
for city in ("Oslo", "Lima"):
    scope = scope.new_child({"city": city, "temp": get_weather(city=city)["temperature"]})
    frames.append(copy.copy(scope))
snapshot = copy.deepcopy(scope)
scope["temp"] = -1
scope.maps[-1]["user"] = "changed"
popped = scope.pop("city")
try:
    scope.pop("user")
except KeyError as e:
    err = str(e)
print(len(scope.maps), snapshot["temp"], frames[0]["city"], popped, err)
{"now": dict(scope), "snap": dict(snapshot), "frame_users": [f["user"] for f in frames], "depths": [len(f.maps) for f in frames]}
""")

s("c10_star_unpack_rows", """
text = read_file("data/sales.csv")
header, *rows = text.strip().splitlines()
*cols, last = header.split(",")
parsed = []
for region, *rest in (r.split(",") for r in rows):
    amount, *_ = rest
    parsed.append((region, int(amount)))
first, *middle, final = sorted(parsed, key=lambda p: p[1])
(a_region, a_amount), *others = parsed
print(f"{len(rows)} rows; cols={cols} last={last}; min={first} max={final}; between={len(middle)}")
{"first": list(first), "final": list(final), "head": [a_region, a_amount], "others": len(others)}
""")

s("c10_count_and_repr_of_tools", """
import itertools
import functools
ids = itertools.count(1)
names = {u["id"]: u["name"] for u in list_users()}
@functools.lru_cache(maxsize=None)
def user_name(uid):
    return names[uid].upper()
tickets = []
for uid in [2, 1, 2, 3, 1]:
    tickets.append({"ticket": next(ids), "user": user_name(uid)})
print(repr(ids), user_name.cache_info())
print(user_name(4), callable(user_name), user_name.cache_info().currsize)
{"tickets": tickets, "next": next(ids), "hits": user_name.cache_info().hits}
""")

s("c10_format_map_report", """
template = "{name:<14}|{tier:^8}|{orders:>3} orders|{spent:>8.2f}"
lines = []
for u in list_users():
    profile = get_user(user_id=u["id"])
    page = list_orders(user_id=u["id"], page_size=50)
    values = profile | {"orders": len(page["orders"]), "spent": sum(o["total"] for o in page["orders"])}
    lines.append(template.format_map(values))
header = "{0:<14}|{1:^8}|{2:>10}|{3:>8}".format("name", "tier", "orders", "spent")
print(header)
print("-" * len(header))
print(*lines, sep="\\n")
lines
""")

s("c10_groupby_after_sort_with_walrus", """
from itertools import groupby
from operator import itemgetter
orders = [o | {"uid": uid} for uid in (1, 2, 3, 4) for o in list_orders(user_id=uid, page_size=20)["orders"]]
orders.sort(key=itemgetter("status", "uid"))
summary = {}
for status, group in groupby(orders, key=itemgetter("status")):
    items = list(group)
    if (n := len(items)) > 1:
        summary[status] = {"n": n, "users": sorted({o["uid"] for o in items}), "max": max(o["total"] for o in items)}
big = [t for o in orders if (t := o["total"]) > 20]
print(summary, len(big))
{"summary": summary, "big": big[:5]}
""")

s("c10_zip_strict_enumerate_start", """
cities = ["Oslo", "Lima", "Cairo"]
weathers = [get_weather(city=c) for c in cities]
try:
    list(zip(cities, weathers[:2], strict=True))
except ValueError as e:
    print("mismatch:", e)
table = []
for rank, (city, w) in enumerate(sorted(zip(cities, weathers, strict=True), key=lambda cw: -cw[1]["temperature"]), start=1):
    table.append(f"{rank}. {city:<6} {w['temperature']:>5.1f} {w['condition']}")
print("\\n".join(table))
{"table": table, "ranks": dict(enumerate(cities, start=1))}
""")

s("c10_sorted_compound_key_and_ties", """
users = [get_user(user_id=u["id"]) for u in list_users()]
scores = {}
for u in users:
    page = list_orders(user_id=u["id"], page_size=50)
    scores[u["name"]] = round(sum(o["total"] for o in page["orders"] if o["status"] != "refunded"))
rows = [{"name": n, "score": s, "tier": next(u["tier"] for u in users if u["name"] == n)} for n, s in scores.items()]
ranked = sorted(rows, key=lambda r: (-r["score"], r["name"]))
by_tier = sorted(rows, key=lambda r: (r["tier"] != "gold", r["tier"], -r["score"]))
for r in ranked:
    print(f"{r['name']:<14} {r['score']:>4} {r['tier']}")
{"ranked": [r["name"] for r in ranked], "by_tier": [(r["tier"], r["name"]) for r in by_tier]}
""")

s("c10_iso_dates_z_and_timedelta", """
from datetime import datetime, timedelta, timezone
events = ["2024-05-01T10:00:00Z", "2024-05-03T08:30:00+02:00", "2024-05-02T23:59:59.500Z"]
parsed = sorted(datetime.fromisoformat(e) for e in events)
gaps = [b - a for a, b in zip(parsed, parsed[1:])]
total = sum(gaps, timedelta())
for g in gaps:
    days, rest = divmod(g.total_seconds(), 86400)
    print(f"{int(days)}d {int(rest // 3600):02d}h {g}")
deadline = parsed[0] + timedelta(days=2, hours=6)
late = [p.isoformat() for p in parsed if p > deadline]
signups = {u["name"]: (datetime(2024, 7, 1, tzinfo=timezone.utc) - datetime.fromisoformat(get_user(user_id=u["id"])["signup"] + "T00:00:00Z")).days for u in list_users()}
{"span_h": total.total_seconds() / 3600, "late": late, "utc": parsed[1].astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M %Z"), "signups": signups}
""")

s("c10_re_sub_with_function", """
import re
log = read_file("app.log")
def mask_time(m):
    h, mnt, sec = (int(x) for x in m.group(0).split(":"))
    return f"T+{(h - 10) * 3600 + mnt * 60 + sec}s"
masked = re.sub(r"\\b\\d{2}:\\d{2}:\\d{2}\\b", mask_time, log)
shout = re.sub(r"(?P<level>ERROR|WARN)", lambda m: m["level"].lower().upper() + "!", masked, count=2)
emails = re.sub(r"([\\w.]+)@([\\w.]+)", lambda m: m.group(1)[0] + "***@" + m.group(2), get_user(user_id=1)["email"])
print(shout)
{"lines": shout.splitlines()[:3], "email": emails, "n": len(re.findall(r"T\\+\\d+s", masked))}
""")

s("c10_json_dumps_default_str", """
import json
from datetime import date
from decimal import Decimal
report = {"generated": date(2024, 7, 1), "users": [], "total": Decimal("0")}
for u in list_users():
    page = list_orders(user_id=u["id"], page_size=50)
    spent = sum((Decimal(str(o["total"])) for o in page["orders"]), Decimal("0"))
    report["users"].append({"name": u["name"], "spent": spent, "ids": {o["id"] for o in page["orders"]} and sorted(o["id"] for o in page["orders"])[:2]})
    report["total"] += spent
text = json.dumps(report, indent=2, sort_keys=True, default=str)
print(text[:200])
json.loads(text)
""")

s("c10_counter_statistics_quantiles", """
import statistics
from collections import Counter
totals = [o["total"] for uid in (1, 2, 3, 4) for o in list_orders(user_id=uid, page_size=50)["orders"]]
tiers = Counter(get_user(user_id=u["id"])["tier"] for u in list_users())
q1, q2, q3 = statistics.quantiles(totals, n=4)
print(tiers.most_common(1), f"median={statistics.median(totals)} q1={q1:.2f} q3={q3:.2f}")
print(f"mean={statistics.fmean(totals):.3f} stdev={statistics.stdev(totals):.3f} mode={statistics.mode(round(t) % 5 for t in totals)}")
{"common": tiers.most_common(), "deciles": [round(q, 2) for q in statistics.quantiles(totals, n=10)], "iqr": round(q3 - q1, 3), "median_low": statistics.median_low(totals)}
""")

s("c10_gather_return_exceptions", """
import asyncio
async def main():
    uids = [1, 7, 2, 9]
    results = await asyncio.gather(*(tools.get_user(user_id=u) for u in uids), return_exceptions=True)
    ok, failed = [], []
    for uid, r in zip(uids, results, strict=True):
        if isinstance(r, ToolCallError):
            failed.append({"uid": uid, "error": str(r)})
        elif isinstance(r, Exception):
            raise r
        else:
            ok.append(r["name"])
    print(f"{len(ok)} ok, {len(failed)} failed")
    return {"ok": ok, "failed": failed}
asyncio.run(main())
""")

s("c10_semaphore_wait_for_timeout", """
import asyncio
async def main():
    sem = asyncio.Semaphore(2)
    active = peak = 0
    async def one(city):
        nonlocal active, peak
        async with sem:
            active += 1
            peak = max(peak, active)
            try:
                return await asyncio.wait_for(tools.get_weather(city=city, units="imperial"), timeout=5)
            finally:
                active -= 1
    async with asyncio.timeout(10):
        rows = await asyncio.gather(*(one(c) for c in ["Oslo", "Rome", "Lima", "Kyiv", "Quito"]))
    print("peak concurrency within bound:", 1 <= peak <= 2, "active after:", active)
    return sorted((r["city"], round(r["temperature"], 1)) for r in rows)
asyncio.run(main())
""")

s("c10_dataclass_order_enum_results", """
from dataclasses import dataclass, field, asdict
from enum import Enum
class Tier(Enum):
    GOLD = "gold"
    SILVER = "silver"
    BRONZE = "bronze"
@dataclass(order=True)
class Member:
    sort_key: tuple = field(init=False, repr=False)
    name: str
    tier: Tier
    orders: list = field(default_factory=list)
    def __post_init__(self):
        self.sort_key = (list(Tier).index(self.tier), self.name)
members = []
for u in list_users():
    p = get_user(user_id=u["id"])
    m = Member(p["name"], Tier(p["tier"]))
    m.orders.extend(o["id"] for o in list_orders(user_id=u["id"])["orders"])
    members.append(m)
members.sort()
print(*members, sep="\\n")
print(Tier.GOLD, Tier("silver").name, Tier.BRONZE.value, max(members).name)
[{**asdict(m), "tier": m.tier.value, "sort_key": list(m.sort_key)} for m in members]
""")

s("c10_match_on_tool_results", """
def describe(result):
    match result:
        case {"orders": [], "next_page": None}:
            return "no orders"
        case {"orders": [{"status": "refunded"}, *_]}:
            return "starts with a refund"
        case {"orders": [first, *rest], "next_page": int(nxt)} if nxt > 1:
            return f"{first['id']} and {len(rest)} more, then page {nxt}"
        case {"orders": [*all_orders]}:
            return f"{len(all_orders)} orders, last page"
        case {"temperature": float(t) | int(t), "condition": ("rain" | "cloudy") as c}:
            return f"{c} at {t}"
        case {"temperature": t, **others}:
            return f"fine at {t} ({len(others)} more keys)"
        case _:
            return "unknown"
samples = [list_orders(user_id=u, page=p) for u, p in [(1, 1), (2, 2), (3, 1), (9, 1)]]
samples += [get_weather(city=c) for c in ("Rome", "Oslo", "Paris")]
out = [describe(s) for s in samples]
print(*out, sep="\\n")
out
""")

s("c10_textwrap_report", """
import textwrap
hits = search(query="python packaging guide", limit=3)
body = textwrap.dedent('''
    Summary of results:
      {n} hits for the query.
    ''').strip().format(n=len(hits))
blocks = []
for h in hits:
    blocks.append(textwrap.indent(textwrap.fill(h["snippet"] * 3, width=40), "  > "))
short = [textwrap.shorten(h["title"] + " " + h["snippet"], width=30, placeholder=" [...]") for h in hits]
print(body)
print("\\n".join(blocks))
{"short": short, "wrapped": textwrap.wrap(hits[0]["snippet"], 18)}
""")

s("c10_decimal_money_split", """
from decimal import Decimal, ROUND_HALF_EVEN, ROUND_DOWN
orders = list_orders(user_id=3, page_size=50)["orders"]
cents = Decimal("0.01")
gross = sum((Decimal(str(o["total"])) for o in orders if o["status"] != "refunded"), Decimal(0))
fee = (gross * Decimal("0.029") + Decimal("0.30")).quantize(cents, rounding=ROUND_HALF_EVEN)
net = gross - fee
users = list_users()
share = (net / len(users)).quantize(cents, rounding=ROUND_DOWN)
remainder = net - share * len(users)
payouts = {u["name"]: share + (remainder if i == 0 else 0) for i, u in enumerate(users)}
assert sum(payouts.values()) == net
print(f"gross={gross:,.2f} fee={fee} net={net:.2f} share={share} rem={remainder}")
{k: f"{v:.2f}" for k, v in payouts.items()} | {"_max": str(max(payouts.values())), "_is_dec": isinstance(fee, Decimal)}
""")


@pytest.mark.parametrize(("name", "script"), CORPUS, ids=[row[0] for row in CORPUS])
async def test_model_script_runs_as_in_cpython(mode: cm.CodeMode, name: str,
                                               script: str) -> None:
    run = await mode.run(script)
    assert run.error is None, run.error
    assert (json.loads(json.dumps(run.value)), run.output) == cpython(script)


JSON_TEXT_HOSTS = [
    pytest.param('''
import asyncio
import json

async def main():
    users = json.loads(await tools.list_users())
    details = await asyncio.gather(*[tools.get_user(user_id=u["id"]) for u in users])
    gold = [json.loads(d)["name"] for d in details if json.loads(d)["tier"] == "gold"]
    print(f"{len(gold)} gold users")
    return gold

asyncio.run(main())
''', id="ptc-gather-loads-each"),
    pytest.param('''
import json
raw = await tools.list_orders(user_id=2, page_size=10)
data = json.loads(raw)
paid = sum(o["total"] for o in data["orders"] if o["status"] == "paid")
print(json.dumps({"paid": paid}))
paid
''', id="ptc-top-level-await"),
    pytest.param('''
import json
weather = json.loads(get_weather(city="Oslo"))
result = {"city": "Oslo", "temp": weather["temperature"], "none": json.loads("null")}
''', id="ptc-sync-style"),
]


@pytest.mark.parametrize("script", JSON_TEXT_HOSTS)
async def test_scripts_for_hosts_whose_tools_answer_json_text_run_as_there(
        mode: cm.CodeMode, script: str) -> None:
    """Written for a host whose tools answer JSON text, they ``json.loads`` every result;
    here the tools answer data, which ``json.loads`` hands back: same result and output
    as on their own host."""
    run = await mode.run(script)
    assert run.error is None, run.error
    assert (json.loads(json.dumps(run.value)), run.output) == cpython(script, json_text=True)


def test_the_corpus_is_big_and_its_names_unique() -> None:
    assert len(CORPUS) >= 60
    assert len({name for name, _ in CORPUS}) == len(CORPUS)


async def test_a_failed_call_is_a_tool_call_error_with_its_tool(mode: cm.CodeMode) -> None:
    # CPython's stand-in has no ``.tool``: this row is checked on its own.
    script = ('errors = []\nfor uid in [99, 1]:\n    try:\n'
              '        await tools.get_user(user_id=uid)\n    except ToolCallError as e:\n'
              '        errors.append([e.tool, e.message])\nerrors')
    run = await mode.run(script)
    assert run.value == [["get_user", "LookupError: no user 99"]]


# -- what the sandbox refuses, found before any tool runs -------------------------------------

_ASYNCIO = ("ALL_COMPLETED, BoundedSemaphore, CancelledError, Event, FIRST_COMPLETED, "
            "FIRST_EXCEPTION, Lock, Queue, QueueEmpty, QueueFull, Semaphore, TaskGroup, TimeoutError, as_completed, "
            "create_task, ensure_future, "
            "gather, iscoroutine, iscoroutinefunction, sleep, timeout, wait, wait_for")


@pytest.mark.parametrize(("script", "problems"), [
    ('import asyncio\nw = await tools.get_weather(city="a")\n'
     'r = await asyncio.shield(tools.get_user(user_id=1))',
     [(3, f"module 'asyncio' has no attribute 'shield' in the sandbox (available: {_ASYNCIO}); "
          "await the call itself, outside asyncio.timeout()/wait_for() when it must finish "
          "(they cancel what they wait for)")]),
    ('import asyncio as aio\nasync def main():\n    loop = aio.get_running_loop()\n'
     '    return loop.time()\nawait main()',
     [(3, "module 'asyncio' has no attribute 'get_running_loop' in the sandbox (available: "
          f"{_ASYNCIO}); write `await main()`, and `time.monotonic()` for the time")]),
    ('u = await tools.get_user(user_id=1)\n@functools.singledispatch\ndef f(x):\n    return x',
     [(2, "module 'functools' has no attribute 'singledispatch' in the sandbox (available: "
          "cache, cached_property, cmp_to_key, lru_cache, partial, partialmethod, reduce, "
          "total_ordering, update_wrapper, wraps); dispatch "
          "with `if isinstance(x, ...)` or `match`")]),
])
async def test_a_module_name_the_sandbox_lacks_is_refused_before_any_call(
        mode: cm.CodeMode, script: str, problems: list[tuple[int, str]]) -> None:
    # These used to be AttributeErrors at run time, after the calls above them had run.
    assert [(p.line, p.message) for p in mode.check(script)] == problems
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError" and run.calls == ()


@pytest.mark.parametrize("script", [
    "import asyncio\nasync def main():\n    return 1\nasyncio.run(main())",  # a dialect
    "asyncio = {'wait': 1}\nasyncio['wait']",  # the script's own name
    "import json\ndef f(json):\n    return json.wait\nf(1) if False else 2",
    "from asyncio import gather\nimport re\nre.IGNORECASE",
    "import urllib.parse\nurllib.parse.quote('a b')",  # binds the package, not urllib.parse
    "import collections.abc as cabc\nimport collections\n[cabc.Mapping, collections.abc.Set]",
])
async def test_module_attribute_checks_leave_the_rest_alone(mode: cm.CodeMode,
                                                            script: str) -> None:
    assert mode.check(script) == []


# -- the stand-ins added for these scripts keep the sandbox's boundaries ------------------------


@pytest.mark.parametrize(("script", "error"), [
    ("import dataclasses\ndataclasses.dataclass(dict)",
     ("TypeError", "dataclass() decorates the script's own classes only")),
    ("from dataclasses import dataclass, fields\n@dataclass\nclass A:\n    x: int\n"
     "getattr(fields(A)[0], '_x', 1)",
     ("AttributeError", "attribute '_x' is not accessible: names starting with '_' are "
                        "private in the sandbox")),
    ("import dataclasses\ngetattr(dataclasses.MISSING, '_name')",
     ("AttributeError", "attribute '_name' is not accessible: names starting with '_' are "
                        "private in the sandbox")),
    ("import random\ngetattr(random.Random(1), '_rng')",
     ("AttributeError", "attribute '_rng' is not accessible: names starting with '_' are "
                        "private in the sandbox")),
    ("import random\nrandom.Random(1).setstate",
     ("AttributeError", "'Random' object has no accessible attribute 'setstate'")),
    ("import functools\nfunctools.total_ordering(int)",
     ("TypeError", "total_ordering() decorates the script's own classes only")),
    ("from dataclasses import dataclass\n@dataclass(frozen=True)\nclass P:\n    x: int\n"
     "p = P(1)\np.x = 2",
     ("FrozenInstanceError", "cannot assign to field 'x'")),
])
async def test_new_stand_ins_refuse_what_they_must(mode: cm.CodeMode, script: str,
                                                   error: tuple[str, str]) -> None:
    run = await mode.run(script)
    assert run.error is not None and (run.error.type, run.error.message) == error


@pytest.mark.parametrize(("script", "fragment"), [
    # what the sandbox refuses on purpose says what to write instead
    ("import csv\nw = csv.writer(open('out.csv', 'w'))",
     "no files, processes or code from text: use the tools"),
    ("import traceback\ntraceback.print_exc()", "report `f'{type(e).__name__}: {e}'`"),
    ("import json\nclass U:\n    pass\njson.dumps(U(), default=lambda o: o.__dict__)",
     '"__dict__" is an invalid attribute name because it starts with "_": use vars(obj)'),
    ("x = 1\nx.__class__", "use type(obj), and type(obj).__name__ for its name"),
    ("t = {'a': 2, 'b': 1}\nsorted(t, key=getattr(t, '__getitem__'))",
     "write `lambda k: x[k]` (or `d.get` for a dict) instead"),
    ("match ['q']:\n    case [int(real=k) | str(real=k)]:\n        k", "a class pattern works as the whole case or inside a sequence or mapping pattern (not under `|`)"),
])
async def test_a_refusal_says_what_to_write_instead(mode: cm.CodeMode, script: str,
                                                    fragment: str) -> None:
    run = await mode.run(script)
    assert run.error is not None and fragment in run.error.message, run.error


async def test_wraps_copies_only_text_onto_script_functions(mode: cm.CodeMode) -> None:
    script = ('import functools\ndef deco(fn):\n    @functools.wraps(fn)\n'
              '    def inner(*a):\n        return fn(*a)\n    return inner\n'
              '@deco\ndef area(r):\n    return 3 * r * r\n'
              'wrapped_tool = functools.wraps(tools.get_user)(len)\n'
              '[area.__name__, area(2), wrapped_tool([1, 2]), len.__name__]')
    run = await mode.run(script)
    assert run.error is None, run.error
    assert run.value == ["area", 12, 2, "len"]  # a host function is handed back untouched


def test_a_dataclass_method_never_runs_after_its_run() -> None:
    # The generated methods are installed through class_method: one kept past its run
    # refuses to enter its body, as a script's own special methods do.
    from codemode.sandbox.language.guards import ScriptMeta, class_method
    from codemode.sandbox.language.state import CURRENT_RUN, RunState
    from codemode.sandbox.limits import Limits

    entered: list[object] = []
    run = RunState(Limits())
    token = CURRENT_RUN.set(run)
    try:
        cls = ScriptMeta("P", (), {})
        method = class_method(cls, entered.append, "__repr__")
        obj = cls()
        method(obj)
    finally:
        CURRENT_RUN.reset(token)
    run.meter.end()
    with pytest.raises(TypeError, match="script code cannot run after the script ended"):
        method(obj)
    assert entered == [obj]


@pytest.mark.parametrize("strict_mode", [False, True], ids=["dialects", "strict"])
async def test_dataclass_fields_keep_their_lines(executor: cm.InProcessExecutor,
                                                 strict_mode: bool) -> None:
    mode = cm.CodeMode(registry(), executor=executor, strict=strict_mode)
    script = ("from dataclasses import dataclass, field\n@dataclass\nclass A:\n"
              "    x: int\n    y: list = field(default_factory=list)\n"
              "    z: int = 3\n    def __post_init__(self):\n        raise ValueError(self.z)\n"
              "A(1)")
    run = await mode.run(script)
    assert run.error is not None and (run.error.type, run.error.line) == ("ValueError", 8)


# -- round 15: what models reach for that the sandbox lacks, each refusal naming its fix --------

_NO_HOST = "a script reaches files, processes and the network only through the tools"


@pytest.mark.parametrize(("script", "module", "fix"), [
    ('import subprocess\nsubprocess.run(["ls"])', "subprocess", _NO_HOST),
    ('import os.path\nos.path.basename("a/b.txt")', "os.path",
     f"use str methods on path text (`p.rsplit('/', 1)[-1]` is the file name); {_NO_HOST}"),
    ("from zoneinfo import ZoneInfo\n1", "zoneinfo",
     "use a fixed offset, `datetime.timezone(datetime.timedelta(hours=2))`, or "
     "`datetime.timezone.utc`"),
    ("import calendar\ncalendar.monthrange(2024, 2)", "calendar",
     "compute with datetime: `d.strftime('%A')` names a day, and a month's last day is the "
     "day before the next month's first (`date(y, m + 1, 1) - timedelta(days=1)`)"),
    ("import difflib\ndifflib.get_close_matches('a', ['b'])", "difflib",
     "score the candidates yourself (e.g. shared words, `len(set(a.split()) & "
     "set(b.split()))`) and take `max(candidates, key=...)`"),
    ("import warnings\nwarnings.warn('x')", "warnings",
     "use print(): its output is returned with the result"),
    ("import fnmatch\nfnmatch.fnmatch('a.py', '*.py')", "fnmatch",
     "match with `re` (`*` is `.*`, `?` is `.`) or str.startswith/endswith"),
    ("import secrets\nsecrets.token_hex(8)", "secrets",
     "use `random` (a script has no secret to keep)"),
])
async def test_a_missing_module_models_reach_for_names_its_fix(
        mode: cm.CodeMode, script: str, module: str, fix: str) -> None:
    [problem] = mode.check(script)
    assert problem.line == 1
    assert problem.message.startswith(f"module {module!r} is not available in the sandbox "
                                      "(available: abc, asyncio, ")
    assert problem.message.endswith(f"); {fix}")


_FETCHED = ("from dataclasses import dataclass, field\nimport dataclasses\n"
                   "@dataclass\nclass User:\n    uid: int\n    tier: str = field(init=False)\n"
                   "    def __post_init__(self):\n        self.tier = get_user(self.uid)['tier']\n")


@pytest.mark.parametrize(("tail", "refused"), [
    ("from dataclasses import fields\n[f.name for f in fields(User)]", False),
    ("from dataclasses import fields as fs, is_dataclass\n[fs(User), is_dataclass(User)]",
     False),
    ("import dataclasses as dc\ndc.fields(User)", False),
    ("dataclasses.fields(User)", False),
    ("def fields(c):\n    return c(1)\nfields(User)", True),  # the script's own: it calls
    ("from dataclasses import fields\nfields = lambda c: c(1)\nfields(User)", True),
    ("from dataclasses import fields\ndef g(fields):\n    return fields(User)\n"
     "g(lambda c: c(1))", True),
    ("from dataclasses import fields\nfrom dataclasses import is_dataclass as fields\n"
     "fields(User)", True),
    ("from dataclasses import astuple\nastuple(User)", True),
    ("from dataclasses import fields\nfields(User, 1)", True),
    ("dataclasses = None\ndataclasses.fields(User)", True),
])
async def test_a_class_whose_post_init_calls_tools_may_be_read_by_fields(
        mode: cm.CodeMode, tail: str, refused: bool) -> None:
    """``fields(Cls)``/``is_dataclass(Cls)`` read the class without making one, so ``Cls``
    stays awaited where it is called; any other use of the class as a value is refused."""
    problems = [p.message for p in mode.check(_FETCHED + tail)]
    assert bool(problems) is refused, problems
    if refused:
        assert problems[0].startswith("__post_init__() calls tools, but Python calls it for "
                                      "you in `Cls(...)`")
    else:
        run = await mode.run(_FETCHED + tail + "\nUser(1).tier")
        assert run.error is None, run.error
        assert [c.name for c in run.calls] == ["get_user"]


@pytest.mark.parametrize(("script", "problems"), [
    ("from dataclasses import dataclass, InitVar\n1",
     [(1, "cannot import name 'InitVar' from 'dataclasses' in the sandbox (available: "
          "FrozenInstanceError, KW_ONLY, MISSING, asdict, astuple, dataclass, field, fields, "
          "is_dataclass, replace); make it a field, `field(default=..., repr=False)`, and "
          "read it in __post_init__")]),
    ("import asyncio\nasync def main():\n    q = asyncio.PriorityQueue()\nawait main()",
     [(3, f"module 'asyncio' has no attribute 'PriorityQueue' in the sandbox (available: "
          f"{_ASYNCIO}); use asyncio.Queue (first in, first out), or gather the calls "
          "(`asyncio.Semaphore` bounds how many run at once)")]),
    ("import asyncio\nloop = asyncio.get_event_loop()\nloop.run_until_complete(main())",
     [(2, "module 'asyncio' has no attribute 'get_event_loop' in the sandbox (available: "
          f"{_ASYNCIO}); write `await main()`: the script already runs in an event loop"),
      (3, "name 'main' is not defined: assign it before use (this run has no host inputs)")]),
    ("u = get_user(1)\nprint(dir())",
     [(2, "dir() without an argument is not available in the sandbox (the SDK in the prompt "
          "lists the tools and their arguments; `dir(obj)` lists an object of the script's "
          "own)")]),
    ("u = get_user(1)\nvars()",
     [(2, "vars() without an argument is not available in the sandbox (keep shared values "
          "in a dict of your own; `vars(obj)` copies an object of the script's own)")]),
    ("class Account:\n    def __init__(self, uid):\n        self.user = get_user(uid)\n"
     "    @property\n    def tier(self):\n        return get_user(1)['tier']\n"
     "    def __len__(self):\n        return len(list_orders(1)['orders'])\n"
     "accounts = list(map(Account, [1, 2]))",
     [(2, "__init__() calls tools, but Python calls it for you in `Cls(...)`, where a call "
          "cannot be awaited: make the calls in an `async def` method (e.g. `async def "
          "load(self)`, awaited before use) and keep the results on the object"),
      (5, "tier() calls tools, but a property is read without a call, where a call cannot "
          "be awaited: make the calls in an `async def` method (e.g. `async def load(self)`, "
          "awaited before use) and keep the results on the object"),
      (7, "__len__() calls tools, but Python calls it for you (`for`, `len()`, `print()` …), "
          "where a call cannot be awaited: make the calls in an `async def` method (e.g. "
          "`async def load(self)`, awaited before use) and keep the results on the object")]),
    ("from enum import Enum\nclass Tier(Enum):\n    GOLD = 'gold'\n    SILVER = 'silver'\n"
     "def rank(t):\n    match t:\n        case [Tier.GOLD, n] | [Tier.SILVER, n, _]:\n"
     "            return n\nrank([Tier.GOLD, 1])",
     [(7, "a case value must be a literal (a number, string, True, False or None): compare "
          "other values in a guard, `case x if x == Tier.GOLD:`"),
      (7, "a case value must be a literal (a number, string, True, False or None): compare "
          "other values in a guard, `case x if x == Tier.SILVER:`")]),
    ("def f():\n    '''Doc.'''\nf.__doc__",
     [(3, '"__doc__" is an invalid attribute name because it starts with "_": docstrings '
          "cannot be read in the sandbox: keep the text in a string of your own")]),
])
async def test_round15_refusals_are_found_before_any_call(
        mode: cm.CodeMode, script: str, problems: list[tuple[int, str]]) -> None:
    assert [(p.line, p.message) for p in mode.check(script)] == problems
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError" and run.calls == ()


@pytest.mark.parametrize(("script", "error"), [
    ("class Log:\n    def __init__(self):\n        self.parts = []\n"
     "    def write(self, text):\n        self.parts.append(text)\nprint('x', file=Log())",
     ("TypeError", 6, "print(file=...) takes sys.stdout, sys.stderr or an io.StringIO() in "
                      "the sandbox: print() without file= writes to the script's output; to "
                      "collect text, append it to a list and '\\n'.join() it")),
    ("u = get_user(1)\ndir(u)",
     ("TypeError", 2, "dir() takes the script's own objects and classes and the sandbox "
                      "modules, not 'dict' (the SDK in the prompt lists the tools; a tool's "
                      "result is data: print it, and list(d) gives a dict's keys)")),
    ("dir(tools)",
     ("TypeError", 1, "dir() takes the script's own objects and classes and the sandbox "
                      "modules, not 'ToolNamespace' (the SDK in the prompt lists the tools; a "
                      "tool's result is data: print it, and list(d) gives a dict's keys)")),
    ("import operator\noperator.concat(1, 2)",
     ("TypeError", 2, "'int' object can't be concatenated")),
    ("bytes(10**10)",
     ("LimitExceeded", 1, "limit exceeded: memory=536870912: bytes() would need about "
                          "10000000000 bytes")),
    ("import itertools\nbytes(itertools.repeat(1, 10**9))",
     ("LimitExceeded", 2, "limit exceeded: operations=10000000: too many loop iterations or "
                          "function calls")),
])
async def test_round15_additions_keep_their_limits(mode: cm.CodeMode, script: str,
                                                   error: tuple[str, int, str]) -> None:
    run = await mode.run(script)
    assert run.error is not None
    assert (run.error.type, run.error.line, run.error.message) == error


async def test_dir_lists_what_a_script_may_name() -> None:
    async with cm.InProcessExecutor() as executor:
        mode = cm.CodeMode(registry(), executor=executor)
        run = await mode.run(
            "import math\nclass A:\n    k = 1\n    def __init__(self):\n        self.x = 1\n"
            "        self._p = 2\n        self.__q = 3\n    def m(self):\n        pass\n"
            "a = A()\n[[n for n in dir(a) if not n.startswith('__')], "
            "[n for n in dir(A) if not n.startswith('_')], 'sqrt' in dir(math), "
            "'__init__' in dir(a)]")
    assert run.error is None, run.error
    assert run.value == [["_A__q", "_p", "k", "m", "x"], ["k", "m"], True, True]


@pytest.mark.parametrize("loop", ["get_event_loop", "new_event_loop"])
async def test_a_loop_run_until_complete_runs_as_asyncio_run(mode: cm.CodeMode,
                                                             loop: str) -> None:
    # Older scripts drive main() through an event loop of their own; CPython leaves that
    # loop open (a ResourceWarning), so the row is compared with its asyncio.run form.
    script = (
        "import asyncio\n\nasync def profile(uid):\n"
        "    user = await tools.get_user(user_id=uid)\n"
        "    orders = await tools.list_orders(user_id=uid, page_size=3)\n"
        "    return {'name': user['name'], 'first': [o['id'] for o in orders['orders']]}\n\n"
        "async def main():\n    return await asyncio.gather(*(profile(u) for u in (2, 3)))\n\n"
        f"results = asyncio.{loop}().run_until_complete(main())\n"
        "for r in results:\n    print(f\"{r['name']}: {r['first']}\")\nfinal_answer(results)\n")
    run = await mode.run(script)
    canonical = await mode.run(script.replace(f"asyncio.{loop}().run_until_complete(",
                                              "asyncio.run("))
    assert run.error is None and canonical.error is None, run.error
    assert (run.value, run.output) == (canonical.value, canonical.output)
    assert sorted((c.name, c.arguments["user_id"]) for c in run.calls) == sorted(
        (c.name, c.arguments["user_id"]) for c in canonical.calls)  # gathered: any order
    assert run.value[0]["name"] == "Alan Turing" and run.output.count("\n") == 2


# -- compat round 3: sys streams and exit, which CPython's side cannot compare -----------------


@pytest.mark.parametrize(("script", "value", "output", "error"), [
    ('import sys\nusers = [get_user(i) for i in (1, 2)]\n'
     'print("loaded", len(users), file=sys.stderr)\nsys.stderr.write("warn\\n")\n'
     '[u["name"] for u in users]',
     ["Ada Lovelace", "Alan Turing"], "loaded 2\nwarn\n", None),
    ('import sys\nu = get_user(user_id=4)\nif u["tier"] != "gold":\n'
     '    print(f"{u[\'name\']} is not gold", file=sys.stderr)\n    sys.exit(1)\nu',
     None, "Linus T is not gold\n", ("SystemExit", 5, "the script exited with status 1")),
    ('import sys\nrows = list_orders(user_id=9)["orders"]\nif not rows:\n'
     '    sys.exit("no orders for user 9")\nrows',
     None, "", ("SystemExit", 4, "no orders for user 9")),
    ('for uid in (1, 2, 3):\n    u = get_user(uid)\n    print(u["name"])\n'
     '    if u["tier"] == "silver":\n        exit()\nprint("never")',
     None, "Ada Lovelace\nAlan Turing\n", None),
    ('import sys\n\ndef main():\n    for u in list_users():\n        print(u["name"])\n'
     '    return 0\n\nif __name__ == "__main__":\n    sys.exit(main())',
     None, "Ada Lovelace\nAlan Turing\nGrace Hopper\nLinus T\n", None),
    ('import asyncio, sys\nasync def check(uid):\n    u = await tools.get_user(user_id=uid)\n'
     '    if u["tier"] == "bronze":\n        sys.exit(2)\n    return u["id"]\n'
     'async def main():\n    return await asyncio.gather(*[check(i) for i in range(1, 5)])\n'
     'asyncio.run(main())',
     None, "", ("SystemExit", 5, "the script exited with status 2")),
    ('import sys\ntry:\n    sys.exit(0)\nexcept Exception:\n    print("caught")\n'
     'print("after")', None, "", None),
])
async def test_sys_streams_and_exit_end_the_run_as_a_program_would(
        mode: cm.CodeMode, script: str, value: Any, output: str,
        error: tuple[str, int, str] | None) -> None:
    """``sys.stdout``/``sys.stderr`` write to the run's output; ``exit()``/``sys.exit()``
    stop the script there: status 0 or None is a success with no result, any other status
    (or a text) is the run's ``SystemExit`` error, at its line."""
    run = await mode.run(script)
    got = None if run.error is None else (run.error.type, run.error.line, run.error.message)
    assert (run.value, run.output, got) == (value, output, error)


@pytest.mark.parametrize(("script", "problems"), [
    ("import sys\nname = sys.argv[1]",
     [(2, "module 'sys' has no attribute 'argv' in the sandbox (available: exit, maxsize, "
          "stderr, stdout); a script has no command line or input: its values come from the "
          "tools or the run's inputs")]),
    ("import sys\nsys.setrecursionlimit(10000)",
     [(2, "module 'sys' has no attribute 'setrecursionlimit' in the sandbox (available: exit, "
          "maxsize, stderr, stdout); the run's recursion limit is fixed by the host: recurse "
          "less deeply, or loop with a list as a stack")]),
    ("import sys\nif sys.version_info < (3, 10):\n    raise RuntimeError('old')",
     [(2, "module 'sys' has no attribute 'version_info' in the sandbox (available: exit, "
          "maxsize, stderr, stdout); the sandbox runs Python 3.11 or newer: drop the version "
          "check")]),
    ("from io import BytesIO\n1",
     [(1, "cannot import name 'BytesIO' from 'io' in the sandbox (available: StringIO); "
          "keep bytes in a list and `b''.join(parts)`, or encode text (`text.encode()`)")]),
    ("import csv\ncsv.Sniffer().sniff('a;b')",
     [(2, "module 'csv' has no attribute 'Sniffer' in the sandbox (available: DictReader, "
          "DictWriter, Error, QUOTE_ALL, QUOTE_MINIMAL, QUOTE_NONE, QUOTE_NONNUMERIC, reader, "
          "writer); pass `delimiter=` yourself (count `,`, `;` and `\\t` in the first line)")]),
])
async def test_compat3_refusals_name_their_fix(mode: cm.CodeMode, script: str,
                                               problems: list[tuple[int, str]]) -> None:
    assert [(p.line, p.message) for p in mode.check(script)] == problems
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError" and run.calls == ()


async def test_stringio_keeps_pythons_file_semantics(mode: cm.CodeMode) -> None:
    script = ("import io\nb = io.StringIO('abc\\ndef\\n')\nfirst = b.readline()\n"
              "b.seek(0, 2)\nb.write('ghi')\nb.seek(1)\nb.write('X')\n"
              "lines = b.getvalue().splitlines()\nb.seek(0)\nall_lines = b.readlines()\n"
              "b.truncate(2)\nb.close()\ntry:\n    b.read()\nexcept ValueError as e:\n"
              "    closed = str(e)\n[first, lines, all_lines, b.closed, closed]")
    run = await mode.run(script)
    assert run.error is None, run.error
    assert run.value == ["abc\n", ["aXc", "def", "ghi"], ["aXc\n", "def\n", "ghi"], True,
                         "I/O operation on closed file."]


# -- compat round 4: what stays refused names its fix, before any call -------------------------


@pytest.mark.parametrize(("script", "problems"), [
    ("import uuid\nu = get_user(1)\nuuid.uuid1()",
     [(3, "module 'uuid' has no attribute 'uuid1' in the sandbox (available: NAMESPACE_DNS, "
          "NAMESPACE_OID, NAMESPACE_URL, NAMESPACE_X500, UUID, uuid3, uuid4, uuid5); use "
          "uuid.uuid4() (uuid1 would carry the host's network address)")]),
    ("u = get_user(1)\ntry:\n    pass\nexcept* ToolCallError as eg:\n    print(eg)",
     [(2, "`except*` is not available in the sandbox: write `except ExceptionGroup as eg:` "
          "and test its members, `[e for e in eg.exceptions if isinstance(e, "
          "ToolCallError)]` (or gather with `return_exceptions=True`)")]),
    ("from dataclasses import dataclass\n@dataclass\nclass P:\n    x: int\n"
     "u = get_user(1)\nmatch [P(1)]:\n    case [P(x=0) | 1]:\n        pass",
     [(7, "this class pattern is not available in the sandbox: a class pattern works as the "
          "whole case or inside a sequence or mapping pattern (not under `|`), with names, "
          "`_`, literals and class patterns as its sub-patterns and public keyword names "
          "(`case Line(Point(x=0), end=e):`, `case [Point(x=0), *rest]:`); otherwise test "
          "the type in a guard, `case p if isinstance(p, Point) and p.x == 0:`, or match on "
          "the value itself")]),
    ("from zoneinfo import ZoneInfo\nu = get_user(1)",
     [(1, "module 'zoneinfo' is not available in the sandbox (available: "
          + ", ".join(sorted(FACADE_NAMES))
          + "); use a fixed offset, `datetime.timezone(datetime.timedelta(hours=2))`, or "
            "`datetime.timezone.utc`")]),
])
async def test_compat4_refusals_name_their_fix(mode: cm.CodeMode, script: str,
                                               problems: list[tuple[int, str]]) -> None:
    assert [(p.line, p.message) for p in mode.check(script)] == problems
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError" and run.calls == ()


@pytest.mark.parametrize(("script", "error"), [
    ("import string\nclass T(string.Template):\n    delimiter = '%'",
     ("TypeError", "class T cannot subclass 'Template' in the sandbox")),
    ("from functools import cached_property\nclass C:\n    v = cached_property(42)",
     ("TypeError", "cached_property() takes a function")),
    ("import enum\nclass P(enum.Flag):\n    A = 'x'",
     ("TypeError", "P.A: a flag's value is an int of 0 or more in the sandbox, not 'x'")),
    ("import time\ntime.strftime('%Y', [2024])",
     ("TypeError", "time.strftime() takes a struct_time or a tuple of 9 integers, not 'list'")),
    ("import html\nhtml.escape(b'<')",
     ("TypeError", "html.escape() takes a str, not 'bytes'")),
])
async def test_compat4_additions_refuse_what_they_must(mode: cm.CodeMode, script: str,
                                                       error: tuple[str, str]) -> None:
    run = await mode.run(script)
    assert run.error is not None and (run.error.type, run.error.message) == error


# -- compat round 6: a result read in the wrong shape says what it is, at its line ------------


@pytest.mark.parametrize(("script", "error"), [
    ('me = get_user(1)\nprint(me["name"])\nme[0]["email"]',
     ("KeyError", 3, "0; me is an object (a dict with keys 'id', 'name', 'email', 'signup', "
                     "'tier'), not a list: read its values by key: `me['id']`")),
    ('page = list_orders(user_id=2)\nfor o in page["orders"]:\n    print(o["totl"])',
     ("KeyError", 3, "'totl'; o has the keys 'id', 'total', 'status', 'date'; did you mean "
                     "'total'? (`.get(key)` gives None for a missing one)")),
    ('cfg = read_file("config.json")\nretries = cfg["retries"]',
     ("TypeError", 2, "string indices must be integers, not 'str'; cfg is text (a str) "
                      "holding JSON, not parsed data (a tool that declares no output schema "
                      "answers text): parse it first, `data = json.loads(cfg)`, then read "
                      "`data[...]`")),
    ('def level(line):\n    return line["level"]\n'
     'level(read_file("app.log").splitlines()[0])',
     ("TypeError", 2, "string indices must be integers, not 'str'; line is text (a str), "
                      "indexed by position only: if a tool answered JSON as text, parse it "
                      "first with `json.loads(...)`")),
    # CPython's gather() is a future whose outcome a second await replays
    ('import asyncio\nfut = asyncio.gather(tools.get_user(user_id=1))\nfirst = await fut\n'
     'again = await fut',
     ("RuntimeError", 4, "cannot reuse already awaited coroutine; an awaitable (a call, a "
                         "coroutine, an asyncio.gather(...)) is awaited once: keep its value "
                         "in a name, `results = await asyncio.gather(...)`, and use that name "
                         "again")),
])
async def test_a_result_read_in_the_wrong_shape_says_what_it_is(
        mode: cm.CodeMode, script: str, error: tuple[str, int, str]) -> None:
    """The error is CPython's (``KeyError: 0``), with what the value was and how to read it
    added to the run's message: the model fixes it in one round."""
    run = await mode.run(script)
    assert run.error is not None
    assert (run.error.type, run.error.line, run.error.message) == error


async def test_a_caught_subscript_error_stays_pythons(mode: cm.CodeMode) -> None:
    script = ('me = get_user(1)\ntry:\n    me[0]\nexcept KeyError as e:\n    a = [str(e), e.args]\n'
              'try:\n    read_file("config.json")["x"]\nexcept TypeError as e:\n    b = str(e)\n[a, b]')
    run = await mode.run(script)
    assert run.error is None, run.error
    assert (run.value, run.output) == cpython(script)


_MODULES = ", ".join(sorted(FACADE_NAMES))


@pytest.mark.parametrize(("script", "problems"), [
    # smolagents-style parallel calls through a thread pool
    ("from concurrent.futures import ThreadPoolExecutor\nwith ThreadPoolExecutor(max_workers=4) "
     "as ex:\n    users = list(ex.map(get_user, [1, 2, 3]))\nusers",
     [(1, f"module 'concurrent.futures' is not available in the sandbox (available: {_MODULES}); "
          "tool calls run concurrently through asyncio, not threads: `results = await "
          "asyncio.gather(*[tools.<name>(...) for x in items])` (`asyncio.Semaphore` bounds how "
          "many run at once)")]),
    ("import threading\nu = get_user(1)",
     [(1, f"module 'threading' is not available in the sandbox (available: {_MODULES}); tool "
          "calls run concurrently through asyncio, not threads: `results = await "
          "asyncio.gather(*[tools.<name>(...) for x in items])` (`asyncio.Semaphore` bounds how "
          "many run at once)")]),
    ("import unicodedata\nname = get_user(1)['name']\nunicodedata.normalize('NFKD', name)",
     [(1, f"module 'unicodedata' is not available in the sandbox (available: {_MODULES}); "
          "compare text with `.casefold()`; to drop accents, map the characters yourself "
          "(`text.translate(str.maketrans('éè', 'ee'))`)")]),
    ("import sqlite3\ndb = sqlite3.connect(':memory:')",
     [(1, f"module 'sqlite3' is not available in the sandbox (available: {_MODULES}); filter, "
          "group and join lists of dicts with comprehensions, sorted(), itertools.groupby and "
          "collections.Counter")]),
])
async def test_compat6_refusals_name_their_fix(mode: cm.CodeMode, script: str,
                                               problems: list[tuple[int, str]]) -> None:
    assert [(p.line, p.message) for p in mode.check(script)] == problems
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError" and run.calls == ()


# -- compat round 7: SystemExit, @contextmanager misuse, container bases --------------------


async def test_raise_system_exit_ends_the_run_as_exit_does(mode: cm.CodeMode) -> None:
    """``raise SystemExit(0)`` (a CLI-style script) stops there as a success with no result;
    a text status is the run's error, as CPython prints it; ``except Exception`` lets it by."""
    run = await mode.run('u = get_user(1)\nprint(u["name"])\nif u:\n    raise SystemExit(0)\n'
                         'print("never")')
    assert (run.error, run.value, run.output, len(run.calls)) == (None, None, "Ada Lovelace\n", 1)
    run = await mode.run('try:\n    raise SystemExit("fatal: no data")\nexcept Exception:\n'
                         '    print("no")')
    assert run.error is not None and (run.error.type, run.error.line, run.error.message) == (
        "SystemExit", 2, "fatal: no data")
    assert run.output == ""


@pytest.mark.parametrize(("script", "error"), [
    ("from contextlib import contextmanager\n@contextmanager\ndef f():\n    return 1\n"
     "with f():\n    pass",
     ("TypeError", 5, "a @contextmanager function must be a generator (yield once), not "
                      "return 'int'")),
    ("from contextlib import contextmanager\n@contextmanager\ndef f():\n    yield 1\n"
     "    yield 2\nwith f():\n    pass",
     ("RuntimeError", 6, "generator didn't stop")),
    ("class E(SystemExit):\n    pass",
     ("TypeError", 1, "class E cannot subclass 'SystemExit' in the sandbox")),
    ('class Default(dict):\n    def __missing__(self, key):\n        return "{" + key + "}"\n'
     'u = get_user(2)\n"{name} {extra}".format_map(Default(u))',
     ("TypeError", 1, "class Default cannot subclass 'dict' in the sandbox (a class's bases "
                      "are object, the exception classes and the script's own classes): keep "
                      "the dict in an attribute (`self.data = {}`) and define the methods the "
                      "class needs (`__getitem__`, `__len__`, `__iter__` ...)")),
])
async def test_compat7_refusals_name_their_fix(mode: cm.CodeMode, script: str,
                                               error: tuple[str, int, str]) -> None:
    run = await mode.run(script)
    assert run.error is not None and run.calls == ()
    assert (run.error.type, run.error.line, run.error.message) == error


async def test_a_contextmanager_never_hands_a_host_stop_to_the_script(
        executor: cm.InProcessExecutor) -> None:
    """A tripped limit inside the block reaches the generator as a RuntimeError it cannot
    swallow: the run still ends with the limit."""
    tight = cm.CodeMode(registry(), executor=executor, limits=cm.Limits(operations=20_000))
    script = ("from contextlib import contextmanager\nseen = []\n@contextmanager\ndef f():\n"
              "    try:\n        yield 1\n    except Exception as e:\n"
              "        seen.append(type(e).__name__)\n        yield 2\n"
              "with f():\n    while True:\n        pass")
    run = await tight.run(script)
    assert run.error is not None and run.error.limit == "operations"


# -- compat round 8 -----------------------------------------------------------------------------

async def test_a_failed_call_uncaught_names_its_tool(mode: cm.CodeMode) -> None:
    """``str(e)`` is the failure alone (as CPython's stand-in and other hosts give it); the
    run's error still says which tool failed."""
    run = await mode.run("u = get_user(1)\nv = get_user(98)")
    assert run.error is not None
    assert (run.error.type, run.error.line, run.error.message) == (
        "ToolCallError", 2, "get_user: LookupError: no user 98")


@pytest.mark.parametrize(("script", "error"), [
    ('u = get_user(1)\nfor k, v in u.items:\n    print(k, v)',
     ("TypeError", 2, "'builtin_function_or_method' object is not iterable; `u.items` without "
                      "a call is the dict method itself: call it, `u.items()`")),
    ('page = list_orders(user_id=2)\nn = len(page["orders"][0].keys)',
     ("TypeError", 2, "object of type 'builtin_function_or_method' has no len(); "
                      "`page[\"orders\"][0].keys` without a call is the dict method itself: "
                      "call it, `page[\"orders\"][0].keys()`")),
    ('w = get_weather("Oslo")\n"sunny" in w.values',
     ("TypeError", 2, "argument of type 'builtin_function_or_method' is not iterable; "
                      "`w.values` without a call is the dict method itself: call it, "
                      "`w.values()`")),
    # r46: a needle in a name (the `in` goes through the _in_ guard, the innermost frame)
    ('w = get_weather("Oslo")\nsky = "sunny"\nsky in w.values',
     ("TypeError", 3, "argument of type 'builtin_function_or_method' is not iterable; "
                      "`w.values` without a call is the dict method itself: call it, "
                      "`w.values()`")),
    ('def names(rows):\n    return sorted(r for r in rows.keys)\nnames(get_user(1))',
     ("TypeError", 2, "'builtin_function_or_method' object is not iterable; `rows.keys` "
                      "without a call is the dict method itself: call it, `rows.keys()`")),
])
async def test_a_dict_method_read_without_a_call_says_to_call_it(
        mode: cm.CodeMode, script: str, error: tuple[str, int, str]) -> None:
    """``for k, v in u.items:`` on a dict with no ``items`` key (one with it reads the key):
    CPython's error, with the fix added."""
    run = await mode.run(script)
    assert run.error is not None
    assert (run.error.type, run.error.line, run.error.message) == error


async def test_a_caught_method_type_error_stays_pythons(mode: cm.CodeMode) -> None:
    script = ('u = get_user(1)\ntry:\n    list(u.items)\nexcept TypeError as e:\n'
              '    m = str(e)\nm')
    run = await mode.run(script)
    assert run.error is None and (run.value, run.output) == cpython(script)


@pytest.mark.parametrize(("script", "problems"), [
    ("class Svc:\n    def get(self, uid):\n        return get_user(uid)\n"
     "s = Svc()\nusers = max([1, 2], key=s.get)",
     [(2, "get() calls tools, so it must be `async def get(self, ...)` with each tool call "
          "awaited, and each call of it awaited too (`await obj.get(...)`); `.get` is used "
          "as a value at line 5, where it cannot be awaited: call it in a loop, e.g. "
          "`[await obj.get(x) for x in xs]` (if `.get` there is another object's "
          "attribute, give the method a name of its own)")]),
    ("class Svc:\n    def load(self, uid):\n        return get_user(uid)\n"
     "s = Svc()\nusers = list(map(s.load, [1, 2]))",
     [(2, "load() calls tools, so it must be `async def load(self, ...)` with each tool call "
          "awaited, and each call of it awaited too (`await obj.load(...)`); `.load` is used "
          "as a value at line 5, where it cannot be awaited: call it in a loop, e.g. "
          "`[await obj.load(x) for x in xs]` (if `.load` there is another object's "
          "attribute, give the method a name of its own)")]),
    ("class Svc:\n    def load(self, uid):\n        return get_user(uid)\n"
     "s = Svc()\nhandlers = {'user': lambda u: s.load(u)}\nhandlers['user'](1)",
     [(5, "a tool call inside a lambda cannot be awaited: use a loop or an `async def` and "
          "`await` the call")]),
])
async def test_a_method_calling_tools_that_cannot_be_made_async_names_its_fix(
        mode: cm.CodeMode, script: str, problems: list[tuple[int, str]]) -> None:
    """A plain method that calls tools becomes ``async def`` with its calls awaited (the
    corpus row above) unless its calls cannot all be found: then the fix, before any call."""
    assert [(p.line, p.message) for p in mode.check(script)] == problems
    run = await mode.run(script)
    assert run.error is not None and run.error.type == "PreflightError" and run.calls == ()


async def test_a_decimal_context_is_the_runs_own(mode: cm.CodeMode) -> None:
    """``getcontext()`` is per run: a script's precision reaches neither the host's thread
    context (an in-process run shares the thread) nor the next run."""
    import decimal
    host = decimal.getcontext()
    before = (host.prec, host.rounding)
    first = await mode.run("from decimal import Decimal, getcontext, ROUND_DOWN\n"
                           "getcontext().prec = 5\ngetcontext().rounding = ROUND_DOWN\n"
                           "str(Decimal(2) / 3)")
    second = await mode.run("from decimal import Decimal, getcontext\n"
                            "[getcontext().prec, str(Decimal(2) / 3)]")
    assert first.value == "0.66666"
    assert second.value == [28, str(decimal.Context(prec=28).divide(2, 3))]
    assert decimal.getcontext() is host and (host.prec, host.rounding) == before
