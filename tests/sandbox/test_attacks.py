"""Red-team table: hostile scripts against every sandbox executor.

The rows are data: ``attacks/escapes/*.toml`` (escape attempts) and
``attacks/doses/*.toml`` (denial-of-service attempts), one file per attack family
(see :func:`load_rows` for the format). Each row is one attack. A row passes only
when the sandbox produced the *specific* refusal we expect (the error type and the
limit name, or the wording only that refusal uses: :data:`REFUSALS`, or a message
fragment) AND the host stayed untouched:

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
  must still work (facades not mutated, worker recycled, broker healthy); that run
  is also the barrier for "nothing happened later": the attack's host is closed
  first, and no call may reach it before the sentinel run has finished.

Extra tests cover what one row cannot: nothing reaching the host's stdout/stderr,
a host-side 10 ms ticker that must keep ticking while a hostile script runs,
cancellation, shared state between runs (facades, ``random``, peak memory),
a hostile run next to a benign one, a worker that acts as if its sandbox had been
escaped, and a differential check that both executors answer every escape attempt
identically.

Denial-of-service rows use small limits (timeout 0.5 s, 100 000 operations,
64 MiB) and, where an unguarded C-level loop would hold the GIL of an
in-process executor, sizes that are far past the limits but still finite, so
an open finding shows up as a failed test rather than a hung suite. Rows whose
answer is not the timeout (a size or count guard, a refusal, a truncated success) get
a generous timeout (:data:`SIZE`), so a loaded machine cannot trip the clock first.

Rows are never skipped or xfailed: a row that fails is an open finding in
/work/notes/redteam-findings.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import gc
import json
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import tomllib
import typing
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import pytest

import codemode.sandbox as sandbox
from codemode.errors import ToolCallError
from codemode.sandbox import Limits
from codemode.sandbox.language.facades import facade
from codemode.sandbox.language.parsing import parse_tree
from tests.sandbox.host_ticks import host_ticks

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

SIZE = replace(DOS, timeout=10.0)
"""DoS limits with time to spare, for rows whose answer is not the timeout (a size, count,
depth or call limit; a refusal; a truncated or plain success): a loaded machine must not
reach the clock first."""

ROOMY = replace(DOS, memory=256 * MiB)
"""DoS limits with room in memory, so only time can stop the attack."""

BIG_ARGS = replace(DOS, timeout=3.0, memory=256 * MiB)
"""Room in time and memory: only a cap on tool-call arguments can refuse a huge argument."""

SLOW_OK = replace(DOS, timeout=5.0)
"""DoS limits for attacks that may be stopped by time or by a guard, on a loaded machine."""

LIMITS: dict[str, Limits] = {
    "ESC": ESC,
    "DOS": DOS,
    "SIZE": SIZE,
    "ROOMY": ROOMY,
    "BIG_ARGS": BIG_ARGS,
    "SLOW_OK": SLOW_OK,
}
"""The named limits a row may refer to (``limits = "DOS"``)."""

BIG = 3 * 10**8
"""A finite C-level loop length: ~3000x the operation limit, seconds of CPU if uncounted."""

LIMIT = "LimitExceeded"

# --------------------------------------------------------------------------- checks

CHECKS: dict[str, Callable[[Any, Host], None]] = {}
"""Extra assertions a row names with ``check = "..."``."""


def check(func: Callable[[Any, Host], None]) -> Callable[[Any, Host], None]:
    """Register ``func`` in :data:`CHECKS` under its name."""
    CHECKS[func.__name__] = func
    return func


@check
def output_truncated(result: Any, host: Host) -> None:
    """The output was cut at the limit and says so."""
    marker = f"[output truncated at {DOS.output} bytes]"
    assert marker in result.output, result.output[-200:]
    assert len(result.output.encode()) <= DOS.output + len(marker.encode()) + 8


@check
def compat26_logged_notes_scrubbed(result: Any, host: Host) -> None:
    """The logged traceback ends with the notes, their host text taken out."""
    assert result.error is None, result.error
    assert result.output.endswith("ValueError: bad\nwhile <function f>\nin SelfGuarded\n"), (
        result.output)
    assert " at 0x" not in result.output and "codemode." not in result.output


@check
def compat3_exit_output(result: Any, host: Host) -> None:
    """``exit()`` ended the run there, as a success with no value."""
    assert result.error is None, result.error
    assert (result.value, result.output) == (None, "before\n")


@check
def compat22_exit_stack_left_open(result: Any, host: Host) -> None:
    """An exit stack never closed runs none of its callbacks after the run (no print, no
    tool call)."""
    assert result.error is None, result.error
    assert (result.value, result.output) == ("left open", "")
    assert host.calls == []


@check
def compat18_logging_script_frames_only(result: Any, host: Host) -> None:
    """``logging.exception`` printed the script's frames as CPython does, and no host
    frame (no file of the host, none of its functions)."""
    assert result.error is None, result.error
    assert result.output == (
        'ERROR:root:failed\nTraceback (most recent call last):\n'
        '  File "<script>", line 7, in <module>\n  File "<script>", line 5, in inner\n'
        'Odd: x\n'), result.output


@check
def logged_script_frames_only(result: Any, host: Host) -> None:
    """A logged traceback names script frames only: every ``File`` line is the script's
    (the tool proxy, anext's own coroutine and the facades between them are left out)."""
    assert result.error is None, result.error
    files = [line for line in result.output.splitlines() if line.lstrip().startswith("File ")]
    assert files and all(line.startswith('  File "<script>", line ') for line in files), (
        result.output)


@check
def strings_only(result: Any, host: Host) -> None:
    """The value is made of strings (and None) only: no host object came through."""
    assert result.error is None, result.error

    def walk(v: Any) -> None:
        if isinstance(v, list):
            for x in v:
                walk(x)
        else:
            assert v is None or isinstance(v, str), v

    walk(result.value)


@check
def bounded_concurrency(result: Any, host: Host) -> None:
    """All 16 calls answered, never more than the concurrency limit at once."""
    assert result.error is None, result.error
    assert result.value == 16
    assert host.max_in_flight <= DOS.concurrency, host.max_in_flight


@check
def message_withheld(result: Any, host: Host) -> None:
    """A huge error message is replaced, not rendered (or clipped after rendering)."""
    assert len(result.error.message) < 200, result.error.message[:200]


@check
def message_clipped(result: Any, host: Host) -> None:
    """A long error message is clipped to about 2 KB."""
    assert len(result.error.message) <= 2100, len(result.error.message)


@check
def printed_once(result: Any, host: Host) -> None:
    """The script's special method ran once, for the error's own message (the host's hint
    read the error without rendering it again)."""
    assert result.output.count("ran") == 1, result.output[:200]


@check
def printed_nothing(result: Any, host: Host) -> None:
    """No script special method ran while the host described the error."""
    assert result.output == "", result.output[:200]


@check
def no_host_calls(result: Any, host: Host) -> None:
    """Not one call reached the host."""
    assert host.calls == [], host.calls


@check
def one_host_call(result: Any, host: Host) -> None:
    """Exactly one call reached the host."""
    assert len(host.calls) == 1, host.calls


@check
def host_saw_cancel(result: Any, host: Host) -> None:
    """The in-flight host call was cancelled, and nothing is left in flight."""
    assert host.cancelled == 1 and host.in_flight == 0, (host.cancelled, host.in_flight)


@check
def encodable_value(result: Any, host: Host) -> None:
    """The run succeeded with a value the host can write out as UTF-8 JSON (its content is
    what the host made of lone surrogates, not a fixed answer)."""
    assert result.error is None, result.error
    json.dumps(result.value, ensure_ascii=False).encode()


@check
def no_typing_marks(result: Any, host: Host) -> None:
    """typing's marking decorators (``final``, ``no_type_check``, ``overload``) left every host
    object unmarked: CPython's versions set ``__final__``/``__no_type_check__`` on their
    argument, or record it in the process-wide overload registry."""
    assert result.error is None and result.value == "ok", result.error
    shared = facade("json")
    objects = (ToolCallError, ValueError, int, len, json.dumps, json.loads,
               shared.sandbox_getattr("dumps"), shared.sandbox_getattr("loads"))
    for obj in objects:
        for mark in ("__final__", "__no_type_check__"):
            assert not hasattr(obj, mark), (obj, mark)
        assert typing.get_overloads(obj) == [], obj


@check
def encodable_host_calls(result: Any, host: Host) -> None:
    """The arguments the host received encode as UTF-8 JSON."""
    json.dumps(host.calls, ensure_ascii=False).encode()


# --------------------------------------------------------------------------- refusals


@dataclass(frozen=True, kw_only=True, slots=True)
class Refusal:
    """A refusal of the sandbox a row names with ``refusal = "..."``: its error and wording."""

    error: str
    """The ``ScriptError.type`` it raises."""
    pattern: str
    """A regular expression for the wording only this mechanism uses (searched in the message)."""
    by_policy: bool = False
    """Raised by the compile-time policy on a tree CPython's own parser accepted."""


REFUSALS: Final[dict[str, Refusal]] = {
    # RestrictedPython's transformer and SandboxPolicy (codemode/sandbox/language/policy.py)
    "policy-private-attribute": Refusal(
        error="SyntaxError", by_policy=True,
        pattern=r'is an invalid attribute name because it starts with "_"'),
    "policy-private-name": Refusal(
        error="SyntaxError", by_policy=True,
        pattern=r'is an invalid variable name because it starts with "_"'),
    "policy-inspect-attribute": Refusal(
        error="SyntaxError", by_policy=True,
        pattern=r"is a restricted name, that is forbidden to access in RestrictedPython"),
    "policy-reserved-name": Refusal(
        error="SyntaxError", by_policy=True, pattern=r'"\w+" is a reserved name'),
    "policy-exec": Refusal(
        error="SyntaxError", by_policy=True, pattern=r"Exec calls are not allowed"),
    "policy-special-method": Refusal(
        error="SyntaxError", by_policy=True,
        pattern=r'"__\w+__" cannot be defined (in a class body|outside a class) in the sandbox'),
    "policy-eval": Refusal(
        error="SyntaxError", by_policy=True, pattern=r"Eval calls are not allowed"),
    "policy-metaclass-keyword": Refusal(
        error="SyntaxError", by_policy=True,
        pattern=r"a class cannot choose its metaclass in the sandbox"),
    "policy-class-keyword-mapping": Refusal(
        error="SyntaxError", by_policy=True,
        pattern=r"class keywords are written out one by one in the sandbox"),
    "policy-match-class": Refusal(
        error="SyntaxError", by_policy=True,
        pattern=r"this class pattern is not available in the sandbox: a class pattern works "
                r"as the whole case"),
    "policy-match-value": Refusal(
        error="SyntaxError", by_policy=True, pattern=r"a case value must be a literal"),
    "policy-try-star": Refusal(
        error="SyntaxError", by_policy=True,
        pattern=r"`except\*` is not available in the sandbox: write `except ExceptionGroup"),
    "policy-nested-blocks": Refusal(
        error="SyntaxError", by_policy=True,
        pattern=r"too many statically nested blocks: loops, with, try/except and "
                r"comprehensions nest at most \d+ deep in the sandbox"),
    # compile_script, before the policy (codemode/sandbox/language/compile.py)
    "compile-too-long": Refusal(
        error="SyntaxError", pattern=r"the script is too long \(\d+ characters, at most \d+\)"),
    "compile-nested-too-deeply": Refusal(
        error="SyntaxError", pattern=r"the script is nested too deeply to compile"),
    "compile-lone-surrogate": Refusal(
        error="SyntaxError",
        pattern=r"the script contains a lone surrogate character \(U\+D[89A-F][0-9A-F]{2}\)"),
    # the run-time guards (codemode/sandbox/language/guards.py, builtins.py)
    "guard-private-write": Refusal(
        error="AttributeError",
        pattern=r"private attributes can be set only on the script's own objects, not on "
                r"'.+' objects"),
    "guard-private-attribute": Refusal(
        error="AttributeError",
        pattern=r"attribute '.+' is not accessible: names starting with '_' are private in the "
                r"sandbox"),
    "guard-attribute-not-allowed": Refusal(
        error="AttributeError",
        pattern=r"(type object '\w+'|'\w+' object) has no (accessible )?attribute '"),
    "guard-read-only": Refusal(
        error="TypeError",
        pattern=r"('\w+' objects|iterator objects|class '\w+') cannot be modified in the sandbox"),
    "guard-script-class-base": Refusal(
        error="TypeError", pattern=r"class \w+ cannot subclass '\w+' in the sandbox"),
    "guard-type-three-args": Refusal(
        error="TypeError", pattern=r"type\(\) with 3 arguments is not available in the sandbox"),
    "guard-type-of-hidden-type": Refusal(
        error="TypeError",
        pattern=r"type\(\) (is not available for ('\w+'|iterator) objects|of a class "
                r"\('\w+'\) is not available) in the sandbox"),
    "guard-type-only": Refusal(
        error="TypeError", pattern=r"cannot create '[\w.]+' instances"),
    "guard-print-file": Refusal(
        error="TypeError", pattern=r"print\(file=\.\.\.\) takes sys\.stdout, sys\.stderr or an "
                                 r"io\.StringIO\(\) in the sandbox"),
    "guard-codec": Refusal(
        error="LookupError", pattern=r"codec .+ is not available in the sandbox \(available: "),
    "guard-percent-key-parentheses": Refusal(
        error="ValueError",
        pattern=r"%-format keys with more than \d+ parentheses are not supported in the sandbox"),
    # the import allowlist and the facades (codemode/sandbox/language/facades/__init__.py)
    "import-not-allowed": Refusal(
        error="ModuleNotFoundError",
        pattern=r"module '[\w.]+' is not available in the sandbox \(available: "),
    "import-name-not-exported": Refusal(
        error="ImportError",
        pattern=r"^cannot import name '\w+' from '[\w.]+' in the sandbox \(available: "),
    "import-relative": Refusal(
        error="ImportError", pattern=r"relative imports are not available in the sandbox"),
    "facade-attribute-not-exported": Refusal(
        error="AttributeError",
        pattern=r"module '[\w.]+' has no attribute '\w+' in the sandbox \(available: "),
    # the tools proxy and the result encoder (codemode/sandbox/runtime/toolproxy.py, runner.py)
    "tool-not-awaited": Refusal(
        error="TypeError",
        pattern=r"(tools\.[\w.]+\(\.\.\.\) was not awaited|the result is an un-awaited tool "
                r"call): add `await`"),
    "tool-already-awaited": Refusal(
        error="RuntimeError",
        pattern=r"tools\.[\w.]+\(\.\.\.\) was already awaited; call it again"),
    "tool-keyword-arguments-only": Refusal(
        error="TypeError", pattern=r"tools\.[\w.]+\(\) takes keyword arguments only"),
    "tool-arguments-not-json": Refusal(
        error="TypeError", pattern=r"tools\.[\w.]+\(\): arguments must be JSON data \("),
    "result-not-json": Refusal(
        error="TypeError", pattern=r"the result must be JSON data; got an? \w+ object"),
}
"""The sandbox's own refusals, by mechanism: each pattern is wording that only that
mechanism produces, so a natural error of the same type cannot pass for a refusal."""

POLICY_REFUSALS: Final = frozenset(name for name, r in REFUSALS.items() if r.by_policy)


# --------------------------------------------------------------------------- the table

ATTACKS_DIR = Path(__file__).parent / "attacks"
"""The row files: ``escapes/NN-family.toml`` and ``doses/NN-family.toml``."""

ROW_KEYS: Final = frozenset({
    "id", "source", "repeat", "error", "limit", "refusal", "message", "reason", "value",
    "value_json", "check", "limits", "limits_override", "max_calls", "since",
})
EXPECTATION_KEYS: Final = frozenset({
    "error", "limit", "refusal", "message", "reason", "value", "value_json", "check"})
"""The keys that say what the sandbox must answer (what a ``since`` table replaces)."""
FILE_KEYS: Final = frozenset({"family", "limits", "attack"})
PLACEHOLDER: Final = re.compile(r"\{([A-Z][A-Z_]*|U\+[0-9A-F]{4,6})\}")


@dataclass(frozen=True, kw_only=True, slots=True)
class Attack:
    """One hostile script and exactly what the sandbox must answer."""

    id: str
    """Readable test id, unique over both tables."""
    family: str
    """The attack family (the row file's ``family``)."""
    script: str
    """The script as the model would send it (placeholders expanded)."""
    error: str | None
    """Expected ``ScriptError.type``; None means the run must succeed."""
    limit: tuple[str, ...] = ()
    """Accepted ``ScriptError.limit`` names when ``error`` is LimitExceeded."""
    refusal: str | None = None
    """The sandbox refusal (a key of :data:`REFUSALS`) whose wording the message must show."""
    message: str | None = None
    """A substring the error message must contain (case-insensitive)."""
    reason: str | None = None
    """Why the error type alone is the answer (the script's own exception, no message)."""
    value: Any = None
    """Expected value when the run succeeds (not compared when None and ``check`` is set)."""
    check: Callable[[Any, Host], None] | None = None
    """Extra assertions on (result, host), from :data:`CHECKS`."""
    limits: Limits = ESC
    """The limits for this run."""
    max_calls: int = 0
    """How many host calls the attack may legitimately cause."""


def _expand(source: str, repeat: dict[str, list[Any]]) -> str:
    """Fill the placeholders: ``{SENTINEL_PATH}``, ``{BIG}``, ``{U+XXXX}`` (a character a
    TOML file cannot hold: a lone surrogate, NUL) and the row's ``repeat`` names."""
    names = {"SENTINEL_PATH": repr(SENTINEL_PATH), "BIG": str(BIG)}
    names.update({name: text * times for name, (text, times) in repeat.items()})

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key.startswith("U+"):
            return chr(int(key[2:], 16))
        return names.get(key, match.group())

    return PLACEHOLDER.sub(fill, source.strip("\n"))


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _for_this_python(row: dict[str, Any]) -> dict[str, Any]:
    """The row as this Python must answer it. ``since = { "3.12" = { value = true } }``:
    from that CPython version on (the latest listed version that applies), its keys
    replace the row's whole expectation (``error``, ``limit``, ``value`` …), because
    CPython itself changed what the attack does; on older versions the row's own keys
    hold, unchanged."""
    since = row.get("since")
    if since is None:
        return row
    chosen: dict[str, Any] | None = None
    for version in sorted(since, key=_version):
        expectation = since[version]
        assert isinstance(expectation, dict) and expectation, (row["id"], version)
        assert expectation.keys() <= EXPECTATION_KEYS, (row["id"], expectation.keys())
        if sys.version_info[:2] >= _version(version):
            chosen = expectation
    base = {key: value for key, value in row.items() if key != "since"}
    if chosen is None:
        return base
    return {**{k: v for k, v in base.items() if k not in EXPECTATION_KEYS}, **chosen}


def _row(row: dict[str, Any], family: str, default_limits: str) -> Attack:
    unknown = row.keys() - ROW_KEYS
    assert not unknown, f"{row.get('id')}: unknown keys {sorted(unknown)}"
    row = _for_this_python(row)
    limits = LIMITS[row.get("limits", default_limits)]
    if "limits_override" in row:
        limits = replace(limits, **row["limits_override"])
    error = row.get("error")
    limit = tuple(row.get("limit", ()))
    if "timeout" not in limit and limits.timeout < SIZE.timeout:
        # the answer is not the clock: a loaded machine must not reach it first (a DOS row
        # expecting the operation limit took 0.5 s for 64,512 operations during a full suite)
        limits = replace(limits, timeout=SIZE.timeout)
    assert (error == LIMIT) == bool(limit), f"{row['id']}: LimitExceeded rows name the limit"
    refusal = row.get("refusal")
    if refusal is not None:
        assert REFUSALS[refusal].error == error, f"{row['id']}: {refusal} raises another type"
    if error is not None and error != LIMIT:
        assert refusal or row.get("message") or row.get("reason"), (
            f"{row['id']}: a row that expects {error} names the refusal (refusal = ...), a "
            "fragment of its message (message = ...) or why the type is enough (reason = ...)")
    value = json.loads(row["value_json"]) if "value_json" in row else row.get("value")
    return Attack(
        id=row["id"],
        family=family,
        script=_expand(row["source"], row.get("repeat", {})),
        error=error,
        limit=limit,
        refusal=refusal,
        message=row.get("message"),
        reason=row.get("reason"),
        value=value,
        check=CHECKS[row["check"]] if "check" in row else None,
        limits=limits,
        max_calls=row.get("max_calls", 0),
    )


def load_rows(kind: str) -> list[Attack]:
    """Every row of ``attacks/<kind>/*.toml``, file by file, in order.

    A file holds ``family`` (its name), ``limits`` (the rows' default) and
    ``[[attack]]`` rows with:

    - ``id``, ``source`` (the script; ``{SENTINEL_PATH}``, ``{BIG}``, ``{U+XXXX}`` and the
      names of ``repeat = { NAME = [text, times] }`` are filled in);
    - ``error`` (``ScriptError.type``; absent: the run must succeed), ``limit`` (the
      accepted limit names of a LimitExceeded row); any other error needs ``refusal`` (a
      key of :data:`REFUSALS`), ``message`` (a fragment of the error message, for errors
      no one mechanism words) or, for the script's own exceptions, ``reason`` (why the
      type alone is the answer);
    - ``value`` (expected value of a successful run; ``value_json`` when it holds
      ``null``), ``check`` (a name in :data:`CHECKS`);
    - ``limits`` (a name in :data:`LIMITS`), ``limits_override`` (fields replaced),
      ``max_calls`` (host calls the attack may cause);
    - ``since`` (``{ "3.12" = { value = true } }``): where a newer CPython changed what the
      attack does, the expectation from that version on (see :func:`_for_this_python`).
    """
    rows: list[Attack] = []
    for path in sorted((ATTACKS_DIR / kind).glob("*.toml")):
        with path.open("rb") as f:
            data = tomllib.load(f)
        assert data.keys() <= FILE_KEYS, f"{path.name}: unknown keys {data.keys() - FILE_KEYS}"
        rows += [_row(row, data["family"], data["limits"]) for row in data["attack"]]
    return rows


def _params(rows: list[Attack]) -> list[Any]:
    return [pytest.param(row, id=row.id) for row in rows]


ESCAPES = _params(load_rows("escapes"))
DOSES = _params(load_rows("doses"))
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
    """One executor instance per module: every attack and its sentinel share it. Objects
    frozen by :func:`_attack_gc` come back to the collector when the module is done: one
    whose finalizer runs script code then fails the module's last test."""
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
            with unraisable_recorder() as unraisable:
                gc.collect()
            assert unraisable == [], f"script code ran outside its run: {unraisable}"


@pytest.fixture
def _attack_gc(executor: Any) -> None:
    """Collect what earlier tests left, then freeze it, so a row's ``gc.collect()`` scans only
    what that row made. pytest keeps every test's reports (~20 tracked objects a test): with
    one freeze per module the collection grew with each row (one xdist worker on 3.12: the
    median trivial in-process row took 7 ms in the first 400 rows and 138 ms after 2,000).
    A finalizer this collection runs is script code outside its run, as it was when the
    next row's collection ran it."""
    with unraisable_recorder() as unraisable:
        gc.collect()
    assert unraisable == [], f"script code ran outside its run: {unraisable}"
    gc.freeze()


@pytest.fixture(autouse=True)
def _watchdog() -> Iterator[None]:
    """Kill the test process if a C-level loop holds the GIL past any sane bound."""
    faulthandler.dump_traceback_later(100, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="module", autouse=True)
def _remove_sentinel_dir() -> Iterator[None]:
    """The sentinel directory is this module's own: leave nothing behind in the temp dir."""
    yield
    escaped = os.path.exists(SENTINEL_PATH)
    shutil.rmtree(SENTINEL_DIR, ignore_errors=True)
    assert not escaped, "a script created the host sentinel file"


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
    if attack.error is None:
        assert result.error is None, f"expected success, got {result.error}"
        if attack.check is None or attack.value is not None:
            assert result.value == attack.value
    else:
        assert result.error is not None, f"attack succeeded: value={result.value!r}"
        assert result.error.type == attack.error, result.error
        if attack.error == LIMIT:
            assert result.error.limit in attack.limit, result.error
            assert result.error.limit in result.error.message, result.error
        else:
            assert result.error.limit is None, result.error
        if attack.refusal is not None:
            pattern = REFUSALS[attack.refusal].pattern
            assert re.search(pattern, result.error.message), (
                f"not the {attack.refusal} refusal: {result.error}")
        if attack.message is not None:
            assert attack.message.lower() in result.error.message.lower(), result.error
    if attack.check is not None:
        attack.check(result, host)
    assert len(host.calls) <= attack.max_calls, host.calls[:5]
    if attack.max_calls == 0:
        assert host.calls == [], host.calls[:5]


# --------------------------------------------------------------------------- tests


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.usefixtures("_attack_gc")
async def test_attack_is_contained(executor: Any, attack: Attack) -> None:
    peak_before = _reset_peak_rss()
    with unraisable_recorder() as unraisable:
        result, host = await run_attack(executor, attack.script, attack.limits)
        gc.collect()
        grown = _peak_rss() - peak_before
        delivered = len(host.calls)
        # the barrier: the attack's host is closed; a later run on the same executor must
        # finish before anything the attack left behind could show up
        await assert_sentinel_works(executor)
    assert unraisable == [], f"script code ran outside its run: {unraisable}"
    allowed = 2 * attack.limits.memory + HOST_MEMORY_SLACK  # guards are per allocation
    assert grown <= allowed, f"the host process grew by {grown // MiB} MiB"
    assert len(host.calls) == delivered, f"late calls: {host.calls[delivered:][:5]}"
    assert_host_untouched(result, host)
    assert_outcome(attack, result, host)


ROW_COUNT: Final = 1304
"""Rows in the tables (691 when they became data files; 1,304 after round 7's rows on the
newly allowed class protocols, kept cancellations and dropped generators): the tables
may grow, never shrink."""


def test_table_is_large_and_ids_are_unique() -> None:
    ids = [p.id for p in ATTACKS]
    assert len(ids) == len(set(ids)), [i for i in ids if ids.count(i) > 1]
    assert len(ids) >= ROW_COUNT, len(ids)


def test_every_refusal_is_expected_by_some_row() -> None:
    """The registry holds no stale wording: each refusal is what some row expects."""
    named = {p.values[0].refusal for p in ATTACKS}
    assert set(REFUSALS) <= named, sorted(set(REFUSALS) - named)


POLICY_ROWS = [p for p in ATTACKS if p.values[0].refusal in POLICY_REFUSALS]


@pytest.mark.parametrize("attack", POLICY_ROWS)
def test_policy_rows_get_past_cpythons_own_parser(attack: Attack) -> None:
    """A row that expects the policy's refusal parses as Python: the refusal it gets is the
    policy's, not CPython's tokenizer or parser refusing the text first. (``parse_tree``:
    on 3.11/3.12 a script thread left by an earlier row may convert an AST meanwhile.)"""
    parse_tree(attack.script)


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
    # r38: what asyncio, logging and warnings print to stderr when nobody handles it
    pytest.param("import asyncio\nasync def f():\n    raise ValueError('LEAK')\n"
                 "t = asyncio.create_task(f())\nt = None\nawait asyncio.sleep(0.01)\n'done'",
                 id="task-exception-never-retrieved"),
    pytest.param("import asyncio\nasync def f():\n    while True:\n        try:\n"
                 "            await asyncio.sleep(100)\n        except asyncio.CancelledError:\n"
                 "            print('LEAK')\nt = asyncio.create_task(f())\n"
                 "await asyncio.sleep(0)\n'done'", id="task-swallowing-its-cancellation"),
    pytest.param("import logging\nlogging.error('LEAK')\nlogging.warn('LEAK')\n"
                 "logging.getLogger('asyncio').critical('LEAK')\n'done'", id="logging"),
    pytest.param("import datetime\ndatetime.datetime.utcnow().year > 0", id="deprecation-warning"),
    pytest.param("async def f():\n    print('LEAK')\nf()\n'done'", id="coroutine-never-awaited"),
    pytest.param("import asyncio\nasync def f():\n    raise KeyError('LEAK')\n"
                 "async with asyncio.TaskGroup() as tg:\n    tg.create_task(f())",
                 id="task-group-failure"),
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


class LateCaller:
    """An executor gone wrong: each attack run leaves one call behind, due after run()."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.late: list[asyncio.Task[Any]] = []

    async def run(self, source: str, *, call_tool: Any, **kwargs: Any) -> Any:
        result = await self.inner.run(source, call_tool=call_tool, **kwargs)
        if source != SENTINEL_SCRIPT:
            late = call_tool("echo", {"x": "late"})
            self.late.append(asyncio.get_running_loop().create_task(late))
        return result


async def test_the_sentinel_run_is_a_barrier_for_late_calls(executor: Any) -> None:
    """The barrier the table relies on is not vacuous: a call left behind by a run reaches
    the closed host before the next run on the same executor has finished."""
    late = LateCaller(executor)
    _, host = await run_attack(late, "1", ESC)
    with pytest.raises(AssertionError, match="call delivered after run"):
        await assert_sentinel_works(late)
    assert host.calls == [("echo", {"x": "late"})]


async def test_cancelled_run_stops_calls_and_executor_recovers(executor: Any) -> None:
    """Cancelling run() mid-flood: the in-flight call is cancelled, nothing arrives later."""
    host = Host()
    source = "while True:\n    await tools.slow(s=0.05)"
    with anyio.move_on_after(0.3):
        await executor.run(source, call_tool=host, tool_paths=TOOL_PATHS, limits=ESC)
    host.closed = True
    delivered = len(host.calls)
    await assert_sentinel_works(executor)  # the barrier: a later run has finished
    assert len(host.calls) == delivered, host.calls[delivered:]
    assert host.in_flight == 0
    assert ESCAPED == []


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
    pytest.param("import math\nmath.lcm(*range(1, 100000)).bit_length()", id="lcm"),
    pytest.param("import math, random\nxs = [random.getrandbits(60000) | 1 for _ in range(2000)]\n"
                 "math.lcm(*xs)", id="lcm-of-big-integers"),
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
    pytest.param("import itertools\n"
                 "len(list(itertools.combinations_with_replacement(range(3), 10**5)))",
                 id="combinations-of-wide-tuples"),
    pytest.param("len(list(zip(*[range(10**4)] * 10**5)))", id="zip-of-many-iterables"),
    *(pytest.param("import collections\nm = 2**61 - 1\nks = [i * m for i in range(20000)]\n"
                   "class K:\n    def keys(self):\n        return []\n"
                   "    def __iter__(self):\n        return reversed(ks)\n" + tail, id=name)
      for name, tail in (("hash-collision-keys-object-counter", "collections.Counter(K())"),
                         ("hash-collision-keys-object-set-update", "set().update(K())"),
                         ("hash-collision-keys-object-symmetric-update",
                          "set().symmetric_difference_update(K())"))),
    pytest.param("len(('{{' * 50_000_000).format())", id="format-literal-pieces"),
    pytest.param("import math\nB = 3 ** 40000 + 1\nC = 7 ** 23000\n"
                 "math.gcd(*[B * C, B * (C + 1)] * 500)", id="gcd-of-big-integers"),
    pytest.param("a = 1 << 131000\n[a] * 10**6 == [a + 1 - 1] * 10**6",
                 id="compare-lists-of-long-ints"),
    pytest.param("a = 1 << 131000\nhash((a,) * 200_000)", id="hash-tuple-of-long-ints"),
    # an OrderedDict inserts pairs or keys it was handed in one C call (7 s of GIL held for
    # 15,000 keys sharing a hash, before their probes were charged first)
    *(pytest.param("import collections\nm = 2**61 - 1\nks = [i * m for i in range(15000)]\n"
                   + tail, id=name)
      for name, tail in (("hash-collision-ordereddict-of-zip",
                          "len(collections.OrderedDict(zip(ks, ks)))"),
                         ("hash-collision-ordereddict-fromkeys",
                          "len(collections.OrderedDict.fromkeys(iter(ks)))"),
                         ("hash-collision-ordereddict-update",
                          "collections.OrderedDict().update(zip(ks, ks))"))),
    # keys sharing a hash whose == reads ~1,700 digits (~1 µs a probe): one 1,024-item
    # chunk of a bulk insert compared them for 1-2.7 s holding the GIL (the meter now paces
    # its chunks: test_meter_pace.py)
    *(pytest.param("m = 2**61 - 1\nb = 1 << 50000\nks = [b + i * m for i in range(3000)]\n"
                   + tail, id=name)
      for name, tail in (("hash-collision-long-ints-set", "len(set(ks))"),
                         ("hash-collision-long-ints-counter",
                          "import collections\ncollections.Counter(ks)"),
                         ("hash-collision-long-ints-fromkeys", "dict.fromkeys(ks)"))),
    # a ChainMap's len(), iteration and == built the union of its maps' keys in one C call
    # (set().union(*maps)): fifty references to one table of keys sharing a hash, each
    # inserted again (9 s of GIL held; now drawn a counted key at a time, paced)
    *(pytest.param("from collections import ChainMap\nm = 2**61 - 1\nb = 1 << 50000\n"
                   "d = dict.fromkeys([b + i * m for i in range(600)])\n"
                   "cm = ChainMap(*[d] * 50)\n" + tail, id=name)
      for name, tail in (("hash-collision-chainmap-len", "len(cm)"),
                         ("hash-collision-chainmap-eq", "cm == ChainMap(dict(d))"))),
    # title/swapcase/capitalize map ~30 ns a character in one C call, ASCII too (3-4.5 s for
    # 10**8); now a chunk at a time (test_text_chunks.py)
    *(pytest.param(f"x = 'ab. ' * 15_000_000\nfor i in range(20):\n    x.{name}()",
                   id=f"case-mapping-{name}") for name in ("title", "swapcase")),
    # a UTF-16/32 codec calls its error handler once per lone surrogate (~0.3 µs): one call
    # over ten million held the GIL 3 s (now in chunks; test_codec_chunks.py has the error
    # message sized the same way)
    pytest.param("x = '\\ud800' * 10_000_000\nfor i in range(20):\n"
                 "    x.encode('utf-16', 'ignore')", id="lone-surrogates-encoded"),
    pytest.param("x = b'\\x00\\xd8' * 10_000_000\nfor i in range(20):\n"
                 "    x.decode('utf-16-le', 'replace')", id="lone-surrogates-decoded"),
    # r47: r46 let all-ASCII bytes skip the chunks, but read as UTF-32 every four of them
    # are a bad unit (2.05-2.25 s of GIL held for 40 million bytes)
    pytest.param("x = b'a' * 40_000_000\nfor i in range(20):\n"
                 "    x.decode('utf-32', 'replace')", id="ascii-bytes-decoded-as-utf32"),
    # one C call whose cost is the product of two sizes, or ~30 ns a character of a text
    # at its size cap (r26: 27 s, minutes, 3 s and 2.6 s of GIL held before the fixes)
    pytest.param("s = 'a' * 10**6\np = 'a' * (10**6 - 2) + 'ba'\ns.startswith((p,) * 10**6)",
                 id="startswith-tuple-of-long-prefixes"),
    pytest.param("c = 'b' * 10**7 + 'a'\nwhile True:\n    ('a' * 20000).strip(c)",
                 id="strip-by-long-chars"),
    pytest.param("for i in range(5):\n    ('\\xe9' * 6 * 10**7).translate({233: 'e'})",
                 id="translate-long-text-by-dict"),
    pytest.param("for i in range(5):\n    str.maketrans('a' * 6 * 10**7, 'b' * 6 * 10**7)",
                 id="maketrans-of-long-texts"),
    # r44: expandtabs walked a text in one C call (~25 ns a tab: 0.6 s of GIL held for 30
    # million); a complex number's precision was sized once for its two parts (0.43 s)
    pytest.param("x = '\\t' * 30_000_000\nfor i in range(20):\n    x.expandtabs(1)",
                 id="expandtabs-of-tabs"),
    pytest.param("for i in range(20):\n    format(1.5 + 2j, '.40000000f')",
                 id="complex-format-precision"),
    # r44: a replace that grows the text writes ~15 ns a character (0.63 s for 30 million)
    pytest.param("x = 'a' * 30_000_000\nfor i in range(20):\n    x.replace('a', 'bb')",
                 id="replace-growing-a-long-text"),
    # r46: a StrEnum member as old or new text went around the chunking (one C call: 0.9 s
    # of GIL held for 30 million characters; a bool tab size: doses/93-r46.toml)
    pytest.param("from enum import StrEnum\nclass C(StrEnum):\n    A = 'a'\n    B = 'bb'\n"
                 "x = 'a' * 30_000_000\nfor i in range(20):\n    x.replace(C.A, C.B)",
                 id="replace-by-str-enum-members"),
    # r46: a text predicate read the whole text in one C call (~4-8 ns a character:
    # istitle of 60 million held the GIL 1.2 s, isalpha 0.5 s)
    *(pytest.param(f"x = {text} * 60_000_000\nfor i in range(20):\n    x.{name}()",
                   id=f"predicate-{name}")
      for name, text in (("isalpha", "'a'"), ("istitle", "'A' + 'a'"))),
    # r47: a StrEnum member as a strip's chars went around the windows (an exact-type
    # check: one C call looked each character up in 10**7 chars, 3 s of GIL held)
    pytest.param("from enum import StrEnum\nclass C(StrEnum):\n    B = 'b' * 10**7 + 'a'\n"
                 "while True:\n    ('a' * 20000).strip(C.B)", id="strip-by-a-str-enum-member"),
    # r46: a search for a needle of two or more characters is one two-way search over the
    # text (~5 ns a character; `in` with a literal needle was not even charged)
    pytest.param("x = 'a' * 60_000_000\nfor i in range(20):\n    'aaaaaaab' in x",
                 id="search-of-a-long-text"),
    # r44: re.escape is one str.translate through a dict (~40 ns a character: 0.84 s for 20
    # million)
    pytest.param("import re\nx = '.' * 20_000_000\nfor i in range(20):\n    re.escape(x)",
                 id="re-escape-of-a-long-text"),
    # r44: textwrap.dedent ran the stdlib's two regular expressions over the whole text,
    # each backtracking over every line's leading spaces (2 s of GIL held for 40 million)
    pytest.param("import textwrap\nx = ' ' * 40_000_000 + 'a'\nfor i in range(20):\n"
                 "    textwrap.dedent(x)", id="dedent-of-a-long-margin"),
    pytest.param("import textwrap\nx = (' ' * 100 + '\\n') * 400_000\nfor i in range(20):\n"
                 "    textwrap.dedent(x)", id="dedent-of-many-blank-lines"),
    # r44: the host-name scrub of a rendered text tried a qualname at every letter of a word
    # (quadratic: 7-14 s of GIL held for one 60,000-letter word)
    pytest.param("x = ['a' * 60_000 + ' regex']\nwhile True:\n    str(x)",
                 id="scrub-of-a-long-word"),
]


@pytest.mark.parametrize("source", STALLERS)
async def test_host_loop_keeps_ticking_during_cpu_attack(executor: Any, source: str) -> None:
    """A hostile script must not starve the host's event loop (10 ms ticker keeps ticking)."""
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
    async with host_ticks() as ticks:
        result, _ = await run_attack(executor, source, limits)
    assert result.error is not None and result.error.limit is not None, result.error
    # a script that holds the GIL in one C call leaves the ticker at 0-1 ticks: one per
    # 200 ms of the time the process ran or could have (host_ticks: not its run-queue wait)
    assert not ticks.starved, ticks
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
    first, _ = await run_attack(inproc, attack.script, attack.limits)
    second, _ = await run_attack(pool, attack.script, attack.limits)
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
    """A run's memory limit is its own: a first run's big use, at a high limit, neither
    spends the second run's budget nor hides its use. Texts of 40 MiB: glibc maps anything
    over 32 MiB on its own and unmaps it when freed, so the outcome does not depend on what
    the allocator kept (10 MB texts came from an arena once an earlier free had raised
    glibc's mapping threshold, and their freed pages stayed resident: the second run then
    grew the process by less than its limit, a CI flake). The kernel peak's reset between
    runs (RT-73) is tested directly in ``test_meter_peak``."""
    heavy = "x = [' ' * 41943040 + str(i) for i in range(8)]\nlen(x)"
    first, _ = await run_attack(executor, heavy, replace(ESC, memory=512 * MiB))
    assert first.error is None and first.value == 8, first.error
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


async def test_host_bounds_the_violation_of_an_unknown_message(compromised_pool: Any) -> None:
    """A frame of an unknown kind is a protocol violation whose message shows the kind
    clipped: a 10-million-character kind came back whole (a 40 MB error message)."""
    result, _ = await run_attack(compromised_pool, "huge-unknown-message", ESC)
    error = result.error
    assert error is not None and error.type == "SandboxError", error
    assert "unexpected message" in error.message and len(error.message) <= 300, (
        len(error.message), error.message[:100])


@pytest.mark.parametrize("mode", ["hang", "spin"])
async def test_host_stops_a_worker_that_never_answers(compromised_pool: Any, mode: str) -> None:
    """A worker that never reports is killed on the wall clock and reported as a timeout."""
    result, _ = await run_attack(compromised_pool, mode, DOS)
    assert result.error is not None and result.error.limit == "timeout", result.error
    _, host = await run_attack(compromised_pool, "call-flood", DOS)
    assert len(host.calls) <= DOS.calls
