"""``io`` for scripts: ``StringIO``, an in-memory text file of the script's own.

A sandbox object (not CPython's class): ``write``, ``writelines``, ``read``,
``readline``, ``readlines``, ``getvalue``, ``seek``, ``tell``, ``truncate``, ``close``,
``closed``, iteration by lines and ``with``. ``print(..., file=buf)``, ``csv.reader(buf)``
and ``csv.writer(buf)`` take it. Writes keep the texts they are given; the text is joined
when it is read, sized first like any text a script builds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language.builtins import PRINT_FILES
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded, refuse
from codemode.sandbox.language.sizes import ensure_size
from codemode.sandbox.language.state import counted

if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = ["FACADE", "StringIO"]

_READABLE: Final = frozenset({"write", "writelines", "read", "readline", "readlines",
                              "getvalue", "seek", "tell", "truncate", "close", "closed",
                              "flush", "readable", "writable", "seekable", "isatty"})


def _size(size: Any, what: str) -> int:
    if size is None:
        return -1
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError(f"{what} argument should be integer or None, not "
                        f"'{type(size).__name__}'")
    return int(size)


@final
class StringIO(SelfGuarded):
    """An in-memory text file (``io.StringIO(initial)``)."""

    __slots__ = ("_closed", "_pieces", "_pos", "_size", "_text")

    def __init__(self, initial_value: str | None = "", newline: str | None = "\n") -> None:
        if initial_value is None:
            initial_value = ""
        if not isinstance(initial_value, str):
            raise TypeError("initial_value must be str or None, not "
                            f"{type(initial_value).__name__}")
        if newline not in (None, "", "\n", "\r", "\r\n"):
            raise ValueError(f"illegal newline value: {newline!r}" if isinstance(
                newline, str) and len(newline) < 10 else "illegal newline value")
        self._text = initial_value
        self._pieces: list[str] = []
        self._size = len(initial_value)
        self._pos = 0
        self._closed = False

    def __repr__(self) -> str:
        return "<sandbox io.StringIO>"

    def sandbox_getattr(self, name: str) -> Any:
        if name not in _READABLE:
            raise refuse(self, name)
        if name == "closed":
            return self._closed
        return getattr(self, name)

    def _open(self) -> None:
        if self._closed:
            raise ValueError("I/O operation on closed file.")

    def _value(self) -> str:
        """The whole text (pending writes joined, sized first)."""
        if self._pieces:
            ensure_size(self._size, "io.StringIO")
            self._text = "".join([self._text, *self._pieces])
            self._pieces = []
        return self._text

    # -- writing --------------------------------------------------------------------------

    def write(self, s: str, /) -> int:
        """Write ``s`` at the position; returns its length."""
        self._open()
        if not isinstance(s, str):
            raise TypeError(f"string argument expected, got '{type(s).__name__}'")
        if self._pos == self._size:
            self._pieces.append(s)
        else:
            ensure_size(max(self._size, self._pos + len(s)), "io.StringIO")
            text = self._value()
            if self._pos > len(text):  # written past the end: padded, as Python does
                text += "\0" * (self._pos - len(text))
            self._text = text[:self._pos] + s + text[self._pos + len(s):]
        self._pos += len(s)
        self._size = max(self._size, self._pos)
        return len(s)

    def writelines(self, lines: Iterable[str], /) -> None:
        """Write each text of ``lines`` (no newline added)."""
        for line in counted(lines):
            self.write(line)

    def truncate(self, size: int | None = None, /) -> int:
        """Cut the text at ``size`` (the position by default)."""
        self._open()
        end = self._pos if size is None else _size(size, "truncate()")
        if end < 0:
            raise ValueError(f"Negative size value {end}")
        self._text = self._value()[:end]
        self._size = len(self._text)
        return end

    # -- reading --------------------------------------------------------------------------

    def getvalue(self) -> str:
        """The whole text, wherever the position is."""
        self._open()
        return self._value()

    def read(self, size: int | None = -1, /) -> str:
        """Up to ``size`` characters from the position (the rest by default)."""
        self._open()
        count = _size(size, "read()")
        text = self._value()
        end = len(text) if count < 0 else min(len(text), self._pos + count)
        out = text[self._pos:end] if self._pos < end else ""
        self._pos = max(self._pos, end)
        return out

    def readline(self, size: int | None = -1, /) -> str:
        """The next line (with its newline), or ``""`` at the end."""
        self._open()
        count = _size(size, "readline()")
        text = self._value()
        if self._pos >= len(text):
            return ""
        stop = len(text) if count < 0 else min(len(text), self._pos + count)
        found = text.find("\n", self._pos, stop)
        end = stop if found < 0 else found + 1
        out = text[self._pos:end]
        self._pos = end
        return out

    def readlines(self, hint: int | None = -1, /) -> list[str]:
        """The remaining lines."""
        limit = _size(hint, "readlines()")
        lines: list[str] = []
        total = 0
        for line in counted(self):
            lines.append(line)
            total += len(line)
            if 0 < limit <= total:
                break
        return lines

    def __iter__(self) -> StringIO:
        self._open()
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    # -- position and state ---------------------------------------------------------------

    def seek(self, pos: int, whence: int = 0, /) -> int:
        """Move the position (``whence`` 0: from the start; 1 and 2 only by 0, as Python)."""
        self._open()
        pos = _size(pos, "seek()")
        if whence == 0:
            if pos < 0:
                raise ValueError(f"Negative seek position {pos}")
            self._pos = pos
        elif whence in (1, 2) and pos == 0:
            self._pos = self._pos if whence == 1 else self._size
        elif whence in (1, 2):
            raise OSError("Can't do nonzero cur-relative seeks")
        else:
            raise ValueError(f"Invalid whence ({whence}, should be 0, 1 or 2)")
        return self._pos

    def tell(self) -> int:
        """The position."""
        self._open()
        return self._pos

    def close(self) -> None:
        """Free the text; later reads and writes raise ValueError."""
        self._closed = True
        self._text, self._pieces = "", []

    def flush(self) -> None:
        """Nothing to do."""

    def readable(self) -> bool:
        """True."""
        return True

    def writable(self) -> bool:
        """True."""
        return True

    def seekable(self) -> bool:
        """True."""
        return True

    def isatty(self) -> bool:
        """False."""
        return False

    def __enter__(self) -> StringIO:
        self._open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


PRINT_FILES.add(StringIO)

FACADE: Final = Facade("io", {"StringIO": StringIO})
