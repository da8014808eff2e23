"""``csv`` for scripts: ``reader``, ``writer``, ``DictReader``, ``DictWriter``.

CPython's C parser and writer do the work behind sandbox objects. A reader takes any
iterable of lines (``io.StringIO(text)``, ``text.splitlines()``, a list); each line is
sized like ``str.split`` before it is parsed (a line of many short fields is many
objects). A writer writes to ``io.StringIO()`` or ``sys.stdout``/``sys.stderr`` only;
each row's fields are turned into text first as ``print`` would (a script object's
``__str__`` runs in the script, never from the C writer), and the row is sized before it
is written. No dialect registry, ``Sniffer`` or ``field_size_limit`` (process-wide state).
"""

from __future__ import annotations

import contextlib
import csv
from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language.builtins import PLAIN, PRINT_FILES, STDERR, STDOUT
from codemode.sandbox.language.compare import charge_probes, key_probes
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded, check_split, refuse
from codemode.sandbox.language.render import charge_render, scrub
from codemode.sandbox.language.sizes import check_render, ensure_size
from codemode.sandbox.language.state import counted

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["FACADE"]

_DIALECTS: Final = {"excel": csv.excel, "excel-tab": csv.excel_tab, "unix": csv.unix_dialect}
_TEXT_OPTIONS: Final = frozenset({"delimiter", "quotechar", "escapechar", "lineterminator"})
_FLAG_OPTIONS: Final = frozenset({"doublequote", "skipinitialspace", "strict"})
_MAX_TERMINATOR: Final = 16
_FIELD: Final = 3
"""Characters a field may add to its text in a written row (quotes, a delimiter)."""


def _options(dialect: Any, options: dict[str, Any], what: str) -> dict[str, Any]:
    """The formatting options, checked to be plain values (the C code reads them once)."""
    found = _DIALECTS.get(dialect) if isinstance(dialect, str) else (
        dialect if dialect in _DIALECTS.values() else None)
    if found is None:
        raise csv.Error(f"{what}: unknown dialect (available: {', '.join(_DIALECTS)})")
    checked: dict[str, Any] = {"dialect": found}
    for name, value in options.items():
        if name in _TEXT_OPTIONS:
            if not (value is None or (isinstance(value, str) and len(value) <= (
                    _MAX_TERMINATOR if name == "lineterminator" else 1))):
                raise TypeError(f'"{name}" must be a 1-character string' if name != (
                    "lineterminator") else f'"lineterminator" must be a string of at most '
                    f"{_MAX_TERMINATOR} characters")
        elif name in _FLAG_OPTIONS:
            value = bool(value) if isinstance(value, bool | int) else value
            if not isinstance(value, bool):
                raise TypeError(f'"{name}" must be a bool')
        elif name == "quoting":
            if value not in (csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC,
                             csv.QUOTE_NONE) or not isinstance(value, int):
                raise TypeError("bad \"quoting\" value")
        else:
            raise TypeError(f"{what} got an unexpected keyword argument "
                            f"{name!r}" if len(name) < 40 else f"{what}: unexpected option")
        checked[name] = value
    return checked


def _line_check(delimiter: str) -> Callable[[Any], Any]:
    def check(line: Any) -> Any:
        check_split(line, delimiter, -1, "csv.reader()")
        return line
    return check


@final
class Reader(SelfGuarded):
    """``csv.reader(lines)``: iterate it for rows (lists of str); ``line_num``.

    The C parser pulls each line from the script's iterable, so script code (a class's
    ``__next__``) runs in the middle of a parse; a row read from there, by the same reader,
    is refused as a generator refuses to be resumed from inside itself: the C code went on
    with the record the inner read had taken away, and appended a field to a NULL list (a
    segfault of an in-process host, 3.11-3.13)."""

    __slots__ = ("_parsing", "_reader")

    def __init__(self, lines: Iterable[Any], dialect: Any = "excel", **options: Any) -> None:
        checked = _options(dialect, options, "csv.reader()")
        delimiter = checked.get("delimiter") or checked["dialect"].delimiter
        self._reader = csv.reader(map(_line_check(delimiter), counted(lines)), **checked)
        self._parsing = False

    def __repr__(self) -> str:
        return "<sandbox csv.reader>"

    def sandbox_getattr(self, name: str) -> Any:
        if name == "line_num":
            return self._reader.line_num
        raise refuse(self, name)

    def __iter__(self) -> Reader:
        return self

    def __next__(self) -> list[str]:
        if self._parsing:
            raise ValueError("csv reader already executing: its lines cannot read rows "
                             "from it")
        self._parsing = True
        try:
            row: list[str] = next(self._reader)
        finally:
            self._parsing = False
        return row


@final
class DictReader(SelfGuarded):
    """``csv.DictReader(lines)``: rows as dicts keyed by the first row (or ``fieldnames``)."""

    __slots__ = ("_fieldnames", "_reader", "line_num", "restkey", "restval")

    def __init__(self, f: Iterable[Any], fieldnames: Iterable[Any] | None = None,
                 restkey: Any = None, restval: Any = None, dialect: Any = "excel",
                 **options: Any) -> None:
        self._reader = Reader(f, dialect, **options)
        self._fieldnames = None if fieldnames is None else list(counted(fieldnames))
        self.restkey = restkey
        self.restval = restval
        self.line_num = 0

    def __repr__(self) -> str:
        return "<sandbox csv.DictReader>"

    def sandbox_getattr(self, name: str) -> Any:
        if name in ("fieldnames", "line_num", "restkey", "restval"):
            return getattr(self, name)
        raise refuse(self, name)

    @property
    def fieldnames(self) -> list[Any] | None:
        """The keys: ``fieldnames=`` or the first row (read on first use)."""
        if self._fieldnames is None:
            with contextlib.suppress(StopIteration):  # no rows: no names
                self._fieldnames = next(self._reader)
            self.line_num = self._reader.sandbox_getattr("line_num")
        return self._fieldnames

    def __iter__(self) -> DictReader:
        return self

    def __next__(self) -> dict[Any, Any]:
        if self.line_num == 0:
            self.fieldnames  # noqa: B018 - reads the header row
        row = next(self._reader)
        self.line_num = self._reader.sandbox_getattr("line_num")
        while row == []:
            row = next(self._reader)
        names = self._fieldnames or []
        # Every name is inserted, in one C call: names made to share a hash (ints that
        # differ by multiples of 2**61 - 1) made it quadratic (30,000: 8 s holding the GIL).
        charge_probes(key_probes(names))
        d = dict(zip(names, row, strict=False))
        if len(names) < len(row):
            d[self.restkey] = row[len(names):]
        else:
            for key in counted(names[len(row):]):
                d[key] = self.restval
        return d


class _Sink:
    """What the C writer writes to (never handed to a script)."""

    __slots__ = ("write",)

    def __init__(self, target: Any) -> None:
        self.write = target.write


def _target(f: Any, what: str) -> Any:
    if f is STDOUT or f is STDERR or type(f) in PRINT_FILES:
        return f
    raise TypeError(f"{what} writes to io.StringIO() or sys.stdout in the sandbox, not "
                    f"{type(f).__name__!r}")


def _field(value: Any) -> Any:
    """A field as the C writer may take it: a plain value, or its text made here."""
    if value is None or type(value) in (str, int, float, bool):
        if type(value) is int:
            check_render(value, "csv writer")
        return value
    charge_render(value)
    check_render(value, "csv writer")
    return str(value) if type(value) in PLAIN else scrub(str(value))


@final
class Writer(SelfGuarded):
    """``csv.writer(f)``: ``writerow(row)``, ``writerows(rows)``."""

    __slots__ = ("_terminator", "_writer")

    def __init__(self, f: Any, dialect: Any = "excel", **options: Any) -> None:
        checked = _options(dialect, options, "csv.writer()")
        self._writer = csv.writer(_Sink(_target(f, "csv.writer()")), **checked)
        self._terminator = len(checked.get("lineterminator") or "\r\n")

    def __repr__(self) -> str:
        return "<sandbox csv.writer>"

    def sandbox_getattr(self, name: str) -> Any:
        if name in ("writerow", "writerows"):
            return getattr(self, name)
        raise refuse(self, name)

    def writerow(self, row: Iterable[Any]) -> Any:
        """Write one row (an iterable of fields); returns the characters written."""
        fields = [_field(value) for value in counted(row)]
        size = self._terminator
        for value in fields:
            size += _FIELD + (2 * len(value) if isinstance(value, str) else 32)
            ensure_size(size, "csv writer row")
        return self._writer.writerow(fields)

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        """Write each row."""
        for row in counted(rows):
            self.writerow(row)


@final
class DictWriter(SelfGuarded):
    """``csv.DictWriter(f, fieldnames)``: ``writeheader()``, ``writerow(d)``,
    ``writerows(ds)``, ``fieldnames``."""

    __slots__ = ("_writer", "extrasaction", "fieldnames", "restval")

    def __init__(self, f: Any, fieldnames: Iterable[Any], restval: Any = "",
                 extrasaction: str = "raise", dialect: Any = "excel", **options: Any) -> None:
        if extrasaction not in ("raise", "ignore"):
            raise ValueError("extrasaction must be 'raise' or 'ignore'")
        self._writer = Writer(f, dialect, **options)
        self.fieldnames = list(counted(fieldnames))
        self.restval = restval
        self.extrasaction = extrasaction

    def __repr__(self) -> str:
        return "<sandbox csv.DictWriter>"

    def sandbox_getattr(self, name: str) -> Any:
        if name in ("writeheader", "writerow", "writerows", "fieldnames", "restval",
                    "extrasaction"):
            return getattr(self, name)
        raise refuse(self, name)

    def writeheader(self) -> Any:
        """Write the field names as a row."""
        return self._writer.writerow(self.fieldnames)

    def writerow(self, rowdict: Any) -> Any:
        """Write one dict as a row in ``fieldnames`` order."""
        if not isinstance(rowdict, dict):
            raise TypeError("DictWriter.writerow() takes a dict in the sandbox, not "
                            f"{type(rowdict).__name__!r}")
        names = self.fieldnames
        if self.extrasaction == "raise":
            charge_probes(key_probes(names))  # names sharing a hash: a quadratic set
            known = set(counted(names))
            wrong = [key for key in counted(rowdict) if key not in known]
            if wrong:
                shown = ", ".join(repr(key) if isinstance(key, str) and len(key) < 100 else
                                  f"<{type(key).__name__}>" for key in wrong[:10])
                raise ValueError(f"dict contains fields not in fieldnames: {shown}")
        return self._writer.writerow([rowdict.get(key, self.restval) for key in counted(names)])

    def writerows(self, rowdicts: Iterable[Any]) -> None:
        """Write each dict."""
        for rowdict in counted(rowdicts):
            self.writerow(rowdict)



FACADE: Final = Facade("csv", {
    "reader": Reader, "writer": Writer, "DictReader": DictReader, "DictWriter": DictWriter,
    "Error": csv.Error, "QUOTE_MINIMAL": csv.QUOTE_MINIMAL, "QUOTE_ALL": csv.QUOTE_ALL,
    "QUOTE_NONNUMERIC": csv.QUOTE_NONNUMERIC, "QUOTE_NONE": csv.QUOTE_NONE,
})
