"""Red-team table: hostile scripts against every sandbox executor.

Each row is one attack. A row passes only when the sandbox produced the
*specific* refusal we expect (error type, limit name, message hint) AND the host
stayed untouched:

- host sentinels: the tool callback records every call and flags calls that
  arrive after ``run()`` returned; host trap objects (inside a host exception,
  inside a tool result) flip :data:`ESCAPED` if the script ever holds them; a
  sentinel file path that only an escaped script could create; a host secret in
  the environment and in host exceptions that must never show up in the
  value, output or error text;
- host classes the script can name (``ToolCallError``) must not be modified;
- no script code may run outside its run (no unraisable exception from a
  finalizer or an un-awaited coroutine), the host's peak RSS may not grow past
  twice the run's memory limit, and every text in the result must encode as UTF-8;
- after every attack a sentinel script runs in the SAME executor instance and
  must still work (facades not mutated, worker recycled, broker healthy).

Extra tests cover what one row cannot: nothing reaching the host's stdout/stderr,
a host-side 10 ms ticker that must keep ticking while a hostile script runs,
cancellation, shared state between runs (facades, ``random``, peak memory),
a hostile run next to a benign one, and a differential check that both
executors answer every escape attempt identically.

Denial-of-service rows use small limits (timeout 0.5 s, 100 000 operations,
64 MiB) and, where an unguarded C-level loop would hold the GIL of an
in-process executor, sizes that are far past the limits but still finite, so
an open finding shows up as a failed test rather than a hung suite.

Rows are never skipped or xfailed: a row that fails is an open finding in
/work/notes/redteam-findings.md.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import json
import os
import random
import re
import resource
import subprocess
import sys
import tempfile
import textwrap
import uuid
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import anyio
import pytest

import codemode.sandbox as sandbox
from codemode.errors import ToolCallError
from codemode.sandbox import Limits

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

# --------------------------------------------------------------------------- host sentinels

SECRET = f"redteam-secret-{uuid.uuid4().hex}"
"""A host secret: set in the host environment and carried by host exceptions."""
os.environ["CODEMODE_REDTEAM_SECRET"] = SECRET

SENTINEL_DIR = tempfile.mkdtemp(prefix="codemode-redteam-")
SENTINEL_PATH = os.path.join(SENTINEL_DIR, "escaped")
"""Only a script that reached ``open``/``os`` could create this file."""

ESCAPED: list[str] = []
"""Module-level flag: host traps and the late-call detector append here."""

FORBIDDEN_TEXT = (
    SECRET,
    "<module '",
    "<frame at",
    "<code object",
    "<traceback object",
    "EventLoop",
    "<Future",
    "<Task",
    "site-packages",
    "/work/main",
    "codemode/sandbox",
    "RestrictedPython/",
    "HostTrap",
)
"""Text that only an escape (or a host leak) could put into value, output or error."""

MiB = 1024 * 1024


class HostTrap:
    """A host object no script may ever hold: any use from script code flips ESCAPED."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __repr__(self) -> str:
        return f"HostTrap({self.label}, {SECRET})"

    __str__ = __repr__

    def __getattr__(self, name: str) -> Any:
        ESCAPED.append(f"trap {self.label}: attribute {name}")
        raise AttributeError(name)

    def __reduce__(self) -> Any:
        ESCAPED.append(f"trap {self.label}: pickled")
        return (str, ("pickled",))

    def __iter__(self) -> Iterator[Any]:
        ESCAPED.append(f"trap {self.label}: iterated")
        return iter(())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        ESCAPED.append(f"trap {self.label}: called")


class TrapDict(dict[str, Any]):
    """A tool result: JSON-encodes as a plain dict, but script-side use of THIS object flips."""

    def __getitem__(self, key: str) -> Any:
        ESCAPED.append("trap dict: getitem")
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        ESCAPED.append("trap dict: get")
        return super().get(key, default)

    def keys(self) -> Any:
        ESCAPED.append("trap dict: keys")
        return super().keys()

    def __iter__(self) -> Iterator[str]:
        ESCAPED.append("trap dict: iter")
        return super().__iter__()


def _deep(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


TOOL_PATHS = ("echo", "fail", "boom", "trap", "slow", "deep", "ns.get")


class Host:
    """The host side of one run: records calls, tracks concurrency, detects late calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.closed = False
        self.in_flight = 0
        self.max_in_flight = 0
        self.cancelled = 0

    async def __call__(self, name: str, args: dict[str, Any]) -> Any:
        if self.closed:
            ESCAPED.append(f"call delivered after run() returned: {name} {args}")
        self.calls.append((name, args))
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if name == "echo":
                return args
            if name == "fail":
                raise ToolCallError("fail", "nope", "$.x")
            if name == "boom":
                raise RuntimeError(HostTrap("boom"), SECRET, os.environ)
            if name == "trap":
                return TrapDict(a=1)
            if name == "slow":
                await anyio.sleep(float(args.get("s", 0.05)))
                return args
            if name == "deep":
                return _deep(100_000)
            if name == "ns.get":
                return {"ok": True}
            raise AssertionError(f"unexpected tool {name}")
        except anyio.get_cancelled_exc_class():
            self.cancelled += 1
            raise
        finally:
            self.in_flight -= 1


# --------------------------------------------------------------------------- limits

ESC = Limits(
    timeout=5.0,
    operations=200_000,
    memory=256 * MiB,
    recursion=100,
    output=4096,
    result=65_536,
    calls=20,
    concurrency=4,
)
"""Limits for escape attempts: generous enough that only a guard can stop them."""

DOS = Limits(
    timeout=0.5,
    operations=100_000,
    memory=64 * MiB,
    recursion=50,
    output=4096,
    result=65_536,
    calls=20,
    concurrency=4,
)
"""Small limits for denial-of-service attempts."""

ROOMY = Limits(
    timeout=0.5,
    operations=100_000,
    memory=256 * MiB,
    recursion=50,
    output=4096,
    result=65_536,
    calls=20,
    concurrency=4,
)
"""DoS limits with room in memory, so only time can stop the attack."""

BIG_ARGS = Limits(
    timeout=3.0,
    operations=100_000,
    memory=256 * MiB,
    recursion=50,
    output=4096,
    result=65_536,
    calls=20,
    concurrency=4,
)
"""Room in time and memory: only a cap on tool-call arguments can refuse a huge argument."""

SLOW_OK = Limits(
    timeout=5.0,
    operations=100_000,
    memory=64 * MiB,
    recursion=50,
    output=4096,
    result=65_536,
    calls=20,
    concurrency=4,
)
"""DoS limits for attacks a size guard must refuse, even on a loaded machine."""

BIG = 3 * 10**8
"""A finite C-level loop length: ~3000x the operation limit, seconds of CPU if uncounted."""

CPU = ("operations", "timeout")
"""A CPU burner must be stopped by one of these."""

HEAVY = ("memory", "operations", "timeout")
"""A huge computation may be refused up front (memory) or stopped while running."""

# --------------------------------------------------------------------------- the table

SYNTAX = "SyntaxError"
ATTR = "AttributeError"
NAME = "NameError"
IMPORT = "ImportError"
TYPE = "TypeError"
LIMIT = "LimitExceeded"


@dataclass(frozen=True, kw_only=True, slots=True)
class Attack:
    """One hostile script and exactly what the sandbox must answer."""

    id: str
    """Readable test id."""
    source: str
    """The script (dedented; ``SENTINEL_PATH`` is replaced by the sentinel file path)."""
    error: str | None
    """Expected ``ScriptError.type``; None means the run must succeed."""
    limit: tuple[str, ...] = ()
    """Accepted ``ScriptError.limit`` names when ``error`` is LimitExceeded."""
    message: str | None = None
    """A substring the error message must contain (case-insensitive)."""
    value: Any = None
    """Expected value when the run succeeds (compared when ``check`` is None)."""
    check: Callable[[Any, Host], None] | None = None
    """Extra assertions on (result, host)."""
    limits: Limits = ESC
    """The limits for this run."""
    max_calls: int = 0
    """How many host calls the attack may legitimately cause."""
    settle: float = 0.0
    """Seconds to wait after the run before looking for late calls."""

    def script(self) -> str:
        """The source as the model would send it."""
        return (
            textwrap.dedent(self.source).strip("\n").replace("SENTINEL_PATH", repr(SENTINEL_PATH))
        )


def a(id: str, source: str, error: str | None, **kw: Any) -> Any:
    """A readable table row."""
    attack = Attack(id=id, source=source, error=error, **kw)
    return pytest.param(attack, id=id)


def dos(id: str, source: str, limit: tuple[str, ...] = CPU, **kw: Any) -> Any:
    """A denial-of-service row: must end in LimitExceeded with one of ``limit``."""
    kw.setdefault("limits", DOS)
    return a(id, source, LIMIT, limit=limit, **kw)


def _output_truncated(result: Any, host: Host) -> None:
    marker = f"[output truncated at {DOS.output} bytes]"
    assert marker in result.output, result.output[-200:]
    assert len(result.output.encode()) <= DOS.output + len(marker.encode()) + 8


def _refused_as_too_big(result: Any, host: Host) -> None:
    """A huge source must be refused (compile refusal or a tripped size/time limit)."""
    assert result.error is not None, "a 30 000-line / 600 KB script ran to completion"
    assert result.error.type == SYNTAX or result.error.limit in ("timeout", "memory"), result.error


def _strings_only(result: Any, host: Host) -> None:
    assert result.error is None, result.error

    def walk(v: Any) -> None:
        if isinstance(v, list):
            for x in v:
                walk(x)
        else:
            assert v is None or isinstance(v, str), v

    walk(result.value)


def _bounded_concurrency(result: Any, host: Host) -> None:
    assert result.error is None, result.error
    assert result.value == 16
    assert host.max_in_flight <= 4, host.max_in_flight


def _message_withheld(result: Any, host: Host) -> None:
    """A huge error message is replaced, not rendered (or clipped after rendering)."""
    assert len(result.error.message) < 200, result.error.message[:200]


def _no_host_calls(result: Any, host: Host) -> None:
    assert host.calls == [], host.calls


def _host_saw_cancel(result: Any, host: Host) -> None:
    assert host.cancelled == 1 and host.in_flight == 0, (host.cancelled, host.in_flight)


ESCAPES = [
    # ---- class chains: refused when compiled
    a("subclasses-via-tuple-class", "().__class__.__bases__[0].__subclasses__()", SYNTAX),
    a("mro-object-subclasses", "''.__class__.__mro__[1].__subclasses__()", SYNTAX),
    a("class-of-int", "(1).__class__", SYNTAX),
    a("bases-of-bool", "True.__class__.__bases__", SYNTAX),
    a("class-dict", "int.__dict__", SYNTAX),
    a("init-globals-of-host-class", "ToolCallError.__init__.__globals__['os']", SYNTAX),
    a(
        "func-globals",
        """
        def f():
            return 1
        f.__globals__['__builtins__']
    """,
        SYNTAX,
    ),
    a("builtins-name", "__builtins__['open'](SENTINEL_PATH, 'w')", SYNTAX),
    a("code-object", "(lambda: 0).__code__.co_consts", SYNTAX),
    a(
        "closure-cell",
        """
        def outer():
            x = 1
            def inner():
                return x
            return inner
        outer().__closure__[0].cell_contents
    """,
        SYNTAX,
    ),
    a("dunder-import", "__import__('os').system('touch ' + SENTINEL_PATH)", SYNTAX),
    a("module-loader", "import math\nmath.__loader__", SYNTAX),
    a("module-spec", "import json\njson.__spec__", SYNTAX),
    a("dunder-name", "__name__", SYNTAX),
    a("object-new", "object.__new__(object)", SYNTAX),
    a("rebind-getattr-guard", "_getattr_ = lambda o, n: 1\n(1).real", SYNTAX),
    a("import-as-guard-name", "import json as _getattr_", SYNTAX),
    # ---- computed attribute names: refused by the runtime guard
    a("getattr-concat-class", "getattr(1, '__cl' + 'ass__')", ATTR),
    a("getattr-chr-class", "getattr((), chr(95) * 2 + 'class' + chr(95) * 2)", ATTR),
    a("getattr-builtin-self", "getattr(len, ''.join(['_', '_self', '_']))", ATTR),
    a("getattr-escaped-print-self", r"getattr(print, '\x5f\x5fself\x5f\x5f')", ATTR),
    a("getattr-unicode-escape", r"getattr(1, '\u005f\u005fclass\u005f\u005f')", ATTR),
    a("getattr-default-does-not-hide", "getattr(1, '__class__', None)", ATTR),
    a(
        "getattr-script-func-globals",
        """
        def f():
            pass
        getattr(f, '__glo' + 'bals__')
    """,
        ATTR,
    ),
    a(
        "getattr-script-func-builtins",
        """
        def f():
            pass
        getattr(f, '__built' + 'ins__')
    """,
        ATTR,
    ),
    a("getattr-code", "getattr(lambda: 0, '__co' + 'de__')", ATTR),
    a("getattr-starred-apply", "getattr(*[1, '__class__'])", ATTR),
    a("getattr-via-map", "list(map(getattr, [1], ['__class__']))", ATTR),
    a("getattr-in-sort-key", "sorted([1], key=lambda x: getattr(x, '__class__'))", ATTR),
    a(
        "getattr-str-subclass-name",
        """
        class S(str):
            pass
        getattr(1, S('__class__'))
    """,
        TYPE,
        message="cannot subclass",
    ),
    a(
        "getattr-lying-str-subclass",
        """
        class S(str):
            def startswith(self, prefix, *rest):
                return False
            def __eq__(self, other):
                return False
        getattr(1, S('__class__'))
    """,
        TYPE,
        message="cannot subclass",
    ),
    a("getattr-fullwidth-underscores", "getattr(1, '＿＿class＿＿')", ATTR),
    a("getattr-zero-width", "getattr(1, '_\\u200b_class__')", ATTR),
    a("hasattr-probe", "hasattr(1, '__class__')", None, value=False),
    a("hasattr-frame-probe", "def g():\n    yield 1\nhasattr(g(), 'gi_frame')", None, value=False),
    # ---- writes to host objects (facades, the tools proxy, host classes)
    a("setattr-facade", "import json\nsetattr(json, 'loads', len)", NAME),
    a("delattr-facade", "import math\ndelattr(math, 'floor')", NAME),
    a("assign-facade-attr", "import json\njson.loads = len", TYPE),
    a("assign-host-class-attr", "ToolCallError.message = 'pwned'", TYPE),
    a("setattr-host-class", "setattr(ToolCallError, 'redteam', 1)", NAME),
    a("write-exception-class-attr", "ValueError.redteam = 1", TYPE),
    a("write-builtin-type-attr", "list.append = len", TYPE),
    a("write-facade-function-attr", "import json\njson.loads.redteam = 1", TYPE),
    a("assign-tools-attr", "tools.echo = len", TYPE),
    a("del-tools-attr", "del tools.echo", TYPE),
    # ---- builtins that must not exist
    a("vars-call", "vars()", NAME),
    a("vars-of-facade", "import json\nvars(json)", NAME),
    a("globals-call", "globals()", NAME),
    a("locals-call", "locals()", NAME),
    a("compile-call", "compile('1', '<x>', 'eval')", NAME),
    a("exec-call", "exec('1')", SYNTAX),
    a("eval-call", "eval('1')", SYNTAX),
    a("open-file", "open(SENTINEL_PATH, 'w').write('x')", NAME),
    a("input-call", "input()", NAME),
    a("breakpoint-call", "breakpoint()", SYNTAX),
    a("help-call", "help()", NAME),
    a("memoryview-call", "memoryview(b'abc')", NAME),
    a("dir-of-tools", "dir(tools)", NAME),
    a("setattr-via-object", "object.__setattr__(tools, 'x', 1)", SYNTAX),
    # ---- unicode lookalikes (Python NFKC-normalises identifiers)
    a("fullwidth-eval", "ｅｖａｌ('1')", SYNTAX),
    a("fullwidth-exec", "ｅｘｅｃ('1')", SYNTAX),
    a("fullwidth-dunder-class", "(1).＿＿class＿＿", SYNTAX),
    a("fullwidth-dunder-import", "＿＿import＿＿('os')", SYNTAX),
    a("modifier-letter-eval", "ᵉval('1')", SYNTAX),
    a("monospace-exec", "𝚎𝚡𝚎𝚌('1')", SYNTAX),
    a("superscript-dunder-import", "__ⁱmport__('os')", SYNTAX),
    a("fullwidth-open", "ｏｐｅｎ(SENTINEL_PATH, 'w')", NAME),
    a("mathematical-bold-globals", "𝐠𝐥𝐨𝐛𝐚𝐥𝐬()", NAME),
    # ---- type() and class building
    a("type-three-args", "type('X', (), {'__init__': len})", TYPE),
    a("type-three-args-del", "type('D', (), {'__del__': lambda self: None})()", TYPE),
    a("type-of-type-three-args", "type(type)('X', (), {'__getattribute__': len})", TYPE),
    a(
        "metaclass-of-script-class",
        """
        class A:
            pass
        type(A)('X', (), {'__del__': lambda self: None})
    """,
        TYPE,
    ),
    a("metaclass-of-host-class", "type(ToolCallError)('X', (), {})", TYPE),
    a("class-metaclass-keyword", "class A(metaclass=type):\n    pass", SYNTAX),
    a("class-dunder-metaclass", "class A:\n    __metaclass__ = type", SYNTAX),
    a(
        "class-getattribute-override",
        """
        class A:
            def __getattribute__(self, name):
                return 1
    """,
        SYNTAX,
    ),
    a("class-del-method", "class A:\n    def __del__(self):\n        pass", SYNTAX),
    a("class-reduce-method", "class A:\n    def __reduce__(self):\n        return ()", SYNTAX),
    a("class-descriptor-get", "class A:\n    def __get__(self, o, t):\n        return 1", SYNTAX),
    a("class-index-method", "class A:\n    def __index__(self):\n        return 10**10", SYNTAX),
    a(
        "match-class-pattern-dunder",
        """
        match 1:
            case object(__class__=c):
                pass
        c
    """,
        SYNTAX,
    ),
    # ---- frames through generators, coroutines, async generators, tracebacks
    a("generator-gi-frame", "def g():\n    yield 1\ng().gi_frame", SYNTAX),
    a(
        "generator-gi-frame-computed",
        """
        def g():
            yield 1
        getattr(g(), 'gi_' + 'frame')
    """,
        ATTR,
    ),
    a("generator-gi-code-computed", "def g():\n    yield 1\ngetattr(g(), 'gi_' + 'code')", ATTR),
    a(
        "generator-gi-yieldfrom-computed",
        """
        def g():
            yield from [1]
        getattr(g(), 'gi_yield' + 'from')
    """,
        ATTR,
    ),
    a(
        "coroutine-cr-frame",
        """
        async def c():
            pass
        c().cr_frame
    """,
        SYNTAX,
    ),
    a(
        "coroutine-cr-frame-computed",
        """
        async def c():
            pass
        getattr(c(), 'cr_' + 'frame')
    """,
        ATTR,
    ),
    a(
        "coroutine-cr-await-computed",
        """
        async def c():
            pass
        getattr(c(), 'cr_' + 'await')
    """,
        ATTR,
    ),
    a(
        "coroutine-cr-code-computed",
        """
        async def c():
            pass
        getattr(c(), 'cr_' + 'code')
    """,
        ATTR,
    ),
    a("asyncgen-ag-frame", "async def ag():\n    yield 1\nag().ag_frame", SYNTAX),
    a(
        "asyncgen-ag-frame-computed",
        """
        async def ag():
            yield 1
        getattr(ag(), 'ag_' + 'frame')
    """,
        ATTR,
    ),
    a(
        "asyncgen-ag-await-computed",
        """
        async def ag():
            yield 1
        getattr(ag(), 'ag_' + 'await')
    """,
        ATTR,
    ),
    a(
        "traceback-tb-frame",
        """
        try:
            1 / 0
        except Exception as e:
            e.__traceback__.tb_frame
    """,
        SYNTAX,
    ),
    a(
        "traceback-computed",
        """
        try:
            1 / 0
        except Exception as e:
            getattr(e, '__trace' + 'back__')
    """,
        ATTR,
    ),
    a(
        "tool-error-traceback-computed",
        """
        try:
            await tools.fail()
        except ToolCallError as e:
            getattr(e, '__trace' + 'back__')
    """,
        ATTR,
        max_calls=1,
    ),
    a(
        "tool-error-context-computed",
        """
        try:
            await tools.boom()
        except ToolCallError as e:
            getattr(e, '__con' + 'text__')
    """,
        ATTR,
        max_calls=1,
    ),
    a(
        "tool-error-cause-computed",
        """
        try:
            await tools.boom()
        except ToolCallError as e:
            getattr(e, '__cau' + 'se__')
    """,
        ATTR,
        max_calls=1,
    ),
    a("sys-exc-info", "import sys\nsys.exc_info()", IMPORT),
    # ---- str.format / format_map / Formatter traversal
    a("str-format-class", "'{0.__class__}'.format(1)", ATTR),
    a("str-format-globals", "'{0.__init__.__globals__}'.format(ToolCallError)", ATTR),
    a("str-format-map", "'{x.__class__}'.format_map({'x': 1})", ATTR),
    a("str-format-unbound", "str.format('{0.__class__}', 1)", ATTR),
    a("str-format-getattr", "getattr('{0.__class__}', 'format')(1)", ATTR),
    a("str-format-via-map", "list(map(str.format, ['{0.__class__}'], [1]))", ATTR),
    a(
        "str-subclass-format",
        """
        class S(str):
            pass
        S('{0.__class__}').format(1)
    """,
        TYPE,
        message="cannot subclass",
    ),
    a(
        "str-format-via-super",
        """
        class S(str):
            pass
        super(S, S('{0.__class__}')).format(1)
    """,
        TYPE,
        message="cannot subclass",
    ),
    a("str-format-via-super-on-plain-str", "super(str, '{0.__class__}').format(1)", NAME),
    a(
        "str-format-via-zero-arg-super",
        """
        class S(str):
            def leak(self):
                return super().format(1)
        S('{0.__class__}').leak()
    """,
        TYPE,
        message="cannot subclass",
    ),
    a("string-formatter", "import string\nstring.Formatter().format('{0.__class__}', 1)", ATTR),
    a(
        "string-formatter-get-field",
        """
        import string
        string.Formatter().get_field('0.__class__', [1], {})
    """,
        ATTR,
    ),
    a("fstring-dunder", "f'{(1).__class__}'", SYNTAX),
    a("fstring-nested-format-spec", "f\"{1:{'{0.__class__}'}}\"", "ValueError"),
    a("format-builtin-spec", "format(1, '{0.__class__}')", "ValueError"),
    a(
        "datetime-format-spec",
        """
        import datetime
        format(datetime.date(2020, 1, 1), '{0.__class__}')
    """,
        None,
        value="{0.__class__}",
    ),
    # ---- operator / functools style attribute getters
    a("operator-attrgetter", "import operator\noperator.attrgetter('__class__')(1)", IMPORT),
    a(
        "operator-methodcaller",
        """
        import operator
        operator.methodcaller('format', 1)('{0.__class__}')
    """,
        IMPORT,
    ),
    a("from-operator-import", "from operator import attrgetter", IMPORT),
    # ---- imports outside the allowlist
    a("import-os", "import os\nos.system('touch ' + SENTINEL_PATH)", IMPORT),
    a("import-sys", "import sys\nsys.modules", IMPORT),
    a("import-subprocess", "import subprocess", IMPORT),
    a("from-os-import-system", "from os import system", IMPORT),
    a("import-builtins", "import builtins", SYNTAX),
    a("import-importlib", "import importlib", IMPORT),
    a("import-gc", "import gc\ngc.get_objects()", IMPORT),
    a("import-weakref", "import weakref", IMPORT),
    a("import-ctypes", "import ctypes", IMPORT),
    a("import-pickle", "import pickle", IMPORT),
    a("import-io", "import io", IMPORT),
    a("import-inspect", "import inspect", IMPORT),
    a("import-typing", "import typing\ntyping.sys", IMPORT),
    a("import-functools", "import functools", IMPORT),
    a("import-json-submodule", "import json.decoder", IMPORT),
    a("from-json-import-codecs", "from json import codecs", IMPORT),
    a("from-re-import-enum", "from re import enum", IMPORT),
    a("from-asyncio-import-events", "from asyncio import events", IMPORT),
    a("from-dunder-import", "from json import __loader__", SYNTAX),
    a("relative-import", "from . import x", IMPORT),
    # ---- module attribute chains on every facade
    a("json-codecs-open", "import json\njson.codecs.open(SENTINEL_PATH, 'w')", ATTR),
    a("json-decoder", "import json\njson.decoder", ATTR),
    a("json-scanner", "import json\njson.scanner", ATTR),
    a("re-enum-sys", "import re\nre.enum.sys.modules", ATTR),
    a("re-copyreg", "import re\nre.copyreg", ATTR),
    a("re-functools", "import re\nre.functools", ATTR),
    a("datetime-sys", "import datetime\ndatetime.sys.modules", ATTR),
    a("math-loader-computed", "import math\ngetattr(math, '__load' + 'er__')", ATTR),
    a("collections-abc", "import collections\ncollections.abc", ATTR),
    a("collections-sys", "import collections\ncollections.sys", ATTR),
    a(
        "namedtuple-field-injection",
        """
        import collections
        collections.namedtuple('P', ['x=__import__("os")'])
    """,
        "ValueError",
    ),
    a("itertools-sys", "import itertools\nitertools.sys", ATTR),
    a("statistics-sys", "import statistics\nstatistics.sys", ATTR),
    a("statistics-random", "import statistics\nstatistics.random", ATTR),
    a("string-formatter-attr", "import string\nstring.Formatter", ATTR),
    a("asyncio-events", "import asyncio\nasyncio.events", ATTR),
    a("asyncio-get-event-loop", "import asyncio\nasyncio.get_event_loop()", ATTR),
    a("asyncio-get-running-loop", "import asyncio\nasyncio.get_running_loop()", ATTR),
    a("asyncio-current-task", "import asyncio\nasyncio.current_task().get_stack()", ATTR),
    a("asyncio-all-tasks", "import asyncio\nasyncio.all_tasks()", ATTR),
    a("asyncio-create-task", "import asyncio\nasyncio.create_task(asyncio.sleep(0))", ATTR),
    a("asyncio-to-thread", "import asyncio\nasyncio.to_thread(len, [])", ATTR),
    a("asyncio-subprocess", "import asyncio\nasyncio.create_subprocess_exec('true')", ATTR),
    a("asyncio-future", "import asyncio\nasyncio.Future()", ATTR),
    a("asyncio-sys", "import asyncio\nasyncio.sys", ATTR),
    a(
        "asyncio-task-get-coro-frame",
        """
        import asyncio
        asyncio.current_task().get_coro().cr_frame
    """,
        SYNTAX,
    ),
    a(
        "asyncio-task-get-coro-computed",
        """
        import asyncio
        getattr(asyncio.current_task().get_coro(), 'cr_' + 'frame')
    """,
        ATTR,
    ),
    a("random-bound-method-self", "import random\ngetattr(random.random, '__se' + 'lf__')", ATTR),
    a("random-class", "import random\nrandom.Random", ATTR),
    a("random-internal-instance", "import random\nrandom.seed.func", ATTR),
    a("time-sleep-blocks", "import time\ntime.sleep(10)", ATTR),
    a("time-sys", "import time\ntime.sys", ATTR),
    a("facade-exports-internals", "import json\njson.exports()", ATTR),
    a("pattern-compiled-internals", "import re\nre.compile('a').compiled", ATTR),
    a("match-object-re", "import re\nre.match('a', 'a').re", ATTR),
    a("datetime-class-mro", "import datetime\ndatetime.datetime.mro()", ATTR),
    a("exception-class-mro", "ToolCallError.mro()", ATTR),
    # ---- asyncio facade internals: driving coroutines by hand leaks host futures/loops
    a(
        "sleep-send-leaks-future",
        """
        import asyncio
        asyncio.sleep(1).send(None).get_loop()
    """,
        ATTR,
    ),
    a(
        "script-coroutine-send-leaks-future",
        """
        import asyncio
        async def f():
            await asyncio.sleep(1)
        f().send(None).get_loop()
    """,
        ATTR,
    ),
    a(
        "asyncgen-asend-leaks-future",
        """
        import asyncio
        async def ag():
            await asyncio.sleep(1)
            yield 1
        ag().asend(None).send(None).get_loop()
    """,
        ATTR,
    ),
    a(
        "wait-for-send-leaks-future",
        """
        import asyncio
        asyncio.wait_for(asyncio.sleep(1), 5).send(None).get_loop()
    """,
        ATTR,
    ),
    a(
        "gather-get-loop",
        """
        import asyncio
        asyncio.gather(asyncio.sleep(0)).get_loop()
    """,
        ATTR,
    ),
    a(
        "coroutine-throw-into-host",
        """
        import asyncio
        asyncio.sleep(1).throw(ValueError('x'))
    """,
        ATTR,
    ),
    # ---- the tools proxy internals
    a("tools-dunder-dict", "tools.__dict__", SYNTAX),
    a("tools-private-computed", "getattr(tools, '_' + 'broker')", ATTR),
    a("tools-dict-computed", "getattr(tools, '__di' + 'ct__')", ATTR),
    a("tools-class-computed", "getattr(tools, '__cla' + 'ss__')", ATTR),
    a("tools-unknown-did-you-mean", "tools.ech", ATTR, message="echo"),
    a("tools-function-closure", "getattr(tools.echo, '__clo' + 'sure__')", ATTR),
    a("tools-function-wrapped", "getattr(tools.echo, '__wrap' + 'ped__')", ATTR),
    a("tools-function-partial-func", "tools.echo.func", ATTR),
    a("tools-positional-call", "await tools.echo(1)", TYPE, check=_no_host_calls),
    a("tools-awaitable-index", "tools.echo(x=1)['x']", TYPE, message="await"),
    a("tools-awaitable-as-result", "tools.echo(x=1)", TYPE, message="await"),
    a("tools-awaitable-iterate", "for v in tools.echo(x=1):\n    pass", TYPE, message="await"),
    a("tools-awaitable-send", "tools.slow(s=1).send(None)", TYPE, message="await"),
    a(
        "tools-awaitable-cr-frame-computed",
        "getattr(tools.echo(x=1), 'cr_' + 'frame')",
        TYPE,
        message="await",
    ),
    a(
        "tools-awaitable-double-await",
        """
        p = tools.echo(x=1)
        await p
        await p
    """,
        "RuntimeError",
        message="already awaited",
        max_calls=1,
    ),
    a("tools-awaitable-str", "str(tools.echo(x=1))", TYPE, message="await"),
    a("tools-awaitable-truthiness", "if tools.echo(x=1):\n    pass", TYPE, message="await"),
    a("tools-arg-function", "await tools.echo(x=len)", TYPE, message="JSON"),
    a("tools-arg-facade", "import json\nawait tools.echo(x=json)", TYPE, message="JSON"),
    a("tools-arg-tools-proxy", "await tools.echo(x=tools)", TYPE, message="JSON"),
    a("tools-arg-cyclic", "c = []\nc.append(c)\nawait tools.echo(x=c)", TYPE, message="JSON"),
    a("tools-arg-nan", "await tools.echo(x=float('nan'))", TYPE, message="JSON"),
    a(
        "tools-arg-script-object",
        "class A:\n    pass\nawait tools.echo(x=A())",
        TYPE,
        message="JSON",
    ),
    a(
        "tools-arg-deep",
        """
        x = []
        for i in range(20000):
            x = [x]
        await tools.echo(x=x)
    """,
        LIMIT,
        limit=("recursion",),
    ),
    a(
        "tools-arg-dict-subclass-items-bomb",
        """
        class D(dict):
            def items(self):
                while True:
                    pass
        await tools.echo(x=D(a=1))
    """,
        TYPE,
        message="cannot subclass",
    ),
    a(
        "tools-trap-result-is-a-copy",
        """
        r = await tools.trap()
        [r['a'], r.get('a'), list(r), list(r.keys())]
    """,
        None,
        value=[1, 1, ["a"], ["a"]],
        max_calls=1,
    ),
    a("tools-deep-result", "await tools.deep()", "ToolCallError", max_calls=1),
    # ---- exception objects carrying host objects
    a(
        "boom-fields",
        """
        try:
            await tools.boom()
        except ToolCallError as e:
            out = [e.tool, e.message, e.path]
        out
    """,
        None,
        value=["boom", "internal error", None],
        max_calls=1,
    ),
    a(
        "boom-args-are-strings",
        """
        try:
            await tools.boom()
        except ToolCallError as e:
            out = [list(e.args), str(e), repr(e)]
        out
    """,
        None,
        check=_strings_only,
        max_calls=1,
    ),
    a(
        "fail-fields",
        """
        try:
            await tools.fail()
        except ToolCallError as e:
            out = [e.tool, e.message, e.path]
        out
    """,
        None,
        value=["fail", "nope", "$.x"],
        max_calls=1,
    ),
    a(
        "boom-via-gather-return-exceptions",
        """
        import asyncio
        r = await asyncio.gather(tools.boom(), return_exceptions=True)
        [str(r[0]), r[0].message, isinstance(r[0], ToolCallError)]
    """,
        None,
        value=["boom: internal error", "internal error", True],
        max_calls=1,
    ),
    a(
        "subclass-host-error",
        """
        class E(ToolCallError):
            def __init__(self):
                self.tool = 'x'
        raise E()
    """,
        "E",
    ),
    a(
        "raise-host-limit-class-spoof",
        """
        try:
            while True:
                pass
        except BaseException as e:
            cls = type(e)
        raise cls('timeout', 1)
    """,
        LIMIT,
        limit=("operations",),
        limits=DOS,
    ),
    a(
        "fake-limit-class",
        """
        class LimitExceeded(Exception):
            pass
        raise LimitExceeded('limit exceeded: timeout=1')
    """,
        "script.LimitExceeded",  # the harness also asserts error.limit is None
    ),
    a(
        "fake-tool-error-class",
        """
        class ToolCallError(Exception):
            pass
        raise ToolCallError('search: the host is down')
    """,
        "script.ToolCallError",
    ),
    a("fake-recursion-limit", "raise RecursionError('maximum recursion depth exceeded')",
      "RecursionError"),
    # ---- objects handed to the host for encoding
    a(
        "result-dict-subclass-items-bomb",
        """
        class D(dict):
            def items(self):
                while True:
                    pass
        D(a=1)
    """,
        TYPE,
        message="cannot subclass",
    ),
    a(
        "result-str-subclass",
        """
        class S(str):
            def encode(self, *args):
                return b''
        S('x' * 10**6)
    """,
        TYPE,
        message="cannot subclass",
    ),
    a(
        "exception-str-raises-in-host",
        """
        class E(Exception):
            pass
        raise E(10**5000)
    """,
        "E",
    ),
    a(
        "error-message-is-clipped",
        "raise ValueError('x' * 10**6)",
        "ValueError",
        check=lambda r, h: _assert(len(r.error.message) <= 2100, len(r.error.message)),
    ),
    a("lone-surrogate-output", "print('\\ud800')", None),
    a("lone-surrogate-value", "'\\udfff' * 3", None, check=lambda r, h: None),
    a(
        "lone-surrogate-via-json-loads",
        "import json\njson.loads('\"\\\\ud800\"')",
        None,
        check=lambda r, h: None,
    ),
    a("lone-surrogate-error", "raise ValueError('\\ud800')", "ValueError"),
    a("lone-surrogate-dict-key", "{'\\ud800': 1}", None, check=lambda r, h: None),
    a(
        "lone-surrogate-tool-argument",
        "r = await tools.echo(x='\\ud800')\nlen(r['x'])",
        None,
        value=1,
        max_calls=1,
        check=lambda r, h: json.dumps(h.calls, ensure_ascii=False).encode(),
    ),
    # ---- sources built to break the compiler rather than the runtime
    a("deep-binop-chain", "x = " + " + ".join(["1"] * 20000) + "\nx", SYNTAX),
    a("deep-unary-chain", "x = " + "-" * 20000 + "1\nx", SYNTAX),
    a("deep-attribute-chain", "x = tools" + ".a" * 20000, SYNTAX),
    a("deep-lambda-chain", "f = " + "lambda: " * 3000 + "1\n1", SYNTAX),
    a(
        "many-statements",
        "x = 0\n" + "x = x + 1\n" * 30000 + "x",
        None,
        limits=DOS,
        check=_refused_as_too_big,
    ),
    a(
        "huge-list-literal",
        "x = [" + "0," * (3 * 10**5) + "]\nlen(x)",
        None,
        limits=DOS,
        check=_refused_as_too_big,
    ),
    # ---- error messages must not expose the sandbox's internal names
    a(
        "codec-allowlist-via-str-constructor",
        "str(b'abc', 'punycode')",
        "LookupError",
        message="not available",
    ),
    a(
        "codec-allowlist-via-str-keyword",
        "str(b'abc', encoding='idna')",
        "LookupError",
        message="not available",
    ),
    a("internal-name-sum", "sum()", TYPE, message="sum() missing"),
    a("internal-name-getattr", "getattr()", TYPE, message="getattr() missing"),
    a("internal-name-iter", "iter()", TYPE, message="iter() missing"),
    a("internal-name-facade", "import json\njson.nope", ATTR, message="json"),
    a("exception-args-hold-tools", "raise ValueError(tools, tools.echo, len)", "ValueError"),
    a("result-facade", "import json\njson", TYPE),
    a("result-tools-proxy", "tools", TYPE),
    a("result-host-class", "ToolCallError", TYPE),
    a("result-cyclic", "c = []\nc.append(c)\nc", "ValueError"),
    a(
        "print-file-object",
        """
        class W:
            def write(self, s):
                pass
        print('x', file=W())
    """,
        TYPE,
    ),
    # ---- round 2: real builtin types handed out by type(), stand-in names, unbound methods
    a(
        "type-of-range-bypasses-budget",
        "R = type(range(1))\nlen(list(R(10**9)))",
        LIMIT,
        limit=("operations",),
        message="range of",
        limits=DOS,
    ),
    a("type-of-bytes-size", "B = type(b'')\nlen(B(10**9))", LIMIT, limit=("memory",),
      limits=DOS),
    a("type-of-bytes-codec", "B = type(b'')\nB('abc', 'punycode')", "LookupError"),
    a("type-of-bytes-codec-keyword", "type(b'')('abc', encoding='idna')", "LookupError"),
    a(
        "type-of-bytes-iterable-counted",
        "B = type(b'')\nlen(B(x % 256 for x in range(10**6)))",
        LIMIT,
        limit=("operations",),
        limits=DOS,
    ),
    a(
        "stand-in-reprs-name-no-internal-module",
        """
        import collections
        [str(str), str(set), str(dict), str(type(range(1))), str(collections.Counter),
         str(collections.defaultdict)]
    """,
        None,
        value=["<class 'str'>", "<class 'set'>", "<class 'dict'>", "<class 'range'>",
               "<class 'collections.Counter'>", "<class 'collections.defaultdict'>"],
    ),
    a(
        "stand-ins-keep-isinstance-and-type-identity",
        """
        import collections
        c = collections.Counter('aab')
        d = collections.defaultdict(list)
        [isinstance(c, collections.Counter), isinstance(c, dict), type(c) is collections.Counter,
         type({}) is dict, isinstance(range(2), type(range(1))), isinstance(d, dict),
         type(b'')(3).hex(), list(zip('ab', [1, 2])), list(enumerate('a', 5))]
    """,
        None,
        value=[True, True, True, True, True, True, "000000", [["a", 1], ["b", 2]], [[5, "a"]]],
    ),
    a("unbound-guarded-split-works", "list(map(str.split, ['a b', 'c']))", None,
      value=[["a", "b"], ["c"]]),
    a("unbound-guarded-method-wrong-self", "str.split(1)", TYPE, message="doesn't apply"),
    a("unbound-set-union-wrong-self", "set.union([1], [2])", TYPE, message="doesn't apply"),
    a(
        "unbound-strftime-still-sized",
        "import datetime\ndatetime.date.strftime(datetime.date(2020, 1, 1), '%c' * 10**6)",
        LIMIT,
        limit=("memory",),
        limits=DOS,
    ),
    # ---- round 2: language corners that must stay refused
    a("match-mapping-pattern", "match {'a': 1}:\n    case {'a': v, **rest}:\n        pass", SYNTAX),
    a("match-sequence-pattern", "match [1, 2]:\n    case [a, *b]:\n        pass", SYNTAX),
    a("match-args-class-attr", "class P:\n    __match_args__ = ('x',)", SYNTAX),
    a("super-zero-arg", "class A:\n    def f(self):\n        return super()\nA().f()", NAME),
    a("class-getitem-hook", "class A:\n    def __class_getitem__(cls, k):\n        return k",
      SYNTAX),
    a("dunder-hash-method", "class A:\n    def __hash__(self):\n        return 1", SYNTAX),
    a(
        "walrus-binds-guard-name",
        "[(_getattr_ := getattr) for i in range(1)]",
        SYNTAX,
    ),
    a(
        "walrus-in-comprehension-ok",
        "[y := i * 2 for i in range(3)]\n[y, [z for i in range(2) if (z := i)]]",
        None,
        value=[4, [1]],
    ),
    a(
        "exception-group-from-gather-has-no-host-objects",
        """
        import asyncio
        async def bad(i):
            raise ValueError(i)
        r = await asyncio.gather(bad(1), tools.fail(), return_exceptions=True)
        [x.args for x in r]
    """,
        None,
        value=[[1], ["fail: nope"]],
        check=lambda result, host: _assert(len(host.calls) == 1, host.calls),
        max_calls=1,
    ),
    a(
        "exception-traceback-attribute-computed",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    getattr(e, '__traceback' + '__')",
        ATTR,
    ),
    a(
        "exception-with-traceback-method",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.with_traceback(None)",
        ATTR,
    ),
    a(
        "exception-add-note",
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    e.add_note('x')",
        ATTR,
    ),
    a("tools-namespace-attr-computed", "getattr(tools.ns, 'get').sandbox_getattr", ATTR),
    a("tools-call-non-str-kwargs", "await tools.echo(**{1: 2})", TYPE),
    a("result-bytes-is-refused", "b'abc'", TYPE, message="JSON"),
    a("result-nan-is-refused", "float('nan')", "ValueError"),
    a(
        "script-compare-runs-while-encoding-set-result",
        "class A:\n    def __lt__(self, other):\n        return True\n{A(), A()}",
        TYPE,
        message="JSON",
    ),
    a(
        "script-compare-spins-while-encoding-set-result",
        "class A:\n    def __lt__(self, other):\n        while True:\n            pass\n{A(), A()}",
        TYPE,
        message="JSON",
    ),
    a(
        "script-comparisons-still-work-in-run",
        """
        class A:
            def __init__(self, v):
                self.v = v
            def __lt__(self, other):
                return self.v < other.v
            def __eq__(self, other):
                return self.v == other.v
            def __contains__(self, x):
                return x == self.v
        [[a.v for a in sorted([A(2), A(1), A(3)])], A(1) == A(1), 2 in A(2), A(1) in [A(1)]]
    """,
        None,
        value=[[1, 2, 3], True, True, True],
    ),
    a("asyncio-sleep-nan", "import asyncio\nawait asyncio.sleep(float('nan'))\n1", None, value=1),
    a("asyncio-sleep-huge-int", "import asyncio\nawait asyncio.sleep(10**400)", "OverflowError"),
    a("asyncio-wait-for-nan-timeout",
      "import asyncio\nawait asyncio.wait_for(asyncio.sleep(10), float('nan'))", "TimeoutError"),
    a("asyncio-gather-same-coroutine-twice",
      "import asyncio\nc = asyncio.sleep(0)\nawait asyncio.gather(c, c)", "RuntimeError"),
    a("asyncio-sleep-result-is-passed-through",
      "import asyncio\nr = await asyncio.sleep(0, tools)\nstr(r)", None, value="<tools>"),
    a("lone-surrogate-in-source-string", "x = '\ud800'\nx", SYNTAX, message="surrogate"),
    a("lone-surrogate-in-source-name", "\udfff = 1", SYNTAX, message="surrogate"),
    a("null-byte-in-source", "x = 1\x00", SYNTAX),
]


def _assert(condition: bool, detail: Any) -> None:
    assert condition, detail


DOSES = [
    # ---- loops
    dos("while-true", "while True:\n    pass"),
    dos("for-huge-range", "for i in range(10**12):\n    pass"),
    dos("listcomp-huge", "[i for i in range(10**9)]"),
    dos("dictcomp-huge", "{i: i for i in range(10**9)}"),
    dos("setcomp-huge", "{i for i in range(10**9)}"),
    dos("genexpr-sum", "sum(i for i in range(10**9))"),
    dos("genexpr-any", "any(x < 0 for x in range(10**9))"),
    dos("all-map-lambda", "all(map(lambda x: x >= 0, range(10**9)))"),
    dos("sorted-key-lambda", "sorted(range(10**6), key=lambda x: -x)"),
    dos("list-map-lambda", "list(map(lambda x: x, range(10**9)))"),
    dos("list-filter-lambda", "list(filter(lambda x: True, range(10**9)))"),
    dos("min-key-lambda", "min(range(10**9), key=lambda x: x)"),
    dos("max-key-lambda", "max(range(10**9), key=lambda x: x)"),
    dos("sum-range-c-loop", f"sum(range({BIG}))"),
    dos("sum-filter-none-c-loop", f"sum(filter(None, range({BIG})))"),
    dos("max-range-c-loop", f"max(range({BIG}))"),
    dos("all-range-c-loop", f"all(range(1, {BIG}))"),
    dos("sorted-c-loop", "sorted(range(10**7))", limit=HEAVY),
    dos(
        "iter-callable-sentinel",
        f"""
        import itertools
        sum(itertools.islice(iter(int, 1), {BIG}))
    """,
    ),
    dos(
        "deque-consume-repeat",
        f"""
        import collections, itertools
        collections.deque(itertools.repeat(0, {BIG}), maxlen=0)
    """,
    ),
    dos(
        "list-extend-repeat",
        "x = []\nimport itertools\nx.extend(itertools.repeat(0, 3 * 10**7))",
        limit=HEAVY,
    ),
    dos("dict-fromkeys-range", "dict.fromkeys(range(3 * 10**6))", limit=HEAVY),
    dos("set-of-range", "set(range(3 * 10**6))", limit=HEAVY),
    dos("join-genexpr", "','.join(str(i) for i in range(10**9))"),
    dos(
        "join-repeat-c-loop",
        "import itertools\n''.join(itertools.repeat('a', 5 * 10**7))",
        limit=HEAVY,
    ),
    dos(
        "star-unpack-into-print",
        "import itertools\nprint(*itertools.repeat(0, 5 * 10**6))",
        limit=HEAVY,
    ),
    dos("list-display-unpack", "[*range(2 * 10**7)]", limit=HEAVY),
    dos("await-sleep0-loop", "import asyncio\nwhile True:\n    await asyncio.sleep(0)"),
    dos(
        "gather-spinning-coroutines",
        """
        import asyncio
        async def spin():
            while True:
                await asyncio.sleep(0)
        await asyncio.gather(*[spin() for _ in range(100)])
    """,
    ),
    dos(
        "gather-many-coroutines",
        """
        import asyncio
        async def f():
            await asyncio.sleep(0.2)
            return 1
        len(await asyncio.gather(*[f() for _ in range(90000)]))
    """,
        limit=HEAVY,
    ),
    dos(
        "nested-gather-fanout",
        """
        import asyncio
        async def f(n):
            if n == 0:
                return 1
            r = await asyncio.gather(f(n - 1), f(n - 1))
            return r[0] + r[1]
        await f(15)
    """,
        limit=HEAVY,
    ),
    dos("sleep-forever", "import asyncio\nawait asyncio.sleep(100)", limit=("timeout",)),
    dos(
        "wait-for-huge-timeout",
        """
        import asyncio
        await asyncio.wait_for(asyncio.sleep(100), 10**6)
    """,
        limit=("timeout",),
    ),
    dos(
        "slow-tool-times-out",
        "await tools.slow(s=100)",
        limit=("timeout",),
        max_calls=1,
        check=_host_saw_cancel,
    ),
    dos(
        "gather-sleep-flood",
        """
        import asyncio
        await asyncio.gather(*[asyncio.sleep(100) for _ in range(10**4)])
    """,
        limit=("timeout", "operations"),
        limits=ROOMY,  # room for 10**4 tasks: the cancellation path is what is tested
    ),
    # ---- recursion
    dos("self-recursion", "def f():\n    return f()\nf()", limit=("recursion",)),
    dos(
        "mutual-recursion",
        """
        def a():
            return b()
        def b():
            return a()
        a()
    """,
        limit=("recursion",),
    ),
    dos(
        "recursion-retry-in-except",
        """
        def f():
            try:
                return f()
            except:
                return f()
        f()
    """,
        limit=("recursion",),
    ),
    dos(
        "recursion-via-sort-key",
        """
        def f(x):
            return sorted([1, 2], key=f)
        f(1)
    """,
        limit=("recursion",),
    ),
    dos(
        "recursion-via-init",
        """
        class A:
            def __init__(self):
                A()
        A()
    """,
        limit=("recursion",),
    ),
    dos("recursion-async", "async def f():\n    return await f()\nawait f()", limit=("recursion",)),
    dos("recursion-lambda", "f = lambda: f()\nf()", limit=("recursion",)),
    dos("recursion-via-map", "def f(x):\n    return list(map(f, [x]))\nf(1)", limit=("recursion",)),
    dos(
        "json-dumps-deep",
        """
        import json
        x = []
        for i in range(50000):
            x = [x]
        json.dumps(x)
    """,
        limit=("recursion",),
    ),
    dos(
        "json-loads-deep",
        "import json\njson.loads('[' * 10**5 + ']' * 10**5)",
        limit=("recursion",),
    ),
    dos(
        "repr-deep",
        """
        x = []
        for i in range(50000):
            x = [x]
        str(x)
    """,
        limit=("recursion",),
    ),
    # ---- big integers
    dos("pow-tower", "10**10**10", limit=("memory",)),
    dos("pow-nine-tower", "9**9**9", limit=("memory",)),
    dos("shift-huge", "2 << 10**9", limit=("memory",)),
    dos("pow-builtin", "pow(2, 10**9)", limit=("memory",)),
    dos("pow-variables", "a = 10\nb = a ** a\nb ** b", limit=("memory",)),
    dos(
        "repeated-squaring",
        "x = 3\nfor i in range(40):\n    x = x * x",
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos("inplace-pow", "x = 10\nx **= 10**8", limit=("memory",)),
    dos("inplace-shift", "x = 1\nx <<= 10**10", limit=("memory",)),
    dos("math-factorial", "import math\nmath.factorial(10**7)", limit=HEAVY),
    dos("math-comb", "import math\nmath.comb(10**7, 5 * 10**6)", limit=HEAVY),
    dos("math-perm", "import math\nmath.perm(10**6)", limit=HEAVY),
    dos("math-prod", "import math\nmath.prod([10**1000] * 10**4)", limit=HEAVY),
    dos("math-lcm-range", "import math\nmath.lcm(*range(1, 90000)).bit_length()", limit=HEAVY),
    a(
        "int-subclass-lying-compare-repeat",
        """
        class N(int):
            def __gt__(self, other):
                return False
            def __ge__(self, other):
                return False
            def __lt__(self, other):
                return True
            def __le__(self, other):
                return True
        'a' * N(10**9)
    """,
        TYPE,
        message="cannot subclass",
    ),
    a(
        "int-subclass-lying-compare-pow",
        """
        class N(int):
            def __gt__(self, other):
                return False
            def __ge__(self, other):
                return False
            def __lt__(self, other):
                return True
            def __le__(self, other):
                return True
        2 ** N(10**9)
    """,
        TYPE,
        message="cannot subclass",
    ),
    a(
        "int-subclass-repeat",
        "class N(int):\n    pass\n[0] * N(10**10)",
        TYPE,
        message="cannot subclass",
    ),
    a(
        "int-subclass-squaring",
        """
        class N(int):
            pass
        x = N(3)
        for i in range(40):
            x = N(x * x)
    """,
        TYPE,
        message="cannot subclass",
    ),
    a(
        "int-subclass-lying-compare-shift",
        """
        class N(int):
            def __gt__(self, other):
                return False
            def __lt__(self, other):
                return True
        1 << N(10**10)
    """,
        TYPE,
        message="cannot subclass",
    ),
    a("userstring-repeat", "import collections\ncollections.UserString('a') * 10**9", ATTR),
    a("userlist-repeat", "import collections\ncollections.UserList([0]) * 10**9", ATTR),
    dos(
        "bigint-floordiv-quadratic",
        """
        a = 10**500000
        b = 10**250000 + 1
        q = a // b
    """,
        limit=HEAVY,
        limits=ROOMY,
    ),
    dos(
        "bigint-mul-under-cap-loop",
        """
        x = 10**600000
        for i in range(10):
            y = x * x
    """,
        limit=HEAVY,
        limits=ROOMY,
    ),
    dos("pow-modular-huge-exponent", "pow(3, 10**3000, 10**3000 + 7).bit_length()", limit=HEAVY),
    dos(
        "c-call-per-tick-loop",
        """
        s = 'a' * (5 * 10**7)
        for i in range(200):
            s.count('b')
    """,
        limit=HEAVY,
        limits=ROOMY,
    ),
    dos(
        "self-feeding-map-extend",
        """
        import collections
        x = [0]
        d = collections.deque(zip(map(x.append, x), 'a' * (6 * 10**7)), maxlen=0)
        len(x)
    """,
        limit=HEAVY,
        limits=ROOMY,
    ),
    dos(
        "statistics-quantiles-huge-n",
        """
        import statistics
        len(statistics.quantiles([1, 2, 3], n=10**7))
    """,
        limit=HEAVY,
    ),
    dos("recursion-generator", "def g():\n    yield from g()\nnext(g())", limit=("recursion",)),
    a(
        "punycode-quadratic",
        """
        s = ''.join([chr(256 + i) for i in range(6000)])
        len(s.encode('punycode'))
    """,
        "LookupError",
        message="not available",
    ),
    a(
        "namedtuple-many-fields",
        """
        import collections
        P = collections.namedtuple('P', ['a%d' % i for i in range(90000)])
        'made'
    """,
        "ValueError",
        message="at most 256 fields",
    ),
    dos(
        "namedtuple-long-field-names",
        """
        import collections
        P = collections.namedtuple('P', ['a' * (5 * 10**6), 'b' * (5 * 10**6)])
        'made'
    """,
        limit=("memory",),
    ),
    dos(
        "json-indent-amplify",
        """
        import json
        x = [0] * 50000
        for i in range(400):
            x = [x]
        len(json.dumps(x, indent=16))
    """,
        limit=HEAVY,
    ),
    dos(
        "shared-refs-str",
        """
        a = [0] * 1000
        b = [a] * 1000
        c = [b] * 50
        len(str(c))
    """,
        limit=HEAVY,
    ),
    dos(
        "shared-refs-print",
        """
        a = [0] * 1000
        b = [a] * 1000
        print([b] * 50)
    """,
        limit=HEAVY,
    ),
    dos(
        "shared-refs-json-dumps",
        """
        import json
        a = [0] * 1000
        b = [a] * 1000
        len(json.dumps([b] * 50))
    """,
        limit=HEAVY,
    ),
    dos(
        "shared-refs-fstring",
        """
        a = [0] * 1000
        b = [a] * 1000
        c = [b] * 50
        len(f'{c}')
    """,
        limit=HEAVY,
    ),
    dos(
        "shared-refs-percent-s",
        """
        a = [0] * 1000
        b = [a] * 1000
        len('%s' % ([b] * 50,))
    """,
        limit=HEAVY,
    ),
    dos(
        "shared-refs-percent-r",
        """
        a = [0] * 1000
        b = [a] * 1000
        len('%r' % ([b] * 50,))
    """,
        limit=HEAVY,
    ),
    dos(
        "shared-refs-fstring-repr",
        """
        a = [0] * 1000
        b = [a] * 1000
        c = [b] * 50
        len(f'{c!r}')
    """,
        limit=HEAVY,
    ),
    dos(
        "shared-refs-fstring-ascii",
        """
        a = [0] * 1000
        b = [a] * 1000
        c = [b] * 50
        len(f'{c!a}')
    """,
        limit=HEAVY,
    ),
    dos(
        "range-int-multiplication-unguarded",
        """
        for i in range(2**100000, 2**100000 + 1):
            x = (i * i * i * i * i * i * i * i).bit_length()
        x
    """,
        limit=("memory",),
    ),
    dos(
        "range-int-multiplication-huge-product",
        """
        for i in range(2**100000, 2**100000 + 1):
            x = (i * i * i * i * i * i * i * i * i * i * i * i * i * i * i * i * i * i * i * i
                 * i * i * i * i * i * i * i * i * i * i * i * i * i * i * i * i * i * i * i * i
                 ).bit_length()
        x
    """,
        limit=HEAVY,
    ),
    dos(
        "shared-refs-result",
        """
        a = [0] * 1000
        b = [a] * 1000
        [b] * 50
    """,
        limit=("result", *HEAVY),
    ),
    dos(
        "shared-refs-tool-argument",
        """
        a = [0] * 1000
        b = [a] * 1000
        await tools.echo(x=[b] * 50)
    """,
        limit=HEAVY,
    ),
    dos("round-negative-ndigits", "round(1, -4 * 10**6)", limit=HEAVY),
    a("int-from-bytes", "int.from_bytes(b'\\xff' * 10**6, 'big').bit_length()", ATTR),
    dos("int-from-hex-past-int-cap", "int('f' * (2 * 10**6), 16).bit_length()", limit=("memory",)),
    dos(
        "bigint-mod-from-hex",
        """
        x = int('f' * (6 * 10**5), 16)
        (x % 10**200000).bit_length()
    """,
        limit=HEAVY,
    ),
    dos(
        "bigint-isqrt-from-hex",
        """
        import math
        math.isqrt(int('f' * 10**6, 16)).bit_length()
    """,
        limit=HEAVY,
    ),
    dos(
        "bigint-gcd-from-hex",
        """
        import math
        math.gcd(int('f' * (6 * 10**5), 16), 10**200000 + 1).bit_length()
    """,
        limit=HEAVY,
    ),
    dos("sleep-infinite", "import asyncio\nawait asyncio.sleep(float('inf'))", limit=("timeout",)),
    dos(
        "tool-argument-huge-string",
        """
        r = await tools.echo(x='a' * (60 * 10**6))
        len(r['x'])
    """,
        limit=("memory", "result", "arguments"),
        limits=BIG_ARGS,
        max_calls=1,
    ),
    dos(
        "aggregate-memory-many-allocations",
        """
        x = ['a' * 10**6 for i in range(300)]
        len(x)
    """,
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "aggregate-memory-dict-of-strings",
        """
        d = {}
        for i in range(300):
            d[i] = str(i) * (10**6 // len(str(i)))
        len(d)
    """,
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "copies-between-checks-upper",
        """
        s = 'a' * 10**6
        copies = [s.upper() for i in range(300)]
        len(copies)
    """,
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "copies-between-checks-slices",
        """
        s = 'a' * 10**6
        copies = [s[i:] for i in range(300)]
        len(copies)
    """,
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "copies-between-checks-list-copy",
        """
        a = [0] * 10**6
        copies = [a.copy() for i in range(40)]
        len(copies)
    """,
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "hash-collision-set",
        """
        m = 2**61 - 1
        keys = [i * m for i in range(15000)]
        len(set(keys))
    """,
        limit=CPU,
        limits=ROOMY,
    ),
    dos(
        "hash-collision-dict-fromkeys",
        """
        m = 2**61 - 1
        keys = [i * m for i in range(15000)]
        len(dict.fromkeys(keys))
    """,
        limit=CPU,
        limits=ROOMY,
    ),
    dos(
        "hash-collision-set-display",
        """
        m = 2**61 - 1
        keys = [i * m for i in range(15000)]
        len({*keys})
    """,
        limit=CPU,
        limits=ROOMY,
    ),
    dos(
        "hash-collision-counter",
        """
        import collections
        m = 2**61 - 1
        keys = [i * m for i in range(15000)]
        len(collections.Counter(keys))
    """,
        limit=CPU,
        limits=ROOMY,
    ),
    dos(
        "json-loads-amplify",
        """
        import json
        len(json.loads('[' + '{},' * (5 * 10**6) + '{}]'))
    """,
        limit=HEAVY,
    ),
    dos("ascii-astral-amplify", "len(ascii('😀' * (10**7)))", limit=HEAVY),
    dos("list-of-string-amplify", "len(list('a' * (3 * 10**7)))", limit=HEAVY),
    dos("unpack-string-amplify", "len([*('a' * (3 * 10**7))])", limit=HEAVY),
    dos("split-amplify", "len(('a ' * (15 * 10**6)).split())", limit=HEAVY),
    dos("int-base0-hex-past-cap", "int('0x' + 'f' * 60000, 0).bit_length()", limit=("memory",)),
    a("int-from-huge-digit-string", "int('9' * 10**6)", "ValueError", limits=DOS),
    # ---- repetition and padding
    dos("str-repeat", "'a' * 10**10", limit=("memory",)),
    dos("list-repeat", "[0] * 10**10", limit=("memory",)),
    dos("bytes-repeat", "b'a' * 10**10", limit=("memory",)),
    dos("tuple-repeat", "(0,) * 10**10", limit=("memory",)),
    dos("repeat-reversed-operands", "10**10 * 'a'", limit=("memory",)),
    dos("inplace-repeat", "s = 'a'\ns *= 10**10", limit=("memory",)),
    dos("chained-repeat", "[0] * 10**5 * 10**5", limit=("memory",)),
    dos("str-ljust", "'a'.ljust(10**9)", limit=("memory",)),
    dos("str-rjust", "'a'.rjust(10**9)", limit=("memory",)),
    dos("str-center", "'x'.center(10**9)", limit=("memory",)),
    dos("str-zfill", "'1'.zfill(10**9)", limit=("memory",)),
    dos("str-expandtabs", "'\\t'.expandtabs(10**9)", limit=("memory",)),
    dos("percent-width", "len('%*d' % (10**9, 1))", limit=("memory",)),
    dos("percent-literal-width", "len('%1000000000d' % 1)", limit=("memory",)),
    dos("percent-precision", "len('%.1000000000f' % 1.0)", limit=("memory",)),
    a("unbound-str-ljust", "str.ljust('a', 10**9)", ATTR),
    a("mapped-str-zfill", "list(map(str.zfill, ['1'], [10**9]))", ATTR),
    dos("join-amplify", "s = 'a' * 10**6\nlen(''.join([s] * 1000))", limit=("memory",)),
    dos("translate-amplify", "len(('a' * 10**4).translate({97: 'x' * 10**5}))", limit=("memory",)),
    dos("bytes-percent-width", "len(b'%1000000000d' % 1)", limit=("memory",)),
    dos("sum-of-lists-quadratic", "len(sum([[0] * 10**6] * 20, []))", limit=HEAVY),
    dos(
        "itertools-product-materialises",
        """
        import itertools
        itertools.product(itertools.repeat(0, 10**8))
    """,
        limit=HEAVY,
    ),
    dos(
        "accumulate-string-growth",
        """
        import itertools
        for s in itertools.accumulate(['a' * 10**6] * 100):
            pass
    """,
        limit=HEAVY,
    ),
    dos("format-width", "format(1, '>1000000000')", limit=("memory",)),
    dos("fstring-width", "f'{1:>{10**9}}'", limit=("memory",)),
    dos("replace-amplify", "('a' * 10**4).replace('', 'b' * 10**4)", limit=("memory",)),
    dos(
        "concat-doubling",
        "x = 'a' * 1000\nfor i in range(20):\n    x = x + x\nlen(x)",
        limit=("memory",),
    ),
    dos(
        "list-concat-doubling",
        "x = [0] * 1000\nfor i in range(17):\n    x = x + x",
        limit=("memory",),
    ),
    dos(
        "list-extend-doubling",
        "x = [0] * 1000\nfor i in range(17):\n    x.extend(x)",
        limit=("memory",),
    ),
    a("bytes-alloc", "bytes(10**9)", NAME),
    a("bytearray-alloc", "bytearray(10**9)", NAME),
    a("int-to-bytes", "(1).to_bytes(10**9, 'big')", ATTR),
    dos("list-of-range", "list(range(10**9))", limit=HEAVY),
    # ---- catastrophic regular expressions
    # the engine answers these classic catastrophic patterns quickly: no match, no hang
    a("regex-nested-plus", "import re\nre.match('(a+)+$', 'a' * 30 + 'b')", None, limits=DOS),
    a("regex-nested-star", "import re\nre.search('(a*)*b', 'a' * 30)", None, limits=DOS),
    a(
        "regex-compiled-pattern",
        "import re\nre.compile('(x+x+)+y').match('x' * 40)",
        None,
        limits=DOS,
    ),
    dos(
        "regex-alternation",
        "import re\nre.fullmatch('(a|aa)+', 'a' * 60 + 'b')",
        limit=("timeout",),
    ),
    dos(
        "regex-alternation-compiled",
        "import re\nre.compile('(?:a|aa)+b').search('a' * 60)",
        limit=("timeout",),
    ),
    dos(
        "regex-findall-alternation",
        "import re\nre.findall('(a|aa)+b', 'a' * 60)",
        limit=("timeout",),
    ),
    dos(
        "regex-compile-nested-repeats",
        "import re\nre.compile('(?:(?:(?:a{50}){50}){50}){50}')",
        limit=HEAVY,
    ),
    dos(
        "regex-sub-amplify",
        "import re\nlen(re.sub('', 'x' * 1000, 'a' * 10**5))",
        limit=("memory",),
    ),
    dos(
        "regex-sub-template-amplify",
        """
        import re
        len(re.sub('a+', '\\\\g<0>' * 1000, 'a' * 10**6))
    """,
        limit=("memory",),
    ),
    dos(
        "regex-expand-amplify",
        """
        import re
        m = re.match('a+', 'a' * 10**6)
        len(m.expand('\\\\g<0>' * 1000))
    """,
        limit=("memory",),
    ),
    # ---- print floods (truncation is not an error)
    dos("print-forever", "while True:\n    print('x' * 100)", check=_output_truncated),
    a(
        "print-bounded-flood",
        "for i in range(1000):\n    print('x' * 100)",
        None,
        limits=DOS,
        check=_output_truncated,
    ),
    a("print-one-huge-line", "print('x' * 10**7)", None, limits=DOS, check=_output_truncated),
    a("print-huge-end", "print('a', end='b' * 10**7)", None, limits=DOS, check=_output_truncated),
    a(
        "print-huge-sep",
        "print('a', 'b', sep='c' * 10**7)",
        None,
        limits=DOS,
        check=_output_truncated,
    ),
    # ---- huge results
    dos("result-huge-string", "'x' * 10**6", limit=("result",)),
    dos("result-huge-list", "list(range(30000))", limit=("result",)),
    a(
        "result-deep-nesting",
        "x = []\nfor i in range(50000):\n    x = [x]\nx",
        "RecursionError",
        limits=DOS,
    ),
    # ---- tool-call floods
    dos(
        "calls-loop",
        "for i in range(1000):\n    await tools.echo(x=i)",
        limit=("calls",),
        max_calls=DOS.calls,
    ),
    dos(
        "calls-loop-swallowed",
        """
        for i in range(1000):
            try:
                await tools.echo(x=i)
            except Exception:
                pass
        'swallowed'
    """,
        limit=("calls",),
        max_calls=DOS.calls,
    ),
    dos(
        "calls-gather-flood",
        """
        import asyncio
        await asyncio.gather(*[tools.echo(x=i) for i in range(500)])
    """,
        limit=("calls",),
        max_calls=DOS.calls,
    ),
    dos(
        "calls-gather-return-exceptions",
        """
        import asyncio
        r = await asyncio.gather(*[tools.echo(x=i) for i in range(500)], return_exceptions=True)
        len(r)
    """,
        limit=("calls",),
        max_calls=DOS.calls,
    ),
    dos(
        "calls-queued-at-timeout",
        """
        import asyncio
        await asyncio.gather(*[tools.slow(s=0.3) for i in range(12)])
    """,
        limit=("timeout",),
        max_calls=12,
        settle=0.7,
    ),
    dos(
        "calls-cancelled-by-wait-for",
        """
        import asyncio
        for i in range(100):
            try:
                await asyncio.wait_for(tools.slow(s=1), 0.001)
            except TimeoutError:
                pass
    """,
        limit=("calls",),
        max_calls=DOS.calls,
    ),
    a(
        "concurrency-bounded",
        """
        import asyncio
        len(await asyncio.gather(*[tools.slow(s=0.02) for i in range(16)]))
    """,
        None,
        limits=DOS,
        max_calls=16,
        check=_bounded_concurrency,
    ),
    a(
        "calls-never-awaited",
        "for i in range(1000):\n    tools.echo(x=i)\n'done'",
        None,
        limits=DOS,
        value="done",
        check=_no_host_calls,
    ),
    a(
        "orphan-gather-after-error",
        """
        import asyncio
        g = asyncio.gather(tools.slow(s=0.2), tools.slow(s=0.2))
        raise ValueError('bail')
    """,
        "ValueError",
        limits=DOS,
        max_calls=2,
        settle=0.5,
    ),
    a(
        "asyncgen-finalizer-calls-after-run",
        """
        async def ag():
            try:
                yield 1
            finally:
                await tools.echo(x='late')
        async for v in ag():
            break
        'done'
    """,
        None,
        limits=DOS,
        value="done",
        max_calls=1,
        settle=0.3,
    ),
    a(
        "generator-finally-runs-after-run",
        """
        def g():
            try:
                yield 1
            finally:
                print('finalizer')
                while True:
                    pass
        it = g()
        next(it)
        'done'
    """,
        None,
        limits=DOS,
        value="done",
    ),
    a(
        "asyncgen-finally-spins-after-run",
        """
        async def ag():
            try:
                yield 1
            finally:
                while True:
                    pass
        async for v in ag():
            break
        'done'
    """,
        None,
        limits=DOS,
        value="done",
        settle=0.3,
    ),
    # ---- limit swallowing
    dos(
        "swallow-except-exception",
        """
        try:
            while True:
                pass
        except Exception:
            pass
        'swallowed'
    """,
    ),
    dos(
        "swallow-bare-except",
        """
        try:
            while True:
                pass
        except:
            pass
        'swallowed'
    """,
    ),
    dos(
        "swallow-base-exception",
        """
        try:
            while True:
                pass
        except BaseException:
            pass
        'swallowed'
    """,
    ),
    dos(
        "finally-spins",
        """
        try:
            while True:
                pass
        finally:
            while True:
                pass
    """,
    ),
    dos(
        "while-try-except-pass",
        """
        while True:
            try:
                while True:
                    pass
            except:
                pass
    """,
    ),
    dos(
        "swallow-by-nameerror-in-except",
        """
        try:
            try:
                while True:
                    pass
            except NoSuchName:
                pass
        except NameError:
            pass
        'swallowed'
    """,
    ),
    dos(
        "swallow-finally-raises-other",
        """
        try:
            while True:
                pass
        finally:
            raise ValueError('replaced')
    """,
    ),
    dos(
        "swallow-finally-return",
        """
        def f():
            try:
                while True:
                    pass
            finally:
                return 'swallowed'
        f()
    """,
    ),
    dos(
        "swallow-finally-break",
        """
        for i in range(1):
            try:
                while True:
                    pass
            finally:
                break
        'swallowed'
    """,
    ),
    dos(
        "swallow-gather-return-exceptions",
        """
        import asyncio
        async def spin():
            while True:
                pass
        await asyncio.gather(spin(), return_exceptions=True)
        'swallowed'
    """,
    ),
    dos(
        "swallow-recursion-limit",
        """
        def f():
            try:
                return f()
            except BaseException:
                return 0
        f()
        'swallowed'
    """,
        limit=("recursion",),
    ),
    dos(
        "swallow-timeout-cancellation",
        """
        import asyncio
        try:
            await asyncio.sleep(100)
        except:
            pass
        'swallowed'
    """,
        limit=("timeout",),
    ),
    dos(
        "swallow-cancellation-forever",
        """
        import asyncio
        while True:
            try:
                await asyncio.sleep(100)
            except:
                pass
    """,
        limit=("timeout",),
    ),
    dos(
        "swallow-wait-for-timeout-then-spin",
        """
        import asyncio
        while True:
            try:
                await asyncio.wait_for(asyncio.sleep(100), 0.01)
            except:
                pass
    """,
    ),
    dos(
        "swallow-calls-limit-then-spin",
        """
        for i in range(100):
            try:
                await tools.echo(x=i)
            except BaseException:
                pass
        'swallowed'
    """,
        limit=("calls",),
        max_calls=DOS.calls,
    ),
    # ---- round 2: one C call that turns a bounded input into many objects
    dos("split-many-small-pieces", "len(('ab ' * (5 * 10**6)).split())", limit=("memory",)),
    dos("rsplit-many-small-pieces", "len(('ab,' * (5 * 10**6)).rsplit(','))", limit=("memory",)),
    dos("splitlines-many-small-pieces", "len(('ab\\n' * (5 * 10**6)).splitlines())",
        limit=("memory",)),
    dos("bytes-split-many-small-pieces", "len((b'ab ' * (5 * 10**6)).split())",
        limit=("memory",)),
    dos(
        "unicode-whitespace-split",
        "len(('a\\u3000' * (5 * 10**6)).split())",
        limit=HEAVY,
        limits=SLOW_OK,
    ),
    dos("regex-findall-many-matches", "import re\nlen(re.findall('..', 'a' * (15 * 10**6)))",
        limit=HEAVY, limits=SLOW_OK),
    dos("regex-split-many-pieces", "import re\nlen(re.split(' ', 'ab ' * (5 * 10**6)))",
        limit=HEAVY, limits=SLOW_OK),
    dos("regex-pattern-findall-many", "import re\nlen(re.compile('.').findall('a' * 10**7))",
        limit=HEAVY, limits=SLOW_OK),
    dos(
        "regex-findall-nested-groups-copy",
        "import re\nlen(re.findall('(' * 90 + 'a+' + ')' * 90, 'b' + 'a' * 10**6))",
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "match-group-repeated-names",
        "import re\nm = re.search('a+', 'b' + 'a' * 10**6)\nlen(m.group(*([0] * 2000)))",
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "match-groups-nested-copies",
        "import re\nm = re.search('(' * 90 + 'a+' + ')' * 90, 'b' + 'a' * 10**6)\nlen(m.groups())",
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "match-groupdict-nested-copies",
        """
        import re
        p = ''.join('(?P<g%d>' % i for i in range(90)) + 'a+' + ')' * 90
        m = re.search(p, 'b' + 'a' * 10**6)
        len(m.groupdict())
    """,
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "strftime-amplify",
        "import datetime\nlen(datetime.date(2020, 1, 1).strftime('%c' * (5 * 10**6)))",
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "datetime-strftime-amplify",
        "import datetime\nlen(datetime.datetime(2020, 1, 1).strftime('%c' * (5 * 10**6)))",
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "fstring-date-spec-amplify",
        "import datetime\nd = datetime.date(2020, 1, 1)\nlen(f\"{d:{'%c' * (5 * 10**6)}}\")",
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "format-date-spec-amplify",
        "import datetime\nlen(format(datetime.date(2020, 1, 1), '%c' * (5 * 10**6)))",
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos(
        "match-slice-nested-copies",
        "import re\nm = re.search('(' * 90 + 'a+' + ')' * 90, 'b' + 'a' * 10**6)\nlen(m[0:91])",
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos("capwords-many-words", "import string\nlen(string.capwords('ab ' * (5 * 10**6)))",
        limit=("memory",), limits=SLOW_OK),
    dos("capwords-many-words-sep",
        "import string\nlen(string.capwords('ab,' * (5 * 10**6), ','))",
        limit=("memory",), limits=SLOW_OK),
    dos("regex-escape-python-loop", "import re\nlen(re.escape('.' * (15 * 10**6)))",
        limit=("memory",), limits=SLOW_OK),
    # ---- round 2: stdlib Python loops that never tick (random, statistics)
    dos("random-sample-virtual-population",
        "import random\nlen(random.sample(['a'], k=3 * 10**6, counts=[10**18]))",
        limit=("memory", "operations"), limits=SLOW_OK),
    dos("random-sample-counts-charged",
        "import random\nlen(random.sample(['a', 'b'], k=500000, counts=[10**18, 10**18]))",
        limit=("operations",), limits=SLOW_OK),
    a("random-choices-string-weights-quadratic",
      "import random\nrandom.choices([1, 2], 'a' * (3 * 10**4))", TYPE, message="numbers",
      limits=SLOW_OK),
    a("random-choices-list-cum-weights-quadratic",
      "import random\nrandom.choices([1], cum_weights=[[0] * 1000] * 1000)", TYPE,
      message="numbers", limits=SLOW_OK),
    a("random-sample-string-counts-quadratic",
      "import random\nrandom.sample(['a', 'b'], 1, counts=['a' * 10**6] * 2)", TYPE,
      message="numbers", limits=SLOW_OK),
    a("random-weights-still-work",
      "import random\n[len(random.choices([1, 2], [1, 3], k=5)), "
      "len(random.choices('ab', cum_weights=[1, 2], k=2)), "
      "sorted(random.sample(['a', 'b'], 2, counts=[1, 1]))]",
      None, value=[5, 2, ["a", "b"]]),
    dos("random-shuffle-charged", "import random\nx = [0] * (2 * 10**6)\nrandom.shuffle(x)",
        limit=("operations",), limits=SLOW_OK),
    dos("random-choices-charged", "import random\nlen(random.choices([1], k=2 * 10**6))",
        limit=("memory", "operations"), limits=SLOW_OK),
    # ---- round 2: shared references to one big string, rendered many times (sizes, not items)
    dos("shared-leaf-str", "s = 'a' * 10**7\nlen(str([s] * 30))", limit=("memory",),
        limits=SLOW_OK),
    dos("shared-leaf-repr", "s = 'a' * 10**7\nlen(repr([s] * 30))", limit=("memory",),
        limits=SLOW_OK),
    dos("shared-leaf-ascii", "s = 'a' * 10**7\nlen(ascii((s,) * 30))", limit=("memory",),
        limits=SLOW_OK),
    dos("shared-leaf-format", "s = 'a' * 10**7\nlen(format({1: [s] * 30}))", limit=("memory",),
        limits=SLOW_OK),
    dos("shared-leaf-json-dumps", "import json\ns = 'a' * 10**7\nlen(json.dumps([s] * 30))",
        limit=("memory",), limits=SLOW_OK),
    dos("shared-leaf-percent-tuple", "s = 'a' * 10**7\nlen('%s' * 30 % ((s,) * 30))",
        limit=("memory",), limits=SLOW_OK),
    dos("shared-leaf-percent-mapping", "s = 'a' * 10**7\nlen('%(k)s' * 30 % {'k': s})",
        limit=("memory",), limits=SLOW_OK),
    dos(
        "shared-leaf-fstring-many-fields",
        "s = 'a' * 10**7\nlen(f'{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}{s}')",
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos("shared-leaf-fstring-one-field", "s = 'a' * 10**7\nlen(f'{[s] * 30}')",
        limit=("memory",), limits=SLOW_OK),
    dos("shared-leaf-inside-exception-str", "s = 'a' * 10**7\nlen(str(ValueError([s] * 30)))",
        limit=("memory",), limits=SLOW_OK),
    dos("shared-leaf-inside-exception-print", "s = 'a' * 10**7\nprint(KeyError([s] * 30))",
        limit=("memory",), limits=SLOW_OK),
    dos("shared-leaf-dict-values-view",
        "s = 'a' * 10**7\nd = {i: s for i in range(30)}\nlen(str(d.values()))",
        limit=("memory",), limits=SLOW_OK),
    dos("shared-leaf-dict-items-view",
        "s = 'a' * 10**7\nd = {i: s for i in range(30)}\nlen(repr(d.items()))",
        limit=("memory",), limits=SLOW_OK),
    dos("shared-leaf-slice-repr", "s = 'a' * 10**7\nlen(str(slice([s] * 30)))",
        limit=("memory",), limits=SLOW_OK),
    dos("shared-leaf-match-repr",
        "import re\nm = re.search('a+', 'a' * 10**7)\nlen(str([m] * 30))",
        limit=("memory",), limits=SLOW_OK),
    a("render-size-cycles-and-views-ok",
      "x = [1]\nx.append(x)\nd = {'k': x}\n[str(x), str(d.values())[:12], repr(slice(1, 2)), "
      "str(ValueError('e'))]",
      None, value=["[1, [...]]", "dict_values(", "slice(1, 2, None)", "e"]),
    a("shared-leaf-in-codec-error-message", "s = 'a' * 10**7\n'x'.encode([s] * 30)",
      "LookupError", limits=SLOW_OK, check=_message_withheld),
    dos("shared-leaf-in-list-index-message", "s = 'a' * 10**7\n[1].index([s] * 30)",
        limit=("memory",), limits=SLOW_OK),
    dos("shared-leaf-in-range-index-message", "s = 'a' * 10**7\nrange(3).index([s] * 30)",
        limit=("memory",), limits=SLOW_OK),
    dos("shared-leaf-in-deque-index-message",
        "import collections\ns = 'a' * 10**7\ncollections.deque([1]).index([s] * 30)",
        limit=("memory",), limits=SLOW_OK),
    a("shared-leaf-in-namedtuple-field", "import collections\ns = 'a' * 10**7\n"
      "collections.namedtuple('A', [[s] * 30])", TYPE, limits=SLOW_OK),
    dos("namedtuple-field-string-split", "import collections\n"
        "collections.namedtuple('A', 'a ' * (5 * 10**6))", limit=("memory",), limits=SLOW_OK),
    a("index-methods-still-work",
      "import collections\n[[1, 2, 3].index(2), list.index([5, 6], 6), range(10).index(3), "
      "collections.deque('abc').index('c'), collections.namedtuple('P', 'x y')(1, 2).x]",
      None, value=[1, 1, 3, 2, 1]),
    a("shared-leaf-print-truncates", "s = 'x' * 10**7\nprint(*[s] * 30)", None, limits=SLOW_OK,
      check=_output_truncated),
    a("print-many-args-huge-sep", "print(*[1] * 90000, sep='x' * 10**7)", None,
      limits=SLOW_OK, check=_output_truncated),
    a("print-many-args-huge-non-ascii-sep", "print(*[1] * 90000, sep='\u00e9' * 10**7)", None,
      limits=SLOW_OK, check=_output_truncated),
    a("shared-leaf-error-message", "s = 'a' * 10**7\nraise ValueError(*[s] * 30)", "ValueError",
      limits=SLOW_OK, check=_message_withheld),
    dos("shared-leaf-tool-argument", "s = 'a' * 10**7\nawait tools.echo(x=[s] * 30)",
        limit=("memory",), limits=SLOW_OK),
    dos("shared-leaf-result", "s = 'a' * 10**7\n[s] * 30", limit=("result", "memory"),
        limits=SLOW_OK),
    a("tools-getattr-huge-name-difflib", "getattr(tools, 'x' * (5 * 10**6), None)", None,
      limits=SLOW_OK),
    a("facade-getattr-huge-name", "import json\ngetattr(json, 'x' * (5 * 10**6), 7)", None,
      value=7, limits=SLOW_OK),
    dos(
        "json-dumps-default-amplify",
        """
        import json
        s = 'a' * 10**7
        class O:
            pass
        len(json.dumps([O()] * 30, default=lambda v: s))
    """,
        limit=("memory",),
        limits=SLOW_OK,
    ),
    dos("itertools-cwr-huge-r",
        "import itertools\nnext(itertools.combinations_with_replacement('a', 10**8))",
        limit=("memory",), limits=SLOW_OK),
    dos("itertools-permutations-wide",
        "import itertools\nlen(next(itertools.permutations('a' * (15 * 10**6))))",
        limit=HEAVY, limits=SLOW_OK),
    a("itertools-tuples-still-work",
      "import itertools\n[list(itertools.combinations([1, 2, 3], 2)), "
      "len(list(itertools.permutations(range(4)))), "
      "list(itertools.combinations_with_replacement('ab', 2))]",
      None, value=[[[1, 2], [1, 3], [2, 3]], 24, [["a", "a"], ["a", "b"], ["b", "b"]]]),
    # ---- round 2: %-formatting guard: misaligned '*' values, quadratic key parsing
    dos("percent-star-after-plain-conversion", "len('%d%*d' % (1, 10**9, 5))", limit=("memory",)),
    dos("bytes-percent-star-after-plain-conversion", "len(b'%s%*d' % (b'x', 10**9, 5))",
        limit=("memory",)),
    dos("percent-star-precision-misaligned", "len('%d%.*f' % (1, 10**9, 1.0))",
        limit=("memory",)),
    a("percent-unclosed-keys-quadratic", "s = '%(' * 60000\ns % {}", "ValueError",
      limits=SLOW_OK, message="parentheses"),
    a("percent-unclosed-key-literal-compile", "x = '" + "%(" * 40000 + "' % {}", "ValueError",
      limits=SLOW_OK),
    a("percent-mapping-still-works", "'%(a)s-%(b)05d-%%' % {'a': 'x', 'b': 7}", None,
      value="x-00007-%"),
    dos("regex-compile-long-literal", "import re\nre.compile('a' * (15 * 10**6))",
        limit=("memory",)),
    # ---- round 2: C loops fed by uncounted builtins, bypassed constructors
    dos("zip-feeds-extend", "x = [0]\nx.extend(zip(x, 'a' * (3 * 10**6)))\nlen(x)"),
    dos("enumerate-feeds-extend-forever", "x = [0]\nx.extend(enumerate(x))\nlen(x)"),
    dos("zip-in-operator-c-loop",
        "s = 'a' * (15 * 10**6)\n[('b', 'b') in zip(s, s) for i in range(20)]"),
    dos("enumerate-in-operator-c-loop",
        "s = 'a' * (15 * 10**6)\n[(0, 'b') in enumerate(s) for i in range(20)]"),
    dos("type-of-range-list", "len(list(type(range(1))(3 * 10**8)))"),
    dos("type-of-range-tuple", "len(tuple(type(range(0))(3 * 10**8)))"),
    dos("type-of-range-deque",
        "import collections\ncollections.deque(type(range(1))(3 * 10**8), 0)"),
    # ---- round 2: bulk inserts of colliding int keys outside set()/fromkeys (RT-40 follow-up)
    *[
        dos(
            f"hash-collision-{name}",
            "m = 2**61 - 1\nkeys = [i * m for i in range(15000)]\n" + body,
            limit=CPU,
            limits=ROOMY,
        )
        for name, body in (
            ("dict-of-zip", "len(dict(zip(keys, keys)))"),
            ("dict-of-pairs", "len(dict([(k, 0) for k in keys]))"),
            ("dict-update", "d = {}\nd.update(zip(keys, keys))\nlen(d)"),
            ("set-update", "s = set()\ns.update(keys)\nlen(s)"),
            ("set-union", "len(set().union(keys))"),
            ("frozenset-union", "len(frozenset().union(keys))"),
            ("set-issubset", "{0}.issubset(keys)"),
            ("counter-update", "import collections\nc = collections.Counter()\nc.update(keys)"),
            ("counter-via-type", "import collections\nlen(type(collections.Counter())(keys))"),
            ("defaultdict-pairs", "import collections\n"
             "len(collections.defaultdict(int, zip(keys, keys)))"),
            ("dict-update-from-dict", "d = dict.fromkeys(keys)\ne = {1: 0}\ne.update(d)"),
            ("set-update-from-set", "s = set(keys)\nt = {1}\nt.update(s)"),
            ("statistics-mode", "import statistics\nstatistics.mode(keys)"),
            ("statistics-multimode", "import statistics\nlen(statistics.multimode(keys))"),
            ("ordereddict-pairs",
             "import collections\nlen(collections.OrderedDict(zip(keys, keys)))"),
        )
    ],
    # ---- round 2: single C calls that are quadratic in a small input
    dos(
        "pow-modular-inverse-huge",
        """
        import random
        m = (1 << 131000) - 159
        a = random.getrandbits(131000) | 1
        for i in range(20):
            pow(a, -1, m)
    """,
        limit=("operations",),
        limits=SLOW_OK,
    ),
    dos(
        "pow-modular-huge-modulus-small-exponent",
        """
        import random
        m = random.getrandbits(131000) | 1
        pow(3, random.getrandbits(512), m)
    """,
        limit=("operations",),
        limits=SLOW_OK,
    ),
    a("pow-modular-rsa-sized-still-works",
      "m = (1 << 4096) - 159\npow(3, (1 << 4095) + 1, m) > 0 and pow(5, -1, 7)", None, value=3),
    a(
        "bulk-merge-semantics",
        """
        import collections
        s = {1, 2}
        s.update({3}, frozenset([4]), [5])
        d = {'a': 1}
        d.update({'b': 2}, c=3)
        c = collections.Counter('ab')
        c.update({'a': 5})
        c.update(collections.Counter('b'))
        o = collections.OrderedDict(a=1)
        o.update({'z': 0})
        [sorted(s), d, dict(c), list(o), sorted({1}.union({2}, {3: 0})),
         {1, 2}.issubset({1, 2, 3}), {1}.isdisjoint({2: 0})]
    """,
        None,
        value=[[1, 2, 3, 4, 5], {"a": 1, "b": 2, "c": 3}, {"a": 6, "b": 2}, ["a", "z"],
               [1, 2, 3], True, True],
    ),
    a("statistics-fmean-weights-multiply-strings",
      "import statistics\nstatistics.fmean(b'x' * 1000, ['a' * 10**7] * 30)", TYPE,
      message="numbers", limits=SLOW_OK),
    a("statistics-fmean-data-strings",
      "import statistics\nstatistics.fmean(['a' * 10**7] * 30, [120] * 30)", TYPE,
      message="numbers", limits=SLOW_OK),
    a("statistics-harmonic-mean-weights-strings",
      "import statistics\nstatistics.harmonic_mean([1, 2], weights=['a' * 10**7] * 2)", TYPE,
      message="numbers", limits=SLOW_OK),
    a("statistics-numeric-functions-still-work",
      "import statistics\n[statistics.fmean([1, 2, 3], [1, 1, 2]), statistics.mean([1, 2]), "
      "statistics.median(['a', 'b', 'c']), statistics.quantiles([1, 2, 3, 4])]",
      None, value=[2.25, 1.5, "b", [1.25, 2.5, 3.75]]),
    a("statistics-mode-semantics",
      "import statistics\n[statistics.mode([1, 2, 2, 3]), statistics.mode('aabbb'), "
      "statistics.multimode('aabbcd'), statistics.multimode([])]",
      None, value=[2, "b", ["a", "b"], []]),
    a("statistics-mode-empty", "import statistics\nstatistics.mode([])", "StatisticsError"),
    dos(
        "statistics-exact-bigint-arithmetic",
        """
        import statistics
        x = [3**80000] * 20000
        statistics.variance(x)
    """,
        limit=("operations",),
        limits=SLOW_OK,
    ),
    a("except-star", "try:\n    pass\nexcept* ValueError:\n    pass", SYNTAX),
    # ---- round 3: host code that builds per item without ticks, renders of named objects,
    # ---- C comparisons over shared references
    dos(
        "gather-task-flood",
        """
        import asyncio
        c = [asyncio.sleep(0) for i in range(150000)]
        len(await asyncio.gather(*c))
    """,
        limit=HEAVY,
        limits=replace(SLOW_OK, operations=10**6),
    ),
    a("gather-many-tasks-still-work",
      "import asyncio\nlen(await asyncio.gather(*[asyncio.sleep(0, i) for i in range(500)]))",
      None, value=500),
    a("regex-pattern-overlapped-findall",
      "import re\np = re.compile('.+')\nlen(p.findall('a' * 30000, overlapped=True))",
      TYPE, message="overlapped", limits=DOS),
    a("regex-pattern-overlapped-finditer",
      "import re\nlen(list(re.compile('.+').finditer('a' * 3000, overlapped=True)))",
      TYPE, message="overlapped", limits=DOS),
    a(
        "regex-pattern-methods-keep-stdlib-signatures",
        """
        import re
        p = re.compile(r'(\\w)(\\d)?')
        [p.findall('a1b c', 1), p.findall('a1bc', 0, 2), p.search('xa', 1).group(),
         p.match('ab', pos=1).group(), p.fullmatch('ab', 0, 1).group(),
         [m.group() for m in p.finditer('abc', 1, 2)], p.split('a,b', 1),
         p.split('ab', maxsplit=1), p.sub('x', 'ab'), p.subn('x', 'ab', 1)]
    """,
        None,
        value=[[["1", ""], ["b", ""], ["c", ""]], [["a", "1"]], "a", "b", "a", ["b"],
               ["", "a", None, ",b"], ["", "a", None, "b"], "xx", ["xb", 1]],
    ),
    a("json-dumps-separators-shared-leaf",
      "import json\ns = 'a' * 10**6\njson.dumps([1], separators=([s] * 300, ':'))",
      TYPE, message="pair of strings", limits=DOS),
    a("json-dumps-separators-still-work",
      "import json\n[json.dumps({'a': [1, 2]}, separators=(',', ':')), "
      "json.dumps([1], separators=[';', '='])]", None, value=['{"a":[1,2]}', "[1]"]),
    dos("shared-timezone-name-str",
        "import datetime\ntz = datetime.timezone(datetime.timedelta(0), 'x' * 10**6)\n"
        "len(str([tz] * 1000))", limit=("memory",)),
    dos("shared-aware-datetime-repr",
        "import datetime\ntz = datetime.timezone(datetime.timedelta(0), 'x' * 10**6)\n"
        "len(repr([datetime.datetime(2020, 1, 1, tzinfo=tz)] * 1000))", limit=("memory",)),
    dos("shared-pattern-repr",
        "import re\np = re.compile('a' * 90000)\nlen(str([p] * 3000))", limit=("memory",)),
    dos("shared-long-class-name-instance-repr",
        f"class {'A' * 40000}:\n    pass\nlen(str([{'A' * 40000}()] * 5000))",
        limit=("memory",)),
    dos("shared-long-function-name-fstring",
        f"def {'f' * 40000}():\n    pass\nx = [{'f' * 40000}] * 5000\nlen(f'{{x}}')",
        limit=("memory",)),
    dos("shared-namedtuple-field-names-repr",
        "import collections\n"
        "P = collections.namedtuple('P', ['f' + str(i) + 'x' * 90 for i in range(256)])\n"
        "p = P(*range(256))\nlen(str([p] * 1000))", limit=("memory",),
        limits=replace(DOS, operations=10**6)),
    a(
        "named-object-reprs-still-work",
        """
        import datetime, collections, re
        tz = datetime.timezone(datetime.timedelta(hours=1), 'CET')
        P = collections.namedtuple('P', 'x y')
        dd = collections.defaultdict(list)
        dd['a'].append(1)
        [str(P(1, 2)), str(tz), repr(dd), str([re.compile('ab')]),
         str(datetime.datetime(2020, 1, 2, tzinfo=tz))]
    """,
        None,
        value=["P(x=1, y=2)", "CET", "defaultdict(<class 'list'>, {'a': [1]})",
               "[re.compile('ab')]", "2020-01-02 00:00:00+01:00"],
    ),
    dos("str-upper-non-ascii-amplify", "s = 'ß' * (15 * 10**6)\nlen(s.upper())",
        limit=("memory",), limits=SLOW_OK),
    dos("str-casefold-unbound-non-ascii-amplify",
        "s = 'ß' * (15 * 10**6)\nlen(str.casefold(s))", limit=("memory",), limits=SLOW_OK),
    a("case-mapping-still-works",
      "[list(map(str.upper, ['a', 'ß'])), 'Straße'.upper(), 'ÀB'.lower(), 'ab cd'.title(), "
      "'aB'.swapcase(), 'éa'.capitalize(), 'Maße'.casefold(), ('x' * 10**6).upper()[:2]]",
      None, value=[["A", "SS"], "STRASSE", "àb", "Ab Cd", "Ab", "Éa", "masse", "XX"]),
    *[
        dos(f"shared-refs-{name}",
            "a = [0] * 1000\nb = [a] * 1000\nc = [b] * 1000\n"
            "a2 = [0] * 1000\nb2 = [a2] * 1000\nc2 = [b2] * 1000\n" + line,
            limit=("operations",))
        for name, line in (
            ("compare-eq", "c == c2"),
            ("compare-lt", "c < c2"),
            ("compare-chained", "1 < 2 < c != c2"),
            ("in-list", "c in [c2]"),
            ("not-in-list", "c not in [c2]"),
            ("in-reversed", "c in reversed([c2])"),
            ("in-map", "c in map(lambda v: v, [c2])"),
            ("list-count", "[c].count(c2)"),

            ("list-remove", "[c].remove(c2)"),
            ("tuple-count-unbound", "tuple.count((c,), c2)"),
            ("sorted", "sorted([c, c2])"),
            ("list-sort", "x = [c, c2]\nx.sort()"),
            ("sorted-key", "sorted([1, 2], key=lambda v: c if v == 1 else c2)"),
            ("max-pair", "max(c, c2)"),
            ("min-list", "min([c, c2])"),
            ("dict-values", "{1: c} == {1: c2}"),
            ("in-dict-values", "c in {1: c2}.values()"),
            ("groupby", "import itertools\nlist(itertools.groupby([c, c2]))"),
            ("statistics-median", "import statistics\nstatistics.median_low([c, c2])"),
            ("namedtuple-count",
             "import collections\nP = collections.namedtuple('P', 'x y')\nP(c, c).count(c2)"),
        )
    ],
    dos("shared-refs-list-index",
        "a = [0] * 1000\nb = [a] * 1000\nc = [b] * 1000\n"
        "a2 = [0] * 1000\nb2 = [a2] * 1000\nc2 = [b2] * 1000\n[c].index(c2)",
        limit=("memory", "operations")),
    dos("shared-refs-hash-tuple",
        "a = (0,) * 1000\nb = (a,) * 1000\nc = (b,) * 1000\nhash(c)", limit=("operations",)),
    dos("shared-refs-hash-in-set",
        "a = (0,) * 1000\nb = (a,) * 1000\nc = (b,) * 1000\nc in {1}", limit=("operations",)),
    dos("shared-text-list-count",
        "s1 = 'a' * (2 * 10**6)\ns2 = s1[:-1] + 'a'\n[s1] * 2000\n([s1] * 2000).count(s2)",
        limit=("operations",)),
    dos("shared-text-in-list",
        "s1 = 'a' * (2 * 10**6)\ns2 = s1[:-1] + 'a'\ns2 in [s1] * 2000", limit=("operations",)),
    *[
        dos(f"doubled-tuple-{name}",
            "import collections\nt = (0,)\nfor i in range(26):\n    t = (t, t)\n" + line,
            limit=("operations",))
        for name, line in (
            ("subscript-load", "{}.get(1) or {1: 2}[t]"),
            ("subscript-store", "d = {}\nd[t] = 1"),
            ("subscript-augmented", "d = collections.Counter()\nd[t] += 1"),
            ("set-display", "{t}"),
            ("dict-display", "{t: 1}"),
            ("set-comprehension", "{x for x in [t]}"),
            ("dict-comprehension", "{x: 1 for x in [t]}"),
            ("starred-set-display", "{*[t]}"),
            ("set-add", "s = set()\ns.add(t)"),
            ("set-discard-unbound", "set.discard(set(), t)"),
            ("dict-get", "{}.get(t)"),
            ("dict-setdefault", "{}.setdefault(t, 1)"),
            ("set-constructor", "set([t])"),
            ("frozenset-constructor", "frozenset(x for x in [t])"),
            ("dict-of-zip", "dict(zip([t], [1]))"),
            ("counter", "collections.Counter([t])"),
            ("defaultdict-pairs", "collections.defaultdict(list, [(t, 1)])"),
            ("fromkeys", "dict.fromkeys([t])"),
            ("set-update", "s = set()\ns.update([t])"),
            ("dict-update-pairs", "d = {}\nd.update([(t, 1)])"),
            ("keys-isdisjoint", "{1: 2}.keys().isdisjoint([t])"),
            ("move-to-end", "collections.OrderedDict().move_to_end(t)"),
            ("isinstance", "isinstance(1, (str, t))"),
            ("issubclass", "issubclass(int, t)"),
            ("keys-view-or", "{1: 2}.keys() | [t]"),
            ("keys-view-reflected-and", "[t] & {1: 2}.keys()"),
            ("items-view-isub", "v = {1: 2}.items()\nv -= [t]"),
            ("dict-ior-pairs", "d = {}\nd |= [(t, 1)]"),
        )
    ],
    a(
        "tuple-keys-keep-python-semantics",
        """
        import collections
        d = {}
        k = (1, 'a')
        d[k] = 1
        d[k] += 1
        s = {k, (2, 'b')}
        s.add((3, 'c'))
        s.discard((2, 'b'))
        c = {(i, i): i for i in range(3)}
        o = collections.OrderedDict(a=1, b=2)
        o.move_to_end('a')
        [d[k], sorted(s), d.get(k), d.get((9,), 0), d.setdefault((5,), 7), d.pop((5,)),
         dict.get(d, k), set.add(s, (4, 'd')), sorted({x for x in [(1,), (1,)]}), c[(2, 2)],
         dict.fromkeys([(1, 2)]) == {(1, 2): None}, len(set([(1, (2, 3))])),
         {*[(1, 2)]} == {(1, 2)}, dict([((1,), 2)])[(1,)], list(o),
         {1: 2}.items().isdisjoint([(1, 2)]), isinstance(1, (int, str)),
         isinstance('a', (int, (float, bool))), issubclass(bool, (int,)),
         collections.Counter([(1,), (1,)])[(1,)], len({(i, (i,)): 0 for i in range(50)})]
    """,
        None,
        value=[2, [[1, "a"], [3, "c"]], 2, 0, 7, 7, 2, None, [[1]], 2, True, 1, True, 2,
               ["b", "a"], False, True, False, True, 2, 50],
    ),
    *[
        dos(f"materialise-huge-range-{name}", line, limit=("memory",),
            limits=replace(DOS, operations=10**8))
        for name, line in (
            ("list", "len(list(range(3 * 10**7)))"),
            ("tuple", "len(tuple(range(3 * 10**7)))"),
            ("deque", "import collections\nlen(collections.deque(range(3 * 10**7)))"),
            ("list-iadd", "x = []\nx += range(3 * 10**7)\nlen(x)"),
            ("list-of-reversed", "len(list(reversed(range(3 * 10**7))))"),
        )
    ],
    a(
        "sequence-constructors-keep-python-semantics",
        """
        import collections
        x = []
        x += range(3)
        x += (4,)
        q = collections.deque([1, 2], maxlen=3)
        [list('abc'), tuple([1, 2]), list(range(3)), list(map(str, [1])),
         list(v for v in [1]), list({1: 2}.items()), tuple(), list(), type([]) is list,
         type(()) == tuple, isinstance([], list), type(q) is collections.deque, x, list(q),
         collections.deque(maxlen=2).maxlen, str(list), list(reversed([1, 2])), list(b'ab')]
    """,
        None,
        value=[["a", "b", "c"], [1, 2], [0, 1, 2], ["1"], [1], [[1, 2]], [], [], True, True,
               True, True, [0, 1, 2, 4], [1, 2], 2, "<class 'list'>", [2, 1], [97, 98]],
    ),
    a(
        "set-operators-keep-python-semantics",
        """
        import collections
        x = 10
        x -= 3
        y = 6
        y |= 1
        s = {1, 2}
        s |= {3}
        s -= {1}
        s &= {2, 3, 4}
        s ^= {9}
        d = {'a': 1}
        d |= [('c', 3)]
        c = collections.Counter('aab')
        c -= collections.Counter('a')
        f = 2.5
        n = 7
        [x, y, sorted(s), d, dict(c), sorted({1: 2}.keys() | [3]), list({1: 2}.keys() - [1]),
         list([2] & {2: 0}.keys()), f - 1, n - f, n & 3, n | 8, n ^ 1, True | False]
    """,
        None,
        value=[7, 7, [2, 3, 9], {"a": 1, "c": 3}, {"a": 1, "b": 1}, [1, 3], [], [2], 1.5,
               4.5, 3, 15, 6, True],
    ),
    a("in-iterators-keep-python-semantics",
      "[[1] in reversed([[2], [1]]), 3 in map(abs, [-3]), [0] in range(5), 2.0 in range(5), "
      "(1,) in (x for x in [(1,)]), 'a' in reversed('ab'), [1] in reversed([[2]])]",
      None, value=[True, True, False, True, True, True, False]),
    a(
        "comparisons-keep-python-semantics",
        """
        import collections, itertools, statistics
        a = [0] * 1000
        b = [a] * 100
        a2 = [0] * 1000
        b2 = [a2] * 100
        x = [3, 1, 2]
        x.sort()
        y = [[2], [1]]
        y.sort(key=lambda v: v[0], reverse=True)
        P = collections.namedtuple('P', 'x y')
        [b == b2, b < b2, b != b2, a in [a2], 1 in a, [1, 2] == [1, 2], 3 > 2 > 1,
         (1, 2) < (1, 3), 'a' in 'abc', 2 not in {1}, [0] in [[0]], a < a2 <= b,
         len(a) == 1000, x, y, sorted(['b', 'a']), min([3, 1]), max(1, 5), max([[1], [2]]),
         min('ab', key=len), max([], default=0), P(1, 1).count(1), P(1, 2).index(2),
         [1, 1].count(1), (1, 2).index(2), list.count([1], 1), hash((1, 2)) == hash((1, 2)),
         sorted({3, 1}), max(v for v in [1, 4, 2]), sorted([(1, 'b'), (1, 'a')]),
         [k for k, g in itertools.groupby('aabbc')], statistics.median([[1], [3], [2]]),
         statistics.mode([(1, 2), (1, 2), (3,)]), (1, 2) in {(1, 2): 0}, 'b' in ['a', 'b']]
    """,
        None,
        value=[True, False, False, True, False, True, True, True, True, True, True, False,
               True, [1, 2, 3], [[2], [1]], ["a", "b"], 1, 5, [2], "a", 0, 2, 1, 2, 1, 1,
               True, [1, 3], 4, [[1, "a"], [1, "b"]], ["a", "b", "c"], [2], [1, 2], True,
               True],
    ),
    # RT-73: C calls between two chunk boundaries copy a mid-sized object over and over
    # (each copy under the per-object share, 1000 of them in one chunk of ticks).
    *[
        dos(f"c-copies-between-ticks-{name}", "big = " + big + "\n" + line, limit=("memory",),
            limits=SLOW_OK)
        for name, big, line in [
            ("bound-copy", "[0] * 10**6", "c = big.copy\ny = [c() for i in range(1000)]"),
            ("defaultdict-factory", "[0] * 10**6",
             "import collections\nd = collections.defaultdict(big.copy)\n"
             "for i in range(1000):\n    d[i]"),
            ("map-list", "[0] * 10**6", "y = list(map(list, [big] * 1000))"),
            ("list-copy", "[0] * 10**6", "y = [list(big) for i in range(1000)]"),
            ("times-one", "[0] * 10**6", "y = [big * 1 for i in range(1000)]"),
            ("bound-upper", "'a' * 10**7", "u = big.upper\ny = [u() for i in range(1000)]"),
            ("tuple", "[0] * 10**6", "y = [tuple(big) for i in range(1000)]"),
        ]
    ],
    # RT-74: Counter arithmetic, comparisons, update/subtract and most_common are stdlib
    # Python loops over every item that ran without ticks.
    *[
        dos(f"counter-bulk-{name}",
            "import collections\nc = collections.Counter(range(20000))\nd = +c\n"
            f"for i in range(100):\n    {line}")
        for name, line in [
            ("sub", "len(c - d)"), ("add", "len(c + d)"), ("or", "len(c | d)"),
            ("and", "len(c & d)"), ("eq", "c == d"), ("le", "c <= d"),
            ("update", "c.update(d)"), ("subtract", "c.subtract(d)"),
            ("most-common", "c.most_common(1)"), ("isub", "c -= d"),
        ]
    ],
    a("counters-keep-python-semantics",
      "import collections\nc = collections.Counter('aab')\nd = collections.Counter('bc')\n"
      "e = collections.Counter(c)\ne.update(d)\ne.subtract({'a': 1})\nf = +c\nf -= d\n"
      "[dict(c + d), dict(c - d), dict(c | d), dict(c & d), c == d, c <= c + d, dict(e), "
      "c.most_common(1), dict(f), c.total()]",
      None, value=[{"a": 2, "b": 2, "c": 1}, {"a": 2}, {"a": 2, "b": 1, "c": 1}, {"b": 1},
                   False, True, {"a": 1, "b": 2, "c": 1}, [["a", 2]], {"a": 2}, 3]),
    # RT-75: dict views compared as if flat (one visit): every item is looked up again.
    *[
        dos(f"dict-view-compare-{name}",
            "d = dict.fromkeys(range(20000), 1)\ne = dict.fromkeys(range(20000), 1)\n"
            f"for i in range(200):\n    {line}")
        for name, line in [
            ("keys-eq", "d.keys() == e.keys()"), ("items-le", "d.items() <= e.items()"),
            ("keys-ne-set", "d.keys() != set(e)"),
        ]
    ],
    a("dict-view-compare-keeps-python-semantics",
      "d = {1: 'a', 2: (1, 2)}\ne = {2: (1, 2), 1: 'a', 3: 0}\n"
      "[d.keys() == {1, 2}, d.keys() < e.keys(), d.items() <= e.items(), "
      "d.items() == e.items(), d.values() == d.values(), (2, (1, 2)) in d.items(), "
      "{1: [1]}.items() == {1: [1]}.items()]",
      None, value=[True, True, True, False, False, True, True]),
    # RT-76: set/dict operators walk both operands in C, charged one operation per call.
    *[
        dos(f"set-operator-loop-{name}",
            "s = set(range(20000))\nt = set(range(20000))\nd = dict.fromkeys(s)\n"
            f"for i in range(200):\n    {line}")
        for name, line in [
            ("xor", "len(s ^ t)"), ("sub", "len(s - t)"), ("or", "len(s | t)"),
            ("and", "len(s & t)"), ("dict-or", "len(d | d)"), ("ior", "s |= t"),
        ]
    ],
    # RT-77: whole-text scans of a big text cost one operation per call.
    *[
        dos(f"text-scan-loop-{name}", f"s = 'ab' * 10**6\nfor i in range(60):\n    {line}")
        for name, line in [
            ("count", "s.count('ab')"), ("isalpha", "s.isalpha()"),
            ("isidentifier", "s.isidentifier()"),
            ("bound-count", "c = s.count\n    c('x', 0, None)"),
        ]
    ],
    a("text-scans-keep-python-semantics",
      "s = 'ab' * 10000\n[s.count('a'), s.count('a', 5, 105), s.count('b', -3), "
      "s.count('a', None, 4), s.isalpha(), (s + '1').isalnum(), s.isdigit(), 'abc'.count('c'), "
      "'x'.isupper()]",
      None, value=[10000, 50, 2, 2, True, True, False, 1, False]),
    a("c-copies-between-ticks-still-work",
      "big = [0] * 10**5\nc = big.copy\ny = [c() for i in range(20)] + [big * 1, list(big)]\n"
      "[len(y), sum(len(v) for v in y)]",
      None, value=[22, 2_200_000], limits=SLOW_OK),
]

ATTACKS = ESCAPES + DOSES

SENTINEL_SCRIPT = textwrap.dedent("""
    import json, math
    r = await tools.echo(x=json.loads('1'))
    [1 + 1 + r['x'], len('ab'), math.floor(2.5), str(7), sorted([2, 1])]
""")
SENTINEL_VALUE = [3, 2, 2, "7", [1, 2]]

EXECUTORS = ("InProcessExecutor", "WorkerPoolExecutor")

# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    """The sandbox's script runtime is asyncio-based; one backend keeps the suite fast."""
    return "asyncio"


@pytest.fixture(scope="module", params=EXECUTORS)
async def executor(request: pytest.FixtureRequest) -> Any:
    """One executor instance per module: every attack and its sentinel share it."""
    cls = getattr(sandbox, request.param, None)
    if cls is None:
        pytest.fail(f"codemode.sandbox.{request.param} does not exist yet")
    async with cls() as ex:
        gc.collect()
        gc.freeze()  # later gc.collect() calls only scan what the attacks created
        try:
            yield ex
        finally:
            gc.unfreeze()


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    """Kill the test process if a C-level loop holds the GIL past any sane bound."""
    faulthandler.dump_traceback_later(100, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(autouse=True)
def _clean_sentinels() -> Iterator[None]:
    ESCAPED.clear()
    yield
    ESCAPED.clear()


# --------------------------------------------------------------------------- assertions


def _texts(result: Any) -> list[str]:
    texts = [result.output]
    try:
        texts.append(json.dumps(result.value, ensure_ascii=False))
    except (TypeError, ValueError):
        texts.append(repr(result.value))
    if result.error is not None:
        texts += [result.error.message, result.error.traceback, result.error.type]
    return texts


def assert_host_untouched(result: Any, host: Host | None = None) -> None:
    """No escape marker anywhere, no trap touched, no sentinel file, host classes intact."""
    for text in _texts(result):
        for marker in FORBIDDEN_TEXT:
            assert marker not in text, f"host leak {marker!r} in {text[:500]!r}"
        text.encode("utf-8")  # a lone surrogate here crashes the host's writers
    assert ESCAPED == [], ESCAPED
    assert not os.path.exists(SENTINEL_PATH), "the script created the host sentinel file"
    for name in ("redteam", "pwned"):
        assert not hasattr(ToolCallError, name)
    assert ToolCallError.__init__.__qualname__ == "ToolCallError.__init__"
    assert "message" not in vars(ToolCallError)


HOST_MEMORY_SLACK = 32 * MiB
"""Host peak-RSS growth tolerated beyond twice the run's memory limit (in-process runs share
the host; size guards bound each allocation, so an old and a new object may coexist)."""


def _reset_peak_rss() -> int:
    """Reset the kernel's high-water mark to the current RSS (Linux ``clear_refs``), return it.

    Without the reset one early huge allocation would hide every later one.
    """
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    return _peak_rss()


def _peak_rss() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@contextlib.contextmanager
def unraisable_recorder() -> Iterator[list[str]]:
    """Collect exceptions CPython could not raise (finalizers, un-awaited coroutines)."""
    seen: list[str] = []
    previous = sys.unraisablehook

    def hook(info: Any) -> None:
        seen.append(f"{info.exc_type.__name__}: {info.exc_value} in {info.object!r}")

    sys.unraisablehook = hook
    try:
        yield seen
    finally:
        sys.unraisablehook = previous


async def run_attack(executor: Any, source: str, limits: Limits) -> tuple[Any, Host]:
    """Run one script with a fresh host; the host is closed the moment run() returns."""
    host = Host()
    with anyio.fail_after(limits.timeout + 20):
        result = await executor.run(source, call_tool=host, tool_paths=TOOL_PATHS, limits=limits)
    host.closed = True
    return result, host


async def assert_sentinel_works(executor: Any) -> None:
    """The same executor still runs a normal script with a tool call."""
    result, host = await run_attack(executor, SENTINEL_SCRIPT, ESC)
    assert result.error is None, result.error
    assert result.value == SENTINEL_VALUE
    assert host.calls == [("echo", {"x": 1})]
    assert_host_untouched(result, host)


def assert_outcome(attack: Attack, result: Any, host: Host) -> None:
    """The specific refusal (or value) the row demands."""
    if attack.check is _refused_as_too_big:
        pass
    elif attack.error is None:
        assert result.error is None, f"expected success, got {result.error}"
        if attack.check is None:
            assert result.value == attack.value
    else:
        assert result.error is not None, f"attack succeeded: value={result.value!r}"
        assert result.error.type == attack.error, result.error
        if attack.error == LIMIT and attack.limit:
            assert result.error.limit in attack.limit, result.error
            assert result.error.limit in result.error.message, result.error
        else:
            assert result.error.limit is None, result.error
        if attack.message is not None:
            assert attack.message.lower() in result.error.message.lower(), result.error
    if attack.check is not None:
        attack.check(result, host)
    assert len(host.calls) <= attack.max_calls, host.calls[:5]
    if attack.max_calls == 0:
        assert host.calls == [], host.calls[:5]


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("attack", ATTACKS)
async def test_attack_is_contained(executor: Any, attack: Attack) -> None:
    peak_before = _reset_peak_rss()
    with unraisable_recorder() as unraisable:
        result, host = await run_attack(executor, attack.script(), attack.limits)
        if attack.settle:
            await anyio.sleep(attack.settle)
        gc.collect()
    assert unraisable == [], f"script code ran outside its run: {unraisable}"
    grown = _peak_rss() - peak_before
    allowed = 2 * attack.limits.memory + HOST_MEMORY_SLACK  # guards are per allocation
    assert grown <= allowed, f"the host process grew by {grown // MiB} MiB"
    assert_host_untouched(result, host)
    assert_outcome(attack, result, host)
    await assert_sentinel_works(executor)


def test_table_is_large_and_ids_are_unique() -> None:
    ids = [p.id for p in ATTACKS]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 120


HOST_STREAM_LEAKS = [
    pytest.param("print('LEAK', file=None, flush=True)\nprint('LEAK', flush=True)", id="print"),
    pytest.param("import re\nre.compile('LEAK' * 100, 512).pattern", id="regex-debug-compile"),
    pytest.param("import re\nre.search('LEAK', 'xLEAKx', 512) is None", id="regex-debug-search"),
    pytest.param("import re\nre.compile('LEAK', -1).pattern", id="regex-all-flags"),
    pytest.param("import re\nre.match('\\d+', '12') is not None", id="invalid-escape-warning"),
    pytest.param("x = 'LEAK' is 'LEAK'\nx", id="is-literal-syntax-warning"),
    pytest.param(
        "def g():\n    try:\n        yield 1\n    finally:\n        print('LEAK')\n"
        "it = g()\nnext(it)\n'done'",
        id="generator-finalizer",
    ),
]


@pytest.mark.parametrize("source", HOST_STREAM_LEAKS)
async def test_nothing_reaches_host_stdout_or_stderr(
    executor: Any, source: str, capfd: pytest.CaptureFixture[str]
) -> None:
    """Script output goes to the run's buffer only, never to the host's fds 1 and 2."""
    capfd.readouterr()
    result, _ = await run_attack(executor, source, ESC)
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == "", (captured.out[:300], captured.err[:300])
    assert_host_untouched(result)
    await assert_sentinel_works(executor)


async def test_cancelled_run_stops_calls_and_executor_recovers(executor: Any) -> None:
    """Cancelling run() mid-flood: the in-flight call is cancelled, nothing arrives later."""
    host = Host()
    source = "while True:\n    await tools.slow(s=0.05)"
    with anyio.move_on_after(0.3):
        await executor.run(source, call_tool=host, tool_paths=TOOL_PATHS, limits=ESC)
    host.closed = True
    delivered = len(host.calls)
    await anyio.sleep(0.3)
    assert len(host.calls) == delivered
    assert host.in_flight == 0
    assert ESCAPED == []
    await assert_sentinel_works(executor)


async def test_facades_are_not_shared_mutable_state(executor: Any) -> None:
    """A run that tries to poison shared objects leaves the next run unaffected."""
    poison = textwrap.dedent("""
        import json, collections, string
        for target in (json, collections, string, tools):
            try:
                target.loads = len
            except Exception:
                pass
        try:
            ToolCallError.message = 'pwned'
        except Exception:
            pass
        'done'
    """)
    result, _ = await run_attack(executor, poison, ESC)
    assert result.error is None and result.value == "done", result.error
    probe = "import json\n[json.loads('[1]'), ToolCallError('a', 'b').message]"
    check, _ = await run_attack(executor, probe, ESC)
    assert check.error is None and check.value == [[1], "b"], check.error
    assert_host_untouched(result)


STALLERS = [
    pytest.param("while True:\n    pass", id="tight-loop"),
    pytest.param("for i in range(10**11):\n    x = i * i", id="for-loop"),
    pytest.param("import re\nre.fullmatch('(a|aa)+', 'a' * 60 + 'b')", id="regex"),
    pytest.param("pow(3, 10**3000, 10**3000 + 7).bit_length()", id="modular-pow"),
    pytest.param("import math\nmath.lcm(*range(1, 90000)).bit_length()", id="lcm"),
    pytest.param("round(1, -4 * 10**6)", id="round-negative-ndigits"),
    pytest.param("m = 2**61 - 1\nlen(set([i * m for i in range(20000)]))", id="hash-collision"),
    pytest.param("import math\nmath.isqrt(int('f' * 10**6, 16)).bit_length()", id="isqrt"),
    pytest.param("m = 2**61 - 1\nk = [i * m for i in range(20000)]\nlen(dict(zip(k, k)))",
                 id="hash-collision-dict-of-zip"),
    pytest.param("m = 2**61 - 1\ns = set()\ns.update([i * m for i in range(20000)])",
                 id="hash-collision-set-update"),
    pytest.param("import collections\nm = 2**61 - 1\n"
                 "collections.Counter().update([i * m for i in range(20000)])",
                 id="hash-collision-counter-update"),
    pytest.param("import random\nm = (1 << 131000) - 159\na = random.getrandbits(131000) | 1\n"
                 "for i in range(5):\n    pow(a, -1, m)", id="modular-inverse"),
    pytest.param("import random\nm = random.getrandbits(131000) | 1\n"
                 "pow(3, random.getrandbits(512), m)", id="modular-pow-huge-modulus"),
    pytest.param("import statistics\nm = 2**61 - 1\n"
                 "statistics.mode([i * m for i in range(25000)])", id="hash-collision-mode"),
    pytest.param("s = '%(' * 60000\ntry:\n    s % {}\nexcept ValueError:\n    pass\n"
                 "while True:\n    pass", id="percent-key-parsing"),
    pytest.param("a = [0] * 1000\nb = [a] * 1000\nc = [b] * 10000\n"
                 "a2 = [0] * 1000\nb2 = [a2] * 1000\nc2 = [b2] * 10000\nc == c2",
                 id="compare-shared-refs"),
    pytest.param("t = (0,)\nfor i in range(30):\n    t = (t, t)\nd = {}\nd[t] = 1",
                 id="hash-doubled-tuple-key"),
]


@pytest.mark.parametrize("source", STALLERS)
async def test_host_loop_keeps_ticking_during_cpu_attack(executor: Any, source: str) -> None:
    """A hostile script must not starve the host's event loop (10 ms ticker keeps ticking)."""
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.01)
            ticks += 1

    limits = Limits(
        timeout=0.6,
        operations=10**11,
        memory=256 * MiB,
        recursion=50,
        output=4096,
        result=65_536,
        calls=5,
        concurrency=2,
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(ticker)
        started = anyio.current_time()
        result, _ = await run_attack(executor, source, limits)
        elapsed = anyio.current_time() - started
        tg.cancel_scope.cancel()
    assert result.error is not None and result.error.limit is not None, result.error
    # an unstarved 10 ms ticker ticks ~elapsed/0.01 times; GIL sharing with an in-process
    # script thread on a loaded 2-core box can cut that to a fifth or less, while a script
    # that holds the GIL in one C call leaves it at 0-1: demand one tick per 200 ms
    assert ticks >= int(elapsed / 0.2), (ticks, elapsed)
    await assert_sentinel_works(executor)


C_RECURSION = [
    pytest.param("t = ()\nfor i in range(400000):\n    t = (t,)\nhash(t) and 1", id="tuple-hash"),
    pytest.param("x = [1]\nfor i in range(400000):\n    x = filter(None, x)\nnext(x)",
                 id="filter-chain-next"),
    pytest.param("import collections\nd = collections.deque()\nfor i in range(400000):\n"
                 "    d = collections.deque([d])\n1", id="deque-nesting-dealloc"),
    pytest.param("s = 1\nfor i in range(400000):\n    s = slice(s)\n1", id="slice-nesting-dealloc"),
]
"""Structures whose C code recurses once per nesting level without CPython's recursion check
(3.11): 400 000 levels overflow an 8 MiB C stack well inside the default limits."""

C_RECURSION_CHILD = """
import asyncio, json, sys
import codemode.sandbox as sb

async def main():
    async def host(name, args):
        return args
    limits = sb.Limits(timeout=20, operations=3_000_000, memory=512 * 2**20)
    async with getattr(sb, sys.argv[1])() as ex:
        r = await ex.run(sys.argv[2], call_tool=host, limits=limits)
    print(json.dumps([r.value, r.error and r.error.type, r.error and r.error.limit]))

asyncio.run(main())
"""


@pytest.mark.parametrize("source", C_RECURSION)
@pytest.mark.parametrize("executor_name", EXECUTORS)
def test_deep_c_recursion_does_not_crash_the_host(executor_name: str, source: str) -> None:
    """A segfault in the script's C code must not take the host down (in-process: it IS the
    host; worker: it must be reported as a limit, not as a dead worker). Runs in a child
    process so a crash fails this test instead of killing the suite."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    child = subprocess.run([sys.executable, "-c", C_RECURSION_CHILD, executor_name, source],
                           cwd=root, capture_output=True, text=True, timeout=90, check=False)
    assert child.returncode == 0, f"the host process died: status {child.returncode}"
    value, error_type, limit = json.loads(child.stdout.strip().splitlines()[-1])
    assert error_type is None or limit in ("recursion", "memory", "operations"), (
        value, error_type, limit)


async def test_random_state_is_not_shared_between_runs(executor: Any) -> None:
    """A run that seeds ``random`` must not fix the numbers the next run draws."""
    seed = "import random\nrandom.seed(1234)\n[random.random() for _ in range(3)]"
    first, _ = await run_attack(executor, seed, ESC)
    draw, _ = await run_attack(executor, "import random\nrandom.random()", ESC)
    assert first.error is None and draw.error is None, (first.error, draw.error)
    predicted = random.Random(1234)
    for _ in range(3):
        predicted.random()
    assert draw.value != predicted.random(), "the previous run's seed decided this run's draw"


async def test_hostile_run_does_not_break_a_concurrent_benign_run(executor: Any) -> None:
    """Two runs at once on one executor: a limit hit in one must not fail the other."""
    hostile = "s = 'a' * (5 * 10**7)\nfor i in range(10**4):\n    s.find('b')"
    benign = "r = await tools.slow(s=0.2)\n[r['s'], 'ok']"
    results: dict[str, Any] = {}

    async def one(name: str, source: str, limits: Limits) -> None:
        results[name], _ = await run_attack(executor, source, limits)

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, "hostile", hostile, ROOMY)
        await anyio.sleep(0.05)
        tg.start_soon(one, "benign", benign, replace(ESC, timeout=1.0))
    assert results["hostile"].error is not None and results["hostile"].error.limit == "timeout"
    assert results["benign"].error is None, results["benign"].error
    assert results["benign"].value == [0.2, "ok"]
    await assert_sentinel_works(executor)


@pytest.fixture(scope="module")
async def both_executors() -> Any:
    """One executor of each kind, for the differential test."""
    async with sandbox.InProcessExecutor() as inproc, sandbox.WorkerPoolExecutor() as pool:
        yield inproc, pool


def _observable(result: Any) -> tuple[Any, ...]:
    error = result.error
    described = (
        None
        if error is None
        else (
            error.type,
            error.limit,
            error.line,
            error.column,
            re.sub(r"0x[0-9a-f]+", "0x…", error.message),
        )
    )
    return (described, result.value, result.output)


@pytest.mark.parametrize("attack", ESCAPES)
async def test_executors_answer_escape_attempts_identically(
    both_executors: Any, attack: Attack
) -> None:
    """The contract: both executors give the same ScriptResult for the same script."""
    inproc, pool = both_executors
    first, _ = await run_attack(inproc, attack.script(), attack.limits)
    second, _ = await run_attack(pool, attack.script(), attack.limits)
    assert _observable(first) == _observable(second)


async def test_peak_memory_is_per_run(executor: Any) -> None:
    """``usage.peak_memory`` describes this run, not an earlier run on the same worker."""
    heavy = "x = [str(i) * 300 for i in range(100000)]\nlen(x)"
    light = "sum([i for i in range(100)])"
    big = replace(ESC, memory=512 * MiB, operations=10**6)
    first, _ = await run_attack(executor, heavy, big)
    assert first.error is None, first.error
    for _ in range(4):
        later, _ = await run_attack(executor, light, ESC)
        assert later.error is None and later.value == 4950, later.error
        if first.usage.peak_memory is not None and later.usage.peak_memory is not None:
            assert later.usage.peak_memory < first.usage.peak_memory // 2, (
                later.usage.peak_memory,
                first.usage.peak_memory,
            )


async def test_memory_limit_is_per_run(executor: Any) -> None:
    """A run's memory limit is measured from now, not from an earlier run's high-water mark
    (in-process the kernel's peak only goes down when reset: RT-73)."""
    heavy = "x = [' ' * 10**7 + str(i) for i in range(30)]\nlen(x)"
    first, _ = await run_attack(executor, heavy, replace(ESC, memory=512 * MiB))
    assert first.error is None and first.value == 30, first.error
    second, host = await run_attack(executor, heavy, SLOW_OK)
    assert second.error is not None and second.error.limit == "memory", second.error
    assert second.value is None
    assert_host_untouched(second, host)


COMPROMISED_RUNTIME = "tests.sandbox.attacks.compromised_worker:run"


@pytest.fixture(scope="module")
async def compromised_pool() -> Any:
    """A worker pool whose workers act as if their sandbox had been escaped."""
    async with sandbox.WorkerPoolExecutor(size=1, runtime=COMPROMISED_RUNTIME) as pool:
        yield pool


async def test_host_refuses_tools_outside_the_runs_tool_paths(compromised_pool: Any) -> None:
    """A worker may only reach the tools this run exposed (defence in depth)."""
    result, host = await run_attack(compromised_pool, "call-unlisted-tool", ESC)
    assert [name for name, _ in host.calls] == [], host.calls
    assert "not_exposed" not in [r.name for r in result.calls if r.ok]


async def test_host_enforces_the_calls_limit_itself(compromised_pool: Any) -> None:
    """The calls limit holds even when the worker does not count."""
    _, host = await run_attack(compromised_pool, "call-flood", DOS)
    assert len(host.calls) <= DOS.calls, len(host.calls)


async def test_host_enforces_output_and_result_limits_itself(compromised_pool: Any) -> None:
    """Output and result caps hold even for what a worker reports."""
    result, _ = await run_attack(compromised_pool, "oversized-outcome", DOS)
    marker_room = 64
    assert len(result.output.encode()) <= DOS.output + marker_room, len(result.output)
    assert result.value is None or len(json.dumps(result.value)) <= DOS.result
    assert result.error is None or result.error.limit in ("result", "output", None)


async def test_host_does_not_accept_unknown_limit_names(compromised_pool: Any) -> None:
    """``ScriptError.limit`` is always a Limits field name."""
    result, _ = await run_attack(compromised_pool, "forged-limit", DOS)
    assert result.error is not None
    assert result.error.limit in {
        None,
        "timeout",
        "operations",
        "memory",
        "recursion",
        "output",
        "result",
        "calls",
        "concurrency",
    }, result.error


async def test_host_bounds_a_workers_error_report(compromised_pool: Any) -> None:
    """Error type, message and traceback from a worker are bounded and well-formed."""
    result, _ = await run_attack(compromised_pool, "oversized-error", DOS)
    error = result.error
    assert error is not None
    assert len(error.type) <= 200 and len(error.message) <= 4096, (
        len(error.type),
        len(error.message),
    )
    assert len(error.traceback) <= 8192, len(error.traceback)


@pytest.mark.parametrize("mode", ["hang", "spin"])
async def test_host_stops_a_worker_that_never_answers(compromised_pool: Any, mode: str) -> None:
    """A worker that never reports is killed on the wall clock and reported as a timeout."""
    result, _ = await run_attack(compromised_pool, mode, DOS)
    assert result.error is not None and result.error.limit == "timeout", result.error
    _, host = await run_attack(compromised_pool, "call-flood", DOS)
    assert len(host.calls) <= DOS.calls
