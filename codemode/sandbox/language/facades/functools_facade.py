"""``functools`` for scripts: ``reduce``, ``partial``, ``cmp_to_key``, bounded caches and
``cached_property``.

The real ``partial`` renders its arguments in its repr (unsized) and the real
``lru_cache`` hashes argument tuples in C without a charge, keeping every entry when
``maxsize=None``: each name here is a sandbox object instead. ``reduce`` runs over the
counted iterable; a ``cmp_to_key`` comparison costs one operation (a host-side
comparator such as ``operator.sub`` would otherwise make a sort's n·log n calls free).
``partialmethod`` binds the script's own functions only. ``cached_property`` is a
sandbox descriptor (the real one holds a lock and reads any object's ``__dict__``): it
stores the value in the script instance's own attributes, where the next read finds it,
as Python's does.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language.compare import guarded_key
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.facades.collections_facade import namedtuple
from codemode.sandbox.language.guards import (
    FACADE_CLASSES,
    ScriptMeta,
    SelfGuarded,
    class_method,
    refuse,
)
from codemode.sandbox.language.render import scrub
from codemode.sandbox.language.sizes import WIDE, charge_operations
from codemode.sandbox.language.state import (
    counted,
    current_run,
    is_script_function,
    wrap_result,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["FACADE", "CachedProperty", "Partial", "PartialMethod"]

_MAX_ENTRIES: Final = 1 << 16
"""Most entries one cache keeps (``maxsize=None`` and ``cache`` included): past it, the
least recently used entry is dropped."""

_MAX_NAME: Final = 100

_NOTHING: Final = object()


def _describe(func: Any) -> str:
    """A short name for ``func`` in a repr (never its arguments' text)."""
    name = func.__qualname__ if isinstance(func, types.FunctionType | type) else None
    if not isinstance(name, str):
        name = type(func).__name__
    return name if len(name) <= _MAX_NAME else name[:_MAX_NAME] + "…"


def reduce(function: Callable[[Any, Any], Any], iterable: Iterable[Any],
           initial: Any = _NOTHING, /) -> Any:
    """Fold the counted items of ``iterable`` with ``function``."""
    if initial is _NOTHING:
        return functools.reduce(function, counted(iterable))
    return functools.reduce(function, counted(iterable), initial)


class _Preset(SelfGuarded):
    """A function with arguments given ahead (``partial``, ``partialmethod``): ``func``,
    ``args`` and ``keywords`` are readable; a partial given as the function is flattened,
    as functools does."""

    __slots__ = ("_args", "_func", "_keywords")

    def __init__(self, func: Any, /, *args: Any, **keywords: Any) -> None:
        if type(func) is Partial:
            args = func._args + args
            keywords = {**func._keywords, **keywords}
            func = func._func
        self._func: Any = func
        self._args: tuple[Any, ...] = args
        self._keywords: dict[str, Any] = keywords
        _charge_width(args, keywords)

    def sandbox_getattr(self, name: str) -> Any:
        if name == "func":
            return self._func
        if name == "args":
            return self._args
        if name == "keywords":
            return dict(self._keywords)
        raise refuse(self, name)


@final
class Partial(_Preset):
    """``functools.partial``: the repr names the function only."""

    __slots__ = ()

    def __init__(self, func: Any, /, *args: Any, **keywords: Any) -> None:
        if not callable(func):
            raise TypeError("the first argument must be callable")
        super().__init__(func, *args, **keywords)

    def __call__(self, /, *args: Any, **keywords: Any) -> Any:
        if self._keywords:
            keywords = {**self._keywords, **keywords}
        _charge_width(self._args, keywords)
        return self._func(*self._args, *args, **keywords)

    def __repr__(self) -> str:
        return f"functools.partial({_describe(self._func)}, ...)"


def _charge_width(args: tuple[Any, ...], keywords: dict[str, Any]) -> None:
    """A partial copies its stored arguments in C each time it is made (flattened over
    another partial) or called: one operation per ``WIDE`` of them, as a wide tuple is
    charged (``p = partial(p, i)`` in a loop copied i items a step, uncharged)."""
    width = len(args) + len(keywords)
    if width >= WIDE:
        charge_operations(width // WIDE)


@final
class _CmpKey(SelfGuarded):
    """What ``cmp_to_key(cmp)(obj)`` returns: compares by calling ``cmp``, one operation
    per comparison."""

    __slots__ = ("_cmp", "_obj")

    def __init__(self, obj: Any, cmp: Callable[[Any, Any], Any]) -> None:
        self._obj = obj
        self._cmp = cmp

    def _compare(self, other: Any) -> Any:
        if type(other) is not _CmpKey:
            return NotImplemented
        next(current_run().meter.ticker)
        return self._cmp(self._obj, other._obj)

    def __lt__(self, other: Any) -> Any:
        result = self._compare(other)
        return result if result is NotImplemented else result < 0

    def __gt__(self, other: Any) -> Any:
        result = self._compare(other)
        return result if result is NotImplemented else result > 0

    def __le__(self, other: Any) -> Any:
        result = self._compare(other)
        return result if result is NotImplemented else result <= 0

    def __ge__(self, other: Any) -> Any:
        result = self._compare(other)
        return result if result is NotImplemented else result >= 0

    def __eq__(self, other: object) -> Any:
        result = self._compare(other)
        return result if result is NotImplemented else result == 0

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "<functools.KeyWrapper object>"

    def sandbox_getattr(self, name: str) -> Any:
        if name == "obj":
            return self._obj
        raise refuse(self, name)


def cmp_to_key(mycmp: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    """A key function for ``sorted``/``min``/``max`` from an old-style comparison."""
    if not callable(mycmp):
        raise TypeError("cmp_to_key() argument must be callable")

    def key(obj: Any) -> _CmpKey:
        return _CmpKey(obj, mycmp)
    return key


for _cls, _name in ((Partial, "partial"), (_CmpKey, "KeyWrapper")):
    _cls.__name__ = _name  # errors name what the script called
    _cls.__qualname__ = f"functools.{_name}"

_KWD_MARK: Final = object()


@final
class _HashedKey(list[Any]):
    """A cache key whose (charged) hash is computed once."""

    __slots__ = ("hashvalue",)

    def __init__(self, items: tuple[Any, ...]) -> None:
        super().__init__(items)
        self.hashvalue = hash(items)

    def __hash__(self) -> int:  # type: ignore[override]
        return self.hashvalue


@final
class _Cached(SelfGuarded):
    """A function wrapped by ``lru_cache``/``cache``: at most ``maxsize`` (and never more
    than 65 536) entries, least recently used dropped first; the argument tuple is charged
    like a dict key before it is hashed."""

    __slots__ = ("_coroutines", "_entries", "_func", "_hits", "_limit", "_maxsize", "_misses",
                 "_typed")

    def __init__(self, func: Any, maxsize: int | None, typed: bool) -> None:
        if not callable(func):
            raise TypeError("the first argument must be callable")
        self._func = func
        self._coroutines = False
        self._maxsize = maxsize if maxsize is None else max(0, maxsize)  # as CPython shows it
        self._limit = _MAX_ENTRIES if maxsize is None else max(0, min(maxsize, _MAX_ENTRIES))
        self._typed = bool(typed)
        self._entries: dict[_HashedKey, Any] = {}
        self._hits = self._misses = 0

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        parts: tuple[Any, ...] = args
        if kwargs:
            parts += (_KWD_MARK, *kwargs.items())
        if self._typed:
            parts += tuple(type(v) for v in args) + tuple(type(v) for v in kwargs.values())
        key = _HashedKey(guarded_key(parts))
        entries = self._entries
        value = entries.pop(key, _NOTHING)
        if value is not _NOTHING:
            self._hits += 1
            entries[key] = value  # now the most recently used
            return self._script_coroutine(_ready(value)) if self._coroutines else value
        self._misses += 1
        value = self._func(*args, **kwargs)
        if inspect.isawaitable(value):  # an ``async def`` (the runner wraps it: no flag)
            self._coroutines = True
            return self._script_coroutine(self._awaited(key, value))
        self._store(key, value)
        return value

    def _store(self, key: _HashedKey, value: Any) -> None:
        entries = self._entries
        if self._limit:
            entries.pop(key, None)  # the call itself may have cached it (recursion)
            while len(entries) >= self._limit:
                del entries[next(iter(entries))]
            entries[key] = value

    def _script_coroutine(self, coro: Any) -> Any:
        """``coro`` as the script's own coroutines are held (awaitable, nothing else,
        closed if never awaited), named after the cached function."""
        coro.__qualname__ = getattr(self._func, "__qualname__", "function")
        return wrap_result(current_run(), coro)

    async def _awaited(self, key: _HashedKey, call: Any) -> Any:
        """A miss of a cached ``async def``: the call's value once awaited is what the
        cache keeps (a coroutine can be awaited only once; a failure keeps nothing, as
        ``lru_cache`` keeps no exception). Calls that miss while one is pending each run."""
        value = await call
        self._store(key, value)
        return value

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        # Decorating a method: bound to the instance like a function.
        return self if instance is None else types.MethodType(self, instance)

    def __repr__(self) -> str:
        # CPython's, less the address, as the sandbox shows every object
        return "<functools._lru_cache_wrapper object>"

    def cache_info(self) -> Any:
        """``CacheInfo(hits, misses, maxsize, currsize)``."""
        run = current_run()
        info = run.extras.get("functools.CacheInfo")
        if info is None:  # a class per run: a script may write to its own classes
            info = run.extras["functools.CacheInfo"] = namedtuple(
                "CacheInfo", "hits misses maxsize currsize")
        return info(self._hits, self._misses, self._maxsize, len(self._entries))

    def cache_clear(self) -> None:
        """Drop every entry and reset the statistics."""
        self._entries.clear()
        self._hits = self._misses = 0

    def cache_parameters(self) -> dict[str, Any]:
        """``{'maxsize': ..., 'typed': ...}``, a fresh dict each call."""
        return {"maxsize": self._maxsize, "typed": self._typed}

    def sandbox_getattr(self, name: str) -> Any:
        if name == "cache_info":
            return self.cache_info
        if name == "cache_clear":
            return self.cache_clear
        if name == "cache_parameters":
            return self.cache_parameters
        raise refuse(self, name)


async def _ready(value: Any) -> Any:
    """A cached ``async def``'s hit: awaited, its value."""
    return value


_Cached.__name__ = "_lru_cache_wrapper"
_Cached.__qualname__ = "functools._lru_cache_wrapper"


def lru_cache(maxsize: Any = 128, typed: bool = False) -> Any:
    """A bounded memoizing decorator (``@lru_cache``, ``@lru_cache(maxsize=None)``)."""
    if callable(maxsize) and not isinstance(maxsize, int):
        return _Cached(maxsize, 128, typed)
    if maxsize is not None and not isinstance(maxsize, int):
        raise TypeError("Expected first argument to be an integer, a callable, or None")

    def decorating(func: Any) -> _Cached:
        return _Cached(func, maxsize, typed)
    return decorating


def cache(user_function: Any, /) -> _Cached:
    """``lru_cache(maxsize=None)`` (bounded at 65 536 entries in the sandbox)."""
    return _Cached(user_function, None, False)


@final
class CachedProperty(SelfGuarded):
    """``@cached_property`` on a script class's method: computed on the first read, then
    an attribute of the instance (``del obj.name`` computes it again)."""

    __slots__ = ("_func", "_name")

    def __init__(self, func: Any, /) -> None:
        if not callable(func):
            raise TypeError("cached_property() takes a function")
        self._func = func
        self._name: str | None = None

    def __set_name__(self, owner: Any, name: str) -> None:
        if not isinstance(owner, ScriptMeta):
            raise TypeError("cached_property applies to the script's own classes only")
        if self._name is None:
            self._name = name
        elif name != self._name:
            raise TypeError("Cannot assign the same cached_property to two different names "
                            f"({self._name!r} and {name!r}).")

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        if self._name is None:
            raise TypeError("Cannot use cached_property instance without calling "
                            "__set_name__ on it.")
        if not isinstance(type(instance), ScriptMeta):
            raise TypeError("cached_property applies to the script's own objects only")
        store = instance.__dict__
        value = store.get(self._name, _NOTHING)
        if value is _NOTHING:
            value = self._func(instance)
            store[self._name] = value
        return value

    def __repr__(self) -> str:
        return f"<functools.cached_property {_describe(self._func)}>"

    def sandbox_getattr(self, name: str) -> Any:
        if name == "func":
            return self._func
        if name == "attrname":
            return self._name
        raise refuse(self, name)


CachedProperty.__name__ = "cached_property"
CachedProperty.__qualname__ = "functools.cached_property"


@final
class PartialMethod(_Preset):
    """``name = partialmethod(method, *args, **keywords)`` in a script class body: read on
    an instance, a :class:`Partial` of the bound method; on the class, a caller putting
    the object first. Only the script's own functions (or partials of them): a host
    callable has no binding the script may rely on."""

    __slots__ = ()

    def __init__(self, func: Any, /, *args: Any, **keywords: Any) -> None:
        super().__init__(func, *args, **keywords)
        if not is_script_function(self._func):
            raise TypeError("partialmethod() takes a function of the script's own in the "
                            "sandbox")

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return _Unbound(self._func, self._args, self._keywords)
        return Partial(types.MethodType(self._func, instance), *self._args, **self._keywords)

    def __repr__(self) -> str:
        return f"functools.partialmethod({_describe(self._func)}, ...)"


@final
class _Unbound(SelfGuarded):
    """A partialmethod read on the class: ``Cls.name(obj, ...)`` calls the function with
    ``obj`` first, then the stored arguments."""

    __slots__ = ("_args", "_func", "_keywords")

    def __init__(self, func: Any, args: tuple[Any, ...], keywords: dict[str, Any]) -> None:
        self._func, self._args, self._keywords = func, args, keywords

    def __call__(self, first: Any, /, *args: Any, **keywords: Any) -> Any:
        if self._keywords:
            keywords = {**self._keywords, **keywords}
        _charge_width(self._args, keywords)
        return self._func(first, *self._args, *args, **keywords)

    def __repr__(self) -> str:
        return f"<function {_describe(self._func)}>"


PartialMethod.__name__ = "partialmethod"
PartialMethod.__qualname__ = "functools.partialmethod"


def wraps(wrapped: Any, /, assigned: Any = None, updated: Any = None) -> Callable[[Any], Any]:
    """A decorator giving a script function the ``__name__``, ``__qualname__`` and
    ``__doc__`` of ``wrapped`` (text only: ``__wrapped__`` and ``__dict__`` are never
    copied, a script could not read them)."""
    def decorate(wrapper: Any) -> Any:
        return update_wrapper(wrapper, wrapped)
    return decorate


def update_wrapper(wrapper: Any, wrapped: Any, assigned: Any = None,
                   updated: Any = None) -> Any:
    """``wraps(wrapped)(wrapper)``; ``wrapper`` may also be an instance of a script class
    (a class-based decorator's ``functools.update_wrapper(self, fn)``), given the same
    texts as attributes."""
    del assigned, updated  # the same three names whatever is asked
    # A host function's texts as the script reads them (``x.__qualname__`` of a host
    # closure is scrubbed: ``decorate``, not ``wraps.<locals>.decorate``); no host docstring
    mine = is_script_function(wrapped) or isinstance(type(wrapped), ScriptMeta) or isinstance(
        wrapped, ScriptMeta)
    names = {key: value if mine else scrub(value)
             for key in (("__name__", "__qualname__", "__doc__") if mine
                         else ("__name__", "__qualname__"))
             if isinstance(value := getattr(wrapped, key, None), str)}
    # Only the script's own functions and objects: a facade's or builtin's function is
    # the host's, shared by every run (in-process, by the host itself), and must keep its
    # name.
    if is_script_function(wrapper) or (isinstance(type(wrapper), ScriptMeta)
                                       and type(wrapper) not in FACADE_CLASSES):
        for key, value in names.items():
            setattr(wrapper, key, value)
    return wrapper


_ORDERINGS: Final = ("__lt__", "__le__", "__gt__", "__ge__")


def total_ordering(cls: Any, /) -> Any:
    """CPython's ``total_ordering`` on a script class: the missing comparisons call the
    class's own ``__lt__``/``__le__``/``__gt__``/``__ge__`` and ``==``, which are script
    code (metered, inside the run). The ones it adds apply only to the class's instances:
    CPython's ``_gt_from_lt(a, b)`` calls ``type(a).__lt__``, which for two host lists is
    one uncharged C comparison."""
    if not isinstance(cls, ScriptMeta) or cls in FACADE_CLASSES:
        raise TypeError("total_ordering() decorates the script's own classes only")
    script_class: Any = cls
    before = {name: cls.__dict__.get(name) for name in _ORDERINGS}
    functools.total_ordering(script_class)
    for name in _ORDERINGS:
        added = cls.__dict__.get(name)
        if added is not None and added is not before[name]:
            type.__setattr__(cls, name, class_method(cls, added, name))
    return cls


FACADE: Final = Facade("functools", {
    "reduce": reduce,
    "partial": Partial,
    "partialmethod": PartialMethod,
    "cmp_to_key": cmp_to_key,
    "lru_cache": lru_cache,
    "cache": cache,
    "wraps": wraps,
    "update_wrapper": update_wrapper,
    "total_ordering": total_ordering,
    "cached_property": CachedProperty,
})
