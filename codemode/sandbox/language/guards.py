"""Host-side guards the compiled script calls: attribute reads, writes, calls, classes.

The model is an allowlist. A script reaches an attribute only if:

- the name has no leading underscore (also refused at compile time), and
- the object is script-made (an instance or class built by ``ScriptMeta``) and
  the name resolves to the script's own class code or to an allowed name of a
  builtin base, or
- the object's exact type (or, for a class object, the class itself) is in
  ``ATTRIBUTES`` and the name is listed there (``str.format``/``format_map``
  never are), or
- the object is a facade, the ``tools`` proxy or another sandbox object that
  answers for itself.

Underscore names are answered only by the script's own objects: a private name
(``self._items``) found in a script instance's ``__dict__`` or a script class's own
code, a special method of :data:`~codemode.sandbox.language.policy.SCRIPT_METHODS`
the script's class code defines (``Base.__init__``), and ``super()`` bound to a
script instance; ``__init__`` of ``object`` and the exception bases, reached that
way, only ever initialises a script instance.

Everything else — modules, functions' internals, frames, code, tracebacks,
generators and coroutines, host objects — raises AttributeError. The guard
never returns None in place of a refused attribute.
"""

from __future__ import annotations

import codecs
import datetime as _dt
import json
import sys
import weakref
from collections import Counter, OrderedDict, defaultdict, deque
from functools import partial
from itertools import compress, repeat
from types import AsyncGeneratorType, FunctionType, GeneratorType
from typing import TYPE_CHECKING, Any, Final, final

from codemode.errors import CodemodeError, ToolCallError
from codemode.sandbox.language.compare import (
    SHALLOW,
    TEXT_UNIT,
    charge_collisions,
    charge_each,
    charge_probes,
    charge_search,
    charge_sort,
    charge_text,
    check_ordered_key,
    drawn_mapping,
    guarded_contains,
    guarded_key,
    key_probes,
    keyed,
    ordered_pairs,
    pace_inserts,
)
from codemode.sandbox.language.meter import MAIN_MODULE, SCRIPT_FILENAME, SCRIPT_MODULE
from codemode.sandbox.language.notes import notes_of
from codemode.sandbox.language.policy import (
    ANNOTATED,
    CHAINED_ERRORS,
    CLASS_METACLASS,
    POST_INIT,
    SCRIPT_METHODS,
    SLOTS_NAME,
    match_temporary,
    private_name_ok,
)
from codemode.sandbox.language.render import scrub, scrubbed_args
from codemode.sandbox.language.sizes import (
    MAX_INT_BITS,
    WIDE,
    capped_int,
    charge_counters,
    charge_operations,
    ensure_size,
    guarded_slice,
    items_size,
    poll_memory,
)
from codemode.sandbox.language.sizes import check_render as _check_render
from codemode.sandbox.language.slots import (
    SLOTS_KEY,
    has_dict,
    is_slot,
    slot_names,
    slots_of,
    slotted_setattr,
)
from codemode.sandbox.language.state import (
    CURRENT_RUN,
    ScriptCoroutine,
    counted,
    current_run,
    is_async_script_function,
    is_script_function,
    wrap_result,
)
from codemode.sandbox.language.textsearch import (
    bind_partition,
    bind_search,
    chunked_span,
    count_in_chunks,
    count_of,
    rsplit_in_chunks,
    split_in_chunks,
)

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "ATTRIBUTES",
    "CLASS_ANNOTATIONS",
    "CLASS_BUILDERS",
    "CLASS_METHODS",
    "EXPORTED_CLASSES",
    "FACADE_CLASSES",
    "GENERIC_CLASSES",
    "NAMED_TUPLES",
    "SANDBOX_BASES",
    "SPECIAL_METHODS",
    "WRITABLE_TYPES",
    "AsyncInitMeta",
    "ScriptMeta",
    "SelfGuarded",
    "SelfListed",
    "SelfWritable",
    "build_class",
    "check_codec",
    "check_split",
    "check_strftime",
    "check_strptime",
    "class_method",
    "data_special",
    "guarded_apply",
    "guarded_delattr",
    "guarded_getattr",
    "guarded_hasattr",
    "guarded_setattr",
    "guarded_type",
    "guarded_vars",
    "guarded_write",
    "guarded_write_attribute",
    "guarded_write_item",
    "guarded_write_private",
    "match_class",
    "object_setattr",
    "refuse",
]


_SPECIAL_HINTS: Final = {
    "__getitem__": "`lambda k: x[k]` (or `d.get` for a dict)", "__len__": "len(x)",
    "__contains__": "`k in x`", "__iter__": "iter(x)", "__str__": "str(x)",
    "__repr__": "repr(x)",
}
"""What to write instead of a special method of a host object (``key=d.__getitem__``)."""


def refuse(obj: Any, name: str) -> AttributeError:
    """The error for a refused attribute: a plain AttributeError with a uniform message."""
    if name.startswith("_"):
        special = _SPECIAL_HINTS.get(name)
        return AttributeError(f"attribute {name!r} is not accessible: names starting with '_' "
                              "are private in the sandbox"
                              + (f"; write {special} instead" if special else ""))
    what = obj.__name__ if issubclass(type(obj), type) else type(obj).__name__
    hint = ""
    if name in ("format", "format_map") and (isinstance(obj, str) or what == "str"):
        hint = ("; str.format is not available in the sandbox (a format string can reach "
                "attributes): use an f-string instead, e.g. f'{x} items' or f'{x:>8.2f}'")
    elif type(obj) is dict and name in obj:
        # tool results are plain dicts: a model used to JS objects writes `user.name`
        hint = f"; it is a dict key: read it with [{name!r}] or .get({name!r})"
    if issubclass(type(obj), type):
        # CPython's wording for a class (``type(g).foo``); "no attribute" when neither it,
        # its metaclass nor the class it stands in for (``real``) has one
        real = vars(obj).get("real")
        kinds = (*obj.__mro__, *type(obj).__mro__, *(real.__mro__ if issubclass(
            type(real), type) else ()))
        missing = not any(name in vars(kind) for kind in kinds)
        return AttributeError(f"type object {what!r} has no "
                              f"{'' if missing else 'accessible '}attribute {name!r}{hint}")
    if (type(obj) in _BUILTIN_DATA and not hasattr(type(obj), name)) or (
            isinstance(type(obj), ScriptMeta) and name not in getattr(obj, "__dict__", ())
            and not any(name in vars(kind) for kind in type(obj).__mro__)):
        # none in CPython either: its message (``except AttributeError as e: print(e)``)
        return AttributeError(f"{what!r} object has no attribute {name!r}{hint}")
    return AttributeError(f"{what!r} object has no accessible attribute {name!r}{hint}")


def shown_name(obj: Any) -> str:
    """How an error names ``obj``'s class: a class by its own name (not its metaclass's),
    the sandbox's metered iterator as the iterator it stands for."""
    if issubclass(type(obj), type):
        return f"class {obj.__name__!r}"
    return "iterator" if type(obj) is compress else f"{type(obj).__name__!r}"


_BUILTIN_DATA: Final = frozenset({dict, list, tuple, str, int, float, bool, bytes, complex,
                                set, frozenset, type(None)})
"""Builtin types whose class attributes are read without running any code."""


class SelfGuarded:
    """Base for sandbox objects that decide their own attributes (facades, tools proxy)."""

    __slots__ = ()

    def sandbox_getattr(self, name: str) -> Any:
        """Return the attribute the script asked for, or raise AttributeError."""
        raise refuse(self, name)


class SelfWritable(SelfGuarded):
    """A sandbox object whose attributes a script may also set, each write checked by the
    object's own ``__setattr__`` (``decimal.getcontext().prec = 50``)."""

    __slots__ = ()


class SelfListed(SelfWritable):
    """A sandbox object whose attributes are the script's own values, which
    ``vars(obj)`` copies (``types.SimpleNamespace``)."""

    __slots__ = ()

    def sandbox_vars(self) -> dict[str, Any]:
        """A copy of the attributes."""
        raise NotImplementedError


class ScriptMeta(type):
    """Metaclass of every class a script defines (``__metaclass__`` in the script).

    It marks the class as script-made and refuses bases outside
    ``SANDBOX_BASES`` (other script classes, ``object`` and exceptions), so a
    script cannot subclass host types to reach their internals. Every special
    method the class defines is wrapped by :func:`_within_run`: CPython calls them
    implicitly (``print``, ``sorted``, dict inserts, ``with``), and they must never
    run outside the run that defined them.
    """

    def __new__(mcs, name: str, bases: tuple[type, ...],
                namespace: dict[str, Any], **kwargs: Any) -> ScriptMeta:
        if kwargs:  # no script class defines __init_subclass__: object's takes none
            raise TypeError(f"{name}.__init_subclass__() takes no keyword arguments")
        _check_bases(name, bases)
        annotated = namespace.pop(ANNOTATED, ())
        slots = namespace.pop(SLOTS_NAME, _NO_SLOTS)
        if slots is not _NO_SLOTS:
            slots = slot_names(name, slots, namespace)
        if namespace.get("__module__") == SCRIPT_MODULE:
            namespace["__module__"] = MAIN_MODULE
        run = CURRENT_RUN.get(None)
        meter = None if run is None else run.meter
        init = namespace.get("__init__")
        for key in list(namespace):
            if key in _CLASS_BODY_NAMES or not key.startswith("_"):
                continue
            if match_temporary(key):  # a ``match`` in the class body
                del namespace[key]
                continue
            if key.startswith("__") and key.endswith("__"):
                if key not in SCRIPT_METHODS:
                    raise TypeError(f"class {name} cannot define {key} in the sandbox")
                method = namespace[key]
                if key == "__hash__" and method is None:
                    continue  # ``__hash__ = None``: unhashable instances, as in CPython
                if type(method) is not FunctionType:
                    raise TypeError(f"{name}.{key} must be a plain function (a def in the "
                                    "class body) in the sandbox")
                if not is_script_function(method):
                    method = _ticked(method, meter)
                namespace[key] = _within_run(method, meter, key)
            elif not private_name_ok(key):
                raise TypeError(f"class {name} cannot define {key} in the sandbox")
        if meter is not None:
            # CPython builds a class in C work of its MRO's length (slots inherited, looked
            # up along it: ~1.5 µs an entry): an 800-deep chain took 2 s CPU for 2,800
            # operations
            charge_operations(sum(len(base.__mro__) for base in bases))
        if mcs is ScriptMeta and (is_async_script_function(init) or
                                  is_async_script_function(namespace.get(POST_INIT))):
            mcs = AsyncInitMeta
        cls = super().__new__(mcs, name, bases, namespace)
        if issubclass(cls, tuple):
            _check_tuple_protocol(cls)
        if type(annotated) is tuple and annotated:
            CLASS_ANNOTATIONS[cls] = tuple(n for n in annotated if type(n) is str)
        if slots is not _NO_SLOTS:
            type.__setattr__(cls, SLOTS_KEY, slots)
            type.__setattr__(cls, "__setattr__",
                             class_method(cls, slotted_setattr, "__setattr__"))
        return cls

    def __instancecheck__(cls, obj: Any) -> bool:
        check = INSTANCE_CHECKS.get(cls)
        return (check is not None and check(obj)) or type.__instancecheck__(cls, obj)

    def __getitem__(cls, params: Any) -> Any:
        """``Box[int]`` of a ``class Box(Generic[T])``: the class itself (CPython's alias
        makes and subclasses the same class); any other class is not subscriptable."""
        if cls in GENERIC_CLASSES:
            return cls
        if any(base in GENERIC_CLASSES for base in cls.__mro__):
            raise TypeError(f"{cls!r} is not a generic class")
        raise TypeError(f"type '{cls.__name__}' is not subscriptable")


class AsyncInitMeta(ScriptMeta):
    """Metaclass of a script class whose ``__init__`` (or dataclass ``__post_init__``) is
    an ``async def``: the dialects make it one when it calls tools (``def __init__(self):
    self.items = get_items()``) and await each ``Cls(...)``. A call of the class is an
    awaitable of the instance, made as ``type.__call__`` makes it, the initializers
    awaited in its place. (In CPython such a class cannot be called: nothing that ran
    before runs otherwise.)"""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        made: Any = _constructed(cls, args, kwargs)
        made.__qualname__ = cls.__qualname__  # what a "never awaited" error names
        return wrap_result(current_run(), made)


async def _constructed(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    obj = cls.__new__(cls, *args, **kwargs)
    if isinstance(obj, cls):
        initialized = cls.__init__(obj, *args, **kwargs)
        if type(initialized) is ScriptCoroutine:
            initialized = await initialized
        if initialized is not None:
            raise TypeError(f"__init__() should return None, not "
                            f"'{type(initialized).__name__}'")
        post: Any = getattr(cls, POST_INIT, None)
        if is_async_script_function(post):
            await post(obj)
    return obj


CLASS_ANNOTATIONS: Final[weakref.WeakKeyDictionary[type, tuple[str, ...]]] = (
    weakref.WeakKeyDictionary())
"""A script class's annotated names, in order (the policy's ``ANNOTATED``): what
``@dataclass`` makes fields of (annotations themselves are dropped unevaluated)."""


INSTANCE_CHECKS: Final[weakref.WeakKeyDictionary[type, Callable[[Any], bool]]] = (
    weakref.WeakKeyDictionary())
GENERIC_CLASSES: Final[weakref.WeakSet[type]] = weakref.WeakSet()
"""The script's classes over ``Generic[T]`` (or ``Protocol[T]``): ``Box[int]`` is ``Box``
(the typing facade registers them)."""
"""A script class → what else ``isinstance`` accepts as its instance (a typing
``Protocol``: an object with the protocol's members); the facades register these."""


_TUPLE_STORAGE: Final = frozenset({"__iter__", "__len__", "__getitem__", "__contains__",
                                   "__reversed__"})
"""What a named tuple subclass may not redefine: C code (``hash``, ``==``, ``isinstance``,
``%``) reads a tuple's items directly, while the guards that charge those walks read them
through these methods, so a script's answer would hide items the C walk then visits."""


def _check_tuple_protocol(cls: type) -> None:
    for klass in cls.__mro__:
        if isinstance(klass, ScriptMeta):
            defined = _TUPLE_STORAGE.intersection(klass.__dict__)
            if defined:
                raise TypeError(f"class {cls.__name__} cannot define {min(defined)} in the "
                                "sandbox: it is a named tuple, whose items C code reads "
                                "directly")


_NO_SLOTS: Final = object()

_CLASS_BODY_NAMES: Final = frozenset({"__module__", "__qualname__", "__doc__",
                                      "__classcell__", "__static_attributes__",
                                      "__firstlineno__"})
"""What the compiler itself puts into a class body's namespace (3.11-3.13)."""

_TEXT_METHODS: Final = frozenset({"__repr__", "__str__", "__bytes__", "__format__"})
"""Special methods whose result C code copies into a bigger text (``str([obj] * n)``)."""

_COMPARE_METHODS: Final = frozenset({"__eq__", "__ne__", "__lt__", "__le__", "__gt__",
                                     "__ge__"})
"""Special methods C code calls with operands it may hold only by borrowed references."""


def _ticked(method: Callable[..., Any], meter: Any) -> Callable[..., Any]:
    """A host function a script made a special method of its class (``@lambda f:
    table.get`` over ``def __getitem__``): C calls it once an item (``dict(obj)``, ``f(**obj)``
    read every key of ``obj.keys()`` through ``__getitem__``), and unlike a script
    function it does not tick on entry, so a 20,000-key read cost one operation."""
    def call(*args: Any, **kwargs: Any) -> Any:
        next(meter.ticker)
        return method(*args, **kwargs)
    call.__name__ = method.__name__
    call.__qualname__ = method.__qualname__
    return call


def _within_run(method: Callable[..., Any], meter: Any, name: str) -> Callable[..., Any]:
    """``method`` refusing to run outside the run whose class defined it: after it ended
    its globals are gone (the failure must be a plain TypeError, not NameError or
    GeneratorExit from script code), and another run must never run its code. A text
    method's result is charged by its length, as if C code had copied it that often.

    ``__exit__``/``__aexit__`` never get the traceback (its frames hold the host's globals),
    and for a stop that is not an ``Exception`` (cancellation, a tripped limit,
    ``GeneratorExit``) they get a ``RuntimeError`` in its place and cannot suppress it: the
    host's own exception (its class included) must never be held, raised again or
    swallowed by script code.

    A comparison that answers ``NotImplemented`` keeps its operands until the run ends:
    CPython then tries the reflected method (and names both types in its TypeError) with
    the operands a list comparison took from the lists by borrowed references, and a
    method that emptied the list had freed them (``[a] < [b]``, ``sorted``, ``max`` over
    lists: a segfault of an in-process host on 3.11 and 3.12.1, gh-120298)."""
    def call(*args: Any, **kwargs: Any) -> Any:
        run = CURRENT_RUN.get(None)
        if run is None or run.meter is not meter or meter.ended:
            raise TypeError("script code cannot run after the script ended "
                            f"({name} of a script object)")
        return method(*args, **kwargs)

    def call_exit(*args: Any, **kwargs: Any) -> Any:
        if len(args) != 4 or kwargs:
            return call(*args, **kwargs)
        self, kind, error, _traceback = args
        if not isinstance(error, BaseException):
            return call(*args)  # no exception, or the script's own call with its own values
        if isinstance(error, Exception):
            return call(self, kind, error, None)
        stand_in = RuntimeError(f"the with block was stopped ({type(error).__name__})")
        outcome = call(self, RuntimeError, stand_in, None)
        if name == "__exit__":
            return False
        return _never_suppress(outcome)

    def call_compare(*args: Any, **kwargs: Any) -> Any:
        run = CURRENT_RUN.get(None)  # ``call``'s check, inline: comparisons are hot
        if run is None or run.meter is not meter or meter.ended:
            raise TypeError("script code cannot run after the script ended "
                            f"({name} of a script object)")
        outcome = method(*args, **kwargs)
        if outcome is NotImplemented:
            held = run.compared
            for arg in args:
                held[id(arg)] = arg
        return outcome

    def call_text(*args: Any, **kwargs: Any) -> Any:
        text = call(*args, **kwargs)
        if type(text) is str or type(text) is bytes:
            charge_operations(len(text) // TEXT_UNIT)
            poll_memory()
        return text
    wrapper = (call_text if name in _TEXT_METHODS else
               call_compare if name in _COMPARE_METHODS else
               call_exit if name in ("__exit__", "__aexit__") else call)
    wrapper.__name__ = method.__name__
    wrapper.__qualname__ = method.__qualname__
    return wrapper


def class_method(cls: type, method: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``method``, a host function a facade installs on the script class ``cls``
    (``@dataclass``'s ``__init__``, ``total_ordering``'s ``__gt__``), applying only to
    instances of ``cls`` and only inside the run that made it. A script reads a class's
    method as a plain function (``P.__init__(any_object, value)``), and the host function
    would otherwise write, read or compare whatever object it is handed: a facade's
    state, a real task, a host list compared in one uncharged C call."""
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        kind = type(self)
        if not (isinstance(kind, ScriptMeta) and any(base is cls for base in kind.__mro__)):
            raise TypeError(f"{cls.__qualname__}.{name}() applies only to instances of "
                            f"{cls.__qualname__}")
        return method(self, *args, **kwargs)
    call.__name__ = name
    call.__qualname__ = f"{cls.__qualname__}.{name}"
    return _within_run(call, current_run().meter, name)


async def _never_suppress(outcome: Any) -> bool:
    """``__aexit__`` of a block the host is stopping: the script's method runs, its answer
    does not keep the stop from going on. A plain ``def __aexit__`` gave no awaitable:
    CPython's TypeError, as ``async with`` raises it for any exit."""
    if not hasattr(type(outcome), "__await__"):
        raise TypeError("'async with' received an object from __aexit__ that does not "
                        f"implement __await__: {type(outcome).__name__}")
    await outcome
    return False


def _check_bases(name: str, bases: tuple[Any, ...]) -> None:
    for base in bases:
        if not (isinstance(base, ScriptMeta) or base in SANDBOX_BASES):
            what = base.__name__ if isinstance(base, type) else f"a {type(base).__name__} object"
            hint = ""
            if what in _CONTAINER_BASES:
                hint = (f" (a class's bases are object, the exception classes and the script's "
                        f"own classes): keep the {what} in an attribute (`self.data = "
                        f"{_CONTAINER_BASES[what]}`) and define the methods the class needs "
                        f"(`__getitem__`, `__len__`, `__iter__` ...)")
            raise TypeError(f"class {name} cannot subclass {what!r} in the sandbox{hint}")


_CONTAINER_BASES: Final = {"dict": "{}", "list": "[]", "set": "set()", "str": "''",
                           "tuple": "()", "int": "0", "float": "0.0", "Counter": "Counter()",
                           "defaultdict": "defaultdict(list)", "OrderedDict": "OrderedDict()",
                           "deque": "deque()"}
"""Builtin containers scripts subclass (``class Default(dict)`` for ``format_map``), with
the empty value the refusal suggests keeping in an attribute instead."""


CLASS_BUILDERS: Final[dict[type, Callable[..., Any]]] = {}
"""Type of a facade's base → what builds a script class over it (``class C(Enum)``,
``class P(NamedTuple)``, ``class M(TypedDict)``): the facades register these; each builds
the class from the script's namespace under its own rules, through :class:`ScriptMeta`."""


def build_class(name: str, bases: tuple[Any, ...], namespace: dict[str, Any],
                **kwargs: Any) -> Any:
    """``__metaclass__`` of script classes: check the bases before any metaclass logic runs.

    A function, not the metaclass itself, so ``class S(str)`` is refused with a
    clear message before Python computes a metaclass (the script's ``str`` is
    a stand-in with its own metaclass). A base of a facade's form (``Enum``,
    ``NamedTuple`` …) hands the class to that facade's builder.
    """
    if CLASS_METACLASS in kwargs:
        meta = kwargs.pop(CLASS_METACLASS)
        base = next((b for marker, b in METACLASS_BASES.items() if marker is meta), None)
        if base is None:
            raise TypeError(f"class {name} cannot choose its metaclass in the sandbox "
                            "(every script class has the sandbox's own)")
        bases = (*bases, base)
    for base in bases:
        builder = CLASS_BUILDERS.get(type(base))
        if builder is not None:
            return builder(name, bases, namespace, **kwargs)
    _check_bases(name, bases)
    return ScriptMeta(name, bases, namespace, **kwargs)


METACLASS_BASES: Final[dict[Any, Any]] = {}
"""A facade's metaclass marker → the base it stands for (``metaclass=ABCMeta``: ``ABC``),
looked up by identity: a script's ``metaclass=`` names nothing else."""


_STR: Final = frozenset({
    "capitalize", "casefold", "count", "encode", "endswith", "find", "index", "isalnum",
    "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower", "isnumeric",
    "isprintable", "isspace", "istitle", "isupper", "lower", "lstrip", "maketrans", "partition",
    "removeprefix", "removesuffix", "rfind", "rindex", "rpartition", "rsplit", "rstrip", "split",
    "splitlines", "startswith", "strip", "swapcase", "title", "translate", "upper",
    # size-guarded below:
    "center", "expandtabs", "join", "ljust", "replace", "rjust", "zfill",
})
_BYTES: Final = frozenset({"decode", "hex", "fromhex", "count", "endswith", "startswith",
                           "find", "split", "strip", "lower", "upper"})
_INT: Final = frozenset({"bit_length", "bit_count", "real", "imag", "numerator",
                         "denominator", "conjugate", "as_integer_ratio",
                         "from_bytes", "to_bytes"})  # size-guarded below
_FLOAT: Final = frozenset({"is_integer", "as_integer_ratio", "hex", "fromhex", "real", "imag",
                           "conjugate"})
_LIST: Final = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "index",
                          "count", "sort", "reverse", "copy"})
_DICT: Final = frozenset({"keys", "values", "items", "get", "pop", "popitem", "setdefault",
                          "update", "clear", "copy", "fromkeys"})
_SET: Final = frozenset({"add", "remove", "discard", "pop", "clear", "copy", "union",
                         "intersection", "difference", "symmetric_difference", "update",
                         "intersection_update", "difference_update",
                         "symmetric_difference_update", "issubset", "issuperset", "isdisjoint"})
_FROZENSET: Final = frozenset({"copy", "union", "intersection", "difference",
                               "symmetric_difference", "issubset", "issuperset", "isdisjoint"})
_DATE: Final = frozenset({"year", "month", "day", "weekday", "isoweekday", "isocalendar",
                          "isoformat", "strftime", "ctime", "toordinal", "replace", "today",
                          "fromisoformat", "fromordinal", "fromisocalendar", "fromtimestamp",
                          "timetuple", "min", "max", "resolution"})
_TIME: Final = frozenset({"hour", "minute", "second", "microsecond", "tzinfo", "fold",
                          "isoformat", "strftime", "replace", "fromisoformat", "utcoffset",
                          "dst", "tzname", "min", "max", "resolution"})
_DATETIME: Final = _DATE | _TIME | frozenset({
    "date", "time", "timetz", "timestamp", "astimezone", "combine", "now", "utcnow",
    "strptime", "utcfromtimestamp", "utctimetuple"})
_EXC: Final = frozenset({"args", "add_note"})
_ISO_CALENDAR: Final[type] = type(_dt.date(2020, 1, 1).isocalendar())
_STRUCT_TIME: Final[type] = type(_dt.date(2020, 1, 1).timetuple())

ATTRIBUTES: Final[dict[type, frozenset[str]]] = {
    str: _STR,
    bytes: _BYTES,
    int: _INT,
    bool: _INT,
    float: _FLOAT,
    complex: frozenset({"real", "imag", "conjugate"}),
    list: _LIST,
    tuple: frozenset({"count", "index"}),
    dict: _DICT,
    set: _SET,
    frozenset: _FROZENSET,
    range: frozenset({"start", "stop", "step", "count", "index"}),
    slice: frozenset({"start", "stop", "step"}),
    type({}.keys()): frozenset({"isdisjoint"}),
    type({}.items()): frozenset({"isdisjoint"}),
    Counter: _DICT | frozenset({"most_common", "subtract", "total", "elements"}),
    defaultdict: _DICT | frozenset({"default_factory"}),
    OrderedDict: _DICT | frozenset({"move_to_end"}),
    deque: frozenset({"append", "appendleft", "pop", "popleft", "extend", "extendleft",
                      "rotate", "count", "index", "clear", "copy", "maxlen", "reverse",
                      "insert", "remove"}),
    _dt.date: _DATE,
    _dt.time: _TIME,
    _dt.datetime: _DATETIME,
    _dt.timedelta: frozenset({"days", "seconds", "microseconds", "total_seconds", "min",
                              "max", "resolution"}),
    _dt.timezone: frozenset({"utc", "utcoffset", "tzname", "dst", "min", "max"}),
    _ISO_CALENDAR: frozenset({"year", "week", "weekday", "count", "index"}),
    _STRUCT_TIME: frozenset({"tm_year", "tm_mon", "tm_mday", "tm_hour", "tm_min", "tm_sec",
                             "tm_wday", "tm_yday", "tm_isdst", "tm_zone", "tm_gmtoff", "count",
                             "index"}),
    property: frozenset({"getter", "setter", "deleter"}),
    BaseException: _EXC,
    ImportError: _EXC | {"name"},
    ModuleNotFoundError: _EXC | {"name"},
    OSError: _EXC | {"errno", "strerror", "filename", "filename2"},
    GeneratorType: frozenset({"send", "throw", "close"}),
    AsyncGeneratorType: frozenset({"aclose"}),
    StopIteration: _EXC | {"value"},
    ExceptionGroup: _EXC | {"exceptions", "message", "split", "subgroup"},
    ToolCallError: _EXC | {"tool", "message", "path"},
    json.JSONDecodeError: _EXC | {"msg", "doc", "pos", "lineno", "colno"},
    UnicodeDecodeError: _EXC | {"encoding", "reason", "start", "end"},
    UnicodeEncodeError: _EXC | {"encoding", "reason", "start", "end"},
}
"""Exact type -> attribute names a script may read (on instances and on the class object)."""

EXCEPTIONS: Final[tuple[type[BaseException], ...]] = (
    Exception, ArithmeticError, AssertionError, AttributeError, IndexError, KeyError,
    LookupError, NameError, NotImplementedError, OverflowError, RecursionError, RuntimeError,
    StopIteration, StopAsyncIteration, TimeoutError, TypeError, UnicodeError, ValueError,
    ZeroDivisionError, ToolCallError, ConnectionError, OSError, ImportError,
    UnboundLocalError,
)
"""Exception classes visible as builtins (and usable as bases)."""

SANDBOX_BASES: Final = frozenset({object, *EXCEPTIONS})
"""Non-script classes a script class may inherit from."""

EXPORTED_CLASSES: Final[set[type]] = set()
"""Classes a sandbox module exports (``decimal.Context``, ``uuid.UUID``): ``type(x)`` of
an instance hands the class back, which the script may import anyway."""

WRITABLE_TYPES: Final[set[type]] = {dict, list, set, bytearray, Counter, defaultdict,
                                     OrderedDict, deque}
"""Host types whose instances a script may modify (item assignment, ``del``); facades add
theirs (``collections.ChainMap``)."""


def _width_guard(method: str) -> Callable[[Any], Callable[..., Any]]:
    def bind(s: Any) -> Callable[..., Any]:
        real = getattr(s, method)

        def guarded(*args: Any, **kwargs: Any) -> Any:
            width = args[0] if args else kwargs.get("width")
            if isinstance(width, int):
                ensure_size(int(width), f"str.{method}")
            return real(*args, **kwargs)
        return guarded
    return bind


def _bind_replace(s: str) -> Callable[..., str]:
    def replace(old: str, new: str, count: int = -1) -> str:
        old, new, count = _exact(old), _exact(new), _exact(count)
        if isinstance(old, str) and isinstance(new, str) and len(new) > len(old):
            hits = count_of(s, old) if old else len(s) + 1
            if count >= 0:
                hits = min(hits, count)
            ensure_size(len(s) + hits * (len(new) - len(old)), "str.replace")
        if (type(old) is str and type(new) is str and type(count) is int and old
                and len(old) <= _REPLACE_CHUNK // 2 < len(s)):
            return _replace_in_chunks(s, old, new, count)
        if len(s) > _SCAN_FREE:
            charge_operations(len(s) // TEXT_UNIT)
        return s.replace(old, new, count)
    return replace


def _exact(arg: Any) -> Any:
    """A str or int argument as its exact type (C reads a subclass's value, never its
    methods), so a ``StrEnum``/``IntEnum`` member or a bool goes the chunked way: as such,
    ``x.replace(C.A, 'bb')`` and ``x.expandtabs(True)`` were one C call over the whole text
    (0.9 s and 0.4 s of GIL held for 30 million characters)."""
    kind = type(arg)
    if kind is str or kind is int:
        return arg
    if isinstance(arg, str):
        return str.__str__(arg)
    if isinstance(arg, int):
        return int.__int__(arg)
    return arg


_REPLACE_CHUNK: Final = 1 << 18
"""Characters of a text ``str.replace`` reads in one C call: one that grows the text writes
~15 ns a character (``'a' * 30_000_000`` with ``'a'`` made ``'bb'`` held the GIL 0.63 s),
and any replace was one operation however long the text."""


def _replace_in_chunks(text: str, old: str, new: str, count: int) -> str:
    """``text.replace(old, new, count)`` a chunk at a time, an operation charged per
    ``TEXT_UNIT`` characters.

    Replacing goes left to right over non-overlapping matches (``split`` finds the same
    ones), so the matches one call makes that lie inside a chunk are the ones a replace of
    the chunk alone makes; the chunk's ``split`` also tells where its last match ended. The
    next chunk starts there, or ``len(old) - 1`` characters before the chunk's end if that
    is later (a match starting before it would have been inside the chunk): a match that
    straddles the boundary is found whole in the next chunk."""
    parts = []
    pos = 0
    left = count
    while True:
        charge_operations(_REPLACE_CHUNK // TEXT_UNIT)
        end = pos + _REPLACE_CHUNK
        if end >= len(text) or not left:
            parts.append(text[pos:].replace(old, new, left))
            return "".join(parts)
        pieces = text[pos:end].split(old, left)
        matched = len(pieces) - 1
        done = end - len(pieces[-1])
        if matched:
            parts += (new.join(pieces[:-1]), new)
        if left > 0:
            left -= matched
        resume = max(done, end - len(old) + 1)
        parts.append(text[done:resume])
        pos = resume


def _bind_expandtabs(s: str) -> Callable[..., str]:
    def expandtabs(tabsize: int = 8) -> str:
        tabsize = _exact(tabsize)
        if isinstance(tabsize, int) and tabsize > 1:
            ensure_size(len(s) + s.count("\t") * int(tabsize), "str.expandtabs")
        if type(tabsize) is int and len(s) > _CASE_CHUNK:
            return _expand_in_chunks(s, tabsize)
        return s.expandtabs(tabsize)
    return expandtabs


def _expand_in_chunks(text: str, tabsize: int) -> str:
    """``text.expandtabs(tabsize)`` a chunk at a time, an operation charged per
    ``TEXT_UNIT`` characters: CPython walks the text twice a character (~25 ns a tab), so
    30 million tabs held the GIL 0.6 s in one call (the host loop's ticker stopped).

    A tab stop depends on the column modulo ``tabsize`` only, and a line end (``\n`` or
    ``\r``) resets it: a chunk expands as one call would when it starts at a tab stop, or
    when a line end comes before its first tab; otherwise its first tab is filled here
    from the column carried over, and the rest, which starts at a tab stop, expands."""
    parts = []
    column = 0
    for start in range(0, len(text), _CASE_CHUNK):
        charge_operations(_CASE_CHUNK // TEXT_UNIT)
        chunk = text[start:start + _CASE_CHUNK]
        tab = chunk.find("\t")
        if tabsize <= 0 or not column or tab < 0 or (
                chunk.find("\n", 0, tab) >= 0 or chunk.find("\r", 0, tab) >= 0):
            out = chunk.expandtabs(tabsize)
        else:
            fill = tabsize - (column + tab) % tabsize
            out = chunk[:tab] + " " * fill + chunk[tab + 1:].expandtabs(tabsize)
        if tabsize > 0:
            line = max(out.rfind("\n"), out.rfind("\r"))
            column = (column + len(out) if line < 0 else len(out) - line - 1) % tabsize
        parts.append(out)
    return "".join(parts)


_JOINED: Final = 4
"""Items of ``str.join`` charged as one operation: the guard copies, type-checks and
measures each in C before the join copies it (2,000 joins of 20,000 keys took 2.8 s for
2,000 operations when none was charged)."""


def _bind_join(s: str) -> Callable[..., str]:
    def join(iterable: Any) -> str:
        items = list(iterable)
        charge_operations(len(items) // _JOINED)
        if all(map(isinstance, items, repeat(str))):
            ensure_size(sum(map(len, items)) + len(s) * len(items), "str.join")
        return s.join(items)
    return join


_CHUNK_FREE: Final = 1 << 18
"""Characters a per-character C loop with a table lookup (``translate``, ``maketrans``:
~30 ns a character, ~8 ms a chunk) is given in one call; longer texts go in chunks of this
size that tick between them (10**8 characters held the GIL 3 s in one call)."""

_TRANSLATED: Final = 8
"""Characters of a chunked ``translate`` charged as one operation (~30 ns each through a
dict, ~2 ns on CPython's ASCII path)."""


def _bind_translate(s: str) -> Callable[..., str]:
    def translate(table: Any) -> str:
        entries = table.items() if isinstance(table, dict) else ()
        extra = 0
        for key, value in entries:
            if isinstance(value, str) and len(value) > 1:
                char = chr(key) if isinstance(key, int) and 0 <= key < 0x110000 else None
                if char is not None:
                    extra += s.count(char) * (len(value) - 1)
        ensure_size(len(s) + extra, "str.translate")
        if type(table) is not dict:
            # a script's mapping runs its own (ticking) code per lookup; chunks would
            # change how often CPython's per-call cache of ASCII lookups calls it
            if isinstance(table, dict):  # a Counter, a defaultdict: C lookups
                charge_operations(len(s) // _TRANSLATED)
            return s.translate(table)
        if len(s) <= _CHUNK_FREE:
            # charged too: 2,000 of a 20,000-character text took 2.4 s for 2,000 operations
            charge_operations(len(s) // _TRANSLATED)
            return s.translate(table)
        parts = []
        for start in range(0, len(s), _CHUNK_FREE):
            charge_operations(_CHUNK_FREE // _TRANSLATED)
            parts.append(s[start:start + _CHUNK_FREE].translate(table))
        return "".join(parts)
    return translate


def _class_maketrans(cls: Any) -> Callable[..., Any]:
    """``str.maketrans(x, y, z)``: one dict entry per character of long texts, inserted in
    chunks that tick, an operation a character (the same dict: each character's entry in
    order, later ones win)."""
    def maketrans(*args: Any) -> Any:
        if not (2 <= len(args) <= 3 and all(isinstance(arg, str) for arg in args)
                and len(args[0]) == len(args[1])
                and sum(map(len, args)) > _CHUNK_FREE):
            return str.maketrans(*args)
        table: dict[int, Any] = {}
        source, target = args[0], args[1]
        for start in range(0, len(source), _CHUNK_FREE):
            charge_operations(_CHUNK_FREE)
            end = start + _CHUNK_FREE
            table.update(zip(map(ord, source[start:end]), map(ord, target[start:end]),
                             strict=True))
        dropped = args[2] if len(args) == 3 else ""
        for start in range(0, len(dropped), _CHUNK_FREE):
            charge_operations(_CHUNK_FREE)
            table.update(dict.fromkeys(map(ord, dropped[start:start + _CHUNK_FREE])))
        return table
    return maketrans


_STRIP_WINDOW: Final = 1 << 20
"""Characters times strip characters one C call of a ``strip(chars)`` is given: CPython
looks each character of the text up in ``chars`` by a linear search, so a text of 10**6
characters stripped by 10**7 ``chars`` held the GIL for minutes in one call."""

_WIDE_LOOKUP: Final = 16
"""Bytes of text read a character of non-ASCII ``chars`` looked through costs (a C loop
~1.5 ns a character, where ``memchr`` reads ASCII at ~0.1 ns a byte)."""


def _bind_strip(method: str) -> Callable[[Any], Callable[..., Any]]:
    """``strip``/``lstrip``/``rstrip`` with ``chars``: a long text by a long ``chars`` is
    stripped a window at a time (same result), each window's lookups charged as text read."""
    def bind(text: Any) -> Callable[..., Any]:
        real = getattr(text, method)

        kind = str if isinstance(text, str) else bytes if isinstance(text, bytes) else None

        def strip(chars: Any = None) -> Any:
            # a StrEnum member as text or chars is its text (the enum cannot redefine a
            # str method): one C call of a member of 10**7 chars held the GIL 3 s
            if kind is None or not isinstance(chars, kind):
                return real(chars)
            if len(chars) > _CHARS_FREE:
                chars = _distinct(chars)
            if len(chars) * len(text) <= _STRIP_WINDOW:
                return real(chars)
            return _strip_in_windows(text, chars, method)
        return strip
    return bind


_CHARS_FREE: Final = 1 << 10
"""Length of ``chars`` past which a strip is given each of its characters once: CPython
reads all of ``chars`` (a bloom mask) on every call, and the result depends on their set
only."""


def _distinct(chars: Any) -> Any:
    """The distinct characters of ``chars`` (same type), gathered in chunks that tick."""
    seen: set[Any] = set()
    for start in range(0, len(chars), _CHUNK_FREE):
        charge_operations(_CHUNK_FREE // _TRANSLATED)
        seen.update(chars[start:start + _CHUNK_FREE])
    return "".join(seen) if isinstance(chars, str) else bytes(seen)


def _strip_in_windows(text: Any, chars: Any, method: str) -> Any:
    window = max(1, _STRIP_WINDOW // len(chars))
    lookup = len(chars) * (1 if chars.isascii() else _WIDE_LOOKUP)
    start, end = 0, len(text)
    while method != "rstrip" and start < end:
        piece = text[start:min(start + window, end)]
        kept = len(piece.lstrip(chars))
        charge_text((len(piece) - kept + 1) * lookup)
        start += len(piece) - kept
        if kept:
            break
    while method != "lstrip" and end > start:
        piece = text[max(start, end - window):end]
        kept = len(piece.rstrip(chars))
        charge_text((len(piece) - kept + 1) * lookup)
        end -= len(piece) - kept
        if kept:
            break
    return text[start:end]


_AFFIX_FREE: Final = 1 << 16
"""Characters a ``startswith``/``endswith`` call may compare for free."""

_AFFIX_TEXT: Final = 64
"""Texts up to this length are matched against a tuple without a guard."""


def _bind_affix(method: str) -> Callable[[Any], Callable[..., Any]]:
    """``startswith``/``endswith`` given a tuple: each item is compared with the text
    (``memcmp`` up to the shorter of the two), so ``s.startswith((p,) * 10**6)`` over a
    megabyte ``s`` and ``p`` read 10**12 bytes in one call (minutes holding the GIL):
    charged, and refused when it could not end before the deadline."""
    def bind(text: Any) -> Callable[..., Any]:
        real: Callable[..., Any] = getattr(text, method)
        if len(text) <= _AFFIX_TEXT:
            return real  # at most a short memcmp an item: a tuple's own size bounds it

        def match(affix: Any, *args: Any) -> Any:
            if type(affix) is tuple and len(affix) * len(text) > _AFFIX_FREE:
                # an operation an item too: this walk and C's loop (2,000 calls with
                # 20,000 short items took 5 s, their bytes charged as one text)
                charge_operations(len(affix))
                if all(map(isinstance, affix, repeat((str, bytes)))):
                    charge_text(sum(map(min, map(len, affix), repeat(len(text)))))
            return real(affix, *args)
        return match
    return bind


_CASE_COST: Final = 16
"""Bytes per character of a non-ASCII case mapping: CPython first writes the text into a
buffer of three 4-byte characters per input character (``'ß'.upper()`` is ``'SS'``), so a
latin-1 string costs about 12 times its size, plus a result up to 3 times its size."""


_CASE_CHUNK: Final = 1 << 18
"""Characters of an ASCII text ``title``/``swapcase``/``capitalize`` map in one C call:
they go through the 12-byte-a-character buffer above even for ASCII, ~25-30 ns a
character (10**8 held the GIL 2.5-4.5 s and took 1.2 GB). ASCII ``upper``/``lower``/
``casefold`` map in place at memory speed (~4 ns, no slower than the copy that joining
chunks would add), so they stay one call."""

_CHUNKED_CASES: Final = frozenset({"title", "swapcase", "capitalize"})


def _bind_case(method: str) -> Callable[[Any], Callable[..., Any]]:
    """``upper``/``lower``/``casefold``/``title``/``swapcase``/``capitalize``; a long ASCII
    text's ``title``/``swapcase``/``capitalize`` a chunk at a time (``_case_in_chunks``)."""
    def bind(s: Any) -> Callable[..., Any]:
        real = getattr(s, method)

        def convert() -> Any:
            if not s.isascii():
                ensure_size(len(s) * _CASE_COST, f"str.{method}()")
            elif len(s) > _CASE_CHUNK and method in _CHUNKED_CASES:
                return _case_in_chunks(s, method)
            return real()
        return convert
    return bind


def _case_in_chunks(text: str, method: str) -> str:
    """``getattr(text, method)()`` of an ASCII ``text``, a chunk at a time, an operation
    charged per ``TEXT_UNIT`` characters. ASCII mappings are per character but for two:
    ``capitalize`` lowers all but the first, and ``title`` uppers a letter only after a
    non-letter, so each chunk is mapped with the character before it (then dropped) as
    its context."""
    parts = []
    for start in range(0, len(text), _CASE_CHUNK):
        charge_operations(_CASE_CHUNK // TEXT_UNIT)
        end = start + _CASE_CHUNK
        if not start:
            parts.append(getattr(text[:end], method)())
        elif method == "title":
            parts.append(text[start - 1:end].title()[1:])
        else:
            parts.append(getattr(text[start:end], "lower" if method == "capitalize" else method)())
    return "".join(parts)


_SCAN_FREE: Final = 1 << 14
"""Texts up to this length scan for free (a few hundred nanoseconds)."""

_SCANS: Final = ("count", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit",
                 "isidentifier", "islower", "isnumeric", "isprintable", "isspace", "istitle",
                 "isupper")
"""Text methods that read the whole text (``count``: its ``start:end`` slice)."""


def _bind_scan(method: str) -> Callable[[Any], Callable[..., Any]]:
    """A whole-text scan of a big text is charged ``len / TEXT_UNIT`` operations, like a
    comparison: ``[s.count('x') for i in range(2000)]`` is 2000 scans, not 2000 steps. A
    long text's predicate (``isalpha``, ``islower`` …) goes a chunk at a time
    (``_predicate_in_chunks``)."""
    chunked = method in _CHUNKED_PREDICATES

    def bind(text: Any) -> Callable[..., Any]:
        real: Callable[..., Any] = getattr(text, method)
        if len(text) <= _SCAN_FREE:
            return real

        def scan(*args: Any) -> Any:
            if chunked and not args and isinstance(text, str) and len(text) > _CASE_CHUNK:
                return _predicate_in_chunks(text, method)
            if method == "count" and args:
                window = chunked_span(text, args[0], args[1:])
                if window is not None:
                    return count_in_chunks(text, args[0], *window)
            span = len(text)
            if len(args) > 1:
                span = len(range(*slice(*args[1:3]).indices(span)))
            charge_operations(span // TEXT_UNIT)
            return real(*args)
        return scan
    return bind


_EACH_CHARACTER: Final = frozenset({"isalnum", "isalpha", "isdecimal", "isdigit", "isnumeric",
                                    "isprintable", "isspace"})
"""Predicates true of a text when true of each of its characters (and it is not empty)."""

_CHUNKED_PREDICATES: Final = _EACH_CHARACTER | {"isidentifier", "islower", "isupper",
                                                "istitle"}
"""Text predicates a long text answers a chunk at a time: one C call reads the whole text
at ~4-8 ns a character (``('a' * 120_000_000).islower()`` held the GIL 0.9 s,
``('A' * 120_000_000).isupper()`` 1.0 s, ``isalpha`` 0.65 s), charged one operation per
``TEXT_UNIT`` characters but never letting the host loop run."""


def _predicate_in_chunks(text: str, method: str) -> bool:
    """``getattr(text, method)()`` of a text longer than a chunk, a chunk at a time, an
    operation charged per ``TEXT_UNIT`` characters.

    Each chunk is asked with what the one call would know there: ``isidentifier`` of a later
    chunk after ``_`` (a start); ``islower`` is false at an upper or title case letter and
    needs one cased letter (``chunk + 'a'`` is lower when the chunk has no upper or title
    case letter; ``isupper`` alike); ``istitle`` reads each chunk after a letter or a space
    as the character before it was cased or not, then ``' A'`` (so a chunk without cased
    letters passes), and needs one cased letter somewhere."""
    step = _CASE_CHUNK
    cased = False
    before = " "
    for start in range(0, len(text), step):
        charge_operations(step // TEXT_UNIT)
        chunk = text[start:start + step]
        if method in _EACH_CHARACTER:
            if not getattr(chunk, method)():
                return False
        elif method == "isidentifier":
            if not (chunk if not start else "_" + chunk).isidentifier():
                return False
        elif method == "islower" or method == "isupper":
            mark = "a" if method == "islower" else "A"
            if getattr(chunk, method)():
                cased = True
            elif not getattr(chunk + mark, method)():
                return False
        else:  # istitle
            if not (before + chunk + " A").istitle():
                return False
            cased = cased or chunk.islower() or not (chunk + "a").islower()
            last = chunk[-1]
            before = "A" if last.islower() or last.istitle() else " "
    return method in _EACH_CHARACTER or method == "isidentifier" or cased


def _bind_extend(seq: Any, method: str = "extend") -> Callable[..., None]:
    """``seq.extend`` (or ``deque.extendleft``: ``method``) with the size checked first."""
    def extend(items: Any) -> None:
        if hasattr(items, "__len__"):
            ensure_size(len(seq) * 8 + (items_size(items) if isinstance(items, str | bytes)
                                        else len(items) * 8), f"{type(seq).__name__}.{method}")
        getattr(seq, method)(items)
    return extend


_PIECE: Final = 64
"""Bytes one piece of a split costs (list slot + a small str/bytes object)."""

_STR_SPACE: Final = (" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")
_UNICODE_SPACE: Final = (*_STR_SPACE, "\x85", "\xa0", "\u1680", *map(chr, range(0x2000, 0x200b)),
                         "\u2028", "\u2029", "\u202f", "\u205f", "\u3000")
_BYTES_SPACE: Final = (b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c")
_STR_LINES: Final = ("\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
                     "\u2029")
_BYTES_LINES: Final = (b"\n", b"\r")


def _separators(text: Any, sep: Any, lines: bool) -> int:
    """How many places ``text`` can be cut at (an upper bound, C-speed counts)."""
    if lines:
        marks: tuple[Any, ...] = _BYTES_LINES if isinstance(text, bytes) else _STR_LINES
    elif sep is not None:
        return count_of(text, sep) if sep else 0
    elif isinstance(text, bytes):
        marks = _BYTES_SPACE
    else:
        marks = _STR_SPACE if text.isascii() else _UNICODE_SPACE
    return sum(text.count(mark) for mark in marks)


def _bind_split(method: str) -> Callable[[Any], Callable[..., Any]]:
    """``split``/``rsplit``/``splitlines``: many small objects from one C call (a 16 MB
    text of two-letter words becomes ~300 MB of list and strings): size the pieces first."""
    lines = method == "splitlines"

    def bind(text: Any) -> Callable[..., Any]:
        real = getattr(text, method)

        def split(*args: Any, **kwargs: Any) -> Any:
            if lines:
                check_split(text, None, -1, f"{type(text).__name__}.{method}", lines=True)
            else:
                sep = args[0] if args else kwargs.get("sep")
                maxsplit = _exact(args[1] if len(args) > 1 else kwargs.get("maxsplit", -1))
                check_split(text, sep, maxsplit, f"{type(text).__name__}.{method}")
                if (type(maxsplit) is int and len(args) + len(kwargs) <= 2
                        and chunked_span(text, sep, ()) is not None):  # a window at a time
                    chunked = split_in_chunks if method == "split" else rsplit_in_chunks
                    return chunked(text, sep, maxsplit)
            return real(*args, **kwargs)
        return split
    return bind


def check_split(text: Any, sep: Any, maxsplit: Any, what: str, *, lines: bool = False) -> None:
    """Trip the memory limit if splitting ``text`` could build too many pieces."""
    if not isinstance(text, str | bytes) or len(text) * _PIECE <= _SPLIT_FAST:
        return
    cuts = len(text)
    if len(text) * _PIECE > _SPLIT_COUNT:
        cuts = _separators(text, sep, lines)
    if isinstance(maxsplit, int) and maxsplit >= 0:
        cuts = min(cuts, int(maxsplit))
    ensure_size((cuts + 1) * _PIECE + len(text), what)


_SPLIT_FAST: Final = 1 << 16
_SPLIT_COUNT: Final = 1 << 22


_STRFTIME_COST: Final = 1024
"""Bytes ``strftime`` may need per format character: up to 24 characters of output per
directive, in a 4-byte wide buffer CPython grows to 256 times the format length."""


_ZONE_COST: Final = 64
"""Bytes ``strftime`` may need per character of a time zone name each ``%Z`` stands for:
``datetime`` writes the name into the format (``%`` doubled), which the same growing
buffers then render."""


def check_strftime(fmt: Any, value: Any = None) -> None:
    """Refuse date format strings whose rendering could need a huge buffer. ``%Z`` is the
    time zone name of ``value`` (the date being formatted), any length a script gave
    ``datetime.timezone``: a thousand of a megabyte name grew a host by 10 GB."""
    if not isinstance(fmt, str):
        return
    zone = 0
    if "%Z" in fmt and isinstance(value, _dt.datetime | _dt.time):
        name = value.tzname()
        zone = fmt.count("%Z") * len(name) if isinstance(name, str) else 0
    if len(fmt) > 16 or zone:
        ensure_size(len(fmt) * _STRFTIME_COST + zone * _ZONE_COST, "strftime()")


def _bind_strftime(value: Any) -> Callable[..., str]:
    def strftime(fmt: str) -> str:
        check_strftime(fmt, value)
        result: str = value.strftime(fmt)
        return result
    return strftime


_MUTABLE_SEQUENCES: Final = (list, deque)


def held_items(seq: Any, value: Any) -> tuple[Any, ...] | None:
    """The items of a list or deque, held while a C search (``index``/``count``/``remove``)
    compares them with ``value``, when a comparison may run script code (an ``__eq__``).

    The C loop holds each item it compares by a borrowed reference only: an item's
    ``__eq__`` that emptied the deque freed that very item, and the comparison went on with
    it (``deque.index``: a segfault of an in-process host on CPython 3.11 and 3.12.1, and
    a freed object handed to the other side's ``__eq__``). Holding every item for the
    length of the call keeps each one alive; CPython then reports the mutation itself
    ("deque mutated during iteration")."""
    if type(seq) not in _MUTABLE_SEQUENCES or (
            type(value) in SHALLOW and SHALLOW.issuperset(map(type, seq))):
        return None
    return tuple(seq)


def _bind_index(seq: Any) -> Callable[..., Any]:
    """``list``/``deque``/``range`` ``.index(x)``: CPython's "x is not in list" message is
    ``repr(x)`` built in C, so ``x`` is sized like ``repr(x)`` first; the comparisons with
    every item are charged like ``x in seq`` (and the items held: :func:`held_items`)."""
    def index(value: Any, *args: Any) -> Any:
        _check_render(value, f"{type(seq).__name__}.index()")
        charge_search(seq, value)
        held = held_items(seq, value)
        try:
            return seq.index(value, *args)
        finally:
            del held
    return index


def _bind_search(method: str) -> Callable[[Any], Callable[..., Any]]:
    """``count``/``remove``: one C comparison per item, charged like ``x in seq`` (the items
    held while they are compared: :func:`held_items`)."""
    def bind(seq: Any) -> Callable[..., Any]:
        real = getattr(seq, method)

        def search(value: Any) -> Any:
            charge_search(seq, value)
            held = held_items(seq, value)
            try:
                return real(value)
            finally:
                del held
        return search
    return bind


def _bind_keyed(method: str) -> Callable[[Any], Callable[..., Any]]:
    """``set.add``/``dict.get`` …: the key is hashed; a nested tuple is charged first."""
    def bind(obj: Any) -> Callable[..., Any]:
        real = getattr(obj, method)

        def call(key: Any, *args: Any) -> Any:
            return real(guarded_key(key), *args)
        call.__name__ = method
        call.__qualname__ = f"{type(obj).__name__}.{method}"
        return call
    return bind


def _bind_move_to_end(obj: OrderedDict[Any, Any]) -> Callable[..., None]:
    """``OrderedDict.move_to_end(key, last=True)``: as a keyed method, with its keyword
    (kept out of ``_bind_keyed``, whose methods ``dict.get`` … are hot)."""
    real = obj.move_to_end

    def move_to_end(key: Any, last: bool = True) -> None:
        real(guarded_key(key), last)
    return move_to_end


def _bind_sort(seq: list[Any]) -> Callable[..., None]:
    """``list.sort``: the items are charged as ``sorted`` counts them (2,000 sorts of
    20,000 ints took 2.5 s for 2,000 operations), comparing nested items too."""
    def sort(*, key: Any = None, reverse: bool = False) -> None:
        charge_operations(len(seq))
        if key is None:
            charge_sort(seq)
        seq.sort(key=charge_each(key, len(seq).bit_length()), reverse=reverse)
    return sort


def _bind_counted(method: str) -> Callable[[Any], Callable[..., Any]]:
    """Bulk inserts (``set.update``, ``dict.update`` …) drawn through the operation counter:
    inserting colliding keys is quadratic inside one C call otherwise, also when the input
    is an already built set or dict (merging two colliding containers)."""
    def bind(obj: Any) -> Callable[..., Any]:
        real = getattr(obj, method)
        # A dict argument: sets take its keys, dicts its items, Counter adds its counts.
        mappings = "keep" if isinstance(obj, Counter) else (
            "items" if isinstance(obj, dict) else "keys")

        def call(*args: Any, **kwargs: Any) -> Any:
            if mappings == "keep":
                charge_counters(obj, *args)
            pace_inserts(obj, args[0] if len(args) == 1 else None)
            return real(*(_counted_arg(arg, mappings) for arg in args), **kwargs)
        return call
    return bind


def _bind_copy(mapping: Any) -> Callable[[], Any]:
    """``copy`` of the dict types: C code re-inserts every key unless it can clone the
    table (an ``OrderedDict``, a dict with deleted keys), so keys sharing a hash are
    charged first (``compare.charge_collisions``), and every key an operation."""
    def copy() -> Any:
        charge_collisions(mapping)
        charge_operations(len(mapping))  # ~30 ns a key even as a clone, like a ``**`` copy
        return mapping.copy()
    return copy


def _bind_most_common(counter: Counter[Any]) -> Callable[..., Any]:
    """``Counter.most_common``: a stdlib Python loop (heapq) over every item."""
    def most_common(n: int | None = None) -> Any:
        charge_counters(counter)
        return counter.most_common(n)
    return most_common


def _bind_elements(counter: Counter[Any]) -> Callable[[], Any]:
    """``Counter.elements``: each count is repeated in C (``Counter(a=10**12)``), so the
    items are charged (one operation each) and sized before the C call; they come as an
    iterator over a list, as Python's come from an iterator."""
    def elements() -> Any:
        # an IntEnum count is repeated in C like an int's
        total = sum(n for n in counted(counter.values()) if isinstance(n, int) and n > 0)
        charge_operations(total)
        ensure_size(total * 8, "Counter.elements()")
        return iter(list(counter.elements()))
    return elements


def _bind_generator(method: str) -> Callable[[Any], Callable[..., Any]]:
    """``send``/``throw``/``close`` of the script's own generators only (a host generator,
    such as a facade's, keeps its own protocol); ``throw`` takes an ``Exception`` (a class
    or an instance) and never a traceback."""
    def bind(gen: Any) -> Callable[..., Any]:
        if gen.gi_code.co_filename != SCRIPT_FILENAME:
            raise refuse(gen, method)
        real: Callable[..., Any] = getattr(gen, method)
        if method != "throw":
            return real

        def throw(value: Any, *rest: Any) -> Any:
            if rest or not (isinstance(value, Exception) or (
                    isinstance(value, type) and issubclass(value, Exception))):
                raise TypeError("generator.throw() takes one exception (an Exception "
                                "instance or class) in the sandbox")
            return real(value)
        return throw
    return bind


def _bind_aclose(agen: Any) -> Callable[[], Any]:
    """``await agen.aclose()`` of the script's own async generators (its ``finally`` runs,
    as a sync generator's does on ``close()``), awaited under the run as ``anext`` is."""
    if agen.ag_code.co_filename != SCRIPT_FILENAME:
        raise refuse(agen, "aclose")

    def aclose() -> Any:
        step: Any = _closed(agen)
        step.__qualname__ = "aclose"
        return wrap_result(current_run(), step)
    return aclose


async def _closed(agen: Any) -> None:
    await agen.aclose()


def _bind_exception_field(name: str) -> Callable[[Any], Any]:
    """``OSError.strerror`` & co.: like ``args``, texts carry no host address."""
    def read(exc: Any) -> Any:
        return scrubbed_args((getattr(exc, name),))[0]
    return read


def _counted_arg(arg: Any, mappings: str) -> Any:
    if isinstance(arg, str | bytes):
        return arg
    if mappings == "items" and not isinstance(arg, dict) and hasattr(arg, "keys"):
        # dict.update reads a mapping-like object through keys() and then its __getitem__
        # per key (set methods and Counter iterate it, whatever its keys()): read so here
        arg = drawn_mapping(arg)
    if isinstance(arg, dict):
        if mappings == "keep":
            return arg
        if mappings == "items":
            charge_collisions(arg)  # each insert compares the keys sharing its hash
        return counted(arg.items() if mappings == "items" else arg)
    # New keys are hashed (nested tuples are charged; a set's or dict's are already known).
    return counted(keyed(arg, pairs=mappings == "items"))


CODECS: Final = frozenset({"utf-8", "utf8", "ascii", "latin-1", "latin1", "iso-8859-1",
                           "utf-16", "utf-32", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be",
                           "utf-8-sig"})
"""Codecs ``str.encode``/``bytes.decode`` accept (others can be slow pure-Python host code)."""


def check_codec(encoding: Any, errors: Any = "strict") -> None:
    """Refuse codecs and error handlers outside the allowlist (LookupError, like Python)."""
    if not isinstance(encoding, str) or encoding.lower().replace("_", "-") not in CODECS:
        raise LookupError(f"codec {_short(encoding)} is not available in the sandbox "
                          f"(available: {', '.join(sorted(CODECS))})")
    if errors not in ("strict", "ignore", "replace"):
        raise LookupError(f"error handler {_short(errors)} is not available in the sandbox")


def _short(value: Any) -> str:
    """A value for an error message: short strings as repr, anything else by type (the
    repr of a script value can be huge: ``[s] * 1000``)."""
    if isinstance(value, str) and len(value) <= 100:
        return repr(value)
    return f"<{type(value).__name__} object>"


def _bind_codec(method: str) -> Callable[[Any], Callable[..., Any]]:
    def bind(value: Any) -> Callable[..., Any]:
        real = getattr(value, method)

        def convert(encoding: str = "utf-8", errors: str = "strict") -> Any:
            check_codec(encoding, errors)
            if len(value) > _CODEC_FREE:
                ensure_size(_coded_size(value, encoding), f"{type(value).__name__}.{method}()")
                if len(value) > _CODEC_CHUNK and errors != "strict" and (
                        not value.isascii() or _units_past_ascii(value, encoding)):
                    return _in_chunks(value, encoding, errors)
            return real(encoding, errors)
        return convert
    return bind


def _units_past_ascii(value: str | bytes, encoding: str) -> bool:
    """Whether ASCII ``value`` still meets the error handler: bytes read as UTF-32 (four
    ASCII bytes are a unit past U+10FFFF unless two of them are NULs, so ``(b'a' *
    40_000_000).decode('utf-32', 'replace')`` replaced ten million units in one call: 2 s
    of GIL held)."""
    return isinstance(value, bytes) and "32" in encoding


_CODEC_FREE: Final = 1 << 12
_CODEC_CHUNK: Final = 1 << 16
"""Characters (or bytes) one C call of a codec with an error handler is given: a UTF-16/32
codec calls the handler once per lone surrogate or bad unit (~0.3 µs each), so one call
over a text of 10 million of them held the GIL 3 s, and UTF-8 or ASCII decoding replaces
or drops each bad byte at ~50-70 ns (``(b'\\xff' * 30_000_000).decode('utf-8',
'replace')`` held it 2.2 s, ``'ignore'`` 1.4 s); chunks tick between them. Text that is all
ASCII codes at memory speed whatever the handler, and stays one call (but as UTF-32:
``_units_past_ascii``)."""


_BOMS: Final = {"utf-16": (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE),
                "utf-32": (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)}


def _in_chunks(value: str | bytes, encoding: str, errors: str) -> Any:
    """``value.encode``/``value.decode`` through the codec's incremental coder, a chunk at
    a time (where a stopped run ends), an operation charged per ``TEXT_UNIT`` characters or
    bytes: each may take the error handler (~60 ns a bad byte in UTF-8, ~0.3 µs a lone
    surrogate in UTF-16), and a chunk for some 65 operations let 100,000 operations decode
    about 6 s of bad bytes."""
    if isinstance(value, str):
        encoder = codecs.getincrementalencoder(encoding)(errors)
        out = []
        for start in range(0, len(value), _CODEC_CHUNK):
            charge_operations(1 + _CODEC_CHUNK // TEXT_UNIT)
            out.append(encoder.encode(value[start:start + _CODEC_CHUNK]))
        out.append(encoder.encode("", final=True))
        return b"".join(out)
    data = bytes(value)
    name = encoding.lower().replace("_", "-")
    if name in _BOMS:
        # one call reads a leading byte-order mark, else the native order; the incremental
        # decoder insists on the mark
        little, big = _BOMS[name]
        order = "-le" if sys.byteorder == "little" else "-be"
        if data.startswith((little, big)):
            order = "-le" if data.startswith(little) else "-be"
            data = data[len(little):]
        encoding = name + order
    decoder = codecs.getincrementaldecoder(encoding)(errors)
    parts = []
    for start in range(0, len(data), _CODEC_CHUNK):
        charge_operations(1 + _CODEC_CHUNK // TEXT_UNIT)
        parts.append(decoder.decode(data[start:start + _CODEC_CHUNK]))
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)


def _coded_size(value: str | bytes, encoding: str) -> int:
    """Bytes ``value.encode(encoding)`` or ``value.decode(encoding)`` writes, at most: a
    text's code unit grows to four bytes (``'a' * n`` in UTF-32 is four times its size),
    a decoded text is one to four bytes per character (an ASCII text past one emoji is
    four bytes a character; an undecodable byte becomes U+FFFD)."""
    name = encoding.lower().replace("_", "-")
    if isinstance(value, bytes):
        return len(value) if value.isascii() else 4 * len(value)
    if name.startswith("utf-32"):
        return 4 * len(value) + 4
    if value.isascii():
        return 2 * len(value) + 2 if name.startswith("utf-16") else len(value)
    return 4 * len(value) + 4


def _bind_hex(value: bytes) -> Callable[..., str]:
    """``bytes.hex``: two characters a byte, three with a separator."""
    def hex_(*args: Any, **kwargs: Any) -> str:
        ensure_size((3 if args or kwargs else 2) * len(value), "bytes.hex()")
        return value.hex(*args, **kwargs)
    return hex_


_UTC: Final = _dt.UTC


def _as_utc(value: Any) -> Any:
    """A naive datetime read as UTC (the sandbox's only local time zone)."""
    return value.replace(tzinfo=_UTC) if value.tzinfo is None else value


def _bind_astimezone(value: Any) -> Callable[..., Any]:
    """``datetime.astimezone``: a naive datetime is UTC, and no argument means UTC (Python
    would use the host's zone: it must not show through)."""
    def astimezone(tz: Any = None) -> Any:
        return _as_utc(value).astimezone(_UTC if tz is None else tz)
    return astimezone


def _bind_timestamp(value: Any) -> Callable[..., float]:
    """``datetime.timestamp``: a naive datetime is UTC (not the host's local time)."""
    def timestamp() -> float:
        result: float = _as_utc(value).timestamp()
        return result
    return timestamp


_STRPTIME_FORMAT: Final = 256
_STRPTIME_TEXT: Final = 4096


def _class_now(cls: Any) -> Callable[..., Any]:
    """``datetime.now()``/``today()``: without a zone, the UTC time (naive), not the
    host's local time."""
    def now(tz: Any = None) -> Any:
        if tz is not None:
            return cls.now(tz)
        return cls.now(_UTC).replace(tzinfo=None)
    return now


def _class_fromtimestamp(cls: Any) -> Callable[..., Any]:
    """``fromtimestamp(t)`` without a zone: UTC (naive), not the host's local time."""
    def fromtimestamp(t: Any, tz: Any = None) -> Any:
        if tz is not None:
            return cls.fromtimestamp(t, tz)
        return cls.fromtimestamp(t, _UTC).replace(tzinfo=None)
    return fromtimestamp


def _class_today(cls: Any) -> Callable[..., Any]:
    def today() -> Any:
        moment = _dt.datetime.now(_UTC).replace(tzinfo=None)
        return moment if issubclass(cls, _dt.datetime) else moment.date()
    return today


def _date_fromtimestamp(cls: Any) -> Callable[..., Any]:
    def fromtimestamp(t: Any) -> Any:
        return _dt.datetime.fromtimestamp(t, _UTC).date()
    return fromtimestamp


def check_strptime(date_string: Any, format: Any) -> None:
    """Refuse a ``strptime`` format or text longer than the sandbox parses (its regex is
    built from the format, and matched in C)."""
    if isinstance(format, str) and len(format) > _STRPTIME_FORMAT:
        raise ValueError(f"strptime() formats longer than {_STRPTIME_FORMAT} characters "
                         "are not supported in the sandbox")
    if isinstance(date_string, str) and len(date_string) > _STRPTIME_TEXT:
        raise ValueError(f"strptime() of a text longer than {_STRPTIME_TEXT} characters "
                         "is not supported in the sandbox")


def _class_strptime(cls: Any) -> Callable[..., Any]:
    """``datetime.strptime``: CPython imports ``_strptime`` through the *calling* frame's
    ``__import__`` (a script's refuses it), so the call is made from here."""
    def strptime(date_string: Any, format: Any) -> Any:
        check_strptime(date_string, format)
        return cls.strptime(date_string, format)
    return strptime


def _significant_bytes(data: bytes | bytearray, byteorder: Any, signed: Any) -> int:
    """The bytes of ``data`` that set the size of ``int.from_bytes(data, ...)``: its padding
    (zero bytes at the most significant end, or 0xff of a negative number) is left out."""
    if byteorder not in ("big", "little"):
        return len(data)  # CPython refuses the order; sized as it is
    top = data[:1] if byteorder == "big" else data[-1:]
    pad = b"\xff" if signed and top == b"\xff" else b"\x00"
    kept = data.lstrip(pad) if byteorder == "big" else data.rstrip(pad)
    return len(kept) + 1


def _class_from_bytes(cls: Any) -> Callable[..., Any]:
    """``int.from_bytes``: an input whose value has more than ``MAX_INT_BITS`` bits is
    refused before it is read (the int would be over the sandbox's cap); padding does not
    count (``int.from_bytes(bytes(20000))`` is 0)."""
    def from_bytes(data: Any, byteorder: Any = "big", *, signed: Any = False) -> Any:
        if isinstance(data, str):
            raise TypeError("cannot convert 'str' object to bytes")
        if not isinstance(data, bytes | bytearray):
            data = bytes(list(counted(data)))  # an iterable of ints, as Python takes
        capped_int(1 << min(_significant_bytes(data, byteorder, signed) * 8, MAX_INT_BITS + 1))
        return cls.from_bytes(data, byteorder, signed=signed)
    return from_bytes


def _bind_to_bytes(value: Any) -> Callable[..., bytes]:
    """``int.to_bytes``: the length is sized before the bytes are made."""
    def to_bytes(length: Any = 1, byteorder: Any = "big", *, signed: Any = False) -> bytes:
        if isinstance(length, int) and length > 0:
            ensure_size(int(length), "int.to_bytes()")
        result: bytes = value.to_bytes(length, byteorder, signed=signed)
        return result
    return to_bytes


def _bind_group_walk(name: str) -> Callable[[Any], Callable[..., Any]]:
    """``ExceptionGroup.split``/``subgroup``: CPython walks every leaf of the nested groups
    in C (a group may hold one big group a thousand times: a billion leaves), so the walk
    is charged first, an operation a member, with no recursion of the host's own."""
    def bind(group: BaseExceptionGroup[Any]) -> Callable[..., Any]:
        def walk(condition: Any) -> Any:
            waiting = [group]
            while waiting:
                waiting.extend(member for member in counted(waiting.pop().exceptions)
                               if isinstance(member, BaseExceptionGroup))
            return getattr(group, name)(condition)
        return walk
    return bind


def _bind_args(exc: BaseException) -> tuple[Any, ...]:
    """An exception's ``args`` with no host address in its texts (see ``scrubbed_args``)."""
    return scrubbed_args(exc.args)


def _on_instance(factory: Callable[[Any], Callable[..., Any]]) -> Callable[[Any], Any]:
    """A ``CLASS_METHODS`` factory as a binder of an instance (``d.now()``)."""
    return lambda obj: factory(type(obj))


CLASS_METHODS: Final[dict[tuple[type, str], Callable[[Any], Callable[..., Any]]]] = {
    (_dt.datetime, "now"): _class_now,
    (_dt.datetime, "today"): _class_today,
    (_dt.date, "today"): _class_today,
    (_dt.datetime, "fromtimestamp"): _class_fromtimestamp,
    (_dt.date, "fromtimestamp"): _date_fromtimestamp,
    (_dt.datetime, "strptime"): _class_strptime,
    (_dt.datetime, "utcnow"): _class_now,  # deprecated in 3.12: the same without a warning
    (_dt.datetime, "utcfromtimestamp"): _class_fromtimestamp,
    (int, "from_bytes"): _class_from_bytes,
    (str, "maketrans"): _class_maketrans,
    (bool, "from_bytes"): _class_from_bytes,
}
"""(type, name) -> factory taking the class: class-level methods the sandbox replaces, the
same on the class and on an instance (``d.now()``)."""

_KEY_VIEWS: Final[tuple[type, ...]] = (type({}.keys()), type({}.items()))

SPECIAL_METHODS: Final[dict[tuple[type, str], Callable[[Any], Any]]] = {
    (str, "encode"): _bind_codec("encode"),
    (bytes, "decode"): _bind_codec("decode"),
    (bytes, "hex"): _bind_hex,
    (str, "ljust"): _width_guard("ljust"),
    (str, "rjust"): _width_guard("rjust"),
    (str, "center"): _width_guard("center"),
    (str, "zfill"): _width_guard("zfill"),
    (str, "replace"): _bind_replace,
    (str, "expandtabs"): _bind_expandtabs,
    (str, "join"): _bind_join,
    **{(str, name): bind_search(name) for name in ("find", "rfind", "index", "rindex")},
    (bytes, "find"): bind_search("find"),
    **{(str, name): bind_partition(name) for name in ("partition", "rpartition")},
    (str, "translate"): _bind_translate,
    **{(kind, name): _bind_strip(name) for kind in (str, bytes)
       for name in ("strip", "lstrip", "rstrip") if name in ATTRIBUTES[kind]},
    **{(kind, name): _bind_affix(name) for kind in (str, bytes)
       for name in ("startswith", "endswith")},
    (str, "split"): _bind_split("split"),
    (str, "rsplit"): _bind_split("rsplit"),
    (str, "splitlines"): _bind_split("splitlines"),
    **{(str, name): _bind_case(name) for name in (
        "upper", "lower", "casefold", "title", "swapcase", "capitalize")},
    (bytes, "split"): _bind_split("split"),
    **{(kind, name): _bind_scan(name) for kind in (str, bytes) for name in _SCANS
       if name in ATTRIBUTES[kind]},
    (_dt.date, "strftime"): _bind_strftime,
    (_dt.datetime, "strftime"): _bind_strftime,
    (_dt.time, "strftime"): _bind_strftime,
    **{(kind, name): _bind_counted(name) for kind in (set, frozenset) for name in (
        "update", "union", "intersection", "difference", "symmetric_difference",
        "intersection_update", "difference_update", "symmetric_difference_update",
        "issubset", "issuperset", "isdisjoint") if name in ATTRIBUTES[kind]},
    **{(kind, name): _bind_counted(name) for kind in (dict, Counter, OrderedDict, defaultdict)
       for name in ("update", "subtract") if name in ATTRIBUTES[kind]},
    (list, "index"): _bind_index,
    (deque, "index"): _bind_index,
    (range, "index"): _bind_index,
    (tuple, "index"): _bind_index,
    (list, "count"): _bind_search("count"),
    (tuple, "count"): _bind_search("count"),
    (deque, "count"): _bind_search("count"),
    (list, "remove"): _bind_search("remove"),
    (deque, "remove"): _bind_search("remove"),
    (list, "sort"): _bind_sort,
    **{(kind, "copy"): _bind_copy for kind in (dict, Counter, OrderedDict, defaultdict)},
    **{(set, name): _bind_keyed(name) for name in ("add", "discard", "remove")},
    **{(kind, name): _bind_keyed(name) for kind in (dict, Counter, OrderedDict, defaultdict)
       for name in ("get", "pop", "setdefault")},
    (OrderedDict, "move_to_end"): _bind_move_to_end,
    (Counter, "most_common"): _bind_most_common,
    (Counter, "elements"): _bind_elements,
    **{(GeneratorType, name): _bind_generator(name) for name in ("send", "throw", "close")},
    (AsyncGeneratorType, "aclose"): _bind_aclose,
    **{(OSError, name): _bind_exception_field(name) for name in ("strerror", "filename",
                                                                  "filename2")},
    (ExceptionGroup, "message"): _bind_exception_field("message"),
    (ExceptionGroup, "split"): _bind_group_walk("split"),
    (ExceptionGroup, "subgroup"): _bind_group_walk("subgroup"),
    **{(view, "isdisjoint"): _bind_counted("isdisjoint") for view in _KEY_VIEWS},
    (list, "extend"): _bind_extend,
    (deque, "extend"): _bind_extend,
    (deque, "extendleft"): partial(_bind_extend, method="extendleft"),
    **{(kind, "args"): _bind_args for kind in (BaseException, OSError, StopIteration, ToolCallError,
                                               json.JSONDecodeError, UnicodeDecodeError,
                                               UnicodeEncodeError)},
    (int, "to_bytes"): _bind_to_bytes,
    (bool, "to_bytes"): _bind_to_bytes,
    **{(kind, "name"): _bind_exception_field("name") for kind in (ImportError,
                                                                 ModuleNotFoundError)},
    (_dt.datetime, "astimezone"): _bind_astimezone,
    (_dt.datetime, "timestamp"): _bind_timestamp,
    **{(kind, "count"): _bind_search("count") for kind in (_ISO_CALENDAR, _STRUCT_TIME)},
    **{(kind, "index"): _bind_index for kind in (_ISO_CALENDAR, _STRUCT_TIME)},
    **{key: _on_instance(factory) for key, factory in CLASS_METHODS.items()},
}
"""(type, name) -> factory binding a size-guarded method to an instance (facades add more)."""
_SPECIAL = SPECIAL_METHODS

_DICT_CHANGES: Final = ("clear", "pop", "popitem", "setdefault", "update", "move_to_end")
"""Methods of the dict types that change the dict."""


def _bind_own(method: str) -> Callable[[Any], Callable[..., Any]]:
    """The object's own method: ``dict.clear(od)`` through here is ``od.clear()`` (the
    dict's C method on an ``OrderedDict`` left its node list pointing at the cleared
    entries: a segfault on 3.13.0)."""
    def bind(obj: Any) -> Callable[..., Any]:
        bound: Callable[..., Any] = getattr(obj, method)
        return bound
    return bind


def _checking_keys(name: str, bind: Callable[[Any], Callable[..., Any]]) -> Callable[[Any], Any]:
    """``bind`` whose method, for an ``OrderedDict``, checks the keys it is handed first
    (``compare.check_ordered_key``)."""
    def bind_checked(obj: Any) -> Callable[..., Any]:
        method = bind(obj)
        if type(obj) is not OrderedDict:
            return method

        def call(*args: Any, **kwargs: Any) -> Any:
            if name == "update":
                args = tuple(ordered_pairs(arg) for arg in args)
            elif args and name in _KEYED_CHANGES:
                check_ordered_key(args[0])
            return method(*args, **kwargs)
        call.__name__ = getattr(method, "__name__", name)
        call.__qualname__ = getattr(method, "__qualname__", name)
        return call
    return bind_checked


_KEYED_CHANGES: Final = frozenset({"pop", "setdefault", "move_to_end"})


_SPECIAL.update({
    (kind, name): _checking_keys(name, _SPECIAL.get((kind, name), _bind_own(name)))
    for kind in (dict, Counter, OrderedDict, defaultdict) for name in _DICT_CHANGES
    if name in ATTRIBUTES[kind]})


def _unbound(real: type, name: str) -> Callable[..., Any]:
    """``real.name`` taken from a class (``tuple.count``, ``type(x).index``, a named tuple
    class or a script subclass): a function of the instance that runs the same guarded
    method the instance would give, so no route to a method skips its guard."""
    special = _SPECIAL[(real, name)]

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(self, real):
            raise TypeError(f"descriptor {name!r} for {real.__name__!r} objects doesn't apply "
                            f"to a {type(self).__name__!r} object")
        return special(self)(*args, **kwargs)
    method.__name__ = name
    method.__qualname__ = f"{real.__name__}.{name}"
    method.__module__ = "builtins"
    return method


def _builtin_owner(cls: type, name: str) -> type | None:
    """The builtin class in ``cls``'s MRO that defines ``name``, or None when script code
    defines it first (or nobody does)."""
    for base in cls.__mro__:
        if name in base.__dict__:
            return None if isinstance(base, ScriptMeta) else base
    return None


def _guarded_member(cls: type, obj: Any, name: str, value: Any, *, bound: bool) -> Any:
    """``value`` (``obj.name``, ``obj`` an instance of the script class ``cls`` or, with
    ``bound`` False, the class itself) as the guarded method when a builtin base defines
    ``name`` and the guards bind it (a named tuple's ``count``/``index``)."""
    owner = _builtin_owner(cls, name)
    if owner is None or (owner, name) not in _SPECIAL:
        return value
    return _SPECIAL[(owner, name)](obj) if bound else _unbound(owner, name)


_ALLOWED: dict[tuple[type, str], bool] = {}
"""Cache of granted (exact type, name) pairs for non-script types (bounded by ATTRIBUTES)."""


def _table_allows(cls: type, name: str) -> bool:
    """True when ``name`` is listed for ``cls`` or, for exceptions, for a base in its MRO."""
    names = ATTRIBUTES.get(cls)
    if names is not None:
        return name in names
    if issubclass(cls, BaseException):
        return any(name in ATTRIBUTES.get(base, ()) for base in cls.__mro__)
    return False


def _script_class_allows(cls: type, name: str) -> bool:
    """Resolve ``name`` along a script class's MRO (script code wins; builtin bases: table)."""
    return _bases_allow(cls.__mro__, name)


def _bases_allow(bases: tuple[type, ...], name: str) -> bool:
    for base in bases:
        if isinstance(base, ScriptMeta) and name in base.__dict__.get(EXTRA_NAMES, ()):
            return True
        if name in base.__dict__:
            return isinstance(base, ScriptMeta) or _table_allows(base, name)
    return False


def _owner(bases: tuple[type, ...], name: str) -> type | None:
    """The first class of ``bases`` whose own namespace defines ``name``."""
    for base in bases:
        if name in base.__dict__:
            return base
    return None


_BASE_METHODS: Final = frozenset({"__init__", "__str__", "__repr__", "__eq__", "__ne__",
                                  "__lt__", "__le__", "__gt__", "__ge__"})
"""Special methods of ``object`` and the exception bases a script instance may reach
(``super().__init__(message)``, ``Exception.__init__(self, message)``)."""


def _is_script_instance(obj: Any) -> bool:
    return isinstance(type(obj), ScriptMeta)


def _base_method(owner: type, name: str) -> Callable[..., Any]:
    """``owner.name`` (``owner`` in ``SANDBOX_BASES``) as a function that applies only to
    script instances (``Exception.__init__`` would re-initialise a host exception), with
    the text a ``__repr__``/``__str__`` makes scrubbed like every other repr."""
    real = getattr(owner, name)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not (_is_script_instance(self) and isinstance(self, owner)):
            raise TypeError(f"{owner.__name__}.{name}() applies only to instances of the "
                            "script's own classes in the sandbox")
        value = real(self, *args, **kwargs)
        return scrub(value) if type(value) is str else value
    method.__name__ = name
    method.__qualname__ = f"{owner.__name__}.{name}"
    return method


def _host_base_method(bases: tuple[type, ...], owner: type | None,
                      name: str) -> Callable[..., Any] | None:
    """``name`` of a script class's nearest host base (the first of ``bases`` in
    ``SANDBOX_BASES``), when ``owner`` (the class defining it) is that base or one of its
    own bases: ``super().__str__()`` in an ``Exception`` subclass reaches
    ``BaseException.__str__`` through ``Exception``."""
    if owner is None or name not in _BASE_METHODS or isinstance(owner, ScriptMeta):
        return None
    for base in bases:
        if base in SANDBOX_BASES:
            return _base_method(base, name) if issubclass(base, owner) else None
    return None


def _private_member(obj: Any, name: str) -> Any:
    """An underscore attribute: only the script's own objects answer one (module docstring)."""
    cls = type(obj)
    if cls is super:
        return _super_member(obj, name)
    method = name in SCRIPT_METHODS
    if not (method or private_name_ok(name)):
        raise refuse(obj, name)
    if isinstance(cls, ScriptMeta):
        if not method and name in getattr(obj, "__dict__", ()):
            return getattr(obj, name)
        bases, bound = cls.__mro__, True
    elif issubclass(cls, ScriptMeta):
        bases, bound = obj.__mro__, False
    elif issubclass(cls, type) and obj in SANDBOX_BASES and name in _BASE_METHODS:
        return _base_method(obj, name)
    else:
        raise refuse(obj, name)
    owner = _owner(bases, name)
    if isinstance(owner, ScriptMeta):
        return getattr(obj, name)
    if owner is not None and owner in NAMED_TUPLES and name in _NAMED_TUPLE_API:
        return _named_tuple_member(obj, name, bound=bound)
    function = _host_base_method(bases, owner, name)
    if function is not None:
        return partial(function, obj) if bound else function
    raise refuse(obj, name)


NAMED_TUPLES: Final[weakref.WeakSet[type]] = weakref.WeakSet()
"""The ``collections.namedtuple`` classes the facade made (the bases of the script-visible
classes): their ``_asdict``, ``_replace``, ``_make``, ``_fields`` and ``_field_defaults``
are readable, and nothing else private of theirs."""

_NAMED_TUPLE_API: Final = frozenset({"_asdict", "_replace", "_make", "_fields",
                                     "_field_defaults"})
_NAMED_TUPLE_INSTANCE: Final = frozenset({"_asdict", "_replace"})
"""Only on an instance: the class's plain function would read ``_fields`` of any object."""


def _named_tuple_member(obj: Any, name: str, *, bound: bool) -> Any:
    """A named tuple's public-by-convention API (``obj`` an instance or, with ``bound``
    False, a class): the data as copies, ``_make``'s input drawn through the counter."""
    if name in _NAMED_TUPLE_INSTANCE and not bound:
        raise refuse(obj, name)
    if name == "_field_defaults":
        return dict(obj._field_defaults)
    if name == "_make":
        cls = type(obj) if bound else obj

        def make(iterable: Any) -> Any:
            return cls._make(counted(iterable))
        make.__name__ = make.__qualname__ = "_make"
        return make
    return getattr(obj, name)


def _super_member(proxy: Any, name: str) -> Any:
    """``super().name``: resolved after the calling class in a script instance's MRO, by
    the same rules as ``self.name``; a ``super`` not bound to a script instance (``super(C,
    C)``, ``super(int, 1)``) answers nothing."""
    start = proxy.__thisclass__
    self = proxy.__self__
    cls = type(self)
    if not (isinstance(cls, ScriptMeta) and isinstance(start, ScriptMeta)
            and proxy.__self_class__ is cls):
        raise refuse(proxy, name)
    bases = cls.__mro__[cls.__mro__.index(start) + 1:]
    owner = _owner(bases, name)
    if owner is None:
        raise AttributeError(f"'super' object has no attribute {name!r}")
    if name.startswith("_"):
        if isinstance(owner, ScriptMeta) and (name in SCRIPT_METHODS or private_name_ok(name)):
            return getattr(proxy, name)
        function = _host_base_method(bases, owner, name)
        if function is not None:
            return partial(function, self)
        raise refuse(proxy, name)
    if not _bases_allow(bases, name):
        raise refuse(proxy, name)
    if not isinstance(owner, ScriptMeta) and (owner, name) in _SPECIAL:
        return _SPECIAL[(owner, name)](self)
    return getattr(proxy, name)


_MISSING: Final = object()

MAX_PROXY_NAME: Final = 1024
"""Longest attribute name looked up on a facade, the ``tools`` proxy or another sandbox object."""

_BULKY: Final = frozenset({str, bytes, list, dict, set, tuple})
_BULKY_LEN: Final = 1 << 16

TYPE_ALIASES: dict[type, type] = {}
"""Script-visible stand-ins for builtin types (e.g. the charged ``str``) -> the real type."""

EXTRA_NAMES: Final = "_sandbox_names_"
"""Class attribute (set by host code, e.g. ``namedtuple``) listing extra readable names."""


def guarded_getattr(obj: Any, name: str, default: Any = _MISSING) -> Any:
    """``_getattr_`` and the ``getattr`` builtin: allowlisted reads only; refusals raise."""
    if type(name) is not str:
        raise TypeError("attribute name must be a string")
    cls = type(obj)
    if (cls, name) in _ALLOWED:
        if cls in _BULKY and len(obj) > _BULKY_LEN:
            # Methods of big objects usually copy them (upper, split, copy …): let the
            # run's aggregate memory check look before each one.
            poll_memory()
        special = _SPECIAL.get((cls, name))
        if special is None:
            return getattr(obj, name)
        try:
            return special(obj)
        except AttributeError:  # a binder that refuses this object (a host generator)
            if default is _MISSING:
                raise
            return default
    if name in CHAINED_ERRORS:
        if isinstance(obj, BaseException):
            try:
                return _chained(obj, name)
            except AttributeError:  # no notes
                if default is _MISSING:
                    raise
                return default
        if default is not _MISSING:
            return default
        raise refuse(obj, name)
    if name.startswith("_") and not (
            (name in SCRIPT_METHODS or private_name_ok(name)) and (
                cls is super or isinstance(cls, ScriptMeta) or issubclass(cls, ScriptMeta)
                or (issubclass(cls, type) and name in _BASE_METHODS and obj in SANDBOX_BASES))):
        raise refuse(obj, name)  # even with a default: the name is never answered here
    try:
        if name.startswith("_"):
            return _private_member(obj, name)
        if cls is super:
            return _super_member(obj, name)
        if issubclass(cls, SelfGuarded):
            if len(name) > MAX_PROXY_NAME:
                # ``tools`` answers unknown names with difflib suggestions: Python time
                # proportional to the name, without ticks.
                raise AttributeError(f"{type(obj).__name__!r} object has no attribute named "
                                     f"with {len(name)} characters")
            return obj.sandbox_getattr(name)
        if isinstance(cls, ScriptMeta):
            if name in getattr(obj, "__dict__", ()):
                return getattr(obj, name)
            if _script_class_allows(cls, name):
                return _guarded_member(cls, obj, name, getattr(obj, name), bound=True)
        elif issubclass(cls, ScriptMeta):
            if _script_class_allows(obj, name):
                return _guarded_member(obj, obj, name, getattr(obj, name), bound=False)
        elif issubclass(cls, type):
            real = TYPE_ALIASES.get(obj, obj)
            if name in ATTRIBUTES.get(real, ()):
                factory = CLASS_METHODS.get((real, name))
                if factory is not None:
                    return factory(real)
                if (real, name) in _SPECIAL:
                    return _unbound(real, name)
                if name == "fromkeys":
                    return partial(_fromkeys, real)
                return getattr(real, name)
        elif _table_allows(cls, name):
            value = getattr(obj, name)
            if name == "args" and isinstance(obj, BaseException):
                return scrubbed_args(value)
            if cls in ATTRIBUTES:
                _ALLOWED[(cls, name)] = True
            special = _SPECIAL.get((cls, name))
            if special is None and isinstance(obj, BaseException):
                # ``FileNotFoundError.strerror``: the base's guarded read.
                special = next((_SPECIAL[(base, name)] for base in cls.__mro__
                                if (base, name) in _SPECIAL), None)
            return value if special is None else special(obj)
        raise refuse(obj, name)
    except AttributeError:
        if default is _MISSING:
            raise
        return default


_DATA_SPECIALS: Final = {
    "__getitem__": frozenset({list, tuple, dict, str}),
    "__contains__": frozenset({list, tuple, dict, str, set, frozenset}),
    "__len__": frozenset({list, tuple, dict, str, set, frozenset}),
}
"""Special methods of plain data a script hands on as a function (``max(d,
key=d.__getitem__)``, ``filter(seen.__contains__, xs)``): each runs as the script's
``x[k]`` (a slice sized first, a key charged as ``_key_`` charges it), ``k in x``
(charged) and ``len(x)`` do."""


def data_special(obj: Any, name: str) -> Any:
    """``x.__getitem__`` as the script wrote it (``_special_``): of plain data, a function
    (see ``_DATA_SPECIALS``); of anything else, what ``_getattr_`` answers. Only this
    route: ``getattr(x, "__len__")`` and a format field's ``{x.__len__}`` stay refused."""
    if type(obj) not in _DATA_SPECIALS.get(name, ()):
        return guarded_getattr(obj, name)
    if name == "__len__":
        def call() -> int:
            return len(obj)
    elif name == "__contains__":
        def call(key: Any) -> bool:  # type: ignore[misc]
            return guarded_contains(key, obj)
    else:
        def call(key: Any) -> Any:  # type: ignore[misc]
            # the key charged as ``x[k]``'s (``_key_``): a nested tuple's hash visits
            # every item, 2**34 of them for ``t = (t, t)`` 34 times
            return guarded_slice(obj, key) if type(key) is slice else obj[guarded_key(key)]
    call.__name__ = name
    call.__qualname__ = f"{type(obj).__name__}.{name}"
    return call


def _chained(obj: BaseException, name: str) -> BaseException | bool | list[str] | None:
    """``e.__cause__``/``e.__context__`` as a script sees them: an ``Exception`` it may hold,
    else ``None``. Never handed out: the run's own signals (cancellation, a tripped limit,
    ``GeneratorExit``), codemode's host-side errors (``LimitExceeded`` …), an exception whose
    ``args`` hold anything but plain data, script objects and such exceptions (a host
    error's ``args`` can hold host objects), and a context the raiser suppressed with
    ``raise ... from None`` (host code raising into the script does; a script's own
    ``raise X from e`` keeps ``e``, its cause, readable as the context too)."""
    if name == "__notes__":
        return _notes(obj)
    error = getattr(obj, name)
    if name == "__suppress_context__":
        return error is True
    if name == "__context__" and obj.__suppress_context__ and error is not obj.__cause__:
        return None
    return error if _holdable(error, 0, [0]) else None


_HOLDABLE_ITEMS: Final = 256
"""Values walked to decide whether a chained exception may be handed out."""


def _notes(obj: BaseException) -> list[str]:
    """``e.__notes__``: a copy of the notes ``add_note`` gave (it takes text only), each
    scrubbed as an error message is; CPython's AttributeError when there are none."""
    notes = notes_of(obj)
    if notes is None:
        raise AttributeError(f"{type(obj).__name__!r} object has no attribute '__notes__'")
    return notes


def _holdable(value: Any, depth: int, seen: list[int]) -> bool:
    seen[0] += 1
    if seen[0] > _HOLDABLE_ITEMS or depth > 8:
        return False
    kind = type(value)
    if isinstance(value, BaseException):
        if not isinstance(value, Exception) or (
                isinstance(value, CodemodeError) and kind is not ToolCallError
                and not isinstance(kind, ScriptMeta)):
            return False
        return all(_holdable(arg, depth + 1, seen) for arg in value.args)
    if kind in _PLAIN_DATA or isinstance(kind, ScriptMeta) or isinstance(value, ScriptMeta):
        return True
    if kind in (list, tuple, set, frozenset):
        return all(_holdable(item, depth + 1, seen) for item in value)
    if kind is dict:
        return all(_holdable(key, depth + 1, seen) and _holdable(item, depth + 1, seen)
                   for key, item in value.items())
    return False


_PLAIN_DATA: Final = frozenset({str, int, float, bool, type(None), bytes, complex})


def _fromkeys(cls: Any, keys: Any, value: Any = None) -> Any:
    """``dict.fromkeys`` with the keys drawn through the operation counter (an
    ``OrderedDict``'s checked first: ``compare.check_ordered_key``), and the probes of a
    list's or tuple's keys sharing a hash charged before C inserts them (20,000 ints sharing
    one: 2.2 s CPU for 20,000 operations)."""
    if cls is OrderedDict:
        checked = [check_ordered_key(key) for key in counted(keys)]
        charge_probes(key_probes(checked))  # inserted in one C call: keys sharing a hash
        return cls.fromkeys(checked, value)
    if type(keys) in (list, tuple):
        charge_probes(key_probes(keys))
    pace_inserts(items=keys)  # drawn a counted key at a time: each == may be slow
    return cls.fromkeys(counted(keyed(keys)), value)


def guarded_hasattr(obj: Any, name: str) -> bool:
    """``hasattr`` through the same allowlist; a slot name of a script class is there too
    (in CPython a member descriptor, which the sandbox's slotted classes do not keep: see
    :mod:`slots`)."""
    try:
        guarded_getattr(obj, name)
    except AttributeError:
        # type(), not isinstance(): that reads a host object's __class__
        return issubclass(type(obj), ScriptMeta) and is_slot(obj, name)
    return True


FACADE_CLASSES: Final[set[type]] = set()
"""Classes a facade made through :class:`ScriptMeta` once, for every run (``enum.Enum``,
``IntEnum``, ``StrEnum``): scripts read and subclass them like their own, but never change
them (an attribute, a method or a decorator's ``__init__`` set on one would reach every
later run, and run one run's code in another)."""


def _shared_class(obj: Any) -> TypeError:
    return TypeError(f"class {obj.__name__!r} is shared by every script and cannot be "
                     "modified in the sandbox")


def guarded_write(obj: Any) -> Any:
    """``_write_``: only the script's own containers and objects may be modified."""
    target = _writable(obj)
    return _OrderedDictItems(target) if type(target) is OrderedDict else target


def _writable(obj: Any) -> Any:
    cls = type(obj)
    if cls in WRITABLE_TYPES or isinstance(cls, ScriptMeta) or issubclass(cls, SelfWritable):
        return obj
    if issubclass(cls, ScriptMeta):
        if obj in FACADE_CLASSES:
            raise _shared_class(obj)
        return obj
    raise TypeError(f"{shown_name(obj)} objects cannot be modified in the sandbox"
                    if not issubclass(cls, type) else
                    f"{shown_name(obj)} cannot be modified in the sandbox")


def guarded_write_item(obj: Any) -> Any:
    """``_write_item_``: the target of ``obj[key] = v`` when ``key`` may be a slice (the
    ``_write_`` check, and a list's slice stores through :func:`slice_items`)."""
    if type(obj) is list:  # the common case first: a store into a list is a call less
        return _ListItems(obj)
    return guarded_write(obj)


_FAST_SEQUENCES: Final = frozenset({list, tuple})
"""What ``PySequence_Fast`` takes as it is, running no script code."""


def slice_items(target: Any, key: Any, value: Any) -> Any:
    """``value`` as ``target[key] = value`` may hand it to C: for a slice of a list, the
    items of a script iterable drawn first, through the counter.

    ``list[a:b:c] = it`` measures the slice, then draws ``it`` (script code: a generator, a
    class's ``__iter__``) and writes into the slice it measured: an iterable that emptied
    the list made CPython write past its end (a segfault of an in-process host, 3.11 and
    3.12.1, a dead worker). Drawn first, the items come from a list, and C measures the
    slice it then writes."""
    if type(key) is slice and type(target) is list and type(value) not in _FAST_SEQUENCES:
        kind = type(value)
        if hasattr(kind, "__iter__") or hasattr(kind, "__getitem__"):
            return list(counted(value))
    return value


@final
class _ListItems:
    """What ``_write_item_`` gives for a list: ``lst[key] = v`` and ``del lst[key]``, a
    slice's new items drawn before C measures the slice (:func:`slice_items`)."""

    __slots__ = ("_target",)
    _target: list[Any]

    def __init__(self, target: list[Any]) -> None:
        self._target = target

    def __getitem__(self, key: Any) -> Any:
        return self._target[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        if type(key) is slice:
            value = slice_items(self._target, key, value)
        self._target[key] = value

    def __delitem__(self, key: Any) -> None:
        del self._target[key]


def guarded_write_attribute(obj: Any) -> Any:
    """``_write_attr_``: the target of ``obj.name = v`` or ``del obj.name`` (a public name),
    the script's own objects and classes. The containers ``_write_`` lets a script change
    take items, never attributes: an ``OrderedDict`` or ``Counter`` has an instance dict,
    where a script function named ``items`` shadowed the method host code calls on it (the
    host's result encoder ran it after the run)."""
    if type(obj) in WRITABLE_TYPES:
        raise AttributeError(f"{type(obj).__name__!r} object has no attributes to set in "
                             "the sandbox: store the value under a key")
    return _writable(obj)


@final
class _OrderedDictItems:
    """What ``_write_`` gives for an ``OrderedDict``: ``od[k] = v``, ``del od[k]`` and
    ``od[k] += v`` with the key checked first (``compare.check_ordered_key``)."""

    __slots__ = ("_target",)
    _target: OrderedDict[Any, Any]

    def __init__(self, target: OrderedDict[Any, Any]) -> None:
        object.__setattr__(self, "_target", target)

    def __getitem__(self, key: Any) -> Any:
        return self._target[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._target[check_ordered_key(key)] = value

    def __delitem__(self, key: Any) -> None:
        del self._target[check_ordered_key(key)]


def guarded_write_private(obj: Any) -> Any:
    """``_write_private_``: a private attribute is set or deleted only on the script's own
    instances and classes. A container the script may modify is still a host type whose
    own methods read its private attributes (``Counter._keep_positive``)."""
    cls = type(obj)
    if isinstance(cls, ScriptMeta):
        return obj
    if issubclass(cls, ScriptMeta):
        if obj in FACADE_CLASSES:
            raise _shared_class(obj)
        return obj
    raise AttributeError(f"private attributes can be set only on the script's own objects, "
                         f"not on {cls.__name__!r} objects")


def _write_target(obj: Any, name: Any, what: str) -> Any:
    """The object ``setattr``/``delattr`` may change, checked as ``obj.name = v`` in code is:
    a private name on the script's own objects only, never a special one."""
    if type(name) is not str:
        raise TypeError(f"{what}(): attribute name must be string, not "
                        f"'{type(name).__name__}'")
    if name.startswith("_"):
        if not private_name_ok(name):
            raise refuse(obj, name)
        return guarded_write_private(obj)
    return guarded_write_attribute(obj)


def guarded_setattr(obj: Any, name: str, value: Any, /) -> None:
    """``setattr``: exactly what ``obj.name = value`` may do (``name`` chosen at run time)."""
    target = _write_target(obj, name, "setattr")
    namespace = _instance_namespace(target, name, "setattr")
    if namespace is None:
        setattr(target, name, value)
    else:
        namespace[name] = value


_MATCH_SELF: Final = (bool, bytearray, bytes, dict, float, frozenset, int, list, set, str,
                      tuple)
"""The builtin types whose one positional sub-pattern is the subject itself."""


def match_class(subject: Any, cls: Any, positional: int,
                keywords: tuple[str, ...], /) -> list[Any] | None:
    """A class pattern's test (``case Quote(s, change=c):``, see the policy's
    ``_class_case``): None when ``subject`` is not a ``cls`` or lacks an attribute, else
    the attributes' values, the positional ones named by ``cls.__match_args__``. The type
    is checked as CPython checks it; every attribute is read through the guard, as
    ``subject.change`` would be."""
    if not isinstance(cls, type):
        raise TypeError("called match pattern must be a class")
    if not isinstance(subject, cls):
        return None
    names: tuple[str, ...] = ()
    values: list[Any] = []
    if positional:
        match_args = next((klass.__dict__["__match_args__"] for klass in cls.__mro__
                           if "__match_args__" in klass.__dict__), None)
        if match_args is None and issubclass(cls, _MATCH_SELF):
            values.append(subject)  # ``case int(n, real=r):``: ``n`` is the subject
            match_args, positional = (), positional - 1
            allowed = 1
        else:
            match_args = () if match_args is None else match_args
            allowed = len(match_args) if type(match_args) is tuple else 0
        if type(match_args) is not tuple or not all(type(n) is str for n in match_args):
            raise TypeError(f"{cls.__name__}.__match_args__ must be a tuple of names")
        if len(match_args) < positional:
            raise TypeError(f"{cls.__name__}() accepts {allowed} positional "
                            f"sub-pattern{'' if allowed == 1 else 's'} "
                            f"({positional + len(values)} given)")
        names = match_args[:positional]
    if len(set(names + keywords)) < len(names) + len(keywords):
        raise TypeError(f"{cls.__name__}() got multiple sub-patterns for one attribute")
    for name in names + keywords:
        try:
            values.append(guarded_getattr(subject, name))
        except AttributeError:
            return None
    return values


def match_sequence(subject: Any, before: int, after: int, star: bool, /) -> list[Any] | None:
    """A sequence pattern's test inside a class pattern (``case Page(items=[first,
    *rest]):``, see the policy's ``_sub_tests``): None when ``subject`` is not a list,
    tuple or deque of a length the pattern takes, else its items, the starred part a list
    in its place. CPython's sequence pattern reads the same items (in C, as here); a
    ``range`` is not matched (its starred part would be made here, of any length)."""
    if not isinstance(subject, list | tuple | deque):
        return None
    size = len(subject)
    if size < before + after or (not star and size != before + after):
        return None
    items: list[Any] | tuple[Any, ...]
    copied = isinstance(subject, deque)
    if star:  # the starred part copied in C (and a deque's items first)
        charge_operations(size // WIDE * (2 if copied else 1))
    items = list(subject) if isinstance(subject, deque) else subject
    head = list(items[:before])
    tail = list(items[size - after:]) if after else []
    return [*head, list(items[before:size - after]), *tail] if star else head


def object_setattr(obj: Any, name: Any, value: Any, /) -> None:
    """``object.__setattr__(obj, name, value)`` in a script: set an attribute of the
    script's own plain instance past its class's own hook (a frozen dataclass's
    ``__post_init__`` sets a derived field so). Only an instance whose classes are all the
    script's (and ``object``): an enum member, a named tuple or an exception keeps its
    class's rules. The name is checked as ``obj.name = value`` checks it."""
    kind = type(obj)
    if not isinstance(kind, ScriptMeta) or any(
            klass in FACADE_CLASSES or not (isinstance(klass, ScriptMeta) or klass is object)
            for klass in kind.__mro__):
        what = obj.__name__ if isinstance(obj, type) else kind.__name__
        raise TypeError(f"object.__setattr__() sets attributes of the script's own plain "
                        f"objects only in the sandbox, not of {what!r}: use setattr(obj, "
                        "name, value)")
    target = _write_target(obj, name, "object.__setattr__")
    namespace = getattr(target, "__dict__", None)
    if type(namespace) is not dict:
        raise AttributeError(f"{kind.__name__!r} object has no attribute {_short(name)}")
    if any(name in klass.__dict__ for klass in kind.__mro__):
        object.__setattr__(target, name, value)  # a name the class has: a property's setter
    else:
        namespace[name] = value  # never interned (see _instance_namespace)


def guarded_delattr(obj: Any, name: str, /) -> None:
    """``delattr``: exactly what ``del obj.name`` may do."""
    target = _write_target(obj, name, "delattr")
    namespace = _instance_namespace(target, name, "delattr")
    if namespace is None:
        delattr(target, name)
    elif namespace.pop(name, _MISSING) is _MISSING:
        raise AttributeError(f"{type(target).__name__!r} object has no attribute "
                             f"{_short(name)}")


_OBJECT_HOOKS: Final = {"setattr": (object.__setattr__, BaseException.__setattr__),
                         "delattr": (object.__delattr__, BaseException.__delattr__)}
"""The generic attribute hooks (an exception class has its own, doing the same)."""

_CLASS_NAME: Final = 100
"""Longest new attribute name ``setattr`` may give a class."""


def _instance_namespace(target: Any, name: str, what: str) -> dict[str, Any] | None:
    """Where ``setattr``/``delattr`` change ``name`` without CPython interning it: the
    instance's ``__dict__`` when no class in its MRO names it (None: the builtin does it).

    ``setattr`` interns every name it is handed, even when it then fails, and 3.12 keeps
    interned strings for good: 40 one-megabyte names a run stayed in the host, run after
    run. A name a class already has is interned already; a new one on a class (which
    only ``setattr`` can add) is kept short, and an object without ``__dict__`` is refused
    here, as ``setattr`` would refuse it after interning."""
    if isinstance(target, type):
        if len(name) > _CLASS_NAME and not any(name in k.__dict__ for k in target.__mro__):
            raise AttributeError(f"{what}(): a new class attribute name is at most "
                                 f"{_CLASS_NAME} characters in the sandbox")
        return None
    kind = type(target)
    hook = kind.__setattr__ if what == "setattr" else kind.__delattr__
    if hook not in _OBJECT_HOOKS[what] or any(name in klass.__dict__ for klass in kind.__mro__):
        return None  # a hook of the class's (a frozen dataclass), or a name it has
    namespace = getattr(target, "__dict__", None)
    if type(namespace) is not dict:
        raise AttributeError(f"{kind.__name__!r} object has no attribute {_short(name)}")
    return namespace


def guarded_vars(*args: Any) -> dict[str, Any]:
    """``vars(obj)`` of a script instance: a copy of its attributes (private ones are the
    script's own too); nothing else has attributes a script may list."""
    if len(args) != 1:
        raise TypeError("vars() without an argument is not available in the sandbox (it "
                        "would list the script's variables): keep shared values in a dict"
                        if not args else f"vars expected at most 1 argument, got {len(args)}")
    obj = args[0]
    if isinstance(obj, SelfListed):
        return obj.sandbox_vars()
    if not isinstance(type(obj), ScriptMeta):
        what = obj.__name__ if isinstance(obj, type) else type(obj).__name__
        raise TypeError(f"vars() takes an instance of the script's own classes in the "
                        f"sandbox, not {what!r}")
    namespace = getattr(obj, "__dict__", None)
    if namespace is None or not has_dict(type(obj)):
        raise TypeError("vars() argument must have __dict__ attribute")
    charge_operations(len(namespace))
    slotted = slots_of(type(obj))
    return {key: value for key, value in namespace.items()
            if type(key) is str and (not key.startswith("_") or private_name_ok(key))
            and key not in slotted}


def guarded_apply(func: Any, *args: Any, **kwargs: Any) -> Any:
    """``_apply_`` (calls with ``*args``/``**kwargs``).

    Plain call: every iterable a script can build is bounded or charged to the
    operation budget at its source, so expanding it needs no extra guard.
    """
    return func(*args, **kwargs)


def guarded_type(obj: Any) -> type:
    """``type(x)``: one argument only, and only for types the script may see anyway."""
    cls = type(obj)
    if (cls in ATTRIBUTES and cls is not GeneratorType) or isinstance(cls, ScriptMeta) or (
            cls in SANDBOX_BASES) or cls in EXPORTED_CLASSES or (
            issubclass(cls, BaseException)) or cls is type(None):
        return cls
    if issubclass(cls, type):
        raise TypeError(f"type() of a class ({obj.__name__!r}) is not available in the "
                        "sandbox: compare the class itself (`x is int`, issubclass(x, int))")
    raise TypeError(f"type() is not available for {shown_name(obj)} objects in the sandbox")
