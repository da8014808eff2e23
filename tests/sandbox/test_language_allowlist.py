"""Every allowlisted name works in a script (a table generated from the allowlists).

The allowlists are ``guards.ATTRIBUTES`` (type -> attribute names), the builtins
(``SAFE_BUILTINS``) and each facade's exports. Every entry gets a script that uses it
the way a model would (``datetime.datetime.strptime`` once failed on every call;
``date.isocalendar().year`` was refused): the tables below must name every entry, so
a name added to an allowlist without a working example fails here.
"""

from __future__ import annotations

import json
from typing import Any, Final

import pytest

from codemode.sandbox.language.builtins import SAFE_BUILTINS
from codemode.sandbox.language.facades import FACADE_NAMES, facade
from codemode.sandbox.language.guards import ATTRIBUTES
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.runner import run_script, warm_up

warm_up()

PRELUDE: Final = """\
import abc, collections, datetime, decimal, enum, fractions, json, re, sys, typing
class O:
    def __init__(self):
        self.z = 3
class E(enum.Enum):
    A = 1
class HasZ(typing.Protocol):
    z: int
class Sh(abc.ABC):
    @abc.abstractmethod
    def area(self): ...
class Sq(Sh):
    def area(self):
        return 1
def lc(block):
    with block:
        return decimal.Decimal(1) / 3
class FL(enum.Flag):
    R = enum.auto()
    W = enum.auto()
    RW = R | W
class IF(enum.IntFlag):
    A = 1
    B = 2
def caught(f):
    try:
        f()
    except Exception as e:
        return e
async def agen():
    yield 1
def gen():
    while True:
        try:
            yield 1
        except ValueError:
            pass
def started(g):
    next(g)
    return g
"""

SAMPLES: Final[dict[str, str]] = {
    "str": "'a bB\\tc'",
    "bytes": "b'a b'",
    "int": "6",
    "bool": "True",
    "float": "2.5",
    "complex": "(1 + 2j)",
    "list": "[3, 1, 2, 1]",
    "tuple": "(1, 2, 1)",
    "dict": "{1: 2, 3: 4}",
    "set": "{1, 2}",
    "frozenset": "frozenset({1, 2})",
    "range": "range(5)",
    "slice": "slice(1, 5, 2)",
    "dict_keys": "{1: 2}.keys()",
    "dict_items": "{1: 2}.items()",
    "Counter": "collections.Counter('aab')",
    "defaultdict": "collections.defaultdict(int, {1: 2, 3: 4})",
    "OrderedDict": "collections.OrderedDict([(1, 2), (3, 4)])",
    "deque": "collections.deque([3, 1, 2, 1])",
    "date": "datetime.date(2020, 1, 2)",
    "time": "datetime.time(3, 4, 5)",
    "datetime": "datetime.datetime(2020, 1, 2, 3, 4, 5)",
    "timedelta": "datetime.timedelta(days=1, seconds=5)",
    "timezone": "datetime.timezone(datetime.timedelta(hours=2))",
    "IsoCalendarDate": "datetime.date(2020, 1, 2).isocalendar()",
    "struct_time": "datetime.date(2020, 1, 2).timetuple()",
    "BaseException": "ValueError('x')",
    "ImportError": "ImportError('m', name='m')",
    "ModuleNotFoundError": "ModuleNotFoundError('m', name='m')",
    "OSError": "OSError(2, 'gone')",
    "generator": "started(gen())",
    "async_generator": "agen()",
    "StopIteration": "StopIteration(3)",
    "ExceptionGroup": "ExceptionGroup('many', [ValueError('a')])",
    "ToolCallError": "ToolCallError('t', 'm', '$.x')",
    "JSONDecodeError": "caught(lambda: json.loads('{'))",
    "UnicodeDecodeError": "caught(lambda: b'\\xff'.decode('utf-8'))",
    "UnicodeEncodeError": "caught(lambda: '\\xff'.encode('ascii'))",
    "property": "property(len)",
    "Match": "re.search('(?P<w>b+)', 'abbc')",
    "error": "caught(lambda: re.compile('('))",
    "Decimal": "decimal.Decimal('1.5')",
    "ChainMap": "collections.ChainMap({1: 2}, {3: 4})",
    "Fraction": "fractions.Fraction(3, 4)",
}
"""Type name -> a script expression for an instance."""

ARGS: Final[dict[str, str]] = {
    "count": "1", "index": "1", "remove": "1", "extend": "[4]", "extendleft": "[4]",
    "append": "4", "appendleft": "4", "insert": "0, 4", "rotate": "1",
    "format": "1", "format_map": "{}", "add_note": "'n'",
    "center": "9", "ljust": "9", "rjust": "9", "zfill": "9", "encode": "'utf-8'",
    "decode": "'ascii'", "expandtabs": "4", "join": "['x', 'y']", "replace": "'b', 'BB'",
    "translate": "{98: 'XY'}", "maketrans": "'a', 'b'", "partition": "' '",
    "rpartition": "' '", "removeprefix": "'a'", "removesuffix": "'c'", "startswith": "'a'",
    "endswith": "'c'", "find": "'b'", "rfind": "'b'", "rindex": "'b'",
    "get": "1", "pop": "1", "setdefault": "5, 6", "update": "{5: 6}", "fromkeys": "[1, 2]",
    "subtract": "{'a': 1}", "most_common": "1", "move_to_end": "1", "add": "3",
    "discard": "1", "union": "[3]", "intersection": "[1]", "difference": "[1]",
    "symmetric_difference": "[3]", "intersection_update": "[1]",
    "difference_update": "[1]", "symmetric_difference_update": "[3]",
    "issubset": "[1, 2, 3]", "issuperset": "[1]", "isdisjoint": "[5]",
    "strftime": "'%Y %H'", "group": "0", "expand": "r'\\g<w>'", "start": "0", "end": "0",
    "span": "0", "fromhex": "'0x1p1'", "combine": "datetime.date(2020, 1, 2), "
    "datetime.time(1)", "fromisoformat": "'2020-01-02'", "fromordinal": "737000",
    "fromisocalendar": "2020, 1, 1", "fromtimestamp": "0", "utcfromtimestamp": "0",
    "strptime": "'2024-03-05 10:11', '%Y-%m-%d %H:%M'",
    "astimezone": "datetime.timezone.utc", "utcoffset": "None", "tzname": "None",
    "dst": "None",
}
"""Method name -> the arguments of a typical call (no arguments when absent)."""

TYPE_ARGS: Final[dict[tuple[str, str], str]] = {
    ("ExceptionGroup", "split"): "ValueError", ("ExceptionGroup", "subgroup"): "ValueError",
    ("str", "count"): "'b'", ("str", "index"): "'b'", ("bytes", "count"): "b'b'",
    ("bytes", "split"): "", ("bytes", "find"): "b'b'", ("bytes", "startswith"): "b'a'",
    ("property", "getter"): "len", ("property", "setter"): "len", ("property", "deleter"): "len",
    ("bytes", "fromhex"): "'6162'", ("bytes", "endswith"): "b'b'", ("bytes", "strip"): "",
    ("range", "index"): "3",
    ("range", "count"): "3", ("Counter", "get"): "'a'", ("Counter", "pop"): "'a'",
    ("Counter", "update"): "'ab'", ("Counter", "setdefault"): "'c', 0",
    ("Counter", "fromkeys"): None,  # Counter.fromkeys raises NotImplementedError in Python
    ("dict_items", "isdisjoint"): "[(1, 2)]", ("time", "strftime"): "'%H'",
    ("date", "replace"): "year=2021", ("time", "replace"): "hour=5",
    ("datetime", "replace"): "year=2021", ("date", "fromisoformat"): "'2020-01-02'",
    ("time", "fromisoformat"): "'01:02:03'", ("datetime", "fromisoformat"): "'2020-01-02T03:04'",
    ("int", "from_bytes"): "b'\\x01\\x00', 'big'", ("bool", "from_bytes"): "b'\\x01', 'big'",
    ("int", "to_bytes"): "2, 'big'", ("bool", "to_bytes"): "1, 'little'",
    ("IsoCalendarDate", "index"): "1", ("struct_time", "index"): "2020",
    ("timezone", "utcoffset"): "None", ("deque", "remove"): "1", ("list", "insert"): "0, 4",
    ("OrderedDict", "popitem"): "", ("timedelta", "total_seconds"): "",
    ("deque", "pop"): "", ("set", "pop"): "",
    ("generator", "send"): "2",
    ("Decimal", "from_float"): "0.5", ("Fraction", "from_float"): "0.5",
    ("Fraction", "from_decimal"): "decimal.Decimal('0.5')",
    ("generator", "throw"): "ValueError",
    **{(kind, name): "" for kind in ("datetime", "time") for name in ("utcoffset", "tzname",
                                                                      "dst")},
}
"""(type name, method) -> arguments, where the type differs from ``ARGS``; None: the
method is allowlisted for symmetry with ``dict`` and Python itself refuses the call."""

_NOT_CALLED: Final = frozenset({("defaultdict", "default_factory")})
_AWAITED: Final = frozenset({("async_generator", "aclose")})
"""Methods whose call is an awaitable, awaited by the script."""


def _attribute_script(type_name: str, name: str) -> str:
    sample = SAMPLES[type_name]
    args = TYPE_ARGS.get((type_name, name), ARGS.get(name, ""))
    use = f"x.{name}"
    if args is None:
        use = f"caught(lambda: x.{name}([1]))"
        return (f"{PRELUDE}x = {sample}\nv = {use}\n"
                "'ok' if isinstance(v, NotImplementedError) else v")
    if (type_name, name) in _NOT_CALLED:
        return f"{PRELUDE}x = {sample}\nv = {use}\n'ok'"
    if (type_name, name) in _AWAITED:
        return f"{PRELUDE}x = {sample}\nv = {use}\nr = await v({args})\n'ok'"
    return (f"{PRELUDE}x = {sample}\nv = {use}\n"
            f"r = v({args}) if callable(v) else v\n'ok'")


ATTRIBUTE_ROWS: Final = sorted((cls.__name__, name) for cls, names in ATTRIBUTES.items()
                               for name in names)

BUILTINS: Final[dict[str, str]] = {
    "abs": "abs(-2) == 2", "all": "all([1, 1])", "any": "any([0, 1])",
    "ascii": "ascii('é') == \"'\\\\xe9'\"", "bin": "bin(5) == '0b101'",
    "bool": "bool(1)", "callable": "callable(len)", "chr": "chr(65) == 'A'",
    "complex": "complex(1, 2).imag == 2", "dict": "dict(a=1) == {'a': 1}",
    "divmod": "divmod(7, 2) == (3, 1)", "enumerate": "list(enumerate('ab'))[1] == (1, 'b')",
    "filter": "list(filter(None, [0, 1])) == [1]", "float": "float('2.5') == 2.5",
    "format": "format(3.14159, '.2f') == '3.14'", "frozenset": "1 in frozenset([1])",
    "getattr": "getattr('a', 'upper')() == 'A'", "hasattr": "hasattr('a', 'upper')",
    "hash": "hash(1) == 1", "hex": "hex(255) == '0xff'",
    "int": "int('12') == 12 and int('ff', 16) == 255", "isinstance": "isinstance(1, int)",
    "issubclass": "issubclass(bool, int)", "iter": "next(iter([5])) == 5",
    "len": "len([1, 2]) == 2", "list": "list('ab') == ['a', 'b']",
    "map": "list(map(str, [1])) == ['1']", "max": "max([1, 3, 2]) == 3",
    "min": "min(3, 1) == 1", "next": "next(iter('a')) == 'a'",
    "anext": "(await anext((await asyncio.sleep(0, x) for x in [7]))) == 7",
    "oct": "oct(8) == '0o10'",
    "object": "isinstance(object(), object) and object() is not object()",
    "super": "callable(super)",  # used in classes: tests/sandbox/test_script_classes.py
    "property": "isinstance(property(len), property)",
    "staticmethod": "staticmethod(len)('ab') == 2",
    "classmethod": "isinstance(classmethod(len), classmethod)",
    "ord": "ord('A') == 65", "pow": "pow(2, 10) == 1024 and pow(3, 2, 5) == 4",
    "print": "print('x') is None", "range": "list(range(3)) == [0, 1, 2]",
    "repr": "repr('a') == \"'a'\"", "reversed": "list(reversed([1, 2])) == [2, 1]",
    "round": "round(2.567, 2) == 2.57", "set": "set([1, 1]) == {1}",
    "slice": "[1, 2, 3][slice(1, None)] == [2, 3]", "sorted": "sorted([2, 1]) == [1, 2]",
    "str": "str(5) == '5'", "sum": "sum([1, 2]) == 3", "tuple": "tuple([1]) == (1,)",
    "type": "type(1) is int", "zip": "list(zip('a', 'b')) == [('a', 'b')]",
    "NotImplemented": "repr(NotImplemented) == 'NotImplemented'",
    "Ellipsis": "Ellipsis is ... and repr(Ellipsis) == 'Ellipsis'",
    "True": "True", "False": "not False", "None": "None is None",
    "setattr": "setattr(O, 'x', 1) is None and O.x == 1",
    "delattr": "setattr(O, 'y', 1) is None and delattr(O, 'y') is None and not hasattr(O, 'y')",
    "vars": "vars(O()) == {'z': 3}",
    "dir": "'z' in dir(O()) and '_z' not in dir(O())",
    "bytes": "bytes('ab', 'ascii') == b'ab' and isinstance(b'', bytes)",
    "BaseException": "isinstance(ValueError(), BaseException) and not isinstance(1, "
                     "BaseException) and issubclass(SystemExit, BaseException)",
    "exit": "callable(exit)",  # ends the run: tests/mode/test_model_scripts.py
    "quit": "callable(quit)",
}
"""Builtin name -> an expression that must be True (exceptions: raised and caught below)."""

EXCEPTION_NAMES: Final = sorted(name for name, value in SAFE_BUILTINS.items()
                                if isinstance(value, type) and issubclass(value, BaseException))

_DATACLASS: Final = ("@dataclasses.dataclass\nclass P:\n    x = dataclasses.field()\n"
                     "    y = dataclasses.field(default_factory=list)\n")
"""A dataclass as the script planner marks it (these rows run without the planner)."""

FACADES: Final[dict[str, str]] = {
    "asyncio.gather": "await asyncio.gather(asyncio.sleep(0, 1)) == [1]",
    "asyncio.sleep": "await asyncio.sleep(0, 'x') == 'x'",
    "asyncio.iscoroutine": "[await c for c in [asyncio.sleep(0, 1)] if asyncio.iscoroutine(c)]"
                           " == [1] and not asyncio.iscoroutine(asyncio.sleep)",
    "asyncio.wait_for": "await asyncio.wait_for(asyncio.sleep(0, 2), 1) == 2",
    "asyncio.iscoroutinefunction": "asyncio.iscoroutinefunction(asyncio.sleep) and "
                                   "not asyncio.iscoroutinefunction(len)",
    "asyncio.TimeoutError": "issubclass(asyncio.TimeoutError, Exception)",
    "asyncio.CancelledError": "not issubclass(asyncio.CancelledError, Exception)",
    "asyncio.create_task": "await asyncio.create_task(asyncio.sleep(0, 4)) == 4",
    "asyncio.ensure_future": "await asyncio.ensure_future(asyncio.sleep(0, 5)) == 5",
    "asyncio.Semaphore": "not asyncio.Semaphore(1).locked()",
    "asyncio.Lock": "not asyncio.Lock().locked()",
    "asyncio.BoundedSemaphore": "caught(asyncio.BoundedSemaphore(1).release).args == "
                                "('BoundedSemaphore released too many times',)",
    "asyncio.Event": "(lambda e: (e.is_set(), e.set(), e.is_set()))(asyncio.Event()) == "
                     "(False, None, True)",
    "asyncio.Queue": "asyncio.Queue(2).maxsize == 2 and asyncio.Queue().empty()",
    "asyncio.QueueEmpty": "issubclass(asyncio.QueueEmpty, Exception)",
    "asyncio.QueueFull": "issubclass(asyncio.QueueFull, Exception)",
    "asyncio.wait": "len((await asyncio.wait([asyncio.sleep(0, 1)]))[0]) == 1",
    "asyncio.as_completed": "[await f for f in asyncio.as_completed([asyncio.sleep(0, 3)])] "
                            "== [3]",
    "asyncio.TaskGroup": "isinstance(asyncio.TaskGroup(), asyncio.TaskGroup)",
    "asyncio.timeout": "isinstance(asyncio.timeout(1), object)",
    "asyncio.FIRST_COMPLETED": "asyncio.FIRST_COMPLETED == 'FIRST_COMPLETED'",
    "asyncio.FIRST_EXCEPTION": "asyncio.FIRST_EXCEPTION == 'FIRST_EXCEPTION'",
    "asyncio.ALL_COMPLETED": "asyncio.ALL_COMPLETED == 'ALL_COMPLETED'",
    "itertools.tee": "[list(t) for t in itertools.tee('ab')] == [['a', 'b'], ['a', 'b']]",
    "itertools.batched": "list(itertools.batched('abc', 2)) == [('a', 'b'), ('c',)]",
    "pprint.pformat": "pprint.pformat({'b': 1, 'a': 2}) == \"{'a': 2, 'b': 1}\"",
    "pprint.pprint": "pprint.pprint([1]) is None",
    "pprint.pp": "pprint.pp({'b': 1, 'a': 2}) is None",
    "enum.Enum": "isinstance(E.A, enum.Enum) and E(1) is E.A",
    "enum.IntEnum": "isinstance(enum.IntEnum, object) and len(enum.IntEnum) == 0",
    "enum.StrEnum": "isinstance(enum.StrEnum, object) and len(enum.StrEnum) == 0",
    "enum.auto": "repr(enum.auto()) == 'auto()'",
    "enum.unique": "enum.unique(E) is E",
    "enum.Flag": "(FL(3) is FL.RW, str(FL.R | FL.W), list(~FL.R) == [FL.W]) == "
                 "(True, 'FL.RW', True)",
    "enum.IntFlag": "(lambda f: (f, repr(f), f | 8))(IF.A | IF.B) == (3, '<IF.A|B: 3>', 11)",
    "enum.FlagBoundary": "[m.value for m in enum.FlagBoundary] == "
                         "['strict', 'conform', 'eject', 'keep']",
    **{f"enum.{name}": f"enum.{name} is enum.FlagBoundary.{name} == {name.lower()!r}"
       for name in ("STRICT", "CONFORM", "EJECT", "KEEP")},
    "abc.ABC": "isinstance(Sq(), Sh) and caught(Sh) is not None",
    "abc.abstractmethod": "abc.abstractmethod(lc) is lc",
    "abc.ABCMeta": "class AM(metaclass=abc.ABCMeta):\n    pass\n"
                   "repr(abc.ABCMeta) == \"<class 'abc.ABCMeta'>\" and type(AM()) is AM",
    "typing.NamedTuple": "typing.NamedTuple('P', [('a', int)])(1).a == 1",
    "typing.TypedDict": "typing.TypedDict('M', {'a': int})(a=1) == {'a': 1}",
    **{f"typing.{name}": f"typing.{name}(E) is E and typing.{name}(len) is len" for name in (
        "overload", "final", "no_type_check", "override")},
    "typing.NewType": "typing.NewType('Id', int)(E) is E",
    "typing.assert_type": "typing.assert_type(E, int) is E",
    "typing.assert_never": "'but got: 3' in str(caught(lambda: typing.assert_never(3)))",
    "typing.runtime_checkable": "isinstance(O(), typing.runtime_checkable(HasZ)) and "
                                "not isinstance(E.A, HasZ)",
    "collections.Counter": "collections.Counter('aab')['a'] == 2",
    "collections.OrderedDict": "list(collections.OrderedDict(a=1)) == ['a']",
    "collections.defaultdict": "collections.defaultdict(list)['x'] == []",
    "collections.deque": "collections.deque([1, 2], maxlen=1)[0] == 2",
    "collections.ChainMap": "collections.ChainMap({}, {'a': 1}, {'a': 2})['a'] == 1",
    "decimal.Decimal": "str(decimal.Decimal('1.10') + 2) == '3.10'",
    "decimal.Context": "str(decimal.Context(prec=3).divide(1, 3)) == '0.333'",
    "decimal.getcontext": "decimal.getcontext().prec == 28",
    "decimal.setcontext": "decimal.setcontext(decimal.Context(prec=5)) is None",
    "decimal.localcontext": "str(lc(decimal.localcontext(prec=2))) == '0.33'",
    **{f"decimal.{signal}": f"issubclass(decimal.{signal}, ArithmeticError)" for signal in (
        "Clamped", "DecimalException", "DivisionByZero", "FloatOperation", "Inexact",
        "InvalidOperation", "Overflow", "Rounded", "Subnormal", "Underflow")},
    **{f"decimal.{mode}": f"decimal.{mode} == {mode!r}" for mode in (
        "ROUND_05UP", "ROUND_CEILING", "ROUND_DOWN", "ROUND_FLOOR", "ROUND_HALF_DOWN",
        "ROUND_HALF_EVEN", "ROUND_HALF_UP", "ROUND_UP")},
    "decimal.MAX_EMAX": "decimal.MAX_EMAX > 10**5",
    "decimal.MIN_EMIN": "decimal.MIN_EMIN < -10**5",
    "fractions.Fraction": "fractions.Fraction(1, 3) * 3 == 1",
    "collections.namedtuple": "collections.namedtuple('P', 'a b')(1, 2).b == 2",
    "datetime.MAXYEAR": "datetime.MAXYEAR == 9999", "datetime.MINYEAR": "datetime.MINYEAR == 1",
    "datetime.UTC": "datetime.UTC is datetime.timezone.utc",
    "datetime.date": "datetime.date(2020, 1, 2).isocalendar().week == 1",
    "datetime.datetime": "datetime.datetime.strptime('2024-03-05', '%Y-%m-%d').day == 5",
    "datetime.time": "datetime.time(1, 2).minute == 2",
    "datetime.timedelta": "datetime.timedelta(hours=1).total_seconds() == 3600",
    "datetime.timezone": "datetime.timezone.utc.utcoffset(None).total_seconds() == 0",
    "itertools.accumulate": "list(itertools.accumulate([1, 2])) == [1, 3]",
    "itertools.chain": "list(itertools.chain('a', 'b')) == ['a', 'b']",
    "itertools.combinations": "len(list(itertools.combinations('abc', 2))) == 3",
    "itertools.combinations_with_replacement":
        "len(list(itertools.combinations_with_replacement('ab', 2))) == 3",
    "itertools.compress": "list(itertools.compress('ab', [0, 1])) == ['b']",
    "itertools.count": "next(itertools.count(5)) == 5",
    "itertools.cycle": "next(itertools.cycle('ab')) == 'a'",
    "itertools.dropwhile": "list(itertools.dropwhile(lambda x: x < 2, [1, 2])) == [2]",
    "itertools.filterfalse": "list(itertools.filterfalse(None, [0, 1])) == [0]",
    "itertools.groupby": "[k for k, g in itertools.groupby('aab')] == ['a', 'b']",
    "itertools.islice": "list(itertools.islice('abc', 2)) == ['a', 'b']",
    "itertools.pairwise": "list(itertools.pairwise('abc'))[0] == ('a', 'b')",
    "itertools.permutations": "len(list(itertools.permutations('abc'))) == 6",
    "itertools.product": "len(list(itertools.product('ab', repeat=2))) == 4",
    "itertools.repeat": "list(itertools.repeat(1, 2)) == [1, 1]",
    "itertools.starmap": "list(itertools.starmap(pow, [(2, 3)])) == [8]",
    "itertools.takewhile": "list(itertools.takewhile(lambda x: x < 2, [1, 2])) == [1]",
    "itertools.zip_longest": "list(itertools.zip_longest('a', 'bc'))[1] == (None, 'c')",
    "json.JSONDecodeError": "isinstance(caught(lambda: json.loads('{')), json.JSONDecodeError)",
    "json.dumps": "json.dumps({'a': [1]}) == '{\"a\": [1]}'",
    "json.loads": "json.loads('[1]') == [1]",
    "random.choice": "random.choice([7]) == 7",
    "random.choices": "random.choices([7], k=2) == [7, 7]",
    "random.gauss": "isinstance(random.gauss(0, 1), float)",
    "random.getrandbits": "random.getrandbits(8) < 256",
    "random.randint": "1 <= random.randint(1, 2) <= 2",
    "random.random": "0 <= random.random() < 1",
    "random.randrange": "random.randrange(3) < 3",
    "random.sample": "sorted(random.sample([1, 2], 2)) == [1, 2]",
    "random.seed": "random.seed(1) is None",
    "random.Random": "random.Random(3).random() == random.Random(3).random()",
    "random.shuffle": "random.shuffle([1, 2]) is None",
    "random.uniform": "1 <= random.uniform(1, 2) <= 2",
    "re.compile": "re.compile('a+').fullmatch('aa') is not None",
    "re.error": "isinstance(caught(lambda: re.compile('(')), re.error)",
    "re.escape": "re.escape('a.b') == 'a\\\\.b'",
    "re.Pattern": "isinstance(re.compile('a'), re.Pattern)",
    "re.Match": "isinstance(re.match('a', 'a'), re.Match) and type(re.match('a', 'a')) is re.Match",
    "re.findall": "re.findall('a', 'aba') == ['a', 'a']",
    "re.finditer": "[m.start() for m in re.finditer('a', 'aba')] == [0, 2]",
    "re.fullmatch": "re.fullmatch('ab', 'ab') is not None",
    "re.match": "re.match('a', 'ab').group() == 'a'",
    "re.search": "re.search('b', 'ab').span() == (1, 2)",
    "re.split": "re.split(',', 'a,b') == ['a', 'b']",
    "re.sub": "re.sub('a', 'x', 'aa') == 'xx'",
    "re.subn": "re.subn('a', 'x', 'aa') == ('xx', 2)",
    "statistics.StatisticsError":
        "isinstance(caught(lambda: statistics.mean([])), statistics.StatisticsError)",
    "statistics.correlation": "round(statistics.correlation([1, 2, 3], [2, 4, 6])) == 1",
    "statistics.covariance": "statistics.covariance([1, 2, 3], [1, 2, 3]) == 1",
    "statistics.fmean": "statistics.fmean([1, 3]) == 2",
    "statistics.geometric_mean": "round(statistics.geometric_mean([1, 4])) == 2",
    "statistics.harmonic_mean": "statistics.harmonic_mean([1, 1]) == 1",
    "statistics.linear_regression":
        "statistics.linear_regression([1, 2, 3], [2, 4, 6]).slope == 2",
    "statistics.mean": "statistics.mean([1, 3]) == 2",
    "statistics.median": "statistics.median([1, 3, 5]) == 3",
    "statistics.median_grouped": "statistics.median_grouped([1, 2, 3]) == 2",
    "statistics.median_high": "statistics.median_high([1, 3]) == 3",
    "statistics.median_low": "statistics.median_low([1, 3]) == 1",
    "statistics.mode": "statistics.mode([1, 1, 2]) == 1",
    "statistics.multimode": "statistics.multimode([1, 2]) == [1, 2]",
    "statistics.pstdev": "statistics.pstdev([1, 1]) == 0",
    "statistics.pvariance": "statistics.pvariance([1, 1]) == 0",
    "statistics.quantiles": "len(statistics.quantiles([1, 2, 3, 4])) == 3",
    "statistics.stdev": "statistics.stdev([1, 1]) == 0",
    "statistics.variance": "statistics.variance([1, 1]) == 0",
    "string.capwords": "string.capwords('a b') == 'A B'",
    "string.Template": "string.Template('$a ${b}$$').substitute({'a': 1}, b='x') == '1 x$'",
    "time.monotonic": "time.monotonic() > 0", "time.perf_counter": "time.perf_counter() > 0",
    "time.time": "time.time() > 1e9", "time.sleep": "time.sleep(0) is None",
    "time.time_ns": "time.time_ns() > 10**18", "time.monotonic_ns": "time.monotonic_ns() > 0",
    "time.perf_counter_ns": "time.perf_counter_ns() > 0",
    "time.gmtime": "time.gmtime(86400).tm_mday == 2 and time.gmtime().tm_year > 2000",
    "time.localtime": "time.localtime(0).tm_zone == 'UTC' and time.localtime(0).tm_hour == 0",
    "time.strftime": "time.strftime('%Y-%m-%d', time.gmtime(0)) == '1970-01-01'",
    "time.strptime": "time.strptime('2024-02-03', '%Y-%m-%d').tm_yday == 34",
    "time.mktime": "time.mktime((1970, 1, 2, 0, 0, 0, 0, 0, 0)) == 86400.0",
    "time.asctime": "time.asctime(time.gmtime(0)) == 'Thu Jan  1 00:00:00 1970'",
    "time.ctime": "time.ctime(0) == 'Thu Jan  1 00:00:00 1970'",
    "html.escape": "html.escape('<a \"b\">') == '&lt;a &quot;b&quot;&gt;'",
    "html.unescape": "html.unescape('&lt;&#62;&amp;') == '<>&'",
    "types.SimpleNamespace": "repr(types.SimpleNamespace(a=1, b='x')) == \"namespace(a=1, b='x')\"",
    "uuid.UUID": "uuid.UUID(int=255).hex == '0' * 30 + 'ff'",
    "uuid.uuid4": "uuid.uuid4().version == 4",
    "uuid.uuid5": "str(uuid.uuid5(uuid.NAMESPACE_DNS, 'a.b'))[14] == '5'",
    "uuid.uuid3": "str(uuid.uuid3(uuid.NAMESPACE_URL, 'x'))[14] == '3'",
    "typing.Dict": "isinstance({}, typing.Dict) and not isinstance([], typing.Dict)",
    "typing.FrozenSet": "isinstance(frozenset(), typing.FrozenSet)",
    "typing.List": "isinstance([1], typing.List) and repr(typing.List) == 'typing.List'",
    "typing.Set": "isinstance({1}, typing.Set)",
    "typing.Tuple": "isinstance((1,), typing.Tuple) and not isinstance([], typing.Tuple)",
    "typing.Type": "isinstance(int, typing.Type) and not isinstance(1, typing.Type)",
    "typing.TYPE_CHECKING": "typing.TYPE_CHECKING is False",
    "typing.TypeVar": "repr(typing.TypeVar('T', bound=int)) == '~T'",
    "typing.ParamSpec": "repr(typing.ParamSpec('P')) == '~P'",
    "typing.TypeVarTuple": "repr(typing.TypeVarTuple('Ts')) == 'Ts'",
    "typing.AnyStr": "repr(typing.AnyStr) == '~AnyStr'",
    "typing.Text": "isinstance('a', typing.Text) and not isinstance(b'a', typing.Text)",
    "typing.cast": "typing.cast(typing.List[int], 'x') == 'x'",
    **{f"typing.{name}": f"repr(typing.{name}[int] | None) == 'typing.Union[...]' and "
                         f"repr(typing.{name}[int]) == 'typing.{name}[...]'"
       for name in ("Any", "Optional", "Union", "Callable", "Iterable", "Iterator", "Sequence",
                    "Mapping", "MutableMapping", "Literal", "Awaitable", "Coroutine",
                    "AsyncIterator", "AsyncIterable", "Generator", "AsyncGenerator",
                    "ClassVar", "Final", "Annotated", "NoReturn", "Protocol", "Generic",
                    "Self", "Never", "TypeAlias", "Required", "NotRequired", "DefaultDict",
                    "Deque", "Counter", "OrderedDict", "Hashable", "Sized", "Collection",
                    "Container", "Reversible", "AbstractSet", "MutableSet",
                    "MutableSequence", "TypeGuard", "TypeIs", "Concatenate", "Unpack",
                    "LiteralString", "SupportsInt", "SupportsFloat", "SupportsIndex",
                    "SupportsAbs", "SupportsRound")},
    "functools.reduce": "functools.reduce(lambda a, b: a * b, [2, 3], 1) == 6",
    "functools.partial": "functools.partial(max, 3)(1) == 3",
    "functools.partialmethod": "class PM:\n    def f(self, a, b):\n        return a - b\n"
                               "    g = functools.partialmethod(f, 5)\nPM().g(2) == 3",
    "functools.cmp_to_key": "sorted([1, 2], key=functools.cmp_to_key(lambda a, b: b - a)) "
                            "== [2, 1]",
    "functools.lru_cache": "functools.lru_cache(maxsize=2)(abs)(-1) == 1",
    "functools.cache": "functools.cache(abs)(-2) == 2",
    "functools.cached_property": "class CP:\n    @functools.cached_property\n"
                                 "    def v(self):\n        return [1]\n"
                                 "c = CP()\nc.v is c.v and CP.v.attrname == 'v'",
    "functools.wraps": "def f():\n    pass\ng = functools.wraps(f)(lambda: 1)\n"
                       "g.__name__ == 'f' and g() == 1",
    "functools.update_wrapper": "def f():\n    pass\ng = lambda: 1\n"
                                "functools.update_wrapper(g, f) is g and g.__name__ == 'f'",
    "functools.total_ordering": "@functools.total_ordering\nclass V:\n"
                                "    def __init__(self, v):\n        self.v = v\n"
                                "    def __eq__(self, o):\n        return self.v == o.v\n"
                                "    def __lt__(self, o):\n        return self.v < o.v\n"
                                "V(2) >= V(1) and V(1) <= V(1)",
    **{f"dataclasses.{name}": _DATACLASS + check for name, check in (
        ("dataclass", "repr(P(1)) == 'P(x=1, y=[])' and P(1) == P(1, [])"),
        ("field", "P(1).y == [] and P(1).y is not P(1).y"),
        ("fields", "[f.name for f in dataclasses.fields(P)] == ['x', 'y']"),
        ("asdict", "dataclasses.asdict(P(1, [P(2)])) == {'x': 1, 'y': [{'x': 2, 'y': []}]}"),
        ("astuple", "dataclasses.astuple(P(1)) == (1, [])"),
        ("replace", "dataclasses.replace(P(1), x=2) == P(2)"),
        ("is_dataclass", "dataclasses.is_dataclass(P) and not dataclasses.is_dataclass(1)"),
        ("MISSING", "dataclasses.fields(P)[0].default is dataclasses.MISSING"),
        ("KW_ONLY", "repr(dataclasses.KW_ONLY) == 'KW_ONLY'"),
        ("FrozenInstanceError", "issubclass(dataclasses.FrozenInstanceError, "
                                "AttributeError)"))},
    **{f"operator.{name}": f"operator.{name}({args}) == {value}" for name, args, value in (
        ("add", "1, 2", "3"), ("sub", "3, 1", "2"), ("mul", "'a', 2", "'aa'"),
        ("mod", "7, 4", "3"), ("pow", "2, 3", "8"), ("lshift", "1, 2", "4"),
        ("rshift", "4, 2", "1"), ("truediv", "1, 2", "0.5"), ("floordiv", "3, 2", "1"),
        ("and_", "{1, 2}, {2}", "{2}"), ("or_", "1, 2", "3"), ("xor", "3, 1", "2"),
        ("eq", "[1], [1]", "True"), ("ne", "1, 1", "False"), ("lt", "1, 2", "True"),
        ("le", "2, 1", "False"), ("gt", "2, 1", "True"), ("ge", "1, 1", "True"),
        ("contains", "[1], 1", "True"), ("getitem", "[1, 2], 1", "2"), ("neg", "1", "-1"),
        ("pos", "-1", "-1"), ("abs", "-1", "1"), ("invert", "0", "-1"), ("inv", "0", "-1"),
        ("index", "3", "3"), ("not_", "0", "True"), ("truth", "[1]", "True"),
        ("is_", "None, None", "True"), ("is_not", "1, None", "True"))},
    "operator.itemgetter": "operator.itemgetter(1, 0)('ab') == ('b', 'a')",
    "operator.concat": "operator.concat([1], [2]) == [1, 2] and "
                       "operator.concat('a', 'b') == 'ab'",
    "operator.attrgetter": "operator.attrgetter('real')(3) == 3",
    "operator.methodcaller": "operator.methodcaller('upper')('a') == 'A'",
    "heapq.heappush": "(lambda h: heapq.heappush(h, 1) or h)([]) == [1]",
    "heapq.heappop": "heapq.heappop([1, 2]) == 1",
    "heapq.heapify": "(lambda h: heapq.heapify(h) or h)([2, 1]) == [1, 2]",
    "heapq.heappushpop": "heapq.heappushpop([1], 0) == 0",
    "heapq.heapreplace": "heapq.heapreplace([1], 5) == 1",
    "heapq.nlargest": "heapq.nlargest(1, [1, 3, 2]) == [3]",
    "heapq.nsmallest": "heapq.nsmallest(1, [3, 1, 2]) == [1]",
    "heapq.merge": "list(heapq.merge([1, 3], [2])) == [1, 2, 3]",
    "bisect.bisect_left": "bisect.bisect_left([1, 2], 2) == 1",
    "bisect.bisect_right": "bisect.bisect_right([1, 2], 2) == 2",
    "bisect.bisect": "bisect.bisect([1, 2], 0) == 0",
    "bisect.insort_left": "(lambda a: bisect.insort_left(a, 1) or a)([0, 2]) == [0, 1, 2]",
    "bisect.insort_right": "(lambda a: bisect.insort_right(a, 1) or a)([2]) == [1, 2]",
    "bisect.insort": "(lambda a: bisect.insort(a, 3, key=abs) or a)([2]) == [2, 3]",
    "textwrap.wrap": "textwrap.wrap('a b c', 3) == ['a b', 'c']",
    "textwrap.fill": "textwrap.fill('a b c', 3) == 'a b\\nc'",
    "textwrap.dedent": "textwrap.dedent('  a\\n  b') == 'a\\nb'",
    "textwrap.indent": "textwrap.indent('a', '> ') == '> a'",
    "textwrap.shorten": "textwrap.shorten('a  b c', 5) == 'a b c'",
    "base64.b64encode": "base64.b64encode(b'hi') == b'aGk='",
    "base64.b64decode": "base64.b64decode('aGk=') == b'hi'",
    "base64.standard_b64encode": "base64.standard_b64encode(b'hi') == b'aGk='",
    "base64.standard_b64decode": "base64.standard_b64decode(b'aGk=') == b'hi'",
    "base64.urlsafe_b64encode": "base64.urlsafe_b64encode(b'\\xfb\\xff') == b'-_8='",
    "base64.urlsafe_b64decode": "base64.urlsafe_b64decode('-_8=') == b'\\xfb\\xff'",
    "base64.b32encode": "base64.b32encode(b'hi') == b'NBUQ===='",
    "base64.b32decode": "base64.b32decode('nbuq====', casefold=True) == b'hi'",
    "base64.b16encode": "base64.b16encode(b'hi') == b'6869'",
    "base64.b16decode": "base64.b16decode('6869') == b'hi'",
    "collections.abc": "collections.abc.Mapping is not None",
    **{f"collections.abc.{name}": f"isinstance({value}, collections.abc.{name})"
       for name, value in {
           "Callable": "len", "Collection": "[]", "Container": "''",
           "Generator": "(i for i in [])", "Hashable": "1", "Iterable": "()",
           "Iterator": "iter([])", "Mapping": "{}", "MutableMapping": "{}",
           "MutableSequence": "[]", "MutableSet": "set()", "Reversible": "[]",
           "Sequence": "''", "Set": "frozenset()", "Sized": "{}"}.items()},
    "contextlib.suppress": "repr(contextlib.suppress(KeyError)) == '<suppress KeyError>'",
    "contextlib.contextmanager": "repr(contextlib.contextmanager(lambda: (i for i in [4]))()) "
                                 "== '<contextmanager>'",
    "contextlib.asynccontextmanager": "async def one():\n    yield 4\n"
                                      "async with contextlib.asynccontextmanager(one)() as v:\n"
                                      "    pass\nv == 4",
    "contextlib.nullcontext": "repr(contextlib.nullcontext(1)) == '<nullcontext>'",
    "contextlib.closing": "class Cl:\n    done = False\n    def close(self):\n"
                          "        self.done = True\nwith contextlib.closing(Cl()) as cl:\n"
                          "    pass\ncl.done",
    "contextlib.ExitStack": "seen = []\nwith contextlib.ExitStack() as st:\n"
                            "    st.callback(seen.append, 1)\n"
                            "    st.enter_context(contextlib.nullcontext())\nseen == [1]",
    "contextlib.AsyncExitStack": "seen = []\nasync with contextlib.AsyncExitStack() as st:\n"
                                 "    await st.enter_async_context(asyncio.Semaphore(1))\n"
                                 "    st.callback(seen.append, 1)\nseen == [1]",
    **{f"hashlib.{name}": f"len(hashlib.{name}(b'x').hexdigest()) > 8" for name in (
        "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "sha3_512",
        "blake2b", "blake2s")},
    "hashlib.new": "hashlib.new('md5', b'').hexdigest() == 'd41d8cd98f00b204e9800998ecf8427e'",
    "hashlib.algorithms_available": "'sha256' in hashlib.algorithms_available",
    "hashlib.algorithms_guaranteed": "'md5' in hashlib.algorithms_guaranteed",
    "urllib.parse": "urllib.parse.quote is not None",
    "urllib.parse.quote": "urllib.parse.quote('a b/c') == 'a%20b/c'",
    "urllib.parse.quote_plus": "urllib.parse.quote_plus('a b/c') == 'a+b%2Fc'",
    "urllib.parse.unquote": "urllib.parse.unquote('a%20b') == 'a b'",
    "urllib.parse.unquote_plus": "urllib.parse.unquote_plus('a+b') == 'a b'",
    "urllib.parse.urlencode": "urllib.parse.urlencode({'a': 1, 'b': 'x y'}) == 'a=1&b=x+y'",
    "urllib.parse.parse_qs": "urllib.parse.parse_qs('a=1&a=2') == {'a': ['1', '2']}",
    "urllib.parse.parse_qsl": "urllib.parse.parse_qsl('a=1&b=2') == [('a', '1'), ('b', '2')]",
    "urllib.parse.urlparse": "urllib.parse.urlparse('http://h/p;x?q').params == 'x'",
    "urllib.parse.urlsplit": "urllib.parse.urlsplit('http://h:8/p').port == 8",
    "urllib.parse.urlunparse": "urllib.parse.urlunparse(('http', 'h', '/p', '', 'q', '')) == "
                               "'http://h/p?q'",
    "urllib.parse.urlunsplit": "urllib.parse.urlunsplit(('http', 'h', '/p', 'q', '')) == "
                               "'http://h/p?q'",
    "urllib.parse.urljoin": "urllib.parse.urljoin('http://h/a/b', 'c') == 'http://h/a/c'",
    "urllib.parse.ParseResult": "isinstance(urllib.parse.urlparse('x'), "
                                "urllib.parse.ParseResult)",
    "urllib.parse.SplitResult": "urllib.parse.SplitResult('a', 'b', '', '', '').geturl() == "
                                "'a://b'",
    "copy.copy": "(lambda x: copy.copy(x) == x and copy.copy(x) is not x)([[1]])",
    "copy.deepcopy": "(lambda x: copy.deepcopy(x)[0] is not x[0])([[1]])",
    "sys.stdout": "sys.stdout.write('x') == 1 and sys.stdout.flush() is None",
    "sys.stderr": "print('x', file=sys.stderr) is None and not sys.stderr.isatty()",
    "sys.exit": "callable(sys.exit)",  # ends the run: tests/mode/test_model_scripts.py
    "sys.maxsize": "sys.maxsize == 2**63 - 1",
    "io.StringIO": "(lambda b: (b.write('a\\nb'), b.getvalue(), b.seek(0), list(b)))("
                   "io.StringIO()) == (3, 'a\\nb', 0, ['a\\n', 'b'])",
    "csv.reader": "list(csv.reader(['a,\"b,c\"'])) == [['a', 'b,c']]",
    "csv.DictReader": "list(csv.DictReader(['k,v', '1,2'])) == [{'k': '1', 'v': '2'}]",
    "csv.writer": "csv.writer(sys.stdout).writerow(['a', 1]) == 5",
    "csv.DictWriter": "csv.DictWriter(sys.stdout, ['k']).writerow({'k': 'x,y'}) == 7",
    "csv.Error": "issubclass(csv.Error, Exception)",
    "logging.getLogger": "logging.getLogger('a.b') is logging.getLogger('a').getChild('b')",
    "logging.basicConfig": "logging.basicConfig(level=logging.INFO) is None",
    "logging.debug": "logging.debug('d') is None",
    "logging.info": "logging.info('i') is None",
    "logging.warning": "logging.warning('w %s', 1) is None",
    "logging.warn": "logging.warn('w') is None",
    "logging.error": "logging.error('e') is None",
    "logging.critical": "logging.critical('c') is None",
    "logging.fatal": "logging.fatal('f') is None",
    "logging.exception": "logging.exception('x', exc_info=ValueError('v')) is None",
    "logging.log": "logging.log(logging.ERROR, 'l') is None",
    "logging.disable": "logging.disable(logging.INFO) is None",
    "logging.getLevelName": "logging.getLevelName(10) == 'DEBUG'",
}
"""``module.name`` -> an expression that must be True."""

_CONSTANTS: Final = {"math": {"e", "inf", "nan", "pi", "tau"},
                     "re": {"A", "ASCII", "DOTALL", "I", "IGNORECASE", "M", "MULTILINE", "S",
                            "U", "UNICODE", "VERBOSE", "X", "NOFLAG"},
                     "csv": {"QUOTE_ALL", "QUOTE_MINIMAL", "QUOTE_NONE", "QUOTE_NONNUMERIC"},
                     "logging": {"BASIC_FORMAT", "CRITICAL", "DEBUG", "ERROR", "FATAL",
                                 "INFO", "NOTSET", "WARN", "WARNING"},
                     "uuid": {"NAMESPACE_DNS", "NAMESPACE_OID", "NAMESPACE_URL",
                              "NAMESPACE_X500"},
                     "string": {"ascii_letters", "ascii_lowercase", "ascii_uppercase",
                                "digits", "hexdigits", "octdigits", "printable", "punctuation",
                                "whitespace"}}
"""Facade constants: their test is that the name resolves to a value of its kind."""

MATH: Final[dict[str, str]] = {
    "acos": "1", "asin": "0", "atan": "0", "atan2": "0, 1", "ceil": "1.2", "comb": "5, 2",
    "copysign": "1, -2", "cos": "0", "cosh": "0", "degrees": "1", "dist": "[0, 0], [3, 4]",
    "exp": "1", "expm1": "0", "fabs": "-1", "factorial": "5", "floor": "1.5", "fmod": "5, 3",
    "frexp": "8", "fsum": "[0.1, 0.2]", "gcd": "12, 8", "hypot": "3, 4", "isclose": "1, 1",
    "isfinite": "1", "isinf": "1", "isnan": "1", "isqrt": "17", "lcm": "4, 6",
    "ldexp": "1, 3", "log": "8, 2", "log10": "100", "log1p": "0", "log2": "8", "modf": "1.5",
    "perm": "5, 2", "pow": "2, 3", "prod": "[2, 3]", "radians": "180", "remainder": "5, 3",
    "sin": "0", "sinh": "0", "sqrt": "4", "tan": "0", "tanh": "0", "trunc": "1.5",
    "erf": "1", "erfc": "1", "gamma": "5", "lgamma": "5", "asinh": "1", "acosh": "2",
    "atanh": "0.5", "cbrt": "27", "exp2": "3", "ulp": "1",
}
"""``math`` function -> arguments (the call must return a number or a tuple)."""

LIMITS: Final = Limits(timeout=10.0, operations=1_000_000)


async def _run(source: str) -> Any:
    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    outcome = await run_script(source, call_tool=host, limits=LIMITS)
    assert outcome.error is None, (source, outcome.error)
    return outcome.value


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_tables_name_every_allowlisted_entry() -> None:
    """Adding a name to an allowlist needs a working example here."""
    assert {cls.__name__ for cls in ATTRIBUTES} <= SAMPLES.keys()
    public = {name for name in SAFE_BUILTINS if not name.startswith("_")}
    assert public - set(EXCEPTION_NAMES) == BUILTINS.keys()
    exports = {f"{module}.{name}" for module in FACADE_NAMES
               for name in facade(module).exports()}
    covered = FACADES.keys() | {f"math.{name}" for name in MATH} | {
        f"{module}.{name}" for module, names in _CONSTANTS.items() for name in names}
    assert exports == covered, (sorted(exports - covered), sorted(covered - exports))


@pytest.mark.anyio
@pytest.mark.parametrize(("type_name", "name"), ATTRIBUTE_ROWS,
                         ids=[f"{t}.{n}" for t, n in ATTRIBUTE_ROWS])
async def test_allowlisted_attribute_works(type_name: str, name: str) -> None:
    assert await _run(_attribute_script(type_name, name)) == "ok"


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(BUILTINS))
async def test_builtin_works(name: str) -> None:
    assert await _run(f"{PRELUDE}{BUILTINS[name]}") is True


@pytest.mark.anyio
@pytest.mark.parametrize("name", EXCEPTION_NAMES)
async def test_builtin_exception_can_be_raised_and_caught(name: str) -> None:
    args = {"ToolCallError": "'t', 'm'", "ExceptionGroup": "'m', [ValueError(1)]",
            "UnicodeDecodeError": "'utf-8', b'x', 0, 1, 'm'",
            "UnicodeEncodeError": "'ascii', 'x', 0, 1, 'm'",
            "UnicodeTranslateError": "'x', 0, 1, 'm'"}.get(name, "'m'")
    source = (f"try:\n    raise {name}({args})\nexcept {name} as e:\n"
              f"    r = type(e) is {name} and 'm' in str(e)\nr")
    assert await _run(source) is True


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(FACADES))
async def test_facade_name_works(name: str) -> None:
    module = name.split(".")[0]
    assert await _run(f"{PRELUDE}import {module}\n{FACADES[name]}") is True


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(MATH))
async def test_math_function_works(name: str) -> None:
    value = await _run(f"import math\nmath.{name}({MATH[name]})")
    assert isinstance(value, int | float | list), value


@pytest.mark.anyio
@pytest.mark.parametrize(("module", "name"),
                         sorted((m, n) for m, names in _CONSTANTS.items() for n in names))
async def test_facade_constant_resolves(module: str, name: str) -> None:
    value = await _run(f"import {module}\nx = {module}.{name}\n"
                       "x if isinstance(x, str | int) else repr(x)")
    assert isinstance(value, str | int), value
    json.dumps(value)
