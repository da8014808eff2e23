"""The curated builtins a script sees.

Types stay the real types (``isinstance(x, list)`` must work). Functions that
consume an iterable eagerly in C (``sum``, ``sorted``, ``min`` …) take it
through the operation counter; lazy ones (``map``, ``zip`` …) need not,
because whatever consumes them is counted, and every source of unbounded items
(``range`` beyond the budget, ``itertools.count`` …) is bounded or counted.
"""

from __future__ import annotations

import builtins as _py
import re
from asyncio import CancelledError
from collections import Counter, OrderedDict, deque
from functools import partial
from operator import length_hint
from types import (
    AsyncGeneratorType,
    BuiltinFunctionType,
    EllipsisType,
    FunctionType,
    GeneratorType,
    NotImplementedType,
)
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from codemode.errors import LimitExceeded
from codemode.sandbox.language.async_readers import async_zip, script_async_gen
from codemode.sandbox.language.compare import (
    charge_collisions,
    charge_each,
    charge_sort,
    drawn_mapping,
    guarded_hash,
    guarded_key,
    keyed,
    ordered_pairs,
    pace_inserts,
)
from codemode.sandbox.language.facades import Facade, facade, guarded_import
from codemode.sandbox.language.guards import (
    EXCEPTIONS,
    TYPE_ALIASES,
    ScriptMeta,
    SelfGuarded,
    build_class,
    check_codec,
    check_strftime,
    guarded_delattr,
    guarded_getattr,
    guarded_hasattr,
    guarded_setattr,
    guarded_type,
    guarded_vars,
    refuse,
)
from codemode.sandbox.language.meter import MAIN_MODULE, SCRIPT_FILENAME, SCRIPT_MODULE, ScriptStop
from codemode.sandbox.language.policy import private_name_ok
from codemode.sandbox.language.render import charge_render, scrub
from codemode.sandbox.language.sizes import (
    MAX_INT_BITS,
    charge_operations,
    charged_by_width,
    check_render,
    ensure_size,
    guarded_add,
    guarded_pow,
    items_size,
    spec_number,
)
from codemode.sandbox.language.state import counted, current_run, wrap_result

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Iterable

__all__ = ["PLAIN", "PRINT_FILES", "SAFE_BUILTINS", "STAND_INS", "STDERR", "STDOUT", "OutputStream",
           "ScriptExit", "counted_mapping", "exit_", "sized_sequence", "starred",
           "starred_items"]

_MISSING: Final = object()


@final
class ScriptExit(ScriptStop, SelfGuarded):
    """Raised by ``exit()``, ``quit()`` and ``sys.exit()``: the script stops there. A
    status of ``None`` or ``0`` ends the run as a success (with no result), any other
    status makes it the run's error. A BaseException, as CPython's ``SystemExit`` (``except
    Exception`` lets it through), but not ``SystemExit`` itself, which asyncio re-raises
    out of its event loop. Scripts name it ``SystemExit`` (``raise SystemExit(1)``,
    ``except SystemExit as e: e.code``): stopping is the script's own choice either way."""

    def __init__(self, status: Any = None) -> None:
        super().__init__(*(() if status is None else (status,)))
        self.status = status

    def sandbox_getattr(self, name: str) -> Any:
        if name == "code":
            return self.status
        if name == "args":
            return self.args
        raise refuse(self, name)

    @property
    def failed(self) -> bool:
        """Whether the status is an error (not ``None``, ``0`` or ``False``)."""
        status = self.status
        return not (status is None or (isinstance(status, int) and status == 0))

    def describe(self) -> str:
        """The run's error message for a failing status (CPython prints a text status)."""
        status = self.status
        if isinstance(status, str):
            return status
        if isinstance(status, int):
            return f"the script exited with status {int(status)}"
        return f"the script exited with a {type(status).__name__} status"


ScriptExit.__name__ = ScriptExit.__qualname__ = "SystemExit"  # what `type(e).__name__` shows


def exit_(status: Any = None, /) -> NoReturn:
    """``exit()``/``quit()``/``sys.exit()``: stop the script (see :class:`ScriptExit`)."""
    raise ScriptExit(status)


def quit_(status: Any = None, /) -> NoReturn:
    """``quit()``: as ``exit()``."""
    raise ScriptExit(status)


@final
class OutputStream(SelfGuarded):
    """``sys.stdout`` and ``sys.stderr``: both write to the run's output, as ``print``
    does (a host sees one text); ``write``, ``writelines``, ``flush``, ``isatty``."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"<sandbox {self._name}>"

    def sandbox_getattr(self, name: str) -> Any:
        if name in ("write", "writelines", "flush", "isatty"):
            return getattr(self, name)
        if name == "name":
            return f"<{self._name}>"
        raise refuse(self, name)

    def write(self, text: str, /) -> int:
        """Append ``text`` to the run's output; returns its length."""
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        print_(text, end="")
        return len(text)

    def writelines(self, lines: Iterable[str], /) -> None:
        """Write each text of ``lines`` (no newline added)."""
        for line in counted(lines):
            self.write(line)

    def flush(self) -> None:
        """Nothing to do: the output is kept as it is written."""

    def isatty(self) -> bool:
        """Never a terminal."""
        return False


PRINT_FILES: Final[set[type]] = set()
"""Sandbox file objects ``print(file=...)`` writes to (``io.StringIO``) besides the
output streams."""

STDOUT: Final = OutputStream("stdout")
STDERR: Final = OutputStream("stderr")


def print_(*args: Any, sep: str | None = " ", end: str | None = "\n",
           file: Any = None, flush: bool = False) -> None:
    """``print`` into the run's bounded output buffer (``file=sys.stdout`` or
    ``sys.stderr`` too: both are that output)."""
    if file is not None and file is not STDOUT and file is not STDERR and (
            type(file) not in PRINT_FILES):
        raise TypeError("print(file=...) takes sys.stdout, sys.stderr or an io.StringIO() "
                        "in the sandbox: print() without file= writes to the script's "
                        "output; to collect text, append it to a list and '\\n'.join() it")
    run = current_run()
    run.meter.check()
    sep = " " if sep is None else sep
    end = "\n" if end is None else end
    if not isinstance(sep, str) or not isinstance(end, str):
        raise TypeError("sep and end must be strings")
    if file is not None and type(file) in PRINT_FILES:
        file.write(_print_text(args, sep, end))
        return
    # Piece by piece: joining first would build ``len(args)`` copies of a shared big string
    # (``print(*[s] * 1000)``) before the buffer could truncate anything. Once the buffer
    # is full, pieces are only counted, each distinct string once (a huge ``sep`` repeats).
    out = run.output
    sizes: dict[int, int] = {}

    def emit(text: str) -> None:
        if not out.truncated:
            out.write(text)
            return
        size = sizes.get(id(text))
        if size is None:
            size = sizes[id(text)] = len(text) if text.isascii() else len(
                text.encode("utf-8", "surrogatepass"))
        out.total += size

    for index, arg in enumerate(args):
        charge_render(arg)
        check_render(arg, "print()")
        if index:
            emit(sep)
        emit(arg if type(arg) is str else str(arg) if type(arg) in PLAIN else scrub(str(arg)))
    emit(end)


def _print_text(args: tuple[Any, ...], sep: str, end: str) -> str:
    """What ``print(*args, sep=sep, end=end)`` writes, as one text (sized first)."""
    texts: list[str] = []
    total = len(end) + len(sep) * max(0, len(args) - 1)
    ensure_size(total, "print()")
    for arg in args:
        charge_render(arg)
        check_render(arg, "print()")
        text = arg if type(arg) is str else str(arg) if type(arg) in PLAIN else scrub(str(arg))
        total += len(text)
        ensure_size(total, "print()")
        texts.append(text)
    return sep.join(texts) + end


def range_(*args: int) -> range:
    """``range``, refused when longer than the whole operation budget."""
    r = range(*args)
    run = current_run()
    try:
        size = len(r)
    except OverflowError:
        size = run.limits.operations + 1
    if size > run.limits.operations:
        run.meter.trip(LimitExceeded(
            "operations", run.limits.operations,
            f"range of {size} items exceeds the operation budget; a for loop over it runs "
            "(and stops at the budget), but list(), sum(), sorted() … of it cannot finish: "
            "use a smaller range"))
    return r


def sum_(iterable: Iterable[Any], /, start: Any = 0) -> Any:
    """``sum`` over counted items; sequence concatenation is size-checked per step."""
    if isinstance(start, int | float | complex):
        return sum(counted(iterable), start)
    total = start
    for item in counted(iterable):
        total = guarded_add(total, item)
    return total


def sorted_(iterable: Iterable[Any], /, *, key: Any = None, reverse: bool = False) -> list[Any]:
    """``sorted`` over counted items; comparing nested items is charged (``compare``)."""
    items = list(counted(iterable))
    if key is None:
        charge_sort(items)
    items.sort(key=charge_each(key, len(items).bit_length()), reverse=reverse)
    return items


def _extreme(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``min``/``max``: each item is compared once with the best so far (charged when the
    items are nested, like ``sorted``)."""
    if "key" in kwargs:
        kwargs = {**kwargs, "key": charge_each(kwargs["key"], 1)}
    if len(args) == 1:
        items = args[0]
        if type(items) not in (list, tuple):
            items = list(counted(items))
        else:
            charge_operations(len(items))
        if "key" not in kwargs:
            charge_sort(items, rounds=1)
        return func(items, **kwargs)
    if "key" not in kwargs:
        charge_sort(args, rounds=1)
    return func(*args, **kwargs)


def min_(*args: Any, **kwargs: Any) -> Any:
    """``min`` over counted items."""
    return _extreme(min, args, kwargs)


def max_(*args: Any, **kwargs: Any) -> Any:
    """``max`` over counted items."""
    return _extreme(max, args, kwargs)


def any_(iterable: Iterable[Any], /) -> bool:
    """``any`` over counted items."""
    return any(counted(iterable))


def all_(iterable: Iterable[Any], /) -> bool:
    """``all`` over counted items."""
    return all(counted(iterable))


def map_(func: Any, *iterables: Any) -> Any:
    """``map``, counted: ``map(x.append, x)`` feeds itself, so its consumers must tick;
    each call over many iterables builds an argument tuple that wide."""
    return charged_by_width(map(func, *iterables), len(iterables))


def filter_(func: Any, iterable: Any) -> Any:
    """``filter``, counted (same reason as ``map``)."""
    return counted(filter(func, iterable))


def zip_(*iterables: Any, strict: bool = False) -> Any:
    """``zip``, counted: ``x.extend(zip(x, ...))`` feeds itself inside C; each item is a
    tuple as wide as the iterables are many (``zip(*[range(10**4)] * 10**5)``: one item a
    100,000-tuple, and list() of it held the host loop 2.8 s). Over a script async
    generator (a generator that calls tools), an async iterator reading in the same order."""
    if not strict and any(script_async_gen(i) for i in iterables):
        return async_zip(*iterables)
    return charged_by_width(zip(*iterables, strict=strict), len(iterables))


def enumerate_(iterable: Any, start: int = 0) -> Any:
    """``enumerate``, counted (same reason as ``zip``)."""
    return counted(enumerate(iterable, start))


def reversed_(seq: Any) -> Any:
    """``reversed``, counted like ``iter``: a script's ``__iter__`` returning it would
    otherwise hand C consumers (bulk inserts of colliding keys) an uncounted iterator."""
    return counted(reversed(seq))


def iter_(obj: Any, *sentinel: Any) -> Any:
    """``iter``; the result is counted (``iter(callable, sentinel)`` can be endless)."""
    return counted(iter(obj, *sentinel))


_NO_DEFAULT: Final = object()


def anext_(iterator: Any, /, *default: Any) -> Any:
    """CPython's ``anext(it[, default])``, an awaitable of ``it``'s next item, for the
    script's own async generators: what ``async for`` over one reads anyway (a host
    object's ``__anext__`` is not called). The dialects read a generator that calls
    tools with it (``next(pages())`` → ``await anext(pages())``)."""
    if len(default) > 1:
        raise TypeError(f"anext expected at most 2 arguments, got {1 + len(default)}")
    if type(iterator) is not AsyncGeneratorType or (
            iterator.ag_code.co_filename != SCRIPT_FILENAME):
        raise TypeError(f"'{_shown_kind(iterator).__name__}' object is not an async "
                        "iterator (anext() reads the script's async generators in the "
                        "sandbox: read other async iterators with `async for`)")
    step = _next_item(iterator, default[0] if default else _NO_DEFAULT)
    step.__qualname__ = "anext"  # type: ignore[attr-defined]
    return wrap_result(current_run(), step)


async def _next_item(iterator: AsyncGenerator[Any, Any], default: Any) -> Any:
    try:
        return await iterator.__anext__()
    except StopAsyncIteration:
        if default is _NO_DEFAULT:
            raise
        return default


def format_(value: Any, spec: str = "") -> str:
    """``format`` with the padding width bounded and the rendering charged."""
    check_format_spec(spec, value)
    charge_render(value)
    check_render(value, "format()")
    text = format(value, spec)
    return text if type(value) in PLAIN else scrub(text)


PLAIN: Final = frozenset({str, int, float, bool, type(None), bytes, complex})
"""Values whose text shows nothing of the host (no other object's repr inside)."""


def fstring_join(parts: tuple[str, ...]) -> str:
    """``_fjoin_``: an f-string with several fields, joined once its size is known
    (``f"{s}{s}…{s}"`` would otherwise concatenate many copies of one big string)."""
    size = 0
    for part in parts:
        size += len(part)
    ensure_size(size, "f-string")
    return "".join(parts)


def repr_(obj: Any, /) -> str:
    """``repr`` with the rendering charged (escapes can make text 4x longer)."""
    charge_render(obj)
    check_render(obj, "repr()")
    if isinstance(obj, str | bytes | bytearray):
        ensure_size(len(obj) * 4, "repr()")
    return repr(obj) if type(obj) in PLAIN else scrub(repr(obj))


def ascii_(obj: Any, /) -> str:
    """``ascii`` with the rendering charged (``\U0001f600`` escapes are 10x longer)."""
    charge_render(obj)
    check_render(obj, "ascii()")
    if isinstance(obj, str):
        ensure_size(len(obj) * 10, "ascii()")
    return ascii(obj) if type(obj) in PLAIN else scrub(ascii(obj))


class _GuardedType(type):
    """Metaclass of stand-ins for ``str``/``int``: calls are checked, isinstance sees the real type.

    A stand-in class has ``real`` (the builtin type) and ``check(*args, **kwargs)``.
    """

    real: type
    check: Any

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls.real)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls.real)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        cls.check(*args, **kwargs)
        return cls.real(*args, **kwargs)

    def __getitem__(cls, params: Any) -> Any:
        # ``Row = dict[str, Any]``, a type alias: typing's inert placeholder, as
        # ``Dict[str, Any]`` is (a real GenericAlias would call the unchecked type).
        if not hasattr(cls.real, "__class_getitem__"):
            raise TypeError(f"type '{cls.__name__}' is not subscriptable")
        alias = _TYPING_ALIASES.get(cls.__name__, "Any")
        return facade("typing").sandbox_getattr(alias)[params]


_TYPING_ALIASES: Final = {
    "dict": "Dict", "list": "List", "tuple": "Tuple", "set": "Set", "frozenset": "FrozenSet",
    "deque": "Deque", "defaultdict": "DefaultDict", "Counter": "Counter",
    "OrderedDict": "OrderedDict",
}
"""The typing name whose placeholder ``dict[...]`` (or ``deque[...]``) stands for."""


def _check_str(*args: Any, **kwargs: Any) -> None:
    if len(args) == 1 and not kwargs:
        charge_render(args[0])
        check_render(args[0], "str()")
        return
    encoding = args[1] if len(args) > 1 else kwargs.get("encoding", "utf-8")
    errors = args[2] if len(args) > 2 else kwargs.get("errors", "strict")
    check_codec(encoding, errors)


_BITS_PER_DIGIT: Final = {0: 4, 2: 1, 4: 2, 8: 3, 16: 4, 32: 5}


def _check_int(value: Any = 0, base: Any = 10) -> None:
    # CPython caps other bases at 4300 digits (ValueError); these are exempt.
    bits_per_digit = _BITS_PER_DIGIT.get(base) if isinstance(base, int) else None
    if (isinstance(value, str | bytes | bytearray) and bits_per_digit is not None
            and len(value) * bits_per_digit > MAX_INT_BITS):
        current_run().too_big(f"int() of a {len(value)}-digit string", len(value))


def _no_check(*args: Any, **kwargs: Any) -> None:
    pass


class _CountedCollection(_GuardedType):
    """Stand-ins for ``set``/``frozenset``: the input is drawn through the operation
    counter, so a bulk build of colliding keys (quadratic in C) reaches the meter's
    deadline check and lets other threads run between chunks."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and not isinstance(args[0], cls.real):
            pace_inserts(items=args[0])
            return cls.real(counted(keyed(args[0])))
        return cls.real(*args, **kwargs)


_ITEMS_VIEW: Final[Any] = type({}.items())
_COPIED: Final[tuple[type, ...]] = (list, tuple, dict, set, frozenset, deque,
                                    type({}.keys()), type({}.values()), type({}.items()))
"""Sources whose copy takes no more than they hold (pointers to existing items)."""


def sized_source(source: Any, what: str) -> Any:
    """``source`` for a C call that materialises it (``list(range(n))``), sized first: a
    ``range`` is bounded by the operation budget, not by memory (``list(range(10**8))`` is
    one C call building 10**8 ints), a text becomes one item per character. Copies of
    containers, counted iterators (``map``) and generators (they tick) pass as they are."""
    kind = type(source)
    if isinstance(source, str | bytes | bytearray):  # a StrEnum member is its text
        ensure_size(items_size(source), what)
    elif not (kind is map or kind is GeneratorType or isinstance(source, _COPIED)):
        ensure_size(length_hint(source) * 8, what)
    return source


def starred(source: Any, spec: tuple[Any, ...]) -> list[Any]:
    """What a target with a starred name (``a, *rest = text``; ``spec`` from the policy's
    ``star_spec``) unpacks: the source as a list, sized first as ``list(source)`` is, and
    so each nested target with a starred name. A script object is drawn through its
    iterator, as C unpacks it: its own code yields the items (and ticks), and its
    ``__len__`` may lie."""
    if isinstance(type(source), ScriptMeta):
        source = iter(source)
    else:
        source = sized_source(source, "unpacking with *")
    items = list(source)
    for index, child in spec:
        if -len(items) <= index < len(items):
            items[index] = starred(items[index], child)
    return items


def starred_items(source: Any, spec: tuple[Any, ...]) -> Any:
    """Items of a loop whose target has a starred name (``for head, *tail in rows``), each
    sized as :func:`starred` sizes one value."""
    return map(partial(starred, spec=spec), source)


STAND_INS: Final[dict[type, type]] = {}
"""Real type -> what ``type(x)`` gives the script (facades add their classes)."""


class _SizedSequence(_GuardedType):
    """Stand-ins for ``list``/``tuple`` (and ``deque``): the source is sized first (see
    ``sized_source``)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if args and type(args[0]) is _ITEMS_VIEW:
            # not a copy: a new pair for each item (2,000 lists of a 20,000-key dict's
            # items took 3 s for 2,000 operations)
            args = (counted(args[0]), *args[1:])
        if args:
            args = (sized_source(args[0], f"{cls.__name__}()"), *args[1:])
        elif "iterable" in kwargs:
            kwargs["iterable"] = sized_source(kwargs["iterable"], f"{cls.__name__}()")
        return cls.real(*args, **kwargs)


def _make_stand_in(meta: type, real: type, **attrs: Any) -> type:
    """A class of ``meta`` standing in for ``real``: named like it, and ``type()`` of an
    instance (a real ``real``) hands the stand-in back to scripts."""
    stand_in: type = meta(real.__name__, (), {"real": real, "check": staticmethod(_no_check),
                                              **attrs})
    stand_in.__qualname__ = real.__name__
    stand_in.__module__ = real.__module__
    STAND_INS[real] = stand_in
    TYPE_ALIASES[stand_in] = real
    return stand_in


class _TypeOnly(_GuardedType):
    """Stand-ins for classes a script may test against but not call (``re.Pattern``)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"cannot create '{cls.__module__}.{cls.__qualname__}' instances")


def type_only(real: type, module: str, name: str) -> type:
    """A stand-in for ``real`` that ``isinstance``/``issubclass`` and ``type()`` answer
    for, shown as ``module.name`` (``re.Match``); calling it raises TypeError."""
    stand_in = _make_stand_in(_TypeOnly, real)
    stand_in.__qualname__ = stand_in.__name__ = name
    stand_in.__module__ = module
    return stand_in


class _Shown(type):
    """Metaclass of :func:`shown_type`'s stand-ins: isinstance sees the class ``type()``
    shows (``isinstance(print, type(print))``; a script function is no builtin)."""

    real: type

    def __instancecheck__(cls, obj: Any) -> bool:
        return issubclass(_shown_kind(obj), cls.real)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"cannot create '{cls.__module__}.{cls.__qualname__}' instances")


def shown_type(real: type, module: str, name: str) -> type:
    """What ``type(x)`` gives for an ``x`` of the sandbox class ``real`` that a script
    may hold but not name (a context's ``traps``, a generator): shown as CPython shows
    its class (``<class 'abc.SignalDict'>``), with no attribute and no constructor."""
    stand_in = _Shown(name, (), {"real": real, "__slots__": ()})
    stand_in.__module__ = module
    _SHOWN[real] = stand_in
    return stand_in


_SHOWN: Final[dict[type, type]] = {}
"""Real type -> its :func:`shown_type` (apart from ``STAND_INS``, which act for the class)."""


def sized_sequence(real: type) -> type:
    """A script-visible stand-in for the sequence class ``real`` (see ``_SizedSequence``)."""
    return _make_stand_in(_SizedSequence, real)


class _CountedMapping(_GuardedType):
    """Stand-ins for ``dict`` and the dict-like facade classes: the positional iterable
    (key/value pairs, or keys for ``Counter``; argument ``position``) is drawn through the
    operation counter, for the same reason as ``set`` (bulk inserts of colliding keys)."""

    position: int = 0

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        at = cls.position
        if cls.real is OrderedDict and len(args) > at:
            args = (*args[:at], ordered_pairs(args[at]), *args[at + 1:])
            return cls.real(*args, **kwargs)
        # dict(x) reads a mapping-like x through keys() and its own (script) __getitem__;
        # Counter(x) iterates anything but a real mapping, whatever its keys().
        if len(args) > at and not (isinstance(args[at], dict | str) or (
                hasattr(args[at], "keys") and not issubclass(cls.real, Counter))):
            # Keys (pairs, or items for a Counter) are hashed: nested tuples are charged.
            items = keyed(args[at], pairs=not issubclass(cls.real, Counter))
            pace_inserts(items=args[at])
            args = (*args[:at], counted(items), *args[at + 1:])
        elif len(args) > at:
            if not isinstance(args[at], dict | str) and not issubclass(cls.real, Counter):
                # read as C reads it, its colliding keys charged (``compare.drawn_mapping``)
                args = (*args[:at], drawn_mapping(args[at]), *args[at + 1:])
            charge_collisions(args[at])  # a dict's keys are inserted in one C call
            if isinstance(args[at], dict):  # a copy: ~30 ns a key, as ``**`` and ``copy()``
                charge_operations(len(args[at]))
        return cls.real(*args, **kwargs)


def counted_mapping(real: type, position: int = 0) -> type:
    """A script-visible stand-in for the dict-like class ``real`` (see ``_CountedMapping``)."""
    return _make_stand_in(_CountedMapping, real, position=position)


class _RangeMeta(_GuardedType):
    """``type(range(n))`` must not hand out the unchecked ``range``."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return range_(*args, **kwargs)


class _BytesMeta(_GuardedType):
    """``type(b'')``: ``bytes(n)`` is size-checked, codecs are allowlisted, iterables counted."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        source = args[0] if args else kwargs.get("source", b"")
        if isinstance(source, int):
            ensure_size(int(source), "bytes()")
        elif isinstance(source, str):
            check_codec(args[1] if len(args) > 1 else kwargs.get("encoding"),
                        args[2] if len(args) > 2 else kwargs.get("errors", "strict"))
            charge_render(source)
        elif not isinstance(source, bytes | bytearray):
            args = (counted(source), *args[1:])
        return cls.real(*args, **kwargs)


class RangeType(metaclass=_RangeMeta):
    """What ``type(range(...))`` gives a script."""

    real = range
    check = staticmethod(_no_check)


class BytesType(metaclass=_BytesMeta):
    """What ``type(b'...')`` gives a script."""

    real = bytes
    check = staticmethod(_no_check)


class DictType(metaclass=_CountedMapping):
    """The script's ``dict``."""

    real = dict
    check = staticmethod(_no_check)


class SetType(metaclass=_CountedCollection):
    """The script's ``set``."""

    real = set
    check = staticmethod(_no_check)


class FrozenSetType(metaclass=_CountedCollection):
    """The script's ``frozenset``."""

    real = frozenset
    check = staticmethod(_no_check)


class _StrMeta(_GuardedType):
    """``str(x)`` of an object shows no host address or internal name (``scrub``)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        cls.check(*args, **kwargs)
        text = cls.real(*args, **kwargs)
        if len(args) == 1 and not kwargs and type(args[0]) not in PLAIN:
            return scrub(text)
        return text


class StrType(metaclass=_StrMeta):
    """The script's ``str``: ``str(x)`` is charged; ``isinstance(x, str)`` works."""

    real = str
    check = staticmethod(_check_str)


class IntType(metaclass=_GuardedType):
    """The script's ``int``: string conversion is size-capped (bases 2/4/8/16/32 are not)."""

    real = int
    check = staticmethod(_check_int)


StrType.__name__ = StrType.__qualname__ = "str"
IntType.__name__ = IntType.__qualname__ = "int"
SetType.__name__ = SetType.__qualname__ = "set"
RangeType.__name__ = RangeType.__qualname__ = "range"
BytesType.__name__ = BytesType.__qualname__ = "bytes"
DictType.__name__ = DictType.__qualname__ = "dict"
FrozenSetType.__name__ = FrozenSetType.__qualname__ = "frozenset"


def round_(number: Any, ndigits: Any = None) -> Any:
    """``round``; refuses ``ndigits`` past the int cap (CPython computes ``10**-ndigits``)."""
    if isinstance(number, int) and isinstance(ndigits, int) and ndigits < -_MAX_INT_DIGITS:
        current_run().too_big(f"round() to {ndigits} digits", -ndigits // 2)
    return round(number, ndigits)


_MAX_INT_DIGITS: Final = MAX_INT_BITS * 3 // 10 + 2


def check_format_spec(spec: Any, value: Any = None) -> None:
    """Refuse format specs whose width or precision would allocate huge strings (``value``:
    what is formatted, whose time zone name a date's ``%Z`` renders)."""
    if isinstance(spec, str) and (len(spec) > 4 or "%Z" in spec):
        # A date's spec is a strftime format (``f"{d:%c%c…}"``), sized like strftime.
        check_strftime(spec, value)
        ensure_size(format_spec_size(spec, parts=2 if isinstance(value, complex) else 1),
                    "format spec")


_FORMAT_SPEC: Final = re.compile(
    r"(?:.?[<>=^])?[-+ ]?z?#?(?P<width>\d*)[,_]?(?:\.(?P<precision>\d*))?[a-zA-Z%]?",
    re.DOTALL)
"""CPython's format mini-language: ``[[fill]align][sign][z][#][0][width][grouping][.precision]
[type]``."""


def format_spec_size(spec: str, parts: int = 1) -> int:
    """Characters the width and precision of ``spec`` can produce, read as CPython reads
    them (leading zeros included: ``'>0000000000001000000000'`` is a width of 10**9). A spec
    outside the mini-language (a date's strftime format, a script class's own) counts every
    run of digits in it.

    ``parts``: numbers the precision applies to (a complex number renders its real and its
    imaginary part to it, each in a buffer of its own before the result: counted once,
    ``format(1.5+2j, '.40000000f')`` built 80 million characters and held the host loop
    0.43 s under a 64 MB share)."""
    match = _FORMAT_SPEC.fullmatch(spec)
    if match is not None:
        return spec_number(match["width"]) + parts * spec_number(match["precision"] or "")
    return sum(spec_number(run) for run in _DIGIT_RUN.findall(spec))


_DIGIT_RUN: Final = re.compile(r"\d+")


def isinstance_(obj: Any, classinfo: Any, /) -> bool:
    """``isinstance``; a nested tuple of classes is walked in C once per reference
    (``t = (t, t)`` forty times), so it is charged like a key (``compare.guarded_key``)."""
    return isinstance(obj, guarded_key(classinfo))


@final
class BaseExceptionCheck(SelfGuarded):
    """``BaseException`` as a script names it: ``isinstance(r, BaseException)`` (a
    ``gather(..., return_exceptions=True)`` result) and ``issubclass`` answer as CPython's
    for every exception a script can hold (``Exception``, ``SystemExit``, a cancellation
    ``gather`` returned). Not a class, so ``except BaseException`` (which would hand the
    script the run's own stop signals) catches nothing and ``class E(BaseException)`` is
    refused; the dialects refuse both before the run."""

    __slots__ = ()

    def __instancecheck__(self, obj: Any) -> bool:
        return isinstance(obj, _HELD_EXCEPTIONS)

    def __subclasscheck__(self, cls: Any) -> bool:
        return issubclass(cls, _HELD_EXCEPTIONS)

    def __repr__(self) -> str:
        return "<class 'BaseException'>"


_HELD_EXCEPTIONS: Final = (Exception, ScriptExit, CancelledError)


def issubclass_(cls: Any, classinfo: Any, /) -> bool:
    """``issubclass``; nested tuples charged like ``isinstance``. A stand-in (the script's
    ``dict``) is tested as its real type: ``issubclass(dict, collections.abc.Mapping)``."""
    if isinstance(cls, type):
        cls = TYPE_ALIASES.get(cls, cls)
    return issubclass(cls, guarded_key(classinfo))


def type_(obj: Any, *rest: Any) -> type:
    """``type(x)`` only; building classes goes through ``class`` statements."""
    if rest:
        raise TypeError("type() with 3 arguments is not available in the sandbox; "
                        "use a class statement")
    if type(obj) is FunctionType and obj in _CLASS_WRAPPERS:
        return guarded_type(obj)  # not ``function``: ``type`` or ``zip`` in CPython
    kind = _shown_kind(obj)
    shown = STAND_INS.get(kind) or _SHOWN.get(kind)
    if shown is not None:
        return shown
    return guarded_type(obj)


def _shown_kind(obj: Any) -> type:
    """The class CPython has for ``obj``: a host function (``print``, ``"a".upper``) is a
    C function there; a builtin that is a class there (``type``, ``zip``) is none."""
    kind = type(obj)
    if kind is FunctionType and obj.__module__ not in _SCRIPT_MODULES and (
            obj not in _CLASS_WRAPPERS):
        return BuiltinFunctionType
    return kind


_SCRIPT_MODULES: Final = frozenset({SCRIPT_MODULE, MAIN_MODULE})


def getattr_(obj: Any, name: str, *default: Any) -> Any:
    """``getattr`` through the sandbox's attribute allowlist."""
    return guarded_getattr(obj, name, *default)


def dir_(*args: Any) -> list[str]:
    """``dir(obj)`` of the script's own objects and classes (as Python lists them: names
    only, read from their dicts without running script code) and of a sandbox module
    (what it offers); other objects have no attributes a script lists, and ``dir()``
    without an argument would list the script's variables."""
    if len(args) != 1:
        raise TypeError("dir() without an argument is not available in the sandbox (the SDK "
                        "in the prompt lists the tools; keep shared values in a dict)"
                        if not args else f"dir expected at most 1 argument, got {len(args)}")
    obj = args[0]
    if isinstance(obj, Facade):
        return sorted(obj.exports())
    if not (isinstance(obj, ScriptMeta) or isinstance(type(obj), ScriptMeta)):
        what = type(obj).__name__
        raise TypeError(f"dir() takes the script's own objects and classes and the sandbox "
                        f"modules, not {what!r} (the SDK in the prompt lists the tools; a "
                        f"tool's result is data: print it, and list(d) gives a dict's keys)")
    # ``dir`` merges the instance's and every class's namespace and sorts the names in
    # one C call: a million attributes set one by one were 0.7 s of it, per call.
    classes = obj.__mro__ if isinstance(obj, type) else type(obj).__mro__
    found = sum(len(klass.__dict__) for klass in classes)
    namespace = getattr(obj, "__dict__", None) if not isinstance(obj, type) else None
    if type(namespace) is dict:
        found += len(namespace)
    charge_operations(found * found.bit_length() // _SORT_STEPS)
    names = _py.dir(obj)
    charge_operations(len(names))
    return [name for name in names if not name.startswith("_") or private_name_ok(name) or (
        name.startswith("__") and name.endswith("__") and not name.startswith("___"))]


_SORT_STEPS: Final = 2
"""Name comparisons of ``dir``'s sort charged as one operation."""

ListType: Final = sized_sequence(list)
TupleType: Final = sized_sequence(tuple)

SAFE_BUILTINS: Final[dict[str, Any]] = {
    # Types (real, so isinstance works).
    "bool": bool, "int": IntType, "float": float, "complex": complex, "str": StrType,
    "list": ListType, "tuple": TupleType, "dict": DictType, "set": SetType,
    "frozenset": FrozenSetType,
    "enumerate": enumerate_, "zip": zip_, "map": map_, "filter": filter_, "reversed": reversed_,
    "slice": slice,
    "bytes": BytesType,  # what ``type(b"")`` gives anyway: sizes checked (``bytes(10**10)``)
    "object": object,  # a base and a sentinel (``MISSING = object()``): nothing to read
    "super": super,  # its attributes go through ``guards._super_member``
    "property": property, "staticmethod": staticmethod, "classmethod": classmethod,
    # Functions.
    "abs": abs, "ascii": ascii_, "bin": bin, "callable": callable, "chr": chr, "divmod": divmod,
    "hash": guarded_hash, "hex": hex, "isinstance": isinstance_, "issubclass": issubclass_,
    "len": len,
    "next": next, "anext": anext_, "oct": oct, "ord": ord, "repr": repr_, "round": round_,
    "print": print_, "range": RangeType, "sum": sum_, "sorted": sorted_, "min": min_,
    "max": max_, "any": any_, "all": all_, "iter": iter_, "format": format_,
    "type": type_, "getattr": getattr_, "hasattr": guarded_hasattr, "pow": guarded_pow,
    "setattr": guarded_setattr, "delattr": guarded_delattr, "vars": guarded_vars,
    "dir": dir_, "exit": exit_, "quit": quit_, "SystemExit": ScriptExit,
    "BaseException": BaseExceptionCheck(),
    # Exceptions (ToolCallError included).
    **{exc.__name__: exc for exc in EXCEPTIONS},
    # More that scripts name in ``except`` clauses (all ``Exception`` subclasses: catching
    # one catches nothing ``except Exception`` would not). ``BaseException`` is a check
    # only (:class:`BaseExceptionCheck`): ``except BaseException as e`` would hand the
    # script the run's own stop signals (a cancellation, a tripped limit, ``final_answer``)
    # as values it could keep.
    **{exc.__name__: exc for exc in (ConnectionError, OSError, ImportError,
                                     UnboundLocalError, ExceptionGroup, FileNotFoundError,
                                     FileExistsError, PermissionError, IsADirectoryError,
                                     NotADirectoryError, ModuleNotFoundError, EOFError,
                                     UnicodeDecodeError, UnicodeEncodeError,
                                     UnicodeTranslateError, ConnectionResetError,
                                     ConnectionRefusedError, ConnectionAbortedError,
                                     BrokenPipeError, BlockingIOError, ChildProcessError,
                                     InterruptedError, ProcessLookupError, FloatingPointError,
                                     BufferError, SyntaxError, Warning, UserWarning,
                                     DeprecationWarning, RuntimeWarning, FutureWarning)},
    "IOError": OSError, "EnvironmentError": OSError,  # CPython's aliases of OSError
    "NotImplemented": NotImplemented,  # what a script class's ``__eq__`` may return
    "Ellipsis": Ellipsis,
    # Machinery the compiled code looks up in builtins.
    "__import__": guarded_import,
    "__build_class__": _py.__build_class__,
    "__metaclass__": build_class,
    "__name__": SCRIPT_MODULE,
    "_fjoin_": fstring_join,
    "None": None, "True": True, "False": False,
}
"""Name -> object for ``__builtins__`` of every script (shared, never mutated)."""

for _name, _value in SAFE_BUILTINS.items():
    # Wrappers report the builtin's name in errors ("sum() missing ..."), not ours.
    if getattr(_value, "__module__", None) == __name__ and callable(_value) and not (
            isinstance(_value, type)):
        _value.__name__ = _value.__qualname__ = _name

STAND_INS.update({str: StrType, int: IntType, set: SetType, frozenset: FrozenSetType,
                  range: RangeType, bytes: BytesType, dict: DictType})
for _real, _standing in STAND_INS.items():
    TYPE_ALIASES[_standing] = _real
    _standing.__module__ = _real.__module__  # str(str) shows "<class 'builtins.str'>"
for _real, _shown in ((GeneratorType, "generator"), (FunctionType, "function"),
                      (type({}.values()), "dict_values"), (NotImplementedType,
                      "NotImplementedType"), (EllipsisType, "ellipsis"),
                      (BuiltinFunctionType, "builtin_function_or_method")):
    shown_type(_real, "builtins", _shown)
_CLASS_WRAPPERS: Final = frozenset(
    value for name, value in SAFE_BUILTINS.items()
    if type(value) is FunctionType and isinstance(getattr(_py, name, None), type))
"""Builtins that are classes in CPython (``type``, ``zip``): ``type()`` of them stays refused."""
