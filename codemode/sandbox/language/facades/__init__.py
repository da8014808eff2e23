"""Import allowlist: ``import json`` in a script yields a facade, never the real module.

A facade is an object exposing only chosen names (real stdlib modules leak
``sys``/``os`` through attributes such as ``json.codecs`` or ``re.enum``).
Facades are built lazily on first import and shared by all runs; anything
run-specific (the operation budget, the deadline) is looked up through
:func:`codemode.sandbox.language.state.current_run` when a facade function is called.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language import script_warnings
from codemode.sandbox.language.guards import EXPORTED_CLASSES, SelfGuarded, refuse
from codemode.sandbox.language.parsing import converted

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

script_warnings.silence()

__all__ = ["C_INTERNAL", "FACADE_NAMES", "LISTED_NAMES", "Facade", "facade", "guarded_import",
           "missing_attribute", "missing_module", "missing_name"]


@final
class Facade(SelfGuarded):
    """A module-like object with a fixed set of names."""

    __slots__ = ("_call", "_exports", "_name", "_names")

    def __init__(self, name: str, names: Mapping[str, Any],
                 call: Callable[..., Any] | None = None) -> None:
        self._name = name
        self._names: Mapping[str, Any] = MappingProxyType(dict(names))
        self._exports = frozenset(self._names)
        for export, value in self._names.items():
            # Facade functions report the module's names in errors ("math.pow() ...").
            if callable(value) and not isinstance(value, type) and hasattr(value, "__code__"):
                value.__name__ = export
                value.__qualname__ = f"{name}.{export}"
            elif isinstance(value, type):
                EXPORTED_CLASSES.add(value)
                if value.__module__.startswith("codemode."):
                    # ``type(x)`` prints as in CPython: ``<class 'decimal.Context'>``
                    value.__module__ = _CPYTHON_MODULES.get(f"{name}.{export}", name)
                    value.__name__ = value.__qualname__ = export
        self._call = call

    def __repr__(self) -> str:
        return f"<sandbox module {self._name!r}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._call is None:
            raise TypeError(f"{self._name!r} is not callable")
        return self._call(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        # Only reached by ``from X import name`` (IMPORT_FROM uses plain getattr);
        # guarded_import has already checked ``name``.
        if name.startswith("_") or name not in self._names:
            raise AttributeError(name)
        return self._names[name]

    def sandbox_getattr(self, name: str) -> Any:
        try:
            return self._names[name]
        except KeyError:
            if name.startswith("_"):
                raise refuse(self, name) from None
            raise AttributeError(missing_attribute(self._name, name)) from None

    def exports(self) -> frozenset[str]:
        """Names this facade offers."""
        return self._exports


_CPYTHON_MODULES: Final = {
    "io.StringIO": "_io", "csv.reader": "_csv", "csv.writer": "_csv",
    "asyncio.Lock": "asyncio.locks", "asyncio.Semaphore": "asyncio.locks",
    "asyncio.Queue": "asyncio.queues", "asyncio.TaskGroup": "asyncio.taskgroups",
}
"""Where CPython's class of a facade's export lives, when not in the module itself."""

_MODULES: Final = {
    "abc": "abc_facade",
    "asyncio": "asyncio_facade",
    "base64": "base64_facade",
    "bisect": "bisect_facade",
    "collections": "collections_facade",
    "collections.abc": "collections_abc_facade",
    "contextlib": "contextlib_facade",
    "copy": "copy_facade",
    "csv": "csv_facade",
    "dataclasses": "dataclasses_facade",
    "datetime": "datetime_facade",
    "decimal": "decimal_facade",
    "enum": "enum_facade",
    "fractions": "fractions_facade",
    "functools": "functools_facade",
    "hashlib": "hashlib_facade",
    "heapq": "heapq_facade",
    "html": "html_facade",
    "io": "io_facade",
    "itertools": "itertools_facade",
    "json": "json_facade",
    "logging": "logging_facade",
    "math": "math_facade",
    "operator": "operator_facade",
    "pprint": "pprint_facade",
    "random": "random_facade",
    "re": "re_facade",
    "statistics": "statistics_facade",
    "string": "string_facade",
    "sys": "sys_facade",
    "textwrap": "textwrap_facade",
    "time": "time_facade",
    "types": "types_facade",
    "typing": "typing_facade",
    "urllib": "urllib_facade",
    "urllib.parse": "urllib_parse_facade",
    "uuid": "uuid_facade",
}

FACADE_NAMES: Final = frozenset(_MODULES)
"""Module names a script may import (``urllib.parse`` and ``collections.abc`` are also
attributes of their package's facade)."""

LISTED_NAMES: Final = FACADE_NAMES - {"urllib"}
"""The modules a prompt names: ``urllib`` only holds ``parse``, listed as ``urllib.parse``."""

_LOADED: dict[str, Facade] = {}


def facade(name: str) -> Facade:
    """The facade for module ``name`` (built on first use). The import is made again when
    another thread's AST conversion spoiled it (:func:`converted`): a facade is first
    imported on a script thread while the host parses, and an import hook may parse the
    module's source (pytest rewrites every module of a package that ships a plugin)."""
    found = _LOADED.get(name)
    if found is None:
        module = converted(importlib.import_module, f"{__name__}.{_MODULES[name]}")
        found = _LOADED[name] = module.FACADE
    return found


C_INTERNAL: Final = frozenset({"_pylong"})
"""Modules CPython's own C code imports through the running frame's ``__import__``: on
3.12+, dividing or converting big ints loads ``_pylong`` (``3 ** 60000 // 7 ** 14000``
failed as "module '_pylong' is not available"). ``PyImport_Import`` calls
``__import__(name, globals, globals, [], 0)`` and takes the module from ``sys.modules``,
never from the call: the host loads it (a confined worker at boot) and the script's frame
gets None. A script cannot name these (an import of an ``_`` name is refused when it is
compiled), nor pass a list as ``fromlist`` (its imports are statements)."""


def guarded_import(name: str, globals: Any = None, locals: Any = None,
                   fromlist: Any = (), level: int = 0) -> Facade | None:
    """``__import__`` for scripts: facades only; ``from X import Y`` checks every Y, and
    ``import X.Y`` gives the package ``X`` (whose ``Y`` is the submodule), as Python does."""
    if name in C_INTERNAL and type(fromlist) is list and not fromlist and level == 0:
        importlib.import_module(name)
        return None
    if level != 0:
        raise ImportError("relative imports are not available in the sandbox")
    if name not in _MODULES:
        raise ModuleNotFoundError(missing_module(name), name=name)  # as CPython's
    module = facade(name)
    if not fromlist:
        return facade(name.partition(".")[0])
    for item in fromlist:
        if not isinstance(item, str) or item not in module.exports():
            raise ImportError(missing_name(name, item), name=name)
    return module


_NO_HOST: Final = "a script reaches files, processes and the network only through the tools"
_CONCURRENT: Final = ("tool calls run concurrently through asyncio, not threads: `results = "
                       "await asyncio.gather(*[tools.<name>(...) for x in items])` "
                       "(`asyncio.Semaphore` bounds how many run at once)")
_MODULE_HINTS: Final = {
    **dict.fromkeys(("os", "pathlib", "shutil", "subprocess", "socket", "requests",
                     "httpx", "aiohttp", "urllib.request", "glob", "tempfile"), _NO_HOST),
    **dict.fromkeys(("concurrent.futures", "concurrent", "threading", "multiprocessing",
                     "queue"), _CONCURRENT),
    "unicodedata": "compare text with `.casefold()`; to drop accents, map the characters "
                   "yourself (`text.translate(str.maketrans('éè', 'ee'))`)",
    "sqlite3": "filter, group and join lists of dicts with comprehensions, sorted(), "
               "itertools.groupby and collections.Counter",
    "traceback": "report `f'{type(e).__name__}: {e}'` in the except block",
    "numpy": "use lists, math and statistics",
    "os.path": "use str methods on path text (`p.rsplit('/', 1)[-1]` is the file name); "
               + _NO_HOST,
    "zoneinfo": "use a fixed offset, `datetime.timezone(datetime.timedelta(hours=2))`, or "
                "`datetime.timezone.utc`",
    "calendar": "compute with datetime: `d.strftime('%A')` names a day, and a month's last "
                "day is the day before the next month's first (`date(y, m + 1, 1) - "
                "timedelta(days=1)`)",
    "secrets": "use `random` (a script has no secret to keep)",
    "difflib": "score the candidates yourself (e.g. shared words, `len(set(a.split()) & "
               "set(b.split()))`) and take `max(candidates, key=...)`",
    "warnings": "use print(): its output is returned with the result",
    "fnmatch": "match with `re` (`*` is `.*`, `?` is `.`) or str.startswith/endswith",
    "pandas": "use lists of dicts, sorted(), collections.Counter and statistics",
}
"""What to write instead of a module the sandbox lacks (by full, then top-level, name)."""

_NAME_HINTS: Final = {
    **dict.fromkeys((("contextlib", "redirect_stdout"), ("contextlib", "redirect_stderr")),
                    "print into a buffer yourself, `print(..., file=buf)` with `buf = "
                    "io.StringIO()`, or collect the lines in a list"),
    ("contextlib", "aclosing"): "iterate the async generator with `async for` (the run "
                                "closes what it leaves open when it ends)",
    ("contextlib", "ContextDecorator"): "write the `with` block inside the function, or "
                                        "a decorator of your own (`def traced(fn): ...`)",
    ("dataclasses", "InitVar"): "make it a field, `field(default=..., repr=False)`, and read "
                                "it in __post_init__",
    **dict.fromkeys((("functools", "singledispatch"), ("functools", "singledispatchmethod")),
                    "dispatch with `if isinstance(x, ...)` or `match`"),
    **dict.fromkeys((("collections", "UserDict"), ("collections", "UserList"),
                     ("collections", "UserString")),
                    "keep the data in an attribute (`self.data = {}`) of a plain class and "
                    "define the methods it needs (`__getitem__`, `__setitem__`, `__len__`, "
                    "`__iter__`, `__contains__` ...)"),
    ("statistics", "NormalDist"): "compute with statistics.mean() and statistics.stdev(): a "
                                  "z-score is `(x - mu) / sigma`, and the normal CDF is "
                                  "`0.5 * (1 + math.erf((x - mu) / (sigma * math.sqrt(2))))`",
    ("string", "Formatter"): "find a template's fields with `re.findall(r'{(\\w+)', text)` "
                             "and fill it with `text.format(**values)` or "
                             "`text.format_map(values)`",
    ("asyncio", "shield"): "await the call itself, outside asyncio.timeout()/wait_for() "
                           "when it must finish (they cancel what they wait for)",
    **dict.fromkeys((("typing", "get_type_hints"), ("typing", "get_args"),
                     ("typing", "get_origin")),
                    "annotations are not evaluated in the sandbox (typing names are "
                    "placeholders): keep the types you check in a dict of your own "
                    "(`{'age': int}`) and test values with isinstance()"),
    **dict.fromkeys((("json", "JSONEncoder"), ("json", "JSONDecoder")),
                    "pass `default=` to json.dumps (a function that turns a value it cannot "
                    "write into one it can), `object_hook=` to json.loads"),
    **dict.fromkeys((("asyncio", "PriorityQueue"), ("asyncio", "LifoQueue")),
                    "use asyncio.Queue (first in, first out), or gather the calls "
                    "(`asyncio.Semaphore` bounds how many run at once)"),
    ("asyncio", "run"): "write `await main()`: the script already runs in an event loop",
    **dict.fromkeys((("asyncio", "Condition"), ("asyncio", "Barrier")),
                    "signal with an `asyncio.Event` (`set()`, `await wait()`) or hand work "
                    "over through an `asyncio.Queue`"),
    **dict.fromkeys((("asyncio", "current_task"), ("asyncio", "all_tasks")),
                    "keep the tasks you create in a list or dict of your own (`tasks = "
                    "{name: asyncio.create_task(...)}`); `task.get_name()` reads a name "
                    "given with `create_task(..., name=...)`"),
    ("asyncio", "timeout_at"): "write `async with asyncio.timeout(seconds):`, the seconds "
                               "from now",
    **dict.fromkeys((("asyncio", "to_thread"), ("asyncio", "run_in_executor")),
                    "call a plain function directly (`value = crunch(data)`): the script "
                    "has no threads, and tool calls run concurrently with `await "
                    "asyncio.gather(...)`"),
    **dict.fromkeys((("asyncio", "get_event_loop"), ("asyncio", "new_event_loop")),
                    "write `await main()`: the script already runs in an event loop"),
    ("asyncio", "get_running_loop"): "write `await main()`, and `time.monotonic()` for the "
                                     "time",
    ("io", "BytesIO"): "keep bytes in a list and `b''.join(parts)`, or encode text "
                       "(`text.encode()`)",
    ("uuid", "uuid1"): "use uuid.uuid4() (uuid1 would carry the host's network address)",
    ("csv", "Sniffer"): "pass `delimiter=` yourself (count `,`, `;` and `\\t` in the first "
                        "line)",
    **dict.fromkeys((("sys", "argv"), ("sys", "stdin")),
                    "a script has no command line or input: its values come from the tools "
                    "or the run's inputs"),
    **dict.fromkeys((("sys", "setrecursionlimit"), ("sys", "getrecursionlimit")),
                    "the run's recursion limit is fixed by the host: recurse less deeply, or "
                    "loop with a list as a stack"),
    **dict.fromkeys((("sys", "version"), ("sys", "version_info")),
                    "the sandbox runs Python 3.11 or newer: drop the version check"),
    **dict.fromkeys((("sys", "path"), ("sys", "modules"), ("sys", "platform"),
                     ("sys", "executable")), _NO_HOST),
}
"""What to write instead of a name a facade lacks."""


def missing_module(name: str) -> str:
    """Why ``import name`` fails (the preflight says the same before the script runs)."""
    hint = _MODULE_HINTS.get(name) or _MODULE_HINTS.get(name.partition(".")[0])
    return (f"module {name!r} is not available in the sandbox "
            f"(available: {', '.join(sorted(_MODULES))}){'; ' + hint if hint else ''}")


def missing_attribute(module: str, name: str) -> str:
    """Why ``module.name`` fails, ``module`` being a facade (the preflight says it first)."""
    hint = _NAME_HINTS.get((module, name))
    return (f"module {module!r} has no attribute {name!r} in the sandbox "
            f"(available: {', '.join(sorted(facade(module).exports()))})"
            f"{'; ' + hint if hint else ''}")


def missing_name(module: str, item: object) -> str:
    """Why ``from module import item`` fails, ``module`` being a facade."""
    shown = repr(item) if isinstance(item, str) else "a non-string name"
    hint = _NAME_HINTS.get((module, item)) if isinstance(item, str) else None
    return (f"cannot import name {shown} from {module!r} in the sandbox "
            f"(available: {', '.join(sorted(facade(module).exports()))})"
            f"{'; ' + hint if hint else ''}")
