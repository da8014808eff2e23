"""``logging`` for scripts: loggers whose records are written to the run's output.

Models log with ``logging.info(...)`` or ``logger = logging.getLogger(__name__)``; the
records go where CPython's default handlers put them, stderr, which is the run's output
(see ``sys``). What a script sees is CPython's: a logger's effective level is its own,
else its dotted parents', else the root's (WARNING); with nothing configured a record
at that level prints its message alone (``logging.lastResort``); the module functions
(``logging.info(...)``) first call ``basicConfig()``, which gives the root the format
``LEVEL:name:message``; ``basicConfig(level=, format=, datefmt=)`` does nothing once the
root is configured unless ``force=True``. ``exception()`` (``exc_info=True``) adds CPython's
traceback: the script's frames (``File "<script>", line 8, in <module>``, no source
lines, as for code run from a string) and the exception's line, ``Type: message``.

No handlers, filters or files, and never the real module: the state (levels, the
format) belongs to the run (``RunState.extras``), so no run sees another's.
"""

from __future__ import annotations

import re
import sys
import time
from types import TracebackType
from typing import Any, Final, final

from codemode.sandbox.language.builtins import PLAIN, STDERR, STDOUT, print_
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded, check_strftime, refuse
from codemode.sandbox.language.meter import SCRIPT_FILENAME
from codemode.sandbox.language.notes import notes_of
from codemode.sandbox.language.render import charge_render, scrub
from codemode.sandbox.language.sizes import (
    charge_operations,
    check_render,
    ensure_size,
    guarded_mod,
    repr_text_size,
)
from codemode.sandbox.language.state import current_run

__all__ = ["FACADE", "Logger"]

CRITICAL, ERROR, WARNING, INFO, DEBUG, NOTSET = 50, 40, 30, 20, 10, 0

_NAMES: Final = {CRITICAL: "CRITICAL", ERROR: "ERROR", WARNING: "WARNING", INFO: "INFO",
                 DEBUG: "DEBUG", NOTSET: "NOTSET"}
_LEVELS: Final = {**{name: level for level, name in _NAMES.items()}, "FATAL": CRITICAL,
                  "WARN": WARNING}
BASIC_FORMAT: Final = "%(levelname)s:%(name)s:%(message)s"
_FIELD: Final = re.compile(r"%(?:%|\((\w+)\)([-+ #0]{0,4}\d{0,3}(?:\.\d{1,3})?)([sdfr]))")
_FIELDS: Final = frozenset({"name", "levelname", "levelno", "message", "asctime", "module",
                            "filename", "funcName", "lineno", "created", "msecs"})
_MAX_FORMAT: Final = 1000
"""Characters a ``format``/``datefmt`` may have (each field's width is three digits)."""
_MAX_FRAMES: Final = 20
"""Script frames an ``exception()`` record shows (the innermost; deep recursion has
hundreds)."""
_TRACEBACK: Final[Any] = vars(BaseException)["__traceback__"]
_KEY: Final = "logging"
"""The run's logging state in ``RunState.extras``."""


def _level(value: Any) -> int:
    """A level given as a number or a name (``"INFO"``), as ``setLevel`` takes it."""
    if type(value) is int:
        return value
    if isinstance(value, str):
        if value not in _LEVELS:
            raise ValueError(f"Unknown level: {value!r}")
        return _LEVELS[value]
    raise TypeError(f"Level not an integer or a valid string: {type(value).__name__}")


def _format_ok(fmt: Any, what: str) -> str:
    if not isinstance(fmt, str):
        raise TypeError(f"logging {what} must be a str")
    if len(fmt) > _MAX_FORMAT:
        raise ValueError(f"logging {what} is longer than {_MAX_FORMAT} characters")
    return fmt


@final
class _Logs:
    """One run's logging: the loggers made, the root's format, whether it is configured."""

    __slots__ = ("datefmt", "disabled", "format", "loggers")

    def __init__(self) -> None:
        self.loggers: dict[str, Logger] = {"root": Logger("root", self, WARNING)}
        self.format: str | None = None
        """The root handler's format; None until ``basicConfig`` (the last resort)."""
        self.datefmt: str | None = None
        self.disabled = NOTSET

    def level_of(self, name: str) -> int:
        """The effective level of logger ``name``: its own, a dotted parent's, the root's."""
        while True:
            found = self.loggers.get(name)
            if found is not None and found.level != NOTSET:
                return found.level
            if "." not in name:
                return self.loggers["root"].level
            name = name.rpartition(".")[0]

    def emit(self, logger: str, level: int, msg: Any, args: tuple[Any, ...],
             exc_info: Any) -> None:
        if level <= self.disabled or level < self.level_of(logger):
            return
        if self.format is None and level < WARNING:
            return  # the last resort handler's own level
        text = _message(msg, args)
        line = text if self.format is None else self._formatted(logger, level, text)
        if exc_info:
            error = exc_info if isinstance(exc_info, BaseException) else sys.exc_info()[1]
            if error is not None:
                detail = _text(error)
                line += _traceback(error)
                line += f"\n{_name(type(error))}: {detail}" if detail else (
                    f"\n{_name(type(error))}")
                line += "".join(f"\n{note}" for note in notes_of(error) or ())
            elif exc_info is True:
                line += "\nNoneType: None"
        print_(line, file=STDERR)

    def _formatted(self, logger: str, level: int, message: str) -> str:
        assert self.format is not None
        now = time.time()
        values: dict[str, Any] = {
            "name": logger, "levelname": _NAMES.get(level, f"Level {level}"),
            "levelno": level, "message": message, "created": now,
            "msecs": int(now * 1000) % 1000, "module": "__main__", "filename": "<script>",
            "funcName": "<module>", "lineno": 0}
        if "%(asctime)" in self.format:
            stamp = time.localtime(now)
            values["asctime"] = (time.strftime(self.datefmt, stamp) if self.datefmt
                                 else time.strftime("%Y-%m-%d %H:%M:%S", stamp)
                                 + f",{values['msecs']:03d}")
        if "%(funcName)" in self.format or "%(lineno)" in self.format:
            values["funcName"], values["lineno"] = _caller()

        size = 0

        def field(match: re.Match[str]) -> str:
            # sized as it goes: a format repeats the message as often as it has fields
            # (90 copies of a 4 MB message grew the host by 380 MB and held its loop)
            nonlocal size
            if match.group(1) is None:
                return "%"
            value = values[match.group(1)]
            if match.group(3) == "r" and type(value) is str:
                ensure_size(size + repr_text_size(value), "a logging record")
            piece = str(f"%{match.group(2)}{match.group(3)}" % (value,))
            size += len(piece)
            ensure_size(size, "a logging record")
            return piece
        return _FIELD.sub(field, self.format)

    def configure(self, level: Any, fmt: Any, datefmt: Any, force: bool) -> None:
        if self.format is not None and not force:
            return
        fmt = BASIC_FORMAT if fmt is None else _format_ok(fmt, "format")
        rest = _FIELD.sub("", fmt)
        if "%" in rest:
            raise ValueError(f"Invalid format {fmt!r}: use %(name)s fields (with a width "
                             "of at most three digits), %(message)s …; %% for a percent sign")
        unknown = {m.group(1) for m in _FIELD.finditer(fmt) if m.group(1)} - _FIELDS
        if unknown:
            raise ValueError(f"Formatting field not found in record: {sorted(unknown)[0]!r} "
                             f"(the sandbox's records have {', '.join(sorted(_FIELDS))})")
        if datefmt is not None:
            check_strftime(_format_ok(datefmt, "datefmt"))
        self.datefmt = datefmt
        self.format = fmt
        if level is not None:
            self.loggers["root"].level = _level(level)


def _caller() -> tuple[str, int]:
    """(function name, line) of the script code that logged."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename != SCRIPT_FILENAME:
        frame = frame.f_back  # type: ignore[assignment]
    return ("<module>", 0) if frame is None else (frame.f_code.co_name, frame.f_lineno or 0)


def _traceback(error: BaseException) -> str:
    """CPython's ``Traceback (most recent call last):`` and the error's frames in the
    script, as CPython prints them for code whose source it cannot show (``exec`` of a
    string): the host's own frames (the tool proxy, facades) are left out."""
    frames = []
    walked = 0
    trace = _TRACEBACK.__get__(error)  # the slot itself, whatever a class defines
    while type(trace) is TracebackType:
        code = trace.tb_frame.f_code
        if code.co_filename == SCRIPT_FILENAME:
            frames.append(f'\n  File "{SCRIPT_FILENAME}", line {trace.tb_lineno}, '
                          f"in {code.co_name}")
        trace = trace.tb_next
        walked += 1
    # an exception raised again and again in a loop keeps every raise in its traceback
    # (150,000 entries: each record walked them all uncharged)
    charge_operations(walked)
    if not frames:
        return ""
    return "\nTraceback (most recent call last):" + "".join(frames[-_MAX_FRAMES:])


def _name(cls: type) -> str:
    name = getattr(cls, "__name__", "Exception")
    return name if type(name) is str else "Exception"


def _text(value: Any) -> str:
    """``str(value)`` as ``print`` renders it (charged and sized first)."""
    if type(value) is str:
        return value
    charge_render(value)
    check_render(value, "logging")
    return str(value) if type(value) in PLAIN else scrub(str(value))


def _message(msg: Any, args: tuple[Any, ...]) -> str:
    """``LogRecord.getMessage()``: ``str(msg) % args`` when there are args."""
    text = _text(msg)
    if not args:
        return text
    if len(args) == 1 and isinstance(args[0], dict) and args[0]:
        return str(guarded_mod(text, args[0]))
    return str(guarded_mod(text, args))


def _logs() -> _Logs:
    extras = current_run().extras
    logs = extras.get(_KEY)
    if logs is None:
        logs = extras[_KEY] = _Logs()
    assert isinstance(logs, _Logs)
    return logs


_OPTIONS: Final = frozenset({"exc_info", "stack_info", "stacklevel", "extra"})


def _options(kwargs: dict[str, Any]) -> Any:
    unknown = kwargs.keys() - _OPTIONS
    if unknown:
        raise TypeError(f"got an unexpected keyword argument {sorted(unknown)[0]!r}")
    return kwargs.get("exc_info")


@final
class Logger(SelfGuarded):
    """``logging.getLogger(name)``: its level, and the methods that log at each level."""

    __slots__ = ("_logs", "level", "name")

    _METHODS: Final = frozenset({"debug", "info", "warning", "warn", "error", "exception",
                                 "critical", "fatal", "log", "setLevel", "getEffectiveLevel",
                                 "isEnabledFor", "getChild"})

    def __init__(self, name: str, logs: _Logs, level: int = NOTSET) -> None:
        self.name = name
        self.level = level
        self._logs = logs

    def __repr__(self) -> str:
        kind = "RootLogger" if self.name == "root" else "Logger"
        level = self.getEffectiveLevel()
        return f"<{kind} {self.name} ({_NAMES.get(level, f'Level {level}')})>"

    def sandbox_getattr(self, name: str) -> Any:
        if name in ("name", "level"):
            return getattr(self, name)
        if name in self._METHODS:
            return getattr(self, name)
        if name in ("addHandler", "handlers", "propagate", "addFilter"):
            raise AttributeError(f"Logger.{name} is not available in the sandbox: records go "
                                 "to the run's output; set their format and level with "
                                 "logging.basicConfig(level=logging.INFO, format='...')")
        raise refuse(self, name)

    def _log(self, level: int, msg: Any, args: tuple[Any, ...], exc_info: Any) -> None:
        self._logs.emit(self.name, level, msg, args, exc_info)

    def debug(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        self._log(DEBUG, msg, args, _options(kwargs))

    def info(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        self._log(INFO, msg, args, _options(kwargs))

    def warning(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        self._log(WARNING, msg, args, _options(kwargs))

    warn = warning

    def error(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        self._log(ERROR, msg, args, _options(kwargs))

    def exception(self, msg: Any, *args: Any, exc_info: Any = True, **kwargs: Any) -> None:
        _options(kwargs)
        self._log(ERROR, msg, args, exc_info)

    def critical(self, msg: Any, *args: Any, **kwargs: Any) -> None:
        self._log(CRITICAL, msg, args, _options(kwargs))

    fatal = critical

    def log(self, level: Any, msg: Any, *args: Any, **kwargs: Any) -> None:
        if type(level) is not int:
            raise TypeError("level must be an integer")
        self._log(level, msg, args, _options(kwargs))

    def setLevel(self, level: Any) -> None:
        self.level = _level(level)

    def getEffectiveLevel(self) -> int:
        return self._logs.level_of(self.name)

    def isEnabledFor(self, level: int) -> bool:
        return level > self._logs.disabled and level >= self.getEffectiveLevel()

    def getChild(self, suffix: str) -> Logger:
        return getLogger(f"{self.name}.{suffix}" if self.name != "root" else suffix)


def getLogger(name: str | None = None) -> Logger:
    """The run's logger ``name`` (the root logger without one), made on first use."""
    if name is not None and not isinstance(name, str):
        raise TypeError("A logger name must be a string")
    logs = _logs()
    key = name or "root"
    found = logs.loggers.get(key)
    if found is None:
        if len(key) > 1000:
            raise ValueError("a logger name is at most 1000 characters in the sandbox")
        found = logs.loggers[key] = Logger(key, logs)
    return found


def basicConfig(*, level: Any = None, format: Any = None,
                datefmt: Any = None, style: str = "%", force: bool = False,
                stream: Any = None, filename: Any = None, handlers: Any = None,
                encoding: Any = None, filemode: Any = None) -> None:
    """Configure the root logger once: its level, its format."""
    if filename is not None or handlers is not None:
        raise ValueError("logging.basicConfig(): no files or handlers in the sandbox: records "
                         "go to the run's output")
    if stream is not None and stream is not STDOUT and stream is not STDERR:
        raise ValueError("logging.basicConfig(stream=...) takes sys.stdout or sys.stderr")
    if style != "%":
        raise ValueError("logging.basicConfig(): only style='%' formats in the sandbox "
                         "(`format='%(levelname)s %(message)s'`)")
    _logs().configure(level, format, datefmt, force)


def _root_call(level: int) -> Any:
    """``logging.info`` & co: ``basicConfig()`` first when the root has no format yet."""
    def log(msg: Any, *args: Any, **kwargs: Any) -> None:
        logs = _logs()
        logs.configure(None, None, None, False)
        logs.emit("root", level, msg, args, _options(kwargs))
    return log


def exception(msg: Any, *args: Any, exc_info: Any = True, **kwargs: Any) -> None:
    """``logging.exception``: an ERROR record with the exception being handled."""
    logs = _logs()
    logs.configure(None, None, None, False)
    _options(kwargs)
    logs.emit("root", ERROR, msg, args, exc_info)


def log(level: Any, msg: Any, *args: Any, **kwargs: Any) -> None:
    """``logging.log(level, msg)``."""
    if type(level) is not int:
        raise TypeError("level must be an integer")
    logs = _logs()
    logs.configure(None, None, None, False)
    logs.emit("root", level, msg, args, _options(kwargs))


def disable(level: Any = CRITICAL) -> None:
    """Drop every record at ``level`` and below."""
    _logs().disabled = _level(level)


def getLevelName(level: Any) -> Any:
    """The name of a level, or the level of a name."""
    if isinstance(level, str):
        return _LEVELS.get(level, f"Level {level}")
    return _NAMES.get(level, f"Level {level}")


FACADE: Final = Facade("logging", {
    "CRITICAL": CRITICAL, "FATAL": CRITICAL, "ERROR": ERROR, "WARNING": WARNING,
    "WARN": WARNING, "INFO": INFO, "DEBUG": DEBUG, "NOTSET": NOTSET,
    "BASIC_FORMAT": BASIC_FORMAT,
    "debug": _root_call(DEBUG), "info": _root_call(INFO), "warning": _root_call(WARNING),
    "warn": _root_call(WARNING), "error": _root_call(ERROR), "critical": _root_call(CRITICAL),
    "fatal": _root_call(CRITICAL), "exception": exception, "log": log,
    "getLogger": getLogger, "basicConfig": basicConfig, "disable": disable,
    "getLevelName": getLevelName,
})
