"""Script-side runtime: compile and run one script, produce a :class:`RunOutcome`.

Process-agnostic: the in-process executor calls it in a thread with its own
event loop; the worker-pool executor calls it inside a worker process.

How to call it (process layer)::

    from codemode.sandbox.runtime.replies import decode_reply
    from codemode.sandbox.runtime.runner import run_script, warm_up

    warm_up()                                   # once per worker: imports, caches

    async def call_tool(name: str, args: dict) -> object:
        # send {"name": name, "arguments": args} to the host as JSON; the host
        # answers with ``await broker.answer(name, args)`` (a JSON dict);
        reply = await ask_host(name, args)
        return decode_reply(reply)              # value, or raises ToolCallError / LimitExceeded

    outcome = await run_script(source, call_tool=call_tool,
                               tool_paths=paths, limits=Limits.from_json(job["limits"]))
    # or pass call=<async (name, JSON text of args) -> reply dict> (the host answers
    # with ``await broker.answer_json(name, text)``) and run_script decodes it.
    send(outcome.to_json())                     # host: RunOutcome.from_json(...).to_result(
                                                #   calls=broker.records, time=..., peak_memory=...)

``run_script`` never raises for anything the script does (errors, limits,
compile failures all land in ``RunOutcome.error``); it only propagates
cancellation of the task awaiting it. It enforces ``timeout`` itself (the
deadline is checked at operation ticks and applied as a cancel scope around
awaits), so a host-side wall-clock kill is only the backstop for code stuck
in C. Must run under the asyncio backend when a :class:`RunControl` is given.
"""

from __future__ import annotations

import asyncio
import builtins
import codecs
import contextlib
import dataclasses
import dis
import functools
import importlib
import importlib.util
import inspect
import json
import math
import operator
import sys
import threading
import time
import traceback as tb
import types
from collections import deque
from collections.abc import Awaitable, Callable, Collection
from itertools import compress
from typing import Any, Final, NoReturn, final

import anyio

import codemode.errors
from codemode.errors import LimitExceeded, ScriptCompileError, ToolCallError
from codemode.sandbox.language import script_warnings
from codemode.sandbox.language.builtins import (
    SAFE_BUILTINS,
    ScriptExit,
    starred,
    starred_items,
)
from codemode.sandbox.language.compare import GUARDS as COMPARE_GUARDS
from codemode.sandbox.language.compile import CompiledScript, compile_script
from codemode.sandbox.language.datakeys import data_key, data_key_strict
from codemode.sandbox.language.expansion import GUARDS as EXPANSION_GUARDS
from codemode.sandbox.language.facades import C_INTERNAL, FACADE_NAMES, facade
from codemode.sandbox.language.facades.typing_facade import GENERIC_BASE as GENERIC
from codemode.sandbox.language.facades.typing_facade import type_alias
from codemode.sandbox.language.formatting import install as install_str_format
from codemode.sandbox.language.formatting import render_field
from codemode.sandbox.language.guards import (
    CODECS,
    ScriptMeta,
    build_class,
    data_special,
    guarded_apply,
    guarded_getattr,
    guarded_write,
    guarded_write_attribute,
    guarded_write_item,
    guarded_write_private,
    match_class,
    match_sequence,
    object_setattr,
)
from codemode.sandbox.language.inplace import augmented_attr, augmented_item, guarded_inplace
from codemode.sandbox.language.meter import (
    MAIN_MODULE,
    SCRIPT_FILENAME,
    SCRIPT_MODULE,
    ScriptStop,
    Tripped,
)
from codemode.sandbox.language.notes import notes_of
from codemode.sandbox.language.policy import (
    DATA_KEY,
    DATA_SPECIAL,
    GENERIC_BASE,
    LOOP_RANGE,
    MATCH_CLASS,
    MATCH_SEQUENCE,
    MATCH_TYPES,
    NAME_OF,
    OBJECT_SETATTR,
    RESULT_NAME,
    STARRED,
    STARRED_ITEMS,
    TYPE_ALIAS,
    WRITE_ATTRIBUTE,
    WRITE_ITEM,
    WRITE_PRIVATE,
)
from codemode.sandbox.language.render import check_unicode_error, render_cost, scrub
from codemode.sandbox.language.sizes import (
    guarded_add,
    guarded_lshift,
    guarded_mod,
    guarded_mul,
    guarded_pow,
    guarded_slice,
    plain_size,
    render_size,
)
from codemode.sandbox.language.state import (
    ASYNC_SCRIPT_FUNCTIONS,
    CURRENT_RUN,
    SCRIPT_FUNCTION_WRAPPERS,
    CoroutineLike,
    RunState,
    ScriptCoroutine,
    clean_text,
    counted,
    tracked,
    wrap_result,
)
from codemode.sandbox.limits import DEFAULT_LIMITS, FRAME_DEPTH, FRAME_VALUES, Limits
from codemode.sandbox.runtime import unraisable
from codemode.sandbox.runtime.hints import data_hint
from codemode.sandbox.runtime.prelude import Prelude, parse, split
from codemode.sandbox.runtime.replies import decode_reply
from codemode.sandbox.runtime.result import RunOutcome, ScriptError
from codemode.sandbox.runtime.toolproxy import (
    PendingCall,
    ToolNamespace,
    build_tools,
    key_problem,
    never_awaited,
    resolve,
)

__all__ = ["DIALECT_GLOBALS", "PRELOADED", "ReplyCall", "RunControl", "ScriptCallTool",
           "preload", "run_script", "warm_up"]

PRELOADED: Final = ("asyncio", "json")
"""Facades :func:`preload` loads."""

install_str_format()  # str.format and format_map, through the guards

DIALECT_GLOBALS: Final = frozenset({"final_answer", "codemode_awaited", "codemode_called"})
"""Globals a run with a prelude (the dialects) has besides ``tools`` and ``asyncio``."""

ScriptCallTool = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Script-side call: returns the JSON value or raises ToolCallError / LimitExceeded."""

ReplyCall = Callable[[str, str], Awaitable[dict[str, Any]]]
"""Script-side call taking the arguments as JSON text and returning the broker's JSON
reply (``CallBroker.answer_json``). Text, because the script side serialises the
arguments anyway (to check and measure them) and a worker sends them on as they are."""

OUTPUT_DELAY: Final = 0.01
"""Seconds printed text of a streaming run may wait to be delivered with more."""

_MAX_MESSAGE: Final = 2000
_MAX_TRACEBACK_FRAMES: Final = 8


@final
class RunControl:
    """Lets another thread stop a run: the script stops at its next tick or await."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reason: str | None = None
        self._stop: Callable[[str], None] | None = None
        self._watch: Callable[[], None] | None = None
        self._hold: Callable[[float | None], None] | None = None

    def watch(self) -> None:
        """Let the run check its deadline and memory now (thread-safe, never blocks)."""
        watch = self._watch
        if watch is not None:
            watch()

    def abort(self, reason: str = "the run was cancelled") -> None:
        """Stop the run (thread-safe, idempotent, never blocks)."""
        with self._lock:
            if self._reason is not None:
                return
            self._reason = reason
            stop = self._stop
        if stop is not None:
            stop(reason)

    def hold(self, paused: float | None) -> None:
        """Stop the run's clock (``None``: the host waits for a person, an approver) or
        let it run again with its deadline ``paused`` seconds (the total so far) later
        than it started with (thread-safe, never blocks)."""
        hold = self._hold
        if hold is not None:
            hold(paused)

    def _attach(self, stop: Callable[[str], None], watch: Callable[[], None],
                hold: Callable[[float | None], None] | None = None) -> None:
        with self._lock:
            self._stop = stop
            self._watch = watch
            self._hold = hold
            reason = self._reason
        if reason is not None:
            stop(reason)


@final
class _OutputPump:
    """Coalesces a streaming run's printed pieces for ``on_output``: one delivery per turn
    of the script's loop, or once text waited ``OUTPUT_DELAY`` while the script computes
    without awaiting, and everything before each tool call and at the run's end (so
    output and calls keep their order). Printing 2,000 lines hops to the host a few
    times, not 4,000."""

    def __init__(self, deliver: Callable[[str], None]) -> None:
        self._deliver = deliver
        self._parts: list[str] = []
        self._since = 0.0
        self._scheduled = False

    def write(self, text: str) -> None:
        now = time.monotonic()
        if not self._parts:
            self._since = now
        self._parts.append(text)
        if now - self._since >= OUTPUT_DELAY:
            self.flush()
        elif not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._turn)

    def _turn(self) -> None:
        self._scheduled = False
        self.flush()

    def flush(self) -> None:
        if self._parts:
            text = "".join(self._parts)
            self._parts.clear()
            self._deliver(text)


def preload() -> None:
    """Load the facades nearly every run loads (``asyncio``, in every script's namespace,
    and ``json``): the light warm-up of a script thread that starts ahead of its first run
    (:func:`warm_up` loads every facade, ~60 ms: a worker's boot, not a host's thread)."""
    for name in PRELOADED:
        facade(name)


def warm_up() -> None:
    """Import every facade, every codec scripts may name, the modules CPython's C code
    imports for scripts (``C_INTERNAL``) and compile a trivial script, so
    the first real run is fast (and a confined worker, which cannot import, has them:
    ``str.encode`` finds UTF-16 without the codec registry, but its incremental encoder
    for a long text looks the codec up)."""
    for name in FACADE_NAMES:
        facade(name)
    for codec in CODECS:
        codecs.lookup(codec)
    for name in C_INTERNAL:
        if importlib.util.find_spec(name) is not None:  # _pylong: 3.12+
            importlib.import_module(name)
    compile_script("x = [i for i in range(1)]\nx")


def _unpack_sequence(it: Any, spec: Any, getiter: Any) -> Any:
    return it


def _iter_unpack_sequence(it: Any, spec: Any, getiter: Any) -> Any:
    return getiter(it)


def _stack_depth() -> int:
    frame = sys._getframe(1)
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back  # type: ignore[assignment]
    return depth


def _tracker(state: RunState, deep: Callable[[], None]) -> Callable[..., Any]:
    """``_track_``: decorator on script generator/async functions (see ``wrap_result``).

    Suspendable functions cannot share the plain functions' depth counter (their
    frames interleave), so the wrapper checks the real stack depth instead.
    """
    max_frames = _stack_depth() + 2 * state.limits.recursion + 16
    getframe = sys._getframe

    def track_function(func: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                getframe(max_frames)
            except ValueError:
                pass
            else:
                deep()
            obj = func(*args, **kwargs)
            try:
                return wrap_result(state, obj)
            except BaseException:
                if inspect.iscoroutine(obj):
                    obj.close()
                raise
        call.__name__ = func.__name__
        call.__qualname__ = func.__qualname__
        call.__module__ = func.__module__  # ``type(f)`` is ``function``, as the script's
        SCRIPT_FUNCTION_WRAPPERS.add(call.__code__)
        if inspect.iscoroutinefunction(func):
            ASYNC_SCRIPT_FUNCTIONS.add(call)
        return call
    return track_function


@functools.cache
def _shared_globals() -> dict[str, Any]:
    """The globals every run's namespace starts from (guards, builtins, the ``asyncio``
    facade), built once; the run's own (``None`` here) are set by :func:`_namespace`. A
    dict copy, instead of building some 60 entries per run."""
    return {
        "__builtins__": SAFE_BUILTINS,
        "__name__": SCRIPT_MODULE,
        "__metaclass__": build_class,
        "_getattr_": guarded_getattr,
        "_getitem_": operator.getitem,
        "_getslice_": guarded_slice,
        "_write_": guarded_write,
        WRITE_PRIVATE: guarded_write_private,
        WRITE_ATTRIBUTE: guarded_write_attribute,
        WRITE_ITEM: guarded_write_item,
        "_apply_": guarded_apply,
        "_inplacevar_": guarded_inplace,
        "_getiter_": None,
        "_unpack_sequence_": _unpack_sequence,
        "_iter_unpack_sequence_": _iter_unpack_sequence,
        "_compress_": compress,
        LOOP_RANGE: range,
        STARRED: starred,
        STARRED_ITEMS: starred_items,
        OBJECT_SETATTR: object_setattr,
        TYPE_ALIAS: type_alias,
        GENERIC_BASE: GENERIC,
        MATCH_CLASS: match_class,
        MATCH_SEQUENCE: match_sequence,
        **{hidden: getattr(builtins, name) for name, hidden in MATCH_TYPES.items()},
        NAME_OF: _name_of,
        DATA_SPECIAL: data_special,
        DATA_KEY: data_key_strict,
        "_T_": None,
        "_next_": next,
        "_mul_": guarded_mul,
        "_pow_": guarded_pow,
        "_lshift_": guarded_lshift,
        "_add_": guarded_add,
        "_mod_": guarded_mod,
        "_augitem_": augmented_item,
        "_augattr_": augmented_attr,
        "_track_": None,
        "_format_": render_field,
        **COMPARE_GUARDS,
        **EXPANSION_GUARDS,
        "_depth_": 0,
        "_maxdepth_": None,
        "_deep_": None,
        "tools": None,
        "asyncio": facade("asyncio"),  # preloaded: scripts gather without importing it
    }


def _namespace(state: RunState, tools: Any) -> dict[str, Any]:
    meter = state.meter
    recursion = state.limits.recursion

    def deep() -> None:
        meter.trip(LimitExceeded("recursion", recursion,
                                 f"more than {recursion} nested function calls"))

    namespace = _shared_globals().copy()
    namespace["_getiter_"] = state.counted
    namespace["_T_"] = meter.ticker
    namespace["_track_"] = _tracker(state, deep)
    namespace["_maxdepth_"] = recursion
    namespace["_deep_"] = deep
    namespace["tools"] = tools
    meter.namespace = namespace
    return namespace


_Frames = list[tuple[int, int | None, str]]
"""(line, column, function name) of script frames, outermost first."""


def _script_frames(exc: BaseException, lines: tuple[str, ...]) -> tuple[_Frames, int]:
    """(the innermost ``_MAX_TRACEBACK_FRAMES`` script frames of ``exc``'s traceback, how
    many script frames it has before them). Only those are read: an exception raised again
    and again in a loop keeps every raise in its traceback, and extracting a million
    entries took an in-process host ~6 s of CPU and ~170 MB past a 64 MiB run, after the
    script had ended."""
    kept: deque[types.TracebackType] = deque(maxlen=_MAX_TRACEBACK_FRAMES)
    total = 0
    trace = exc.__traceback__
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == SCRIPT_FILENAME:
            kept.append(trace)
            total += 1
        trace = trace.tb_next
    frames = []
    for entry in kept:
        frame = tb.extract_tb(entry, limit=1)[0]
        if frame.lineno is not None:
            col = frame.colno + 1 if frame.colno is not None else None
            frames.append((frame.lineno, col, frame.name))
    return frames, total - len(kept)


def _format_traceback(frames: _Frames, more: int, lines: tuple[str, ...], summary: str) -> str:
    out = ["Traceback (script frames, most recent call last):"]
    if more:
        out.append(f"  ... {more} more frames")
    for line, _, name in frames:
        where = "<script>" if name == "<module>" else name
        out.append(f"  line {line}, in {where}")
        if 0 < line <= len(lines):
            out.append(f"    {lines[line - 1].strip()}")
    out.append(summary)
    return "\n".join(out)


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE else text[:_MAX_MESSAGE] + "…"


def _clipped_text(exc: BaseException) -> str:
    """The head of an oversized message that is one plain string (a tool's long error),
    read without rendering the rest; anything else is not rendered at all."""
    args = exc.args
    if len(args) == 1 and type(args[0]) is str and type(exc).__str__ is BaseException.__str__:
        return _clip(args[0][: _MAX_MESSAGE + 1])
    return "<error message too large>"


_RAISE: Final = frozenset({dis.opmap["RAISE_VARARGS"]})
_RESERVED_TYPES: Final = frozenset({
    *codemode.errors.__all__,
    *(name for name, value in vars(builtins).items()
      if isinstance(value, type) and issubclass(value, BaseException)),
})
"""Error types the host reports (codemode's errors, ``PreflightError`` included, and
Python's): a script's own class by such a name is shown as ``script.<name>``, so
``error.type`` cannot be forged by naming a class."""

_HOST_RAISED_TYPES: Final = (ToolCallError, TimeoutError)
"""Errors the host raises into a script (a failed call, a ``wait_for`` timeout): one the
script made itself (``raise ToolCallError('x', 'denied')``) is shown as ``script.<name>``."""


def _raised_by_script(exc: BaseException) -> bool:
    """True when a ``raise`` statement in the script raised ``exc`` (not the interpreter)."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    lasti = tb.tb_lasti
    return (code.co_filename == SCRIPT_FILENAME and 0 <= lasti < len(code.co_code)
            and code.co_code[lasti] in _RAISE)


def _error_type(exc: BaseException, host_errors: dict[int, BaseException]) -> str:
    """``ScriptError.type`` of ``exc``: a reserved name only for the real thing."""
    cls = type(exc)
    name = cls.__name__
    if isinstance(cls, ScriptMeta):
        return f"script.{name}" if name in _RESERVED_TYPES else name
    if cls in _HOST_RAISED_TYPES and host_errors.get(id(exc)) is not exc:
        return f"script.{name}"
    return name


def _error_from(exc: BaseException, lines: tuple[str, ...], limits: Limits,
                host_errors: dict[int, BaseException] | None = None) -> ScriptError:
    explicit = _raised_by_script(exc)
    if isinstance(exc, RecursionError) and not explicit:
        return _limit_error(LimitExceeded("recursion", limits.recursion,
                                          "maximum recursion depth exceeded"), exc, lines)
    if isinstance(exc, MemoryError) and not explicit:
        return _limit_error(LimitExceeded("memory", limits.memory, "out of memory"), exc, lines)
    frames, more = _script_frames(exc, lines)
    name = _error_type(exc, {} if host_errors is None else host_errors)
    try:
        too_big = render_size(exc.args, _MAX_MESSAGE) > _MAX_MESSAGE
        check_unicode_error(exc)
        message = _clip(str(exc)) if not too_big else _clipped_text(exc)
        if not too_big and name == "ToolCallError" and type(exc) is ToolCallError:
            message = _clip(exc.described())  # the run's error names the failed tool
    except (Exception, Tripped, ScriptStop):  # a script's __str__/__repr__ runs here
        message = "<unprintable error>"
    if not explicit:
        # a hint is extra: whatever it meets in the script's data, never the run's failure
        with contextlib.suppress(Exception, Tripped, ScriptStop):
            message += data_hint(exc, lines)
    line, column = (frames[-1][0], frames[-1][1]) if frames else (None, None)
    message = clean_text(scrub(message))
    notes = "".join(f"\n{note}" for note in notes_of(exc, _MAX_MESSAGE) or ())
    return ScriptError(type=clean_text(name), message=message, line=line, column=column,
                       traceback=clean_text(_format_traceback(frames, more, lines,
                                                              f"{name}: {message}{notes}")))


def _limit_error(error: LimitExceeded, exc: BaseException | None, lines: tuple[str, ...],
                 where: tuple[int | None, int | None] = (None, None)) -> ScriptError:
    frames, more = ([], 0) if exc is None else _script_frames(exc, lines)
    line, column = where
    if line is None and frames:
        line, column = frames[-1][0], frames[-1][1]
    return ScriptError.for_limit(error, line=line, column=column,
                                 traceback=_format_traceback(frames, more, lines,
                                                             f"LimitExceeded: {error}"))


def _not_json(value: Any) -> Any:
    if isinstance(value, PendingCall | ScriptCoroutine):
        raise TypeError("the result is an un-awaited tool call: add `await` before it")
    if isinstance(value, set | frozenset):
        try:
            return sorted(value)
        except TypeError:
            return list(value)
    raise TypeError(f"the result must be JSON data; got a {type(value).__name__} object")


def _result_json(value: Any, limits: Limits) -> tuple[Any, int]:
    """``value`` as a fresh JSON copy and its size in bytes of JSON (what
    ``RunOutcome.to_result`` would measure: the same encoder's text)."""
    # Estimates first, so neither many items nor one big text referenced many times
    # (``[s] * 1000``) is serialised before it is refused; the estimate is only ever a
    # little over the JSON size, hence the slack, and the exact size decides below. A small
    # plain value (most results) is surely under both estimates: not walked three times.
    slack = 2 * limits.result + 1024
    plain = plain_size(value)
    if plain is None or plain[0] > limits.result or plain[1] > slack:
        if (render_cost(value, limits.result) > limits.result
                or render_size(value, slack) > slack):
            raise LimitExceeded("result", limits.result, "the result is too large")
        problem = key_problem(value, strict=False)
        if problem is not None:
            raise ValueError(f"the result cannot be JSON: {problem}")
    text = clean_text(json.dumps(value, default=_not_json, allow_nan=False, ensure_ascii=False))
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.result:
        raise LimitExceeded("result", limits.result, f"the result is {size} bytes of JSON")
    out = json.loads(text)
    if len(text) > RESULT_VALUES or text.count("[") + text.count("{") > RESULT_DEPTH:
        problem = _past_a_frame(out)
        if problem is not None:
            raise LimitExceeded("result", limits.result, f"the result {problem}")
    return out, size


RESULT_DEPTH: Final = FRAME_DEPTH - 2
"""Deepest result: a worker's ``done`` frame holds it two levels down (``["done",
{"value": ...}]``), and a deeper frame is a protocol violation. Both executors refuse a
deeper result alike (a result nested 99 deep ended a pool run as a violation, and the
in-process run returned it)."""
RESULT_VALUES: Final = FRAME_VALUES - 16
"""Most JSON values in a result: the ``done`` frame's own (about ten) fit beside them."""


def _past_a_frame(value: Any) -> str | None:
    """What of ``value`` a ``done`` frame could not hold (its nesting, its number of
    values, counted as the frame decoder counts them), or None."""
    values = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is list or kind is dict:
            if depth > RESULT_DEPTH:
                return f"nests deeper than {RESULT_DEPTH} levels"
            values += len(item)
            if values > RESULT_VALUES:
                return f"holds more than {RESULT_VALUES} JSON values"
            children = item if kind is list else item.values()
            stack.extend((child, depth + 1) for child in children
                         if type(child) is list or type(child) is dict)
    return None


async def _finish(state: RunState, namespace: dict[str, Any]) -> None:
    """End the run: close what the script left open, then drop its namespace.

    Runs in the run's context, so finalizers (a generator's ``finally``) stop at
    their first tick instead of running later, outside any run.
    """
    result = namespace.get(RESULT_NAME)
    await state.close_owned()
    state.meter.end()
    await state.close_tracked()
    namespace.clear()
    namespace[RESULT_NAME] = result


def _name_of(obj: Any, of_class: bool = False, attr: str = "__name__") -> str:
    """``x.__name__`` (``attr``: or ``__qualname__``, ``__module__``) for a class or a
    function (``type(e).__name__``), or the text a script object holds under that name
    (``functools.update_wrapper(self, fn)`` in a class-based decorator); nothing else.
    ``of_class``: ``x.__class__.__name__``, the name of ``x``'s class. A module path of
    the host reads as ``builtins``, the script's own as ``__main__``."""
    if of_class:
        obj = type(obj)
    elif isinstance(type(obj), ScriptMeta):
        own = getattr(obj, "__dict__", None)
        held = own.get(attr) if type(own) is dict else None
        if type(held) is str:
            return held
    if attr in _NAMES and isinstance(
            obj, type | types.FunctionType | types.BuiltinFunctionType):
        name = getattr(obj, attr, None)
        module = getattr(obj, "__module__", None)
        if type(name) is str and type(module) is str:
            mine = module in (SCRIPT_MODULE, MAIN_MODULE)
            if attr != "__module__":
                return name if mine else scrub(name)  # a host's ``bind.<locals>.split``
            return MAIN_MODULE if mine else (
                "builtins" if module.startswith("codemode.") else module)
    raise AttributeError(f"{type(obj).__name__!r} object has no readable {attr} in the "
                         "sandbox (classes and functions have one)")


_NAMES: Final = frozenset({"__name__", "__qualname__", "__module__"})


@final
class _FinalAnswer(ScriptStop):
    """Raised by ``final_answer(x)`` (and a top-level ``return``): the run ends with ``x``.

    A BaseException, so a script's ``except Exception`` does not swallow it."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


def _final_answer(answer: Any = None) -> NoReturn:
    """``final_answer(x)``: end the script now with ``x`` as its result."""
    raise _FinalAnswer(answer)


_final_answer.__name__ = _final_answer.__qualname__ = "final_answer"


async def _handed_back(value: Any) -> Any:
    return value


_handed_back.__name__ = _handed_back.__qualname__ = "codemode_awaited"
_HANDED_BACK: Final = tracked(_handed_back)


def _awaited(func: Any) -> Callable[..., Any]:
    """``(await codemode_awaited(x.get)(...))``: the dialects' form of a call of a method
    the script made async that is named like a library method (``get``, ``update``): made
    as written, then awaited when ``x.get`` is an async function of the script's (its
    method: ``asyncio.iscoroutinefunction``), else its value handed back as it is (a
    dict's ``get``, even when that value is a coroutine the script keeps to gather). Calls,
    so it stands wherever the call did (a walrus among its arguments, a generator
    expression made a list) and reads no name the script binds. The facade is imported
    here: at the runner's import it loaded ahead of the script thread's preload (~20 ms of
    every host's import)."""
    from codemode.sandbox.language.facades.asyncio_facade import iscoroutinefunction

    awaited = iscoroutinefunction(func)

    def codemode_awaited(*args: Any, **kwargs: Any) -> Any:
        value = func(*args, **kwargs)
        if awaited and isinstance(value, CoroutineLike):
            return value
        return _HANDED_BACK(value)
    return codemode_awaited


_awaited.__name__ = _awaited.__qualname__ = "codemode_awaited"
_AWAITED: Final = _awaited


def _called(func: Any) -> Callable[..., Any]:
    """``codemode_called(x.get)(...)``: the dialects' form of such a call where no
    ``await`` can stand (a function kept plain because Python calls it for the script: a
    dict's value, a ``key=``): made as written when ``x.get`` is a dict's, refused when it
    is the script's method made async (its coroutine would stand in for the value)."""
    from codemode.sandbox.language.facades.asyncio_facade import iscoroutinefunction

    if not iscoroutinefunction(func):
        return func  # type: ignore[no-any-return]
    name = getattr(func, "__name__", "method")

    def codemode_called(*args: Any, **kwargs: Any) -> Any:
        raise TypeError(f".{name}() here is the script's own method, which calls tools, in "
                        "a function Python calls for you (a value in a dict or list, a "
                        "`key=`), where its call cannot be awaited: call the method where "
                        f"its result is used, e.g. `[await obj.{name}(x) for x in xs]`, and "
                        "pass the results on")
    return codemode_called


_called.__name__ = _called.__qualname__ = "codemode_called"


def _bind_prelude(namespace: dict[str, Any], prelude: Prelude, tools: ToolNamespace) -> None:
    """The dialects' globals: host inputs, ``final_answer``, modules, bare tool names."""
    if prelude.dialects:
        namespace["final_answer"] = _final_answer
        namespace["codemode_awaited"] = _AWAITED
        namespace["codemode_called"] = _called
        namespace[DATA_KEY] = data_key
    for module in prelude.modules:
        if module in FACADE_NAMES:
            namespace[module] = facade(module)
    # one operation a name, its clock checked: a forged line of 300,000 names bound them
    # uncharged, seconds of work ('the run did not stop in time' at a 3 s limit)
    for name, path in counted(prelude.names.items()):
        try:
            namespace[name] = resolve(tools, path)
        except AttributeError:
            continue
    for name, value in counted(prelude.inputs.items()):
        namespace[name] = value


_PRELUDES: dict[str, Prelude] = {}
_PRELUDES_LOCK: Final = threading.Lock()
_PRELUDE_SLOTS: Final = 32
_PRELUDE_TEXT: Final = 16 * 1024
"""Prelude lines remembered (at most this many, each at most this long: a worker keeps
them across runs)."""


def _prelude(head: str) -> Prelude | None:
    """The run's prelude from its line (``prelude.parse`` with the run's sized
    ``json.loads``). A line that ``loads`` reads uncharged (``UNCHARGED_TEXT``) and that
    holds no inputs is remembered by its text: its parse depends on the text alone, and
    the run only reads the frozen value (inputs would be bound as the script's own
    mutable globals: parsed afresh every run). CodeMode sends the same line with every
    script of one SDK. (The facade is imported here, not with the runner: see
    :func:`_awaited`.)"""
    hit = _PRELUDES.get(head)
    if hit is not None:
        return hit
    from codemode.sandbox.language.facades.json_facade import UNCHARGED_TEXT

    # a line loads parses uncharged is walked uncharged too (its parse is remembered)
    prelude = parse(head, loads=facade("json").sandbox_getattr("loads"),
                    each=counted if len(head) > UNCHARGED_TEXT else iter)
    if prelude is not None and not prelude.inputs and len(head) <= min(_PRELUDE_TEXT,
                                                                        UNCHARGED_TEXT):
        prelude = dataclasses.replace(prelude, names=types.MappingProxyType(dict(prelude.names)),
                                      orders=types.MappingProxyType(dict(prelude.orders)),
                                      texts=types.MappingProxyType(dict(prelude.texts)))
        with _PRELUDES_LOCK:
            if len(_PRELUDES) >= _PRELUDE_SLOTS:
                _PRELUDES.pop(next(iter(_PRELUDES)), None)
            _PRELUDES[head] = prelude
    return prelude


@final
class SystemExitError(Exception):
    """The run's error for ``exit(status)``/``sys.exit(status)`` with a failing status."""


SystemExitError.__name__ = SystemExitError.__qualname__ = "SystemExit"


def _end(done: _FinalAnswer | ScriptExit, namespace: dict[str, Any]) -> None:
    """The script stopped early: its ``final_answer`` value, or its exit status."""
    if isinstance(done, _FinalAnswer):
        namespace[RESULT_NAME] = done.value
    elif done.failed:
        raise SystemExitError(done.describe()).with_traceback(done.__traceback__) from None


async def _execute(compiled: CompiledScript, namespace: dict[str, Any]) -> None:
    try:
        outcome = types.FunctionType(compiled.code, namespace)()
        if compiled.is_async:
            await outcome
    except (_FinalAnswer, ScriptExit) as done:
        _end(done, namespace)
    except BaseExceptionGroup as group:  # ``final_answer()`` in a gathered coroutine
        found = _stop_in(group)
        if found is None:
            raise
        _end(found, namespace)


def _stop_in(group: BaseExceptionGroup[Any]) -> _FinalAnswer | ScriptExit | None:
    """The first ``final_answer``/``exit`` stop in ``group`` (depth first, as ``subgroup``
    orders them), never looking inside an ``ExceptionGroup``: it holds Exceptions only, and
    a script's may hold one big group a thousand times, whose ``subgroup`` walk of 100
    million leaves held the GIL ~3 s in C, uncharged."""
    for error in group.exceptions:
        if isinstance(error, _FinalAnswer | ScriptExit):
            return error
        if isinstance(error, BaseExceptionGroup) and not isinstance(error, ExceptionGroup):
            found = _stop_in(error)
            if found is not None:
                return found
    return None


async def run_script(source: str, *, call_tool: ScriptCallTool | None = None,
                     call: ReplyCall | None = None, tool_paths: Collection[str] = (),
                     limits: Limits | None = None,
                     control: RunControl | None = None,
                     on_output: Callable[[str], None] | None = None) -> RunOutcome:
    """Compile and run ``source``; see the module docstring for the contract.

    Give exactly one of ``call_tool`` (returns the value or raises) or ``call``
    (returns the broker's JSON reply, decoded here with ``decode_reply``).
    ``on_output`` receives printed text as it is kept (at most ``limits.output``
    bytes in all), on the script's thread; it must not block or raise.
    """
    if (call_tool is None) == (call is None):
        raise TypeError("run_script() needs exactly one of call_tool= or call=")
    pump = _OutputPump(on_output) if on_output is not None else None
    if call is not None:
        reply_call = call

        async def send(name: str, text: str) -> Any:
            if pump is not None:
                pump.flush()
            return decode_reply(await reply_call(name, text))
    else:
        value_call = call_tool
        assert value_call is not None

        async def send(name: str, text: str) -> Any:
            if pump is not None:
                pump.flush()
            return await value_call(name, json.loads(text))

    limits = DEFAULT_LIMITS if limits is None else limits
    unraisable.install()
    script_warnings.silence()  # a compiled script may come from a cache: no parse put it first
    head, source = split(source)
    try:
        compiled = compile_script(source)
    except ScriptCompileError as exc:
        return RunOutcome(error=ScriptError(
            type="SyntaxError", message=exc.message, line=exc.line, column=exc.column,
            traceback=f"SyntaxError: {exc.message}"))
    state = RunState(limits)
    state.output.listener = pump.write if pump is not None else None
    meter = state.meter
    token = CURRENT_RUN.set(state)
    try:
        try:
            # sized like the script's own json.loads: the line may be the script's
            prelude = None if head is None else _prelude(head)
        except Tripped as exc:
            return RunOutcome(error=_limit_error(exc.error, None, compiled.lines),
                              operations=meter.used)
        dialects = prelude if prelude is not None and prelude.dialects else None
        tools = build_tools(tool_paths, send, meter, limits.memory,
                            dialects.orders if dialects is not None else None,
                            dialects.texts if dialects is not None else None)
        namespace = _namespace(state, tools)
        if prelude is not None:
            try:
                _bind_prelude(namespace, prelude, tools)
            except Tripped as exc:
                return RunOutcome(error=_limit_error(exc.error, None, compiled.lines),
                                  operations=meter.used)
        result: Any = None
        try:
            error = await _run(compiled, namespace, state, control)
        finally:
            if state.left_open():
                with anyio.CancelScope(shield=True):
                    await _finish(state, namespace)
            else:  # it never suspends: no cancellation can reach it, no shield (~8 µs)
                await _finish(state, namespace)
            result = namespace.pop(RESULT_NAME, None)
            if pump is not None:
                pump.flush()
        value = None
        size: int | None = None
        if error is None and meter.tripped is None:
            try:
                value, size = _result_json(result, limits)
            except LimitExceeded as exc:
                error = _limit_error(exc, None, compiled.lines, (len(compiled.lines), None))
            except (TypeError, ValueError, RecursionError) as exc:
                error = ScriptError(type=type(exc).__name__, message=_clip(str(exc)),
                                    line=len(compiled.lines) or None)
            except (GeneratorExit, Exception) as exc:
                # A size walker that reads a script object through a charged path meets
                # the ended run (GeneratorExit) or fails in its own way: the run reports
                # it instead of ending the worker (r41: a SimpleNamespace result did).
                error = ScriptError(
                    type="TypeError", line=len(compiled.lines) or None,
                    message=_clip(f"the result could not be checked as JSON data "
                                  f"({type(exc).__name__}: {exc})"))
        if error is None and meter.tripped is None:
            error = _lost_call(state, compiled.lines)
        for lost, _ in state.unawaited.values():
            if isinstance(lost, ScriptCoroutine):
                lost.close()  # never started: no script code runs
        state.unawaited.clear()
        if meter.tripped is not None:
            error = _limit_error(meter.tripped, None, compiled.lines, meter.location)
        return RunOutcome(value=value if error is None else None,
                          output=state.output.getvalue(), output_bytes=state.output.total,
                          error=error, operations=meter.used,
                          result_size=size if error is None else None)
    finally:
        CURRENT_RUN.reset(token)


def _lost_call(state: RunState, lines: tuple[str, ...]) -> ScriptError | None:
    """The run's error when a tool call was made and never awaited: its tool never ran,
    which must not pass silently (CPython with plain functions for tools makes it)."""
    lost = never_awaited(state.unawaited)
    if lost is None:
        return None
    call, line, count = lost
    where = ""
    if line is not None and 0 < line <= len(lines):
        text = lines[line - 1].strip()
        where = f" (line {line}: `{text if len(text) <= 80 else text[:77] + '...'}`)"
    more = f"; {count - 1} more call(s) were never awaited either" if count > 1 else ""
    what = "the tool was not called" if call.startswith("tools.") else "its code never ran"
    message = (f"{call}{where} was never awaited, so {what}{more}. A tool call (or an "
               "`async def`'s) runs when it is awaited: write `await` before the call "
               "(`value = await f(...)`), or run several with `await asyncio.gather(...)`")
    return ScriptError(type="RuntimeError", message=message, line=line,
                       traceback=f"RuntimeError: {message}")


def _cancelling() -> bool:
    """True when something outside the run is cancelling the task running it (or when
    that cannot be told: not on asyncio)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return True
    return task is None or task.cancelling() > 0


async def _run(compiled: CompiledScript, namespace: dict[str, Any], state: RunState,
               control: RunControl | None) -> ScriptError | None:
    meter = state.meter
    limits = state.limits
    error: ScriptError | None = None
    timed_out_at: tuple[int | None, int | None] = (None, None)
    ends = anyio.current_time() + limits.timeout
    with anyio.CancelScope(deadline=ends) as scope:
        state.on_stop = scope.cancel
        if control is not None:
            loop = asyncio.get_running_loop()

            def stop(reason: str) -> None:
                meter.abort(reason)
                with contextlib.suppress(RuntimeError):  # the script's loop already closed
                    loop.call_soon_threadsafe(scope.cancel)

            def shift(paused: float | None) -> None:
                scope.deadline = math.inf if paused is None else ends + paused

            def hold(paused: float | None) -> None:
                meter.hold(paused)
                with contextlib.suppress(RuntimeError):  # the script's loop already closed
                    loop.call_soon_threadsafe(shift, paused)

            control._attach(stop, meter.watch, hold)
        try:
            if meter.abort_reason is not None:  # aborted before it started: run none of it
                meter.tripped = LimitExceeded("timeout", limits.timeout, meter.abort_reason)
                return None
            await _execute(compiled, namespace)
            if meter.tripped is None:
                meter.poll_memory(force=True)
            if meter.tripped is None and time.monotonic() > meter.deadline:
                # One long C call overran the deadline without reaching a tick.
                meter.tripped = LimitExceeded("timeout", limits.timeout, "the run took too long")
            if scope.cancel_called and meter.tripped is None and state.stopped is None:
                # The script swallowed the cancellation (bare except) and finished.
                meter.tripped = LimitExceeded("timeout", limits.timeout,
                                              meter.abort_reason or "the run took too long")
        except Tripped as exc:
            if meter.location == (None, None):
                frames, _ = _script_frames(exc, compiled.lines)
                if frames:
                    meter.location = (frames[-1][0], frames[-1][1])
        except anyio.get_cancelled_exc_class() as exc:
            if not (scope.cancel_called or anyio.current_effective_deadline() == -math.inf) and (
                    state.cancelled_by_script()):
                # An asyncio.timeout() or task group the script left open (suspended in a
                # generator, on an exit stack never closed) cancelled the run's own task:
                # as under asyncio.run, the script ends with it; passed on, it failed the
                # host's run or killed the worker.
                left = RuntimeError("the run's task was cancelled by an asyncio.timeout() "
                                    "or TaskGroup block left open (suspended in a generator "
                                    "or on an exit stack never closed)")
                return _error_from(left.with_traceback(exc.__traceback__), compiled.lines,
                                   limits, state.host_errors)
            if not (scope.cancel_called or _cancelling()
                    or anyio.current_effective_deadline() == -math.inf):
                # Nobody is cancelling the run: the script raised a cancellation it caught
                # earlier (a bare ``except:`` kept it in a suspended async generator).
                # Passed on, it would cancel the host's own task or kill the worker.
                kept = RuntimeError("a cancellation was raised again after the code it "
                                    "cancelled had ended (a bare except: kept it)")
                return _error_from(kept.with_traceback(exc.__traceback__), compiled.lines,
                                   limits, state.host_errors)
            frames, _ = _script_frames(exc, compiled.lines)
            if frames:
                timed_out_at = (frames[-1][0], frames[-1][1])
            raise
        except Exception as exc:
            error = _error_from(exc, compiled.lines, limits, state.host_errors)
        except BaseExceptionGroup as group:
            first = group.exceptions[0] if group.exceptions else group
            error = _error_from(first, compiled.lines, limits, state.host_errors)
    state.on_stop = None
    if state.stopped is not None and meter.tripped is None:
        return _stopped(state.stopped.with_traceback(state.stopped_at), compiled, namespace,
                        state)
    if scope.cancelled_caught and meter.tripped is None:
        detail = meter.abort_reason or "the run took too long"
        meter.tripped = LimitExceeded("timeout", limits.timeout, detail)
        meter.location = timed_out_at
    return error


def _stopped(stop: ScriptStop, compiled: CompiledScript, namespace: dict[str, Any],
             state: RunState) -> ScriptError | None:
    """The run's end when one of the script's tasks called ``exit()``/``final_answer()``:
    what the same call in the script's own frames gives, whatever the main code did after
    it was stopped (CPython leaves its event loop on a task's ``SystemExit``)."""
    assert isinstance(stop, _FinalAnswer | ScriptExit)
    try:
        _end(stop, namespace)
    except SystemExitError as exc:
        return _error_from(exc, compiled.lines, state.limits, state.host_errors)
    return None
