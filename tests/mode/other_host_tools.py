"""Tools for the compat-15 rows: corpus schemas (BFCL trading/travel/ticket/math, Hacker
News, Wikipedia, Time, LeetCode, VS Code Copilot) with small fixed handlers.

The handlers are plain functions, so the same data serves the sandbox (through the
registry built from the corpus listings, every call validated against the published
schema) and CPython (the functions called directly).
"""

# ruff: noqa: E501 - fixed data, one record a line

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from tests.mode.corpus_tools import listings

if TYPE_CHECKING:
    from collections.abc import Callable

STOCKS = {"AAPL": (227.16, 0.17, 2.552), "GOOG": (2840.34, 0.24, 1.123), "TSLA": (667.92, -0.12, 1.654),
          "MSFT": (310.23, 0.09, 3.234), "NVDA": (220.34, 0.34, 1.234), "ALPH": (1320.45, -0.08, 0.987)}
NAMES = {"Apple": "AAPL", "Google": "GOOG", "Tesla": "TSLA", "Microsoft": "MSFT", "Nvidia": "NVDA"}
AIRPORTS = {"San Francisco": "SFO", "Los Angeles": "LAX", "New York": "JFK", "Chicago": "ORD",
            "Boston": "BOS", "London": "LHR", "Paris": "CDG", "Tokyo": "HND", "Rivermist": "RMS"}
RATES = {"USD": 1.0, "EUR": 0.92, "GBP": 0.79, "JPY": 151.3, "CAD": 1.36, "RMB": 7.23}
STORIES = {i: {"id": i, "title": t, "by": by, "score": s, "descendants": d, "time": 1716200000 + i * 977,
               "url": f"https://{host}/{i}", "type": "story"}
           for i, (t, by, s, d, host) in {
               40401: ("Show HN: A tiny SQLite clone in Rust", "ferris", 412, 133, "github.com"),
               40402: ("Why Python's GIL is going away", "guido_fan", 389, 301, "lwn.net"),
               40403: ("Ask HN: How do you review code?", "curious", 97, 212, "news.ycombinator.com"),
               40404: ("PostgreSQL 17 released", "pgdev", 1023, 455, "postgresql.org"),
               40405: ("The unreasonable effectiveness of tests", "kent", 55, 12, "blog.example.com"),
               40406: ("Rust in the Linux kernel, a year later", "ferris", 640, 280, "lwn.net")}.items()}
ARTICLES = {"Python (programming language)": "Python is a high-level, general-purpose programming language. Its design philosophy emphasizes code readability with the use of significant indentation. Python is dynamically typed and garbage-collected.",
            "Rust (programming language)": "Rust is a general-purpose programming language emphasizing performance, type safety, and concurrency. It enforces memory safety without a garbage collector.",
            "Guido van Rossum": "Guido van Rossum is a Dutch programmer best known as the creator of the Python programming language, for which he was the benevolent dictator for life (BDFL) until 2018."}
ZONES = {"America/New_York": -4, "Europe/London": 1, "Asia/Tokyo": 9, "Europe/Berlin": 2,
         "America/Los_Angeles": -7, "Asia/Kolkata": 5.5, "UTC": 0}
PROBLEMS = [("two-sum", "Two Sum", "EASY", ["array", "hash-table"], 52.1),
            ("add-two-numbers", "Add Two Numbers", "MEDIUM", ["linked-list", "math"], 43.2),
            ("median-of-two-sorted-arrays", "Median of Two Sorted Arrays", "HARD", ["array", "binary-search"], 41.0),
            ("longest-palindromic-substring", "Longest Palindromic Substring", "MEDIUM", ["string", "dynamic-programming"], 34.5),
            ("climbing-stairs", "Climbing Stairs", "EASY", ["math", "dynamic-programming"], 53.3),
            ("edit-distance", "Edit Distance", "MEDIUM", ["string", "dynamic-programming"], 57.9),
            ("trapping-rain-water", "Trapping Rain Water", "HARD", ["array", "two-pointers", "dynamic-programming"], 62.4)]
SOURCES = {"/ws/src/app.py": "import logging\n\nlog = logging.getLogger(__name__)\n\n\ndef main():\n    # TODO: read config from env\n    log.info('start')\n    return run()\n\n\ndef run():\n    # FIXME: handle timeouts\n    return 0\n",
           "/ws/src/db.py": "import sqlite3\n\n# TODO(ada): pool connections\nDB = 'app.db'\n\n\ndef connect():\n    return sqlite3.connect(DB)\n",
           "/ws/tests/test_app.py": "from src.app import run\n\n\ndef test_run():\n    # TODO: more cases\n    assert run() == 0\n"}


def get_stock_info(symbol: str) -> dict[str, Any]:
    if symbol not in STOCKS:
        raise KeyError(f"Stock with symbol '{symbol}' not found")
    price, change, volume = STOCKS[symbol]
    return {"price": price, "percent_change": change, "volume": volume,
            "MA(5)": round(price * 0.99, 2), "MA(20)": round(price * 1.01, 2)}


def get_symbol_by_name(name: str) -> dict[str, str]:
    return {"symbol": NAMES.get(name, "Stock not found")}


def place_order(order_type: str, symbol: str, price: float, amount: int) -> dict[str, Any]:
    return {"order_id": 12000 + sum(map(ord, symbol)) + amount, "order_type": order_type,
            "status": "Pending", "price": price, "amount": amount}


def get_order_details(order_id: int) -> dict[str, Any]:
    symbol = sorted(STOCKS)[order_id % len(STOCKS)]
    return {"id": order_id, "order_type": "Buy" if order_id % 2 else "Sell", "symbol": symbol,
            "price": STOCKS[symbol][0], "amount": order_id % 17 + 1,
            "status": ["Open", "Pending", "Completed"][order_id % 3]}


def get_watchlist() -> dict[str, list[str]]:
    return {"watchlist": ["NVDA", "AAPL", "TSLA"]}


def add_to_watchlist(stock: str) -> dict[str, list[str]]:
    return {"watchlist": sorted({"NVDA", "AAPL", "TSLA", stock})}


def get_nearest_airport_by_city(location: str) -> dict[str, str]:
    return {"nearest_airport": AIRPORTS.get(location, "Unknown")}


def get_flight_cost(travel_from: str, travel_to: str, travel_date: str, travel_class: str) -> dict[str, Any]:
    if travel_class not in ("economy", "business", "first"):
        raise ValueError(f"Invalid travel class: {travel_class}")
    base = (sum(map(ord, travel_from + travel_to)) % 400 + 150) * int(travel_date[-2:]) / 15
    factor = {"economy": 1, "business": 2.5, "first": 4}[travel_class]
    return {"travel_cost_list": [round(base * factor * k, 2) for k in (1.0, 1.15, 0.9)]}


def compute_exchange_rate(base_currency: str, target_currency: str, value: float) -> dict[str, float]:
    return {"exchanged_value": round(value / RATES[base_currency] * RATES[target_currency], 2)}


def create_ticket(title: str, description: str = "", priority: int = 1) -> dict[str, Any]:
    return {"id": 1000 + len(title) * 7 + priority, "title": title, "description": description,
            "status": "Open", "priority": priority, "created_by": "agent"}


def get_ticket(ticket_id: int) -> dict[str, Any]:
    if ticket_id < 1000:
        raise ValueError(f"Ticket with ID {ticket_id} not found.")
    return {"id": ticket_id, "title": f"Ticket {ticket_id}", "description": "",
            "status": ["Open", "Resolved", "Closed"][ticket_id % 3], "priority": ticket_id % 5 + 1,
            "created_by": "agent"}


def mean(numbers: list[float]) -> dict[str, float]:
    if not numbers:
        raise ValueError("Cannot calculate mean of an empty list")
    return {"result": sum(numbers) / len(numbers)}


def standard_deviation(numbers: list[float]) -> dict[str, float]:
    m = sum(numbers) / len(numbers)
    return {"result": (sum((x - m) ** 2 for x in numbers) / len(numbers)) ** 0.5}


def getStories(type: str, limit: float = 30) -> list[dict[str, Any]]:
    order = {"top": lambda s: -s["score"], "new": lambda s: -s["time"], "best": lambda s: -s["descendants"],
             "ask": lambda s: s["id"], "show": lambda s: s["id"], "job": lambda s: s["id"]}[type]
    rows = sorted(STORIES.values(), key=order)
    if type in ("ask", "show"):
        rows = [s for s in rows if s["title"].lower().startswith(f"{type} hn")]
    return rows[:int(limit)]


def getStory(id: float) -> dict[str, Any]:
    if int(id) not in STORIES:
        raise LookupError(f"Story {int(id)} not found")
    return STORIES[int(id)]


def search_wikipedia(query: str, limit: int = 10) -> dict[str, Any]:
    words = query.lower().split()
    hits = [{"title": t, "snippet": text[:60], "pageid": 1000 + len(t)}
            for t, text in ARTICLES.items() if any(w in (t + text).lower() for w in words)]
    return {"query": query, "results": hits[:limit]}


def get_summary(title: str) -> str:
    if title not in ARTICLES:
        raise LookupError(f"No Wikipedia article found for '{title}'")
    return ARTICLES[title]


def get_current_time(timezone: str) -> str:
    if timezone not in ZONES:
        raise ValueError(f"Invalid timezone: {timezone}")
    offset = ZONES[timezone]
    hours, minutes = int(offset), int(abs(offset) * 60) % 60
    stamp = f"2024-05-20T{(13 + int(offset)) % 24:02d}:{(30 + minutes) % 60:02d}:00{'+' if offset >= 0 else '-'}{abs(hours):02d}:{minutes:02d}"
    return json.dumps({"timezone": timezone, "datetime": stamp, "is_dst": timezone.startswith(("America", "Europe"))}, indent=2)


def convert_time(source_timezone: str, time: str, target_timezone: str) -> str:
    hh, mm = map(int, time.split(":"))
    diff = ZONES[target_timezone] - ZONES[source_timezone]
    total = (hh * 60 + mm + int(diff * 60)) % (24 * 60)
    return json.dumps({"source": {"timezone": source_timezone, "datetime": f"2024-05-20T{time}:00"},
                       "target": {"timezone": target_timezone, "datetime": f"2024-05-20T{total // 60:02d}:{total % 60:02d}:00"},
                       "time_difference": f"{diff:+.1f}h"}, indent=2)


def search_problems(tags: str | None = None, difficulty: str | None = None, limit: float = 20,
                    skip: float = 0) -> dict[str, Any]:
    wanted = tags.split("+") if tags else []
    rows = [{"titleSlug": slug, "title": t, "difficulty": d, "topicTags": [{"slug": x} for x in tg], "acRate": ac}
            for slug, t, d, tg, ac in PROBLEMS
            if difficulty in (None, d) and all(w in tg for w in wanted)]
    return {"total": len(rows), "questions": rows[int(skip):int(skip) + int(limit)]}


def copilot_findTextInFiles(query: str, isRegexp: bool = False, includePattern: str | None = None,
                            maxResults: float = 50) -> str:
    import re
    lines = []
    for path, text in SOURCES.items():
        if includePattern and includePattern.strip("*/") not in path:
            continue
        for n, line in enumerate(text.splitlines(), start=1):
            found = re.search(query, line, re.I) if isRegexp else query.lower() in line.lower()
            if found:
                lines.append(f"{path}:{n}: {line.strip()}")
    return "\n".join(lines[:int(maxResults)]) or "No matches found."


def copilot_readFile(filePath: str, startLine: float, endLine: float) -> str:
    if filePath not in SOURCES:
        raise FileNotFoundError(f"{filePath} does not exist")
    return "\n".join(SOURCES[filePath].splitlines()[int(startLine) - 1:int(endLine)])


FUNCTIONS: dict[str, Callable[..., Any]] = {fn.__name__: fn for fn in (
    get_stock_info, get_symbol_by_name, place_order, get_order_details, get_watchlist, add_to_watchlist,
    get_nearest_airport_by_city, get_flight_cost, compute_exchange_rate, create_ticket, get_ticket,
    mean, standard_deviation, getStories, getStory, search_wikipedia, get_summary, get_current_time,
    convert_time, search_problems, copilot_findTextInFiles, copilot_readFile)}
"""Python name → handler (``search-problems`` is spelled ``search_problems``, as the SDK does)."""

_LISTINGS = {"bfcl_v4_multi_turn_func_doc.json": (
    "get_stock_info", "get_symbol_by_name", "place_order", "get_order_details", "get_watchlist",
    "add_to_watchlist", "get_nearest_airport_by_city", "get_flight_cost", "compute_exchange_rate",
    "create_ticket", "get_ticket", "mean", "standard_deviation"),
    "repo_livemcpbench_tools.json": ("getStories", "getStory", "search_wikipedia", "get_summary",
                                     "get_current_time", "convert_time", "search-problems"),
    "repo_vscode_copilot_chat_tools.json": ("copilot_findTextInFiles", "copilot_readFile")}


def specs() -> dict[str, dict[str, Any]]:
    """Wire name → the corpus listing."""
    found = listings(_LISTINGS)
    assert {n.replace("-", "_") for n in found} == set(FUNCTIONS)
    return found
