"""Size guards: refuse allocations past ``Limits.memory`` before they happen.

The policy rewrites ``a * b``, ``a ** b``, ``a << b``, ``a + b`` and ``a % b``
(and the augmented forms) into these guards unless it can prove the operands
are small ints (e.g. ``i * i`` for a ``range`` loop variable). Each guard lets
numbers through on a fast path and otherwise estimates the result size first,
so ``10**10**10``, ``'a' * 10**10``, doubling ``x = x + x`` or
``'%*d' % (10**9, 1)`` never allocate, even in-process where no rlimit
applies. A single object may not exceed ``Limits.memory``; big integers are
capped at ``MAX_INT_BITS`` (beyond that arithmetic costs seconds of C time).
"""

from __future__ import annotations

import re
import types
from collections import Counter, deque
from itertools import islice
from typing import TYPE_CHECKING, Any, Final

from codemode.errors import LimitExceeded
from codemode.sandbox.language.render import RENDER_CHILDREN, charge_render, scrub
from codemode.sandbox.language.state import counted, current_run

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = [
    "CONCAT_TYPES",
    "INT_CAP_TEXT",
    "MAX_INT_BITS",
    "RENDER_CHILDREN",
    "RENDER_SIZERS",
    "SLICE_SIZERS",
    "WIDE",
    "capped_int",
    "charge_counters",
    "charge_operations",
    "charged_by_width",
    "check_render",
    "ensure_size",
    "guarded_add",
    "guarded_lshift",
    "guarded_mod",
    "guarded_mul",
    "guarded_pow",
    "guarded_slice",
    "item_size",
    "items_size",
    "json_text_size",
    "json_unicode_size",
    "percent_format_ok",
    "plain_size",
    "poll_memory",
    "render_size",
    "repeat_ok",
    "repr_text_size",
    "spec_number",
]

MAX_INT_BITS: Final = 1 << 17
"""Largest integer result (bits) a script may build: ~39 000 decimal digits.

Kept small because CPython's big-int division and conversion are quadratic:
at this size every operation stays in the milliseconds.
"""

MAX_MODPOW_COST: Final = 1 << 36
"""Largest ``bits(exponent) * bits(modulus)**2`` for three-argument ``pow`` (~0.06 s).

Each of the ``bits(exponent)`` steps multiplies and reduces modulo ``m``, which is
quadratic in ``bits(m)``: with a 131 000-bit modulus a 512-bit exponent is 10 s of one
C call. 4096-bit RSA-sized operands stay allowed."""

MODULAR_INVERSE_STEPS: Final = 64
"""``pow(a, -1, m)`` runs Euclid on ``m`` in one C call (~1 s at 131 000 bits): charged like
this many modular squarings."""

_FAST_OK: Final = 1 << 16
"""Sizes below this never need the run's memory limit looked up."""

_SMALL: Final = 1 << 62
_TEXT: Final = (str, bytes, bytearray)
_SEQUENCES: Final = (str, bytes, bytearray, list, tuple, deque)
CONCAT_TYPES: Final = (str, bytes, bytearray, list, tuple)
"""Types whose ``+`` builds a new object of both operands' combined size."""
_PERCENT_SPEC: Final = re.compile(rb"[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?")
_PARENS: Final = re.compile(rb"[()]")
_MAX_KEY_PARENS: Final = 64


def _too_big(what: str, size: int) -> None:
    current_run().too_big(what, size)


OBJECT_SHARE: Final = 4
"""One object may take at most ``Limits.memory // OBJECT_SHARE`` bytes (in-process there is
no rlimit, and building an object usually keeps its predecessor alive for a moment)."""


def ensure_size(size: int, what: str) -> None:
    """Trip the memory limit if one object of ``size`` bytes would exceed its share."""
    if size > _FAST_OK:
        run = current_run()
        if size > run.limits.memory // OBJECT_SHARE:
            _too_big(what, size)
        run.meter.poll_memory()


def charge_operations(count: Any) -> None:
    """Charge ``count`` operations now, for stdlib Python code that loops without ticks
    (``random.shuffle``, ``statistics`` …); trips ``operations`` when over budget."""
    if isinstance(count, int) and count > 0:
        meter = current_run().meter
        deque(islice(meter.ticker, int(count)), maxlen=0)


WIDE: Final = 64
"""Entries of a tuple that cost one operation to build (a copy in C, ~0.1 µs an entry)."""


def charged_by_width(items: Iterator[Any], width: int) -> Iterator[Any]:
    """``items`` counted, each also charged ``width // WIDE`` operations.

    For C iterators whose every item is a ``width``-tuple built anew (``zip`` of many
    iterables, ``itertools.permutations``/``combinations``/``product``): the meter checks
    memory and the deadline between 1,024-operation chunks, so at one operation an item
    ``list(combinations_with_replacement(range(3), 10**6))`` built gigabytes of 8 MB
    tuples, the host loop held 2-14 s, before the first check."""
    if width < WIDE:
        return counted(items)
    cost = width // WIDE

    def charge(item: Any) -> Any:
        charge_operations(cost)
        return item
    return counted(map(charge, items))


_RENDER_CONTAINERS: Final = (list, tuple, dict, set, frozenset, deque)
_RENDER_DEPTH: Final = 400
_KEYS_VIEW: Final[type] = type({}.keys())
_VALUES_VIEW: Final[type] = type({}.values())
_ITEMS_VIEW: Final[type] = type({}.items())
_RENDER_LEAVES: Final = (str, bytes, bytearray, int, float, complex, bool, type(None))

RENDER_SIZERS: dict[type, Callable[[Any], int]] = {}
"""Type -> bytes of its ``repr`` for objects whose repr shows data (a regex match shows the
matched text); facades register here."""


_PLAIN_CONTAINERS: Final = frozenset(_RENDER_CONTAINERS)
_METHOD: Final = types.MethodType
_FUNCTION: Final = types.FunctionType


def _name_size(obj: Any) -> int:
    """Bytes of a short repr naming ``obj`` (a class, a function): 32 plus its name."""
    name = getattr(obj, "__qualname__", None)
    return 32 + (len(name) if isinstance(name, str) else 0)


def _field_names_size(kind: type) -> int:
    """Bytes of a named tuple's field names, read on the class ``collections`` made (the
    one right on ``tuple``): its repr shows the names it was made with, while ``_fields``
    of the facade's class or of a subclass is whatever the script set there (``()``)."""
    if not issubclass(kind, tuple):
        return 0
    for base in kind.__mro__:
        if base.__bases__ == (tuple,):
            fields = base.__dict__.get("_fields", ())
            return sum(len(name) for name in fields) if type(fields) is tuple else 0
    return 0


class _RenderTooBig(Exception):
    pass


class _RenderTooDeep(_RenderTooBig):
    """Nesting past ``_RENDER_DEPTH``: CPython's own render raises RecursionError there
    (a 5,000-deep ``ChainMap`` or list)."""


_JSON_ESCAPED: Final = bytes(range(32)) + b'\x7f"\\'
"""ASCII characters ``json.dumps`` escapes (2 to 6 characters each)."""


def json_unicode_size(text: Any) -> int:
    """Characters ``json.dumps(ensure_ascii=False)`` writes for ``text`` (control
    characters escaped, up to 6 each)."""
    if not isinstance(text, str):  # a StrEnum member is its text
        return len(text)
    data = text.encode("ascii", "ignore")
    return len(text) + 5 * (len(data) - len(data.translate(None, _JSON_ESCAPED)))


_NOT_ASTRAL_LEADS: Final = bytes(range(0xF0)) + bytes(range(0xF5, 0x100))
"""Every byte but those that start a four-byte UTF-8 sequence (a character past the BMP)."""


_ASTRAL_SLICE: Final = 1 << 20


def _astral(text: str) -> int:
    """Characters of ``text`` past the BMP, counted by C codecs at ~10 ns a character, a
    slice at a time (its UTF-8 is up to four times its length: a whole 10 M-character
    text's would cost more memory than the run has).

    UTF-16 with ``surrogatepass`` counted them by length, but calls its error handler once
    per lone surrogate (~0.5 µs each): 10 million of them held the GIL 5 s; UTF-8 passes
    them inline, each as three bytes whose lead is no four-byte lead."""
    return sum(len(text[start:start + _ASTRAL_SLICE].encode("utf-8", "surrogatepass")
                   .translate(None, _NOT_ASTRAL_LEADS))
               for start in range(0, len(text), _ASTRAL_SLICE))


def json_text_size(text: Any) -> int:
    """Characters ``json.dumps`` (``ensure_ascii``) writes for the string ``text``: up to 6
    for a control character, 6 for one past ASCII (``\\uXXXX``), 12 past the BMP (counted
    by C codecs: a regex pass held the GIL 1.5 s on 30 million characters)."""
    if not isinstance(text, str):  # a StrEnum member is its text
        return len(text)
    if text.isascii() and text.isprintable() and '"' not in text and "\\" not in text:
        return len(text)
    data = text.encode("ascii", "ignore")
    size = len(data) + 5 * (len(data) - len(data.translate(None, _JSON_ESCAPED)))
    wide = len(text) - len(data)
    if wide:
        size += 6 * wide + 6 * _astral(text)
    return size


_ASCII_CONTROLS: Final = bytes(range(32)) + b"\x7f"
_PRINTABLE_BYTES: Final = bytes(range(32, 127))


def repr_text_size(text: Any) -> int:
    """Characters ``repr`` writes for the string or bytes ``text``: a character it cannot
    print is an escape, up to ten characters past the BMP (``\\U000e0001``), four for a
    control character or a byte (``\\x00``)."""
    if not isinstance(text, str):  # a StrEnum member is its text
        escaped: int = (3 * len(text.translate(None, _PRINTABLE_BYTES))
                        + text.count(b"\\") + text.count(b"'"))
        return len(text) + escaped
    if text.isprintable():
        return len(text) + text.count("\\") + text.count("'")
    data = text.encode("ascii", "ignore")
    size = len(data) + 3 * (len(data) - len(data.translate(None, _ASCII_CONTROLS)))
    size += data.count(b"\\") + data.count(b"'")
    wide = len(text) - len(data)
    if wide:
        size += 6 * wide + 4 * _astral(text)
    return size


def render_size(obj: Any, limit: int, text: Callable[[Any], int] = repr_text_size, *,
                deep: bool = False) -> int:
    """Bytes of text ``str``/``repr``/``json.dumps`` of ``obj`` builds (> ``limit`` means
    "at least that"; ``deep``: nesting past ``_RENDER_DEPTH`` raises RecursionError, as
    the render itself would, where the host's own checks take it as too big).

    Counts every reference to a shared leaf (``[s] * 1000`` renders ``s`` a thousand
    times), but visits each shared container once (memoised by identity; temporaries are
    never memoised, their ids could be reused), so the walk costs what the object
    occupies, not what its text would. ``text`` sizes a string with its escapes
    (:func:`repr_text_size`; ``json.dumps`` passes :func:`json_text_size`): a character
    is up to twelve. Unknown objects count as short reprs.
    """
    memo: dict[int, int] = {}
    total = 0

    def add(size: int) -> int:
        nonlocal total
        total += size
        if total > limit:
            raise _RenderTooBig
        return size

    def walk(children: Any, depth: int, pairs: bool = False) -> int:
        size = 2
        if depth > _RENDER_DEPTH:
            raise _RenderTooDeep
        if pairs:
            for key, value in children:
                size += visit(key, depth + 1) + visit(value, depth + 1) + 4
        else:
            for child in children:
                size += visit(child, depth + 1) + 2
        return size

    def visit(node: Any, depth: int) -> int:
        kind = type(node)
        if kind is str or kind is bytes or kind is bytearray:
            return add(text(node) + 3)
        if isinstance(node, str):
            # a StrEnum member: json.dumps writes its text, its repr shows its value's
            # (as one short repr, 200 references to a member of a million NULs were sized
            # as 6 KB; json.dumps wrote 1.2 GB in one C call)
            return add(text(node) + 3 + _name_size(kind))
        if kind is int:
            return add(int(node.bit_length()) // 3 + 2)
        if isinstance(node, _RENDER_CONTAINERS):
            key = id(node)
            known = memo.get(key)
            if known is not None:
                return add(known)
            memo[key] = 8  # a cycle renders as "[...]"
            size = walk(node.items() if isinstance(node, dict) else node, depth,
                        pairs=isinstance(node, dict))
            if kind not in _PLAIN_CONTAINERS:
                # ``P(x=…, y=…)`` (named tuples: every field name, every time),
                # ``defaultdict(<factory>, {…})``.
                size += add(_name_size(kind) + _field_names_size(kind))
                factory = getattr(node, "default_factory", None)
                if factory is not None:
                    size += visit(factory, depth + 1)
            memo[key] = size
            return size
        # Objects whose text shows what they hold: exceptions (their args), slices, dict
        # views, registered types; anything else renders as a short repr.
        if isinstance(node, BaseException):
            return visit(node.args, depth + 1) + add(32)
        if kind is slice:
            return walk((node.start, node.stop, node.step), depth)
        if kind is _KEYS_VIEW or kind is _VALUES_VIEW:
            return walk(node, depth) + add(16)
        if kind is _ITEMS_VIEW:
            return walk(node, depth, pairs=True) + add(16)
        sizer = RENDER_SIZERS.get(kind)
        if sizer is not None:
            return add(sizer(node))
        children = RENDER_CHILDREN.get(kind)
        if children is not None:
            key = id(node)
            known = memo.get(key)
            if known is not None:
                return add(known)
            memo[key] = 8
            size = walk(children(node), depth) + add(_name_size(kind))
            memo[key] = size
            return size
        if kind is _METHOD:
            # ``<bound method A.f of <repr of the instance>>``
            return add(_name_size(node.__func__)) + visit(node.__self__, depth + 1)
        if isinstance(node, type) or kind is _FUNCTION:
            # A script names its classes and functions (as long as the source allows).
            return add(_name_size(node) + len(getattr(node, "__module__", None) or ""))
        # ``<module.Type object at 0x…>``: script classes are named by the script.
        return add(_name_size(kind) + len(getattr(kind, "__module__", None) or ""))

    try:
        visit(obj, 0)
    except _RenderTooDeep:
        if deep:
            raise RecursionError("maximum recursion depth exceeded while getting the repr "
                                 "of an object") from None
        return limit + 1
    except _RenderTooBig:
        return limit + 1
    return total


_PLAIN_NODES: Final = 512
_PLAIN_CHARS: Final = 32 * 1024
_PLAIN_DEPTH: Final = 32
_PLAIN_INT: Final = 1 << 1024
_PLAIN_LEAF: Final = 350
"""At least the text ``render_size`` counts for a leaf of a plain value that is not a
string (an integer under ``_PLAIN_INT`` is at most 343 characters) and for a container's
brackets and separators."""


def plain_size(value: Any) -> tuple[int, int] | None:
    """For a small value made only of exact JSON types (dicts with string keys, lists,
    short strings, integers of at most 308 digits, floats, booleans, None), read without
    running any script code: (its nodes, at least what ``render_cost`` and
    :func:`render_size` count for it); None for anything else, which those walks decide
    (a run's result is checked with this first: most are such values, walked once).

    ``render_size`` counts at most 12 characters a string character plus 3, 343 for an
    integer under ``_PLAIN_INT``, and less for a float, a boolean, None or a container's
    brackets; each also adds at most 4 of separators. ``render_cost`` counts 1 a node."""
    nodes = chars = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        nodes += 1
        kind = type(item)
        if kind is str:
            chars += len(item)
        elif kind is int:
            if not -_PLAIN_INT < item < _PLAIN_INT:
                return None
        elif kind is dict or kind is list:
            if depth >= _PLAIN_DEPTH or len(item) > _PLAIN_NODES:
                return None
            if kind is dict:
                for key, member in item.items():
                    if type(key) is not str:
                        return None
                    nodes += 1
                    chars += len(key)
                    stack.append((member, depth + 1))
            else:
                stack.extend([(member, depth + 1) for member in item])
        elif kind is not float and kind is not bool and item is not None:
            return None
        if nodes > _PLAIN_NODES or chars > _PLAIN_CHARS:
            return None
    return nodes, 12 * chars + _PLAIN_LEAF * nodes


def check_render(obj: Any, what: str, text: Callable[[Any], int] | None = None) -> None:
    """Trip the memory limit before rendering a value whose text would be too big (a lone
    string too, when ``text`` is given: see :func:`render_size`)."""
    if text is not None or not isinstance(obj, _RENDER_LEAVES):
        share = current_run().limits.memory // OBJECT_SHARE
        size = render_size(obj, share, text or repr_text_size, deep=True)
        if size > _FAST_OK:
            ensure_size(size, what)


def poll_memory() -> None:
    """Let the current run check its aggregate memory growth (rate-limited)."""
    current_run().meter.poll_memory()


SLICE_SIZERS: dict[type, Callable[[Any, slice], int]] = {}
"""Type -> estimated bytes of ``obj[a:b]`` for types whose slices copy more than the
object holds (a regex match: one copy of the text per group); facades register here."""


def guarded_slice(obj: Any, key: Any) -> Any:
    """``obj[a:b]``: a copy; big ones let the run's aggregate memory check look first."""
    if isinstance(obj, CONCAT_TYPES):
        if len(obj) > _FAST_OK:
            poll_memory()
    else:
        sizer = SLICE_SIZERS.get(type(obj))
        if sizer is not None and isinstance(key, slice):
            ensure_size(sizer(obj, key), f"slicing a {type(obj).__name__}")
    return obj[key]


_CHAR_OBJECT: Final = 80
"""Bytes of a one-character string past Latin-1 (those up to U+00FF are shared)."""


def items_size(source: Any) -> int:
    """Bytes a list (or tuple, deque) of the items of the sized ``source`` needs: a pointer
    each, and a text splits into one string per character, a new object each past Latin-1
    (``deque(s)`` of six million CJK characters took 520 MB where 48 MB were checked)."""
    size = len(source) * 8
    if isinstance(source, str) and not source.isascii() and max(source) > "\xff":
        size += len(source) * _CHAR_OBJECT
    return size


def item_size(seq: Any) -> int:
    """Bytes one item of ``seq`` costs at least: 1 for text, a pointer otherwise."""
    return 1 if isinstance(seq, _TEXT) else 8


INT_CAP_TEXT: Final = (f"the sandbox's cap on integers is {MAX_INT_BITS} bits (about "
                       f"{MAX_INT_BITS * 3 // 10:,} decimal digits); for magnitudes this large "
                       "use floats (math.log10, math.exp) or modular arithmetic (pow(a, b, m))")


def _int_bits(bits: int) -> None:
    if bits > MAX_INT_BITS:
        size = "more than 2**40" if bits == MAX_INT_BITS + 1 else f"about {bits}"
        run = current_run()
        run.meter.trip(LimitExceeded("memory", run.limits.memory,
                                     f"an integer of {size} bits: {INT_CAP_TEXT}"))


def capped_int(value: Any) -> Any:
    """``value``, unless it is an int past ``MAX_INT_BITS`` (that trips the memory limit).

    For stdlib code that builds ints without passing the operators' guards:
    ``statistics.variance`` of big ints squares them, and a result over the cap would
    let the script's next ``math.gcd`` or ``divmod`` be one C call of many seconds."""
    if type(value) is int and value.bit_length() > MAX_INT_BITS:
        _int_bits(value.bit_length())
    return value


def repeat_ok(seq: Any, times: Any) -> None:
    """Trip the memory limit if ``seq * times`` would be too large."""
    if not isinstance(seq, _SEQUENCES) or not isinstance(times, int):
        return
    times = int(times)
    if times > 0:  # ``big * 1`` copies a list too
        ensure_size(len(seq) * times * item_size(seq), f"repeating a sequence {times} times")


def guarded_mul(a: Any, b: Any) -> Any:
    """``a * b`` with int growth and sequence repetition checked first."""
    ta = type(a)
    tb = type(b)
    if ta is int and tb is int:
        if not (-_SMALL < a < _SMALL and -_SMALL < b < _SMALL):
            _int_bits(a.bit_length() + b.bit_length())
        return a * b
    if ta is float or tb is float:
        return a * b
    if isinstance(a, int) and isinstance(b, int):
        _int_bits(int(a).bit_length() + int(b).bit_length())
    elif isinstance(b, int):
        repeat_ok(a, b)
    elif isinstance(a, int):
        repeat_ok(b, a)
    return a * b


def charge_counters(*operands: Any) -> None:
    """``Counter`` arithmetic, ``update``, ``most_common`` … are stdlib Python loops over
    every item, without ticks: charge one operation per item of each Counter or mapping."""
    if any(isinstance(x, Counter) for x in operands):
        charge_operations(sum(len(x) for x in operands if isinstance(x, dict)))


def guarded_add(a: Any, b: Any) -> Any:
    """``a + b`` with concatenation size checked first (``x = x + x`` doubling)."""
    ta = type(a)
    if ta is int or ta is float:
        return a + b
    if ta is Counter or type(b) is Counter:
        charge_counters(a, b)
    if isinstance(a, CONCAT_TYPES) and isinstance(b, CONCAT_TYPES):
        size = len(a) + len(b)
        ensure_size(size * item_size(a), "concatenating sequences")
        if isinstance(a, _TEXT):
            if size > _CONCAT_TEXT_FREE:
                charge_operations(size // _CONCAT_TEXT_UNIT)
        elif size > _CONCAT_ITEMS_FREE:
            charge_operations(size // WIDE)
    return a + b


_CONCAT_TEXT_FREE: Final = 1 << 16
_CONCAT_TEXT_UNIT: Final = 1 << 12
_CONCAT_ITEMS_FREE: Final = 1 << 12
"""A concatenation copies both operands in C, an operation charged per ``WIDE`` items of a
list or tuple (a copy and a reference each) and per 4,096 characters of a text, past these
sizes: ``sum(lists, [])``, ``functools.reduce(operator.add, …)``, ``itertools.accumulate``
of texts or ``x = x + y`` in a loop copy the growing total once per item, quadratic, for an
operation each (2,000 lists of 1,000 items summed ran 10 s into the clock on a 100,000
operation budget; 5,000 texts of 1,000 characters accumulated, 8.7 s, and succeeded)."""


def percent_format_ok(fmt: Any, args: Any) -> None:
    """Refuse ``%`` formatting whose widths or precisions would allocate huge strings."""
    data = fmt.encode("utf-8", "surrogatepass") if isinstance(fmt, str) else bytes(fmt)
    if b"%" not in data:
        return
    # One Python step per conversion (the scan itself is linear, in C): charge them.
    charge_operations(data.count(b"%"))
    ensure_size(_percent_total(data, args), "%-formatting")


_HUGE_NUMBER: Final = 10**18
_INT_DIGITS: Final = 4000
"""Digits ``int()`` reads in one piece (CPython refuses more than 4300)."""


def spec_number(digits: str | bytes) -> int:
    """The value of a width or precision written with ``digits`` (any Unicode decimal
    digits, as CPython's format parser takes), read as CPython reads it: leading zeros do
    not count (``'>0000000000001000000000'`` is a width of 10**9); past 10**18 it counts as
    10**18 (refused anyway)."""
    text = digits.decode("ascii") if isinstance(digits, bytes) else digits
    if len(text) > _INT_DIGITS:
        head, text = text[:-_INT_DIGITS], text[-_INT_DIGITS:]
        if any(int(head[i:i + _INT_DIGITS]) for i in range(0, len(head), _INT_DIGITS)):
            return _HUGE_NUMBER
    return min(int(text or 0), _HUGE_NUMBER)


def _percent_total(data: bytes, args: Any) -> int:
    """Upper bound of the text ``data % args`` builds, parsed the way CPython does.

    Linear: a ``%(key)`` is matched by counting parentheses (as CPython does), a key
    that never closes ends the scan (CPython raises there), and ``*`` takes its value
    from the argument the conversion would really consume.
    """
    values = args if isinstance(args, tuple) else (args,)
    position = 0
    total = len(data)
    i = data.find(b"%")
    while i >= 0:
        j = i + 1
        if data[j:j + 1] == b"(":
            depth, seen = 1, 0
            while depth:
                paren = _PARENS.search(data, j + 1)
                seen += 1
                if paren is None:
                    return total  # an incomplete key: CPython stops with ValueError there
                if seen > _MAX_KEY_PARENS:
                    raise ValueError(f"%-format keys with more than {_MAX_KEY_PARENS} "
                                     "parentheses are not supported in the sandbox")
                depth += 1 if data[paren.start()] == 0x28 else -1
                j = paren.start()
            j += 1
        spec = _PERCENT_SPEC.match(data, j)
        assert spec is not None  # every part of the pattern is optional
        for part in spec.groups():
            if part == b"*":
                value = values[position] if position < len(values) else 0
                position += 1
                total += abs(value) if isinstance(value, int) else 0
            elif part is not None:
                total += spec_number(part)
        if data[spec.end():spec.end() + 1] != b"%":
            position += 1  # the conversion's own argument
        i = data.find(b"%", spec.end() + 1)
    return total


def guarded_mod(a: Any, b: Any) -> Any:
    """``a % b``: numbers pass; ``%``-formatting has its widths checked first."""
    if isinstance(a, _TEXT):
        percent_format_ok(a, b)
        charge_render(b)
        if isinstance(b, dict):
            # ``'%(k)s' * 1000 % {'k': s}`` renders the same value once per reference.
            refs = a.count("%(") if isinstance(a, str) else bytes(a).count(b"%(")
            share = current_run().limits.memory // OBJECT_SHARE
            ensure_size(max(refs, 1) * render_size(b, share), "%-formatting")
        else:
            check_render(b if isinstance(b, tuple) else (b,), "%-formatting")
        text = a % b
        return scrub(text) if isinstance(text, str) else text
    return a % b


def guarded_pow(a: Any, b: Any, mod: Any = None) -> Any:
    """``a ** b`` / ``pow(a, b[, mod])`` with the integer result size checked first."""
    if mod is None:
        if isinstance(a, int) and isinstance(b, int) and b > 0 and (a > 1 or a < -1):
            big = b >= (1 << 40)
            _int_bits(MAX_INT_BITS + 1 if big else (int(a).bit_length() - 1) * int(b) + 1)
        return a ** b
    if isinstance(mod, int) and isinstance(b, int):
        bits = abs(int(mod)).bit_length()
        steps = abs(int(b)).bit_length()
        if b < 0:
            steps += MODULAR_INVERSE_STEPS  # a modular inverse first
        cost = steps * bits * bits
        if cost > MAX_MODPOW_COST:
            run = current_run()
            run.meter.trip(LimitExceeded("operations", run.limits.operations,
                                         "modular power with huge operands"))
    return pow(a, b, mod)


def guarded_lshift(a: Any, b: Any) -> Any:
    """``a << b`` with the result size checked first."""
    if isinstance(a, int) and isinstance(b, int) and a and b > 0:
        _int_bits(int(a).bit_length() + int(b) if b < (1 << 40) else MAX_INT_BITS + 1)
    return a << b
