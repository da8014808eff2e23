"""Charge C-level comparisons and hashing of nested values before they run.

``==``, ``<``, ``in``, ``list.count``, sorting and ``hash`` walk containers in C,
element by element, without operation ticks. Shared references make that walk
far larger than the memory the values occupy: ``a = [0] * 10**6; b = [a] * 10**6``
is 16 MB, yet comparing ``b`` with an equal copy built the same way visits 10**12
elements (hours of one C call holding the GIL). The same holds for long texts
(``[s1] * 10**5`` compared item by item with a distinct equal ``s2`` of 2 MB).

So the policy routes comparisons whose operands are not small literals through
these guards, which estimate the visits (shared containers counted once per
reference, memoised per container, so the estimate costs what the values
occupy) and charge them to the operation budget first.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import operator
import os
import sys
import time
from collections import Counter, OrderedDict, deque
from types import GeneratorType
from typing import TYPE_CHECKING, Any, Final

from codemode.errors import LimitExceeded
from codemode.sandbox.language.meter import SLOW_START
from codemode.sandbox.language.sizes import charge_counters, charge_operations
from codemode.sandbox.language.state import counted, current_run
from codemode.sandbox.language.textsearch import SEARCH_CHUNK, chunked_span, find_in_chunks

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable

__all__ = [
    "GUARDS",
    "SHALLOW",
    "charge_collisions",
    "charge_each",
    "charge_probes",
    "charge_sort",
    "charge_text",
    "check_ordered_key",
    "collision_probes",
    "compare_cost",
    "drawn_mapping",
    "guarded_contains",
    "guarded_hash",
    "guarded_key",
    "key_probes",
    "keyed",
    "ordered_pairs",
    "pace_inserts",
    "prepare_inplace",
]

VISITS_PER_OPERATION: Final = 16
"""Element visits of a C comparison charged as one operation (a C visit costs ~1/16 of a
script operation)."""

TEXT_UNIT: Final = 64
"""Bytes of text a comparison reads per visit."""

VISITS_PER_SECOND: Final = 2_000_000_000
"""A generous C speed for comparisons (identical small items compare by identity, ~2·10⁹/s
measured): walks estimated to take longer than the time left are refused up front."""

HASH_VISITS_PER_SECOND: Final = 500_000_000
"""The same for hashing tuples (~2·10⁸ items/s measured)."""

_TIMED_VISITS: Final = 1 << 24

_SCALARS: Final = frozenset({int, float, bool, complex, type(None)})
_TEXT: Final = frozenset({str, bytes, bytearray})
_SHALLOW: Final = _SCALARS | _TEXT
"""Types whose comparison with anything is one bounded step (no element walk)."""
SHALLOW: Final = _SHALLOW
"""The same types, for the guards: comparing two of them runs no script code."""
_ITEMS_VIEW: Final[Any] = type({}.items())
_KEYS_VIEW: Final[Any] = type({}.keys())
_VIEWS: Final[tuple[Any, ...]] = (type({}.keys()), type({}.values()), _ITEMS_VIEW)
_CONTAINERS: Final = (list, tuple, dict, set, frozenset, deque, *_VIEWS)
"""What a comparison or hash walks (dict views compare and look up all their items)."""
_SEQUENCES: Final = (list, tuple, deque)
_HASHED: Final[tuple[type, ...]] = (set, frozenset, dict, type({}.keys()), type({}.items()))
_VALUES_VIEW: Final[type] = type({}.values())
_MAX_DEPTH: Final = 400


COLLISION_FREE: Final = 1024
"""Hashed containers up to this many keys are not examined for keys sharing a hash: looking
each of their keys up costs at most this many probes."""

PROBES_PER_OPERATION: Final = 2
"""Probes (a hash match and a C ``==``, ~25 ns) charged as one operation."""

PROBES_PER_SECOND: Final = 40_000_000
"""C speed of probing keys that share a hash (measured ~4·10⁷/s): a bulk operation
estimated to take longer than the time left is refused up front."""

_VISITS_PER_PROBE: Final = VISITS_PER_SECOND // PROBES_PER_SECOND
"""A probe among keys sharing a hash as comparison visits (by their speeds)."""

_INTS: Final = frozenset({int, bool})
_SMALL_INT: Final = 1 << 60

INT_FREE_BITS: Final = 512
"""Bits of an int its comparison or hash reads as its one visit. Past them, two visits per
30-bit digit: CPython compares two ints of one length digit by digit from the top (~0.7 ns
a digit) and hashes every digit (~5.7 ns), so ``[a] * 10**6 == [a + 0] * 10**6`` over a
131,072-bit ``a`` (the sandbox's cap) read 4·10⁹ digits in one C call (3 s holding the
GIL) and ``hash((a,) * 10**6)`` hashed them (25 s), each charged as 10**6 visits."""
_DIGIT_BITS: Final = 15
_is_int: Final = int.__instancecheck__


def int_visits(value: int) -> int:
    """Visits of one comparison (or hash) of the int ``value``."""
    bits = value.bit_length()
    return 1 if bits <= INT_FREE_BITS else 1 + (bits - INT_FREE_BITS) // _DIGIT_BITS


def _scalar_visits(node: Any, kinds: set[type]) -> int:
    """Visits of comparing the scalars of ``node`` (a list, tuple, deque, set or a dict's
    keys/values) one by one: one each, and the digits of long ints (see ``INT_FREE_BITS``),
    read at C speed."""
    count = len(node)
    if int not in kinds:
        return count
    ints = node if kinds <= _INTS else filter(_is_int, node)
    bits = sum(map(int.bit_length, ints))
    extra = bits - INT_FREE_BITS * count
    return count + extra // _DIGIT_BITS if extra > 0 else count

_C_HASHED: Final = frozenset({int, float, complex, bool, type(None), str, bytes})
"""Key types whose ``hash`` is C code (no script ``__hash__`` runs to read it again)."""


class _TooCostly(Exception):
    pass


def _table_keys(node: Any) -> Any:
    """The keys a C loop over the hashed container ``node`` looks up, or None."""
    if isinstance(node, set | frozenset | dict) or type(node) is _KEYS_VIEW:
        return node
    if type(node) is _ITEMS_VIEW:
        return node.mapping
    return None


def _hash_key(key: Any) -> int:
    return hash(guarded_key(key))


def collision_probes(container: Any) -> int:
    """Probes beyond one per key that a C loop looking up every key of the hashed
    ``container`` (a set, a dict or a dict view) in a table of the same keys makes: the sum
    of ``g * g`` over the groups of ``g > 1`` keys sharing one hash value.

    A set or dict compares a key only with the keys of its own hash, so lookups are one
    probe each, but keys made to share a hash (``i * (2**61 - 1)`` for ints, a script class
    whose ``__hash__`` is a constant) are compared with each other: a lookup is linear, and
    a C loop over all of them (``a & b``, ``a == b``, ``dict(od)``, ``{**d}``) quadratic,
    in one call that holds the GIL (14,000 such keys: ``a & b`` 2.6 s, ``od.copy()`` 4.8 s,
    while inserting them one by one, which ticks, took 1.4 s). 0 for a container of at
    most ``COLLISION_FREE`` keys, or without shared hashes, or not hashed."""
    keys = _table_keys(container)
    return 0 if keys is None else key_probes(keys)


def key_probes(keys: Collection[Any]) -> int:
    """:func:`collision_probes` of the keys themselves (a hashed container's, or a list
    of keys a C call is about to insert into a new table: ``dict(zip(names, row))``; a
    key repeated in the list counts as another key of its hash)."""
    if len(keys) <= COLLISION_FREE:
        return 0
    kinds = set(map(type, keys))
    if kinds <= _INTS:
        # Two ints share a hash only when they differ by a multiple of 2**61 - 1.
        if min(keys) > -_SMALL_INT and max(keys) < _SMALL_INT:
            return 0
    elif kinds <= _TEXT and sys.flags.hash_randomization:
        return 0  # keyed hashes: no one makes a group of texts sharing one
    # Tuples are charged as keys are; a script's ``__hash__`` runs (and ticks) again.
    hashes = list(map(hash, keys) if kinds <= _C_HASHED else map(_hash_key, counted(keys)))
    if len(set(hashes)) == len(hashes):
        return 0
    sizes = [size for size in Counter(hashes).values() if size > 1]
    return sum(map(operator.mul, sizes, sizes))


def drawn_mapping(mapping: Any) -> dict[Any, Any]:
    """A mapping-like object that is not a dict (a script class's ``keys()`` and
    ``__getitem__``, a ``ChainMap``) read as C reads it, ``keys()`` once and one lookup a
    key, into a dict, the probes of its keys sharing a hash charged before they are
    inserted: C's own merge of such an object (``{**m}``, ``dict(m)``, ``d.update(m)``)
    compared them uncharged (20,000 ints sharing a hash: 3 s a ``{**m}`` for the 20,000
    lookups' operations)."""
    listed = mapping.keys()
    try:
        drawn = iter(listed)
    except TypeError:
        raise TypeError(f"{type(mapping).__name__}.keys() returned a non-iterable (type "
                        f"{type(listed).__name__})") from None
    keys = list(counted(drawn))
    charge_probes(key_probes(keys))
    return {key: mapping[key] for key in keys}


PACE_FREE: Final = SLOW_START
"""Items a bulk insert may take from what is left of the current operation chunk (see
``SLOW_START``); a smaller build skips ``slow_start`` and the grants after it (~2 µs
each: they made ``set(xs)`` of 100 items 70% slower)."""

_SIZED: Final = (list, tuple, dict, set, frozenset, str, bytes)


def pace_inserts(table: Any = (), items: Any = ()) -> None:
    """Before a C call inserts or looks up counted ``items`` in a hashed table (``table``,
    or a new one): the run's next operation chunk starts small (``Meter.slow_start``;
    pacing grows it back when the items are cheap) if the table holds more than
    ``COLLISION_FREE`` keys or ``items`` are more than ``PACE_FREE`` or of unknown
    number. Up to 1,024 items of the current chunk went in one GIL hold otherwise: each
    compared with the keys sharing its hash (0.3-1.9 s for 50,000-bit ints). A generator
    runs its own code between items, so it is left as it is."""
    if len(table) > COLLISION_FREE or (
            type(items) in _SIZED and len(items) > PACE_FREE) or (
            type(items) not in _SIZED and type(items) is not GeneratorType):
        current_run().meter.slow_start()


def charge_collisions(*containers: Any) -> None:
    """Charge the probes of keys sharing a hash (:func:`collision_probes`) that a bulk C
    operation on the hashed ``containers`` makes, and refuse one that could not end
    before the deadline."""
    charge_probes(sum(map(collision_probes, containers)))


def charge_probes(probes: int) -> None:
    """Charge ``probes`` (:func:`collision_probes`, :func:`key_probes`) to the run, and
    refuse a C call that would make more than it could before the deadline."""
    if not probes:
        return
    run = current_run()
    if probes / PROBES_PER_SECOND > run.meter.deadline - time.monotonic():
        run.meter.trip(LimitExceeded(
            "timeout", run.limits.timeout,
            f"looking up about {probes} keys that share hash values would outlast the run"))
    charge_operations(probes // PROBES_PER_OPERATION)


TEXT_BYTES_PER_SECOND: Final = 4_000_000_000
"""C speed of reading text a character at a time against another (``memcmp``/``memchr``,
measured 5-30 GB/s; taken low): a text scan estimated to take longer than the time left
is refused up front."""


def charge_text(size: int) -> None:
    """Charge a C loop reading ``size`` bytes of text (``TEXT_UNIT`` a visit), and refuse
    one that could not end before the deadline."""
    _charge(size // TEXT_UNIT, TEXT_BYTES_PER_SECOND // TEXT_UNIT)


def _flat_cost(node: Any) -> int | None:
    """Visits of a container whose items are all scalars or all texts (C-speed scan), else
    None."""
    if type(node) is _ITEMS_VIEW or isinstance(node, dict):
        mapping = node.mapping if type(node) is _ITEMS_VIEW else node
        keys = set(map(type, mapping.keys()))
        values = set(map(type, mapping.values()))
        if keys <= _SCALARS and values <= _SCALARS:
            return (_scalar_visits(mapping.keys(), keys)
                    + _scalar_visits(mapping.values(), values) + 1)
        return None
    kinds = set(map(type, node))
    if kinds <= _SCALARS:
        return _scalar_visits(node, kinds) + 1
    if len(kinds) == 1 and kinds <= _TEXT:
        return len(node) + sum(map(len, node)) // TEXT_UNIT + 1
    return None


def compare_cost(obj: Any, budget: int) -> int:
    """Element visits a C comparison or hash of ``obj`` can make (> ``budget`` means "at
    least that"): every reference to a shared container counts its whole content again,
    each text counts its length in ``TEXT_UNIT`` bytes."""
    kind = type(obj)
    if kind is int:
        return int_visits(obj)
    if kind in _SCALARS:
        return 1
    if kind in _TEXT:
        return 1 + len(obj) // TEXT_UNIT
    if not isinstance(obj, _CONTAINERS):
        return 1
    memo: dict[int, int] = {}
    total = 0

    def visit(node: Any, depth: int) -> int:
        nonlocal total
        kind = type(node)
        if kind is int:
            cost = int_visits(node)
        elif kind in _SCALARS:
            cost = 1
        elif kind in _TEXT:
            cost = 1 + len(node) // TEXT_UNIT
        elif not isinstance(node, _CONTAINERS):
            cost = 1
        else:
            key = id(node)
            known = memo.get(key)
            if known is not None:
                cost = known
            else:
                if depth > _MAX_DEPTH:
                    raise _TooCostly
                memo[key] = 1  # a cycle: the comparison's own recursion check answers it
                flat = _flat_cost(node)
                if flat is None:
                    saved = total
                    children: Iterable[Any] = node
                    if isinstance(node, dict):
                        children = (*node.keys(), *node.values())
                    elif kind is _ITEMS_VIEW:
                        mapping = node.mapping  # iterating items() makes new pairs
                        children = (*mapping.keys(), *mapping.values())
                    flat = 1 + sum(visit(child, depth + 1) for child in children)
                    total = saved
                if kind is not list and kind is not tuple and kind is not deque:
                    flat += collision_probes(node) * _VISITS_PER_PROBE
                memo[key] = flat
                cost = flat
        total += cost
        if total > budget:
            raise _TooCostly
        return cost

    try:
        return visit(obj, 0)
    except _TooCostly:
        return budget + 1


def _budget() -> int:
    meter = current_run().meter
    return (meter.operations - meter.used + 1) * VISITS_PER_OPERATION


def _charge(visits: int, rate: int = VISITS_PER_SECOND) -> None:
    """Charge ``visits`` to the operation budget, and refuse a C walk that could not end
    before the deadline at ``rate`` visits per second (it cannot be interrupted once
    started)."""
    if visits > _TIMED_VISITS:
        run = current_run()
        if visits / rate > run.meter.deadline - time.monotonic():
            run.meter.trip(LimitExceeded(
                "timeout", run.limits.timeout,
                f"comparing or hashing about {visits} nested items would outlast the run"))
    operations = visits // VISITS_PER_OPERATION
    if operations > 0:
        charge_operations(operations)


def _charge_pair(a: Any, b: Any) -> None:
    """A comparison of two containers reads at most the smaller of them."""
    if type(a) is Counter or type(b) is Counter:
        charge_counters(a, b)  # Counter comparisons are Python loops over both
    budget = _budget()
    first = compare_cost(a, budget)
    _charge(min(first, compare_cost(b, min(budget, first))))


def _eq(a: Any, b: Any) -> Any:
    if not (type(a) in _SHALLOW or type(b) in _SHALLOW):
        _charge_pair(a, b)
    return a == b


def _ne(a: Any, b: Any) -> Any:
    if not (type(a) in _SHALLOW or type(b) in _SHALLOW):
        _charge_pair(a, b)
    return a != b


def _lt(a: Any, b: Any) -> Any:
    if not (type(a) in _SHALLOW or type(b) in _SHALLOW):
        _charge_pair(a, b)
    return a < b


def _le(a: Any, b: Any) -> Any:
    if not (type(a) in _SHALLOW or type(b) in _SHALLOW):
        _charge_pair(a, b)
    return a <= b


def _gt(a: Any, b: Any) -> Any:
    if not (type(a) in _SHALLOW or type(b) in _SHALLOW):
        _charge_pair(a, b)
    return a > b


def _ge(a: Any, b: Any) -> Any:
    if not (type(a) in _SHALLOW or type(b) in _SHALLOW):
        _charge_pair(a, b)
    return a >= b


def charge_search(container: Any, item: Any) -> None:
    """Charge ``item in container`` (also ``count``/``index``/``remove``): a sequence is
    compared item by item (each comparison reads at most the smaller side), a hashed
    container hashes and compares ``item`` about once."""
    kind = type(item)
    if isinstance(container, _SEQUENCES) or type(container) is _VALUES_VIEW:
        seq: Any = container
        size = len(seq)
        if kind is int and int_visits(item) > 1:
            # each comparison reads at most the shorter int: the items' own digits bound it
            items = seq if isinstance(seq, _SEQUENCES) else tuple(seq)
            _charge(min(size * int_visits(item), compare_cost(items, _budget())))
        elif kind in _SCALARS:
            _charge(size)
        elif kind in _TEXT:
            _charge(size * (1 + len(item) // TEXT_UNIT))
        else:
            budget = _budget()
            visits = size * compare_cost(item, budget)
            if visits > budget:
                items = seq if isinstance(seq, _SEQUENCES) else tuple(seq)
                visits = min(visits, compare_cost(items, budget))
            _charge(visits)
    elif isinstance(container, _HASHED) and kind not in _SHALLOW and (
            isinstance(item, _CONTAINERS)):
        _charge(compare_cost(item, _budget()), HASH_VISITS_PER_SECOND)
    elif type(container) is range and kind is not int and kind is not bool:
        _charge(len(container))  # not an int: range compares with every item


_FAST_HASHED: Final = frozenset({set, frozenset, dict})


def guarded_contains(item: Any, container: Any) -> bool:
    """``item in container`` (``_in_``) with the comparisons charged first."""
    kind = type(container)
    if kind is str and len(container) <= SEARCH_CHUNK:  # the common case first
        return item in container
    if kind in _FAST_HASHED:
        if type(item) in _SHALLOW:
            return item in container
    elif kind in _TEXT or isinstance(container, str):  # a StrEnum member too
        span = chunked_span(container, item, ())
        if span is not None:  # a long text: a window at a time
            return find_in_chunks(container, item, *span) >= 0
        return item in container
    elif (kind is list or kind is tuple) and len(container) < VISITS_PER_OPERATION and (
            type(item) in _SCALARS or (type(item) is str and len(item) < TEXT_UNIT)):
        return item in container  # less than one operation's worth
    elif not hasattr(kind, "__contains__") and type(item) not in _SHALLOW:
        # An iterator (``reversed(x)``, ``map``, a generator): ``in`` compares item by item
        # with no length known up front, so each comparison is charged as it comes.
        return any(element is item or _eq(element, item) for element in container)
    charge_search(container, item)
    return item in container


def guarded_not_contains(item: Any, container: Any) -> bool:
    """``item not in container`` (``_notin_``)."""
    if type(container) is str and len(container) <= SEARCH_CHUNK:
        return item not in container
    return not guarded_contains(item, container)


def guarded_operand(value: Any) -> Any:
    """``_cmparg_``: an operand of a chained comparison, charged as if compared in full."""
    if type(value) not in _SHALLOW and isinstance(value, _CONTAINERS):
        _charge(compare_cost(value, _budget()))
    return value


def guarded_hash(obj: Any, /) -> int:
    """``hash``: a tuple hashes every item, recursively, on every call (not cached).

    Only texts and numbers hash to Python's own value: any other hash can be derived from
    a memory address (a function's, a class's, an instance's: ``hash(f) * 16`` is its
    address), so it is keyed with a per-process secret (equal objects still hash equal)."""
    kind = type(obj)
    if kind in _SHALLOW:
        return hash(obj)
    if isinstance(obj, tuple):
        _charge(compare_cost(obj, _budget()), HASH_VISITS_PER_SECOND)
    value = hash(obj)
    digest = hashlib.blake2b(value.to_bytes(8, "little", signed=True), key=_HASH_KEY,
                             digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True) >> 2


_HASH_KEY: Final = os.urandom(16)


def charge_sort(items: list[Any] | tuple[Any, ...], rounds: int | None = None) -> None:
    """Charge comparing ``items`` with each other: ``rounds`` comparisons per item (sorting:
    about ``log2(n)``); flat data (numbers, short texts) costs nothing beyond the items
    already counted."""
    n = len(items)
    if n < 2:
        return
    budget = _budget()
    cost = compare_cost(items, budget)
    if cost > budget:
        _charge(cost)  # trips
    nested = cost - n - 1
    if nested > 0:
        _charge(nested * (n.bit_length() if rounds is None else rounds))


def charge_each(key: Callable[[Any], Any] | None, factor: int) -> Callable[[Any], Any] | None:
    """A sort/min/max key function whose results (compared in C) are charged as they come;
    None stays None."""
    if key is None:
        return None

    def charged_key(value: Any) -> Any:
        result = key(value)
        if (type(result) not in _SHALLOW and isinstance(result, _CONTAINERS)) or (
                type(result) is int and result.bit_length() > INT_FREE_BITS):
            _charge(compare_cost(result, _budget()) * factor)
        return result
    return charged_key


_SMALL_KEY: Final = 16


def guarded_key(key: Any) -> Any:
    """``_key_``: a dict/set key. Hashing a tuple hashes every item, recursively, on every
    lookup (``t = (t, t)`` forty times is a 10**12-item hash): nested tuples are charged."""
    if isinstance(key, tuple) and not (len(key) <= _SMALL_KEY and _flat_key(key)):
        _charge(compare_cost(key, _budget()), HASH_VISITS_PER_SECOND)
    return key


def _flat_key(key: tuple[Any, ...]) -> bool:
    """Only numbers, texts or classes (``isinstance(x, (int, str))``) in ``key``."""
    kinds = set(map(type, key))
    return kinds <= _SHALLOW or all(issubclass(kind, type) for kind in kinds)


def _pair_key(pair: Any) -> Any:
    if type(pair) in (tuple, list) and len(pair) == 2:
        guarded_key(pair[0])
    return pair


def keyed(items: Any, *, pairs: bool = False) -> Any:
    """``items`` about to be hashed as keys (or, with ``pairs``, key/value pairs): nested
    tuples are charged as they come; a list or tuple of flat items (recognised at C speed)
    passes as it is."""
    if type(items) in (list, tuple) and _SHALLOW.issuperset(map(type, items)):
        return items
    return map(_pair_key if pairs else guarded_key, items)


_PLAIN_EQ: Final = frozenset({object.__eq__, int.__eq__, float.__eq__, complex.__eq__,
                              str.__eq__, bytes.__eq__, _dt.date.__eq__, _dt.datetime.__eq__,
                              _dt.time.__eq__, _dt.timedelta.__eq__, _dt.timezone.__eq__})
"""``==`` of these runs no script code (``object``'s is identity: a plain script object)."""
_ITEMS_EQ: Final = frozenset({tuple.__eq__, frozenset.__eq__})
_KEY_DEPTH: Final = 32


def check_ordered_key(key: Any) -> Any:
    """``key`` for an ``OrderedDict``: one whose ``==`` runs script code is refused.

    C code of ``OrderedDict`` looks a key up, reads its own node table at the position
    found, and looks the key up again, across the keys' ``__eq__``: one that changed the
    dict (or answered differently the second time) left it reading freed nodes, a segfault
    of an in-process host (``move_to_end``, ``pop``, ``od[k] = v``, ``==``; 3.11-3.13).
    With plain keys (numbers, text, dates, tuples of them, objects compared by identity)
    no script code runs inside it."""
    if not _plain_key(key, 0):
        raise TypeError(f"an OrderedDict key must compare without script code in the "
                        f"sandbox, not a {type(key).__name__!r} object: use numbers, "
                        "strings or tuples of them (or a dict)")
    return key


def _plain_key(key: Any, depth: int) -> bool:
    equal = type(key).__eq__
    if equal in _PLAIN_EQ:
        return True
    if equal in _ITEMS_EQ and depth < _KEY_DEPTH:
        charge_operations(len(key))
        return all(_plain_key(item, depth + 1) for item in key)
    return False


def ordered_pairs(source: Any) -> Any:
    """What an ``OrderedDict`` takes in bulk (``update``, the constructor, ``|``), its keys
    checked first (:func:`check_ordered_key`): a dict as it is, anything else read now into
    a list of pairs (a script's own mapping or pairs run their code here, not inside the
    dict's C code), handed on as an iterator that charges each pair as it is inserted."""
    if isinstance(source, dict):
        for key in counted(source):
            check_ordered_key(key)
        charge_collisions(source)  # inserted in one C call
        return source
    if hasattr(source, "keys"):
        pairs = [(check_ordered_key(key), source[key]) for key in counted(source.keys())]
    else:
        pairs = []
        for index, item in enumerate(counted(source)):
            pair = tuple(item)
            if len(pair) != 2:
                raise ValueError(f"dictionary update sequence element #{index} has length "
                                 f"{len(pair)}; 2 is required")
            pairs.append((check_ordered_key(pair[0]), pair[1]))
    # inserted in one C call: 15,000 keys sharing a hash held the GIL for 7 s there (the
    # clock could not stop it), so their probes are charged first
    charge_probes(key_probes([key for key, _ in pairs]))
    return counted(pairs)


def _keys_display(items: Any) -> Any:
    """``_keys_``: a starred item of a set display (``{*items}``)."""
    return keyed(items)


_KEY_VIEWS: Final[frozenset[type]] = frozenset({type({}.keys()), type({}.items())})
_NUMBERS: Final = frozenset({int, float, bool, complex})
_BULK: Final = (set, frozenset, dict)
"""Operands of ``-``, ``|``, ``&``, ``^`` whose C loop visits every item of both."""


def _set_operator(operator_: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``-``, ``|``, ``&``, ``^``: dict views take any iterable as the other operand and hash
    its items in C (``d.keys() | [t]``), so those items are drawn through ``keyed``."""
    def guard(a: Any, b: Any) -> Any:
        ta = type(a)
        if ta in _NUMBERS:
            return operator_(a, b)
        tb = type(b)
        if ta is Counter or tb is Counter:
            charge_counters(a, b)
        elif isinstance(a, _BULK) and isinstance(b, _BULK):
            charge_operations(len(a) + len(b))  # like ``union()`` & co., item by item
        elif ta in _KEY_VIEWS or tb in _KEY_VIEWS:
            # a dict view's keys go into a new set in C (``d.keys() & e.keys()``)
            charge_operations((len(a) if ta in _KEY_VIEWS else 0) + (
                len(b) if tb in _KEY_VIEWS else 0))
        # Keys sharing a hash make each of the C loop's lookups linear.
        charge_collisions(a, b)
        if ta is OrderedDict or tb is OrderedDict:  # ``od | d``, ``d | od``: an OrderedDict
            a, b = ordered_pairs(a) if isinstance(a, dict) else a, (
                ordered_pairs(b) if isinstance(b, dict) else b)
        if ta in _KEY_VIEWS and tb not in _KEY_VIEWS:
            b = _drawn(b)
        elif tb in _KEY_VIEWS and ta not in _KEY_VIEWS:
            a = _drawn(a)
        return operator_(a, b)
    guard.__name__ = guard.__qualname__ = operator_.__name__
    return guard


def _drawn(items: Any) -> Any:
    """The other operand of a dict view's set operator (any iterable), unless hashed
    already: its items, hashed as keys, drawn through the operation counter (a list of
    keys sharing a hash is inserted in one C call otherwise)."""
    if _table_keys(items) is not None:
        return items
    return counted(keyed(items))


def prepare_inplace(op: str, x: Any, y: Any) -> Any:
    """The right operand of ``x op= y``: ``dict |= pairs`` and dict views hash new keys,
    and keys sharing a hash are charged (:func:`charge_collisions`)."""
    charge_collisions(x, y)
    if isinstance(x, _BULK) and not isinstance(y, _BULK):
        pace_inserts(x, y)
    if op == "|=" and type(x) is OrderedDict:
        return ordered_pairs(y)
    if op == "|=" and isinstance(x, dict) and not isinstance(y, dict):
        return counted(keyed(y, pairs=True))
    if type(x) in _KEY_VIEWS and type(y) not in _KEY_VIEWS:
        return _drawn(y)
    return y


GUARDS: Final[dict[str, Callable[..., Any]]] = {
    "_eq_": _eq, "_ne_": _ne, "_lt_": _lt, "_le_": _le, "_gt_": _gt, "_ge_": _ge,
    "_in_": guarded_contains, "_notin_": guarded_not_contains, "_cmparg_": guarded_operand,
    "_key_": guarded_key, "_keys_": _keys_display,
    "_sub_": _set_operator(operator.sub), "_or_": _set_operator(operator.or_),
    "_and_": _set_operator(operator.and_), "_xor_": _set_operator(operator.xor),
}
"""Names the compiled script calls for comparisons (see the policy)."""
