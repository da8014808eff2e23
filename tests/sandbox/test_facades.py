"""Facades: the allowlisted modules work, expose nothing else, and stay within the limits."""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

import anyio
import pytest

from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.language.facades import FACADE_NAMES, facade
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.runner import run_script

if TYPE_CHECKING:
    from codemode.sandbox.runtime.result import RunOutcome

LIMITS = Limits(timeout=2.0, operations=50_000, memory=16 * 1024 * 1024)


async def run(source: str, limits: Limits = LIMITS) -> RunOutcome:
    async def host(name: str, args: dict[str, Any]) -> Any:
        await anyio.sleep(float(args.get("delay", 0)))
        if args.get("fail"):
            from codemode.errors import ToolCallError
            raise ToolCallError(name, "failed on purpose")
        return args.get("value")

    return await run_script(textwrap.dedent(source), call=CallBroker(host, limits).answer_json,
                            tool_paths=["t"], limits=limits)


@pytest.mark.parametrize(("source", "value"), [
    ("import json\njson.loads(json.dumps({'a': [1, 2.5, None]}, sort_keys=True))",
     {"a": [1, 2.5, None]}),
    ("import json\njson.dumps([1], indent=2)", "[\n  1\n]"),
    # data a tool answered parsed comes back unchanged (scripts for JSON-text hosts)
    ("import json\nd = {'a': [1]}\n[json.loads(d) is d, json.loads([2]), json.loads(3.5),"
     " json.loads(None), json.loads(True)]", [True, [2], 3.5, None, True]),
    ("import json\ntry:\n    json.loads({}, object_hook=dict)\nexcept TypeError as e:\n"
     "    r = str(e)\nr", "the JSON object must be str, bytes or bytearray, not dict"),
    ("import re\nre.findall(r'\\d+', 'a1b22c333')", ["1", "22", "333"]),
    ("import re\nm = re.search(r'(?P<w>\\w+)@', 'x joe@ex')\n[m.group('w'), m.span()]",
     ["joe", [2, 6]]),
    ("import re\nre.sub(r'(\\d)', r'<\\1>', 'a1b2')", "a<1>b<2>"),
    ("import re\np = re.compile('a+', re.I)\n[p.pattern, p.sub('-', 'xAAy')]", ["a+", "x-y"]),
    ("import re\n[m.group(0) for m in re.finditer('b', 'abcb')]", ["b", "b"]),
    ("import math\n[math.floor(2.5), math.gcd(12, 18), math.lcm(4, 6), math.factorial(5)]",
     [2, 6, 12, 120]),
    ("import math\nround(math.sqrt(2) * math.pi, 3)", 4.443),
    ("import datetime\nd = datetime.date(2024, 2, 28) + datetime.timedelta(days=2)\n"
     "d.isoformat()", "2024-03-01"),
    ("from datetime import datetime, timezone\n"
     "datetime(2024, 1, 2, tzinfo=timezone.utc).isoformat()", "2024-01-02T00:00:00+00:00"),
    ("import collections\nc = collections.Counter('abracadabra')\nc.most_common(2)",
     [["a", 5], ["b", 2]]),
    ("from collections import defaultdict\nd = defaultdict(list)\nd['k'].append(1)\nd",
     {"k": [1]}),
    ("import collections\nP = collections.namedtuple('P', 'x y')\np = P(1, 2)\n[p.x, p.y, p]",
     [1, 2, [1, 2]]),
    ("import collections\nq = collections.deque([1, 2], maxlen=2)\nq.append(3)\nlist(q)",
     [2, 3]),
    ("import itertools\nlist(itertools.islice(itertools.count(5), 3))", [5, 6, 7]),
    ("import itertools\nlist(itertools.chain.from_iterable([[1], [2, 3]]))", [1, 2, 3]),
    ("import itertools\nlen(list(itertools.product('ab', repeat=3)))", 8),
    ("import statistics\n[statistics.mean([1, 2, 3]), statistics.median([3, 1, 2])]", [2, 2]),
    ("import string\nstring.ascii_lowercase[:3] + string.capwords('a b')", "abcA B"),
    ("import random\nrandom.seed(3)\nx = random.random()\nrandom.seed(3)\nx == random.random()",
     True),
    ("import time\ntime.time() > 0", True),
])
async def test_facades_work(source: str, value: Any) -> None:
    outcome = await run(source)
    assert outcome.error is None, outcome.error
    assert outcome.value == value


@pytest.mark.parametrize("name", sorted(FACADE_NAMES))
def test_facades_expose_no_module_internals(name: str) -> None:
    module = facade(name)
    for internal in ("sys", "os", "codecs", "enum", "_os", "__loader__", "__spec__",
                     "Formatter", "load", "dump", "_RNG", "abc", "binascii", "request"):
        if (name, internal) == ("collections", "abc"):
            # ``import collections.abc`` binds ``collections``: its ``abc`` is the facade
            assert module.sandbox_getattr(internal) is facade("collections.abc")
            continue
        assert internal not in module.exports()


@pytest.mark.parametrize(("source", "message"), [
    ("import json\njson.codecs", "module 'json' has no attribute 'codecs' in the sandbox"),
    ("import re\nre.enum", "module 're' has no attribute 'enum' in the sandbox"),
    ("import datetime\ndatetime.sys", "module 'datetime' has no attribute 'sys' in the sandbox"),
    ("import asyncio\nasyncio.events", "module 'asyncio' has no attribute 'events'"),
    ("import asyncio\nasyncio.get_event_loop()",
     "module 'asyncio' has no attribute 'get_event_loop'"),
    ("import string\nstring.Formatter", "module 'string' has no attribute 'Formatter'"),
    ("import collections\ncollections.abc.sys",
     "module 'collections.abc' has no attribute 'sys'"),
    ("import urllib\nurllib.request", "module 'urllib' has no attribute 'request'"),
    ("import hashlib\nhashlib.sha256().update.im_self", "'method' object has no accessible"),
    ("import re\nre.compile('a').scanner", "'Pattern' object has no accessible attribute"),
    ("import re\nre.match('a', 'a').re", "'Match' object has no accessible attribute 're'"),
    # Through getattr, so the compile-time refusal of `_` names does not stop it first:
    ("import math\ngetattr(math.floor, '__self__')", "attribute '__self__' is not accessible"),
])
async def test_facade_attribute_chains_are_refused(source: str, message: str) -> None:
    outcome = await run(source)
    assert outcome.error is not None
    assert (outcome.error.type, outcome.error.line) == ("AttributeError", 2), outcome.error
    assert message in outcome.error.message
    assert outcome.value is None


@pytest.mark.parametrize(("source", "limit"), [
    ("import itertools\n5 in itertools.count(10)", "operations"),
    ("import itertools\nlist(itertools.repeat(0))", "operations"),
    ("import itertools\nany(x < 0 for x in itertools.cycle([1]))", "operations"),
    ("import re\nre.match('(x+x+)+y', 'x' * 5000)", "timeout"),
    ("import re\nre.compile('(?:(?:a{50}){50}){50}')", "memory"),
    ("import re\nre.sub('', 'x' * 1000, 'a' * 10**5)", "memory"),
    ("import math\nmath.factorial(10**6)", "memory"),
    ("import math\nmath.prod([2**60] * 5000)", "memory"),
    ("import json\njson.dumps([[0] * 1000] * 1000)", "operations"),
    ("import statistics\nstatistics.quantiles([1, 2, 3], n=10**6)", "operations"),
    ("import asyncio\nawait asyncio.sleep(30)", "timeout"),
])
async def test_facades_respect_limits(source: str, limit: str) -> None:
    # rows that expect another limit get time to reach it on a loaded machine (one
    # tripped its 0.3 s timeout before its 16 MB at load 9)
    timeout = 0.3 if limit == "timeout" else 10.0
    outcome = await run(source, Limits(timeout=timeout, operations=50_000,
                                       memory=16 * 1024 * 1024))
    assert outcome.error is not None, outcome.value
    assert outcome.error.limit == limit, outcome.error


async def test_gather_returns_results_in_argument_order() -> None:
    outcome = await run("""
        import asyncio
        async def slow(v, d):
            await asyncio.sleep(d)
            return v
        await asyncio.gather(slow('a', 0.03), tools.t(value='b', delay=0.01), slow('c', 0))
    """)
    assert outcome.value == ["a", "b", "c"]


async def test_gather_raises_the_first_failure_not_a_group() -> None:
    outcome = await run("""
        import asyncio
        try:
            await asyncio.gather(tools.t(fail=True), tools.t(value=1, delay=0.5))
        except ToolCallError as e:
            r = e.message
        r
    """)
    assert outcome.value == "failed on purpose"


async def test_gather_return_exceptions() -> None:
    outcome = await run("""
        import asyncio
        r = await asyncio.gather(tools.t(fail=True), tools.t(value=2), return_exceptions=True)
        [r[0].tool, r[0].message, r[1]]
    """)
    assert outcome.error is None, outcome.error
    assert outcome.value == ["t", "failed on purpose", 2]
    outcome = await run("""
        import asyncio
        r = await asyncio.gather(tools.t(fail=True), tools.t(value=2), return_exceptions=True)
        [isinstance(r[0], ToolCallError), r[1]]
    """)
    assert outcome.value == [True, 2]


async def test_wait_for_times_out_with_timeout_error() -> None:
    outcome = await run("""
        import asyncio
        try:
            await asyncio.wait_for(tools.t(delay=30), 0.05)
        except asyncio.TimeoutError:
            r = 'timed out'
        r
    """)
    assert outcome.value == "timed out"


async def test_random_seed_does_not_leak_between_runs() -> None:
    first = await run("import random\nrandom.seed(7)\nrandom.random()")
    second = await run("import random\nrandom.random()")
    assert first.value != second.value
