"""The ``tools`` object a script calls: namespaces, keyword-only functions, awaitables.

``tools.ns.name(**kwargs)`` returns a :class:`PendingCall`; awaiting it sends
the call through the run's ``call_tool``. Using a PendingCall any other way
(indexing, iterating, attributes, ``str()``, truth value, as the result) raises
a TypeError that says to add ``await``. Nothing here exposes the callback.
"""

from __future__ import annotations

import difflib
import json
import keyword
import re
from collections.abc import Awaitable, Callable, Collection, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from codemode.errors import LimitExceeded, ToolCallError
from codemode.jsontext import JsonSteps, TextTooLong, compact_encoder, is_small, small_flat
from codemode.sandbox.language.guards import SelfGuarded, refuse
from codemode.sandbox.language.render import FLAT_SMALL, charge_render
from codemode.sandbox.language.sizes import render_size
from codemode.sandbox.language.state import (
    CURRENT_RUN,
    CoroutineLike,
    Place,
    ScriptCoroutine,
    clean_text,
    coroutine_name,
    hold_unawaited,
    host_raised,
    line_at,
)
from codemode.sandbox.runtime.memo import PerPaths

if TYPE_CHECKING:
    from codemode.sandbox.language.meter import Meter

__all__ = ["KEYWORDS_ONLY", "PendingCall", "ToolFunction", "ToolNamespace", "build_tools",
           "key_problem", "never_awaited", "resolve"]

_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
"""Argument values whose JSON is about their own size (only containers can repeat a text)."""

ARGUMENT_SHARE: Final = 16
"""One call's JSON arguments may take at most ``Limits.memory // ARGUMENT_SHARE`` bytes."""

_ENCODE: Final = compact_encoder(ascii=False, allow_nan=False, separators=(", ", ": "))
"""``json.dumps(..., allow_nan=False, ensure_ascii=False)`` without a new C encoder per call
(``JSONEncoder.encode`` builds one each time: 12k of the script thread's ~128k instructions
a call, callgrind)."""

def _in_steps(kwargs: dict[str, Any], cap: int) -> str:
    """``_ENCODE(kwargs)`` in short steps that stop past ``cap``: in-process, one C call
    spelling 3,000 integers of 4,000 digits held the GIL (and the host loop) 0.6 s."""
    steps = JsonSteps(ascii=False, compact=False, cap=cap)
    steps.value(kwargs)
    return steps.text()


TextCall = Callable[[str, str], Awaitable[Any]]
"""Sends one call: (tool path, the arguments as JSON text) -> the value, or raises."""


@final
class _Caller:
    """Sends one call for the run; converts every failure into what the script may see."""

    __slots__ = ("_call_tool", "_meter", "_meter_limits_memory")

    def __init__(self, call_tool: TextCall, meter: Meter, memory: int) -> None:
        self._call_tool = call_tool
        self._meter = meter
        self._meter_limits_memory = memory

    async def call(self, path: str, kwargs: dict[str, Any]) -> Any:
        self._meter.check()
        small = small_flat(kwargs)  # None: not all exact scalars (or keys not all text)
        flat = small is not None or all(type(value) in _SCALARS for value in kwargs.values())
        if not flat or len(kwargs) > FLAT_SMALL or type(kwargs) is not dict:  # else free
            charge_render(kwargs)  # (its own first check, not made twice)
        cap = self._meter_limits_memory // ARGUMENT_SHARE
        slack = 2 * cap + 1024  # the estimate is a little over the JSON size
        if not flat:
            if render_size(kwargs, slack) > slack:  # before ``x=[s] * 1000`` is text
                self._too_big(path, f"more than {cap}", cap)
            problem = key_problem(kwargs, strict=True)
            if problem is not None:
                raise TypeError(f"tools.{path}(): {problem}")
        try:
            if small is None:
                small = is_small(kwargs)
            text = _ENCODE(kwargs) if small else _in_steps(kwargs, cap)
        except TextTooLong:
            self._too_big(path, f"more than {cap}", cap)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"tools.{path}(): arguments must be JSON data ({exc})") from None
        size = len(text)
        if cap < 4 * size and not text.isascii():  # up to 4 bytes a character
            size = len(text.encode("utf-8", "surrogatepass"))
        if size > cap:
            self._too_big(path, str(size), cap)
        text = clean_text(text)
        failure: tuple[str, str, str | None] | None = None
        limit: LimitExceeded | None = None
        try:
            value = await self._call_tool(path, text)
        except ToolCallError as exc:
            failure = (str(exc.tool), str(exc.message), None if exc.path is None else str(exc.path))
        except LimitExceeded as exc:
            limit = LimitExceeded(exc.limit, exc.value, exc.detail)
        except Exception:
            failure = (path, "internal error", None)
        if limit is not None:
            self._meter.trip(limit)
        if failure is not None:
            raise host_raised(ToolCallError(*failure))
        self._meter.check()
        return value

    def _too_big(self, path: str, size: str, cap: int) -> NoReturn:
        self._meter.trip(LimitExceeded("memory", self._meter_limits_memory,
                                       f"tools.{path}() arguments are {size} bytes of JSON "
                                       f"(at most {cap} per call)"))


_ARRAYS: Final = (list, tuple)


def _json_key(key: Any) -> str | None:
    """The JSON text ``json.dumps`` writes for a dict key, or None if it refuses the key."""
    if type(key) is str:
        return key
    if key is True or key is False or key is None:
        return json.dumps(key)
    if type(key) is int or type(key) is float:
        return json.dumps(key) if type(key) is float else int.__repr__(key)
    return None


def _key_text(key: Any) -> str:
    """A key for an error message: short keys as repr, others by type (a key can be huge)."""
    if isinstance(key, str):
        return repr(key) if len(key) <= 60 else f"<str of {len(key)} characters>"
    if isinstance(key, int | float) and not isinstance(key, bool):
        return repr(key) if abs(key) < 10**30 else f"<{type(key).__name__}>"
    return repr(key) if key is None or isinstance(key, bool) else f"<{type(key).__name__}>"


def key_problem(value: Any, *, strict: bool) -> str | None:
    """What JSON would lose in ``value``'s dict keys, or None. ``strict``: every key must be
    a string (tool arguments); otherwise only keys that become the same JSON text are a
    problem (``{1: 'a', '1': 'b'}``: JSON keeps one of them)."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if id(node) in seen:
                continue
            seen.add(id(node))
            if not _STR_KEYS.issuperset(map(type, node)):
                texts: dict[str, Any] = {}
                for key in node:
                    text = _json_key(key)
                    if text is None:
                        continue  # json.dumps names it itself
                    if strict and type(key) is not str:
                        return (f"argument keys must be strings, got the key {_key_text(key)} "
                                f"({type(key).__name__}); JSON object keys are text: write "
                                f"str(key), e.g. {{str(k): v for k, v in d.items()}}")
                    if text in texts:
                        return (f"the keys {_key_text(texts[text])} and {_key_text(key)} "
                                f"both become the JSON key {text!r}, and JSON keeps only one; "
                                "use distinct string keys")
                    texts[text] = key
            stack.extend(item for item in node.values() if type(item) not in _SCALARS)
        elif isinstance(node, _ARRAYS):
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.extend(item for item in node if type(item) not in _SCALARS)
    return None


_STR_KEYS: Final = frozenset({str})


def _not_awaited(path: str) -> TypeError:
    return TypeError(f"tools.{path}(...) was not awaited: add `await` before the call, "
                     f"e.g. `result = await tools.{path}(...)`")


@final
class PendingCall(SelfGuarded, CoroutineLike):
    """An un-awaited tool call; awaiting it (once) performs the call."""

    __slots__ = ("_args", "_awaited", "_caller", "_open", "_path")

    def __init__(self, caller: _Caller, path: str, args: dict[str, Any]) -> None:
        self._caller = caller
        self._path = path
        self._args = args
        self._awaited = False
        run = CURRENT_RUN.get(None)
        self._open = None if run is None else run.unawaited  # the run's, for __await__
        if run is not None:
            hold_unawaited(run, self)

    def __await__(self) -> Generator[Any, None, Any]:
        if self._awaited:
            raise RuntimeError(f"tools.{self._path}(...) was already awaited; call it again "
                               "to make a new call")
        self._awaited = True
        if self._open is not None:
            self._open.pop(id(self), None)
        return self._caller.call(self._path, self._args).__await__()

    def sandbox_getattr(self, name: str) -> NoReturn:
        raise _not_awaited(self._path)

    def _misuse(self, *_: Any, **__: Any) -> NoReturn:
        raise _not_awaited(self._path)

    __getitem__ = __iter__ = __len__ = __contains__ = __bool__ = _misuse
    __str__ = __repr__ = __format__ = __call__ = __add__ = __radd__ = _misuse

    def __reduce__(self) -> NoReturn:
        raise _not_awaited(self._path)


def never_awaited(open_calls: Mapping[int, tuple[Any, Place | None]],
                  ) -> tuple[str, int | None, int] | None:
    """The first of a run's ``RunState.unawaited`` calls (made, never awaited: the tool
    never ran) as (``tools.x(a=...)``, its line, how many such calls), or None; a call of
    the script's own ``async def`` never awaited (its code never ran) as ``f()``.

    Only the argument names are shown: rendering a value could run the script's code."""
    if not open_calls:
        return None
    first, place = next(iter(open_calls.values()))
    line = line_at(place)
    if isinstance(first, ScriptCoroutine):
        return f"{coroutine_name(first)}()", line, len(open_calls)
    assert isinstance(first, PendingCall)
    names = ", ".join([f"{name}=..." for name in list(first._args)[:4]]
                      + (["..."] if len(first._args) > 4 else []))
    return f"tools.{first._path}({names})", line, len(open_calls)


KEYWORDS_ONLY: Final = ("keywords only",)
"""``order`` of a tool that takes keyword arguments only (no dialects)."""


def _canonical(path: str, names: Sequence[str]) -> str:
    shown = ", ".join(f"{name}=..." for name in names) or "name=value"
    return f"`await tools.{path}({shown})`"


@final
class ToolFunction(SelfGuarded):
    """``tools.<path>``: keyword arguments; positional ones too when ``order`` allows.

    ``order`` names the parameters positional arguments fill; ``None`` when the
    tool's parameters have no clear order (keywords, or one dict of them, only);
    :data:`KEYWORDS_ONLY` without dialects. One positional dict whose keys are all
    parameter names (or any string keys, without an order) is the arguments.
    """

    __slots__ = ("_caller", "_dialects", "_order", "_path", "_text")

    def __init__(self, caller: _Caller, path: str,
                 order: Sequence[str] | None = KEYWORDS_ONLY, *, dialects: bool = False,
                 text: tuple[str, str] | None = None) -> None:
        self._caller = caller
        self._path = path
        self._order = order
        self._dialects = dialects
        self._text = text

    def __call__(self, *args: Any, **kwargs: Any) -> PendingCall:
        if args:
            kwargs = self._bind(args, kwargs)
        return PendingCall(self._caller, self._path, kwargs)

    def _bind(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
        order, path = self._order, self._path
        if order is KEYWORDS_ONLY:
            raise TypeError(f"tools.{path}() takes keyword arguments only, e.g. "
                            f"tools.{path}(name=value); got {len(args)} positional")
        if len(args) == 1 and not kwargs and type(args[0]) is dict:
            keys = args[0]
            if keys and all(type(k) is str for k in keys) and (
                    order is None or all(k in order or _spelled(k) in order
                                         or _folded(k) in {_folded(n) for n in order}
                                         for k in keys)
                    or (order and _folded(order[0]) in {_folded(k) for k in keys})):
                # the first parameter among the keys: the arguments, not its value
                return dict(keys)
        if order is None:
            raise TypeError(f"tools.{path}() needs keyword arguments: its parameters have no "
                            f"clear order; call it as {_canonical(path, ())}")
        if len(args) > len(order):
            raise TypeError(f"tools.{path}() takes at most {len(order)} positional "
                            f"argument(s) ({', '.join(order) or 'none'}); got {len(args)}: "
                            f"call it as {_canonical(path, order)}")
        bound = dict(zip(order, args, strict=False))
        for name, value in kwargs.items():
            if name in bound:
                raise TypeError(f"tools.{path}() got multiple values for argument {name!r}")
            bound[name] = value
        return bound

    def __repr__(self) -> str:
        return f"<tool {self._path}>"

    def sandbox_getattr(self, name: str) -> Any:
        """With the dialects, a LangChain tool's ``name``, ``description`` and methods
        (``invoke``, ``ainvoke``, ``run``, ``arun``: the call itself, its one argument a
        dict of arguments or the only argument; awaited as any call is)."""
        if self._dialects:
            if name in _TEXTS and self._text is not None:
                return self._text[_TEXTS[name]]
            if name in _RUNNABLE:
                return self._runnable
        raise refuse(self, name)

    def _runnable(self, *args: Any, **kwargs: Any) -> PendingCall:
        given = {k: v for k, v in kwargs.items() if k not in _RUNNABLE_OPTIONS}
        if not args and len(given) == 1 and next(iter(given)) in _RUNNABLE_INPUT:
            return self(*given.values())
        if len(args) == 1:  # ``x.invoke({...}, config=config)``: LangChain's own options
            kwargs = given
        return self(*args, **kwargs)


_TEXTS: Final = {"name": 0, "description": 1}
_RUNNABLE: Final = frozenset({"invoke", "ainvoke", "run", "arun"})
_RUNNABLE_INPUT: Final = frozenset({"input", "tool_input"})
_RUNNABLE_OPTIONS: Final = frozenset({
    "config", "callbacks", "tags", "metadata", "run_name", "run_id", "verbose", "color",
    "start_color", "tool_call_id"})
"""LangChain's own keywords of those methods (``x.invoke({...}, config=config)``): not the
tool's arguments there (as ``codemode.mode.preflight.RUNNABLE_OPTIONS``)."""


_NOT_IDENTIFIER: Final = re.compile(r"\W")


def _spelled(wire: str) -> str:
    """About the Python spelling the SDK gives the wire name ``wire`` (``from`` ->
    ``from_``, ``not-ident`` -> ``not_ident``): one dict of arguments may use either."""
    text = _NOT_IDENTIFIER.sub("_", wire)
    return text + "_" if keyword.iskeyword(text) else text


def _folded(name: str) -> str:
    """``name`` without case and separators: ``per_page`` and ``perPage`` fold alike (the
    host sends such a key as the parameter it spells)."""
    return name.replace("_", "").replace("-", "").lower()


_Tree = dict[str, "_Tree | str"]
"""A namespace's names: a sub-namespace's tree, or a tool's path."""


@final
class _Run:
    """What every function of one run's ``tools`` shares: the caller and the orders."""

    __slots__ = ("caller", "orders", "texts")

    def __init__(self, caller: _Caller,
                 orders: Mapping[str, Sequence[str] | None] | None,
                 texts: Mapping[str, tuple[str, str]] | None = None) -> None:
        self.caller = caller
        self.orders = orders
        self.texts = texts or {}


@final
class ToolNamespace(SelfGuarded):
    """``tools`` or ``tools.<namespace>``: attribute access lists the known tools."""

    __slots__ = ("_children", "_made", "_prefix", "_run")

    def __init__(self, prefix: str, run: _Run, children: _Tree) -> None:
        self._prefix = prefix
        self._run = run
        self._children = children
        """The shared tree of names under this namespace (never changed)."""
        self._made: dict[str, ToolNamespace | ToolFunction] = {}
        """This run's objects for the names reached so far (``tools.x is tools.x``)."""

    def __repr__(self) -> str:
        return f"<tools {self._prefix}>" if self._prefix else "<tools>"

    def _child(self, name: str) -> ToolNamespace | ToolFunction | None:
        made = self._made.get(name)
        if made is not None:
            return made
        entry = self._children.get(name)
        if entry is None:
            return None
        run = self._run
        if isinstance(entry, str):
            order = KEYWORDS_ONLY if run.orders is None else run.orders.get(entry, KEYWORDS_ONLY)
            made = ToolFunction(run.caller, entry, order, dialects=run.orders is not None,
                                text=run.texts.get(entry))
        else:
            made = ToolNamespace(f"{self._prefix}.{name}" if self._prefix else name, run, entry)
        self._made[name] = made
        return made

    def sandbox_getattr(self, name: str) -> ToolNamespace | ToolFunction:
        child = self._child(name)
        if child is not None:
            return child
        alias = self._alias(name) if self._run.orders is not None else None
        if alias is not None:
            return alias
        where = f"tools.{self._prefix}" if self._prefix else "tools"
        close = difflib.get_close_matches(name, list(self._children), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        known = "" if close else f"; available: {', '.join(sorted(self._children)) or 'none'}"
        raise AttributeError(f"{where} has no tool {name!r}{hint}{known}")


    def _alias(self, name: str) -> ToolNamespace | ToolFunction | None:
        """What ``name`` means with the dialects: ``x_sync`` is the tool ``x`` (its call is
        awaited for the script); a tool's wire name or its Python spelling
        (``tools["list-repos"]``, ``getattr(tools, "github.list_repos")``); the first part
        of a dotted wire name the SDK spells with ``_`` (``tools.weather.get_by_city``
        for ``weather_get_by_city``). Every alias is one of this namespace's tools."""
        if name.endswith("_sync"):
            alias = self._child(name[:-5])
            if isinstance(alias, ToolFunction):
                return alias
        if "." in name:
            node: ToolNamespace | ToolFunction | None = self
            for part in name.split("."):
                node = node._child(part) if isinstance(node, ToolNamespace) else None
            if node is not None:
                return node
        spelled = _spelled(name)
        # ``set_`` is how the SDK spells a tool named ``set`` (a builtin's name)
        for candidate in (spelled, spelled.rstrip("_"), spelled + "_"):
            child = self._child(candidate) if candidate != name else None
            if child is not None:
                return child
        head = spelled + "_"
        tree: _Tree = {key[len(head):]: entry for key, entry in self._children.items()
                       if key.startswith(head) and len(key) > len(head)
                       and isinstance(entry, str)}
        if not tree:
            return None
        made = ToolNamespace(f"{self._prefix}.{name}" if self._prefix else name, self._run,
                             tree)
        self._made[name] = made
        return made

    def __getitem__(self, name: object) -> ToolNamespace | ToolFunction:
        """``tools["list-repos"]`` (the dialects): the tool by its name."""
        if type(name) is not str:
            raise TypeError(f"tools[...] takes a tool's name as text, not "
                            f"{type(name).__name__}")
        if self._run.orders is None:
            raise TypeError(f"write `tools.{_spelled(name)}` instead of `tools[{name!r}]`")
        return self.sandbox_getattr(name)


def _build_index(tool_paths: tuple[str, ...]) -> _Tree:
    root: _Tree = {}
    for path in sorted(tool_paths):
        node = root
        parts = path.split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = {}
                node[part] = child
            node = child
        node.setdefault(parts[-1], path)
    return root


_index: Final = PerPaths(_build_index)
"""The namespace tree of a tuple of tool paths, built once per tuple (runs share it)."""


def build_tools(tool_paths: Collection[str], call_tool: TextCall, meter: Meter,
                memory: int,
                orders: Mapping[str, Sequence[str] | None] | None = None,
                texts: Mapping[str, tuple[str, str]] | None = None) -> ToolNamespace:
    """The ``tools`` proxy for one run, exposing exactly ``tool_paths``.

    ``orders`` (the dialects; see :class:`ToolFunction`) maps a tool path to the
    parameters positional arguments fill; a tool not in it takes keywords only.
    Without ``orders`` every tool takes keywords only and there are no ``_sync`` aliases.
    ``texts``: tool path → (name, description), for a LangChain tool's ``.name``.
    The tree of names is shared between runs; a run makes only the functions and
    namespaces its script reaches, so its cost does not grow with the registry.
    """
    paths = tool_paths if isinstance(tool_paths, tuple) else tuple(tool_paths)
    return ToolNamespace("", _Run(_Caller(call_tool, meter, memory), orders, texts),
                         _index(paths))


def resolve(root: ToolNamespace, path: str) -> ToolNamespace | ToolFunction:
    """``tools.<path>`` (a tool, an alias, or a namespace); AttributeError when unknown."""
    node: ToolNamespace | ToolFunction = root
    for part in path.split("."):
        if not isinstance(node, ToolNamespace):
            raise AttributeError(f"tools.{path} is not a namespace")
        node = node.sandbox_getattr(part)
    return node
