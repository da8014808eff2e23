"""One-round hints for a script that read a tool's result in the wrong shape (or awaited
one awaitable twice, or iterated a dict method it did not call: ``for k, v in u.items:``).

``me[0]`` on an object result is a bare ``KeyError: 0``; ``r["name"]`` on a tool's text
(a tool without an output schema answers JSON as text) is ``string indices must be
integers``. Neither says what the data was. When such an error ends the run, the failing
subscript is found again from the traceback (its source span) and its operands read back
from the frame — names and constant keys of plain dicts and lists only, so no script code
runs — and the message says what the value is and what to write. The hint is host code
reading a failed script's data: it renders only exact ``str``/``int`` keys, cut short
before they are copied, and its search for a close key is bounded, so what a script
holds decides neither its cost nor whether it can fail. Subscripts the script
catches are untouched (``e.args`` and ``str(e)`` stay CPython's), and nothing runs on the
hot path: the subscript itself is still ``operator.getitem``.
"""

from __future__ import annotations

import ast
import difflib
import re
from itertools import islice
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.meter import SCRIPT_FILENAME
from codemode.sandbox.language.parsing import parse_tree

if TYPE_CHECKING:
    from types import FrameType, TracebackType

__all__ = ["data_hint"]

_STR_INDEX: Final = "string indices must be integers"
_REUSED: Final = "cannot reuse already awaited coroutine"
_SHOWN_KEYS: Final = 8
_MAX_SPAN: Final = 200
_MAX_SCAN: Final = 10_000
_CLOSE_LEN: Final = 40
_CLOSE_CANDIDATES: Final = 250
"""Keys compared with a missing one (difflib is Python, quadratic in the key's length:
1,000 keys of 100 characters cost seconds of the host's CPU; CPython's own suggestions
stop at 40 characters too)."""
_KEY_TEXT: Final = 40
_MISSING: Final = object()
_METHOD_TYPE: Final = "'builtin_function_or_method'"
_UNCALLED: Final = re.compile(r"\.(items|keys|values)\b(?!\s*\()")
"""``.items`` not followed by a call, on the failing line."""
_OWNER: Final = re.compile(r"[A-Za-z_]\w*(?:\.\w+|\[[^\]\n]{0,40}\])*$")
"""The expression before it (``page["orders"][0]``), read from the text before it."""
_LINE_SCAN: Final = 1_000
"""Characters of that line searched; the owner is read from at most ``_MAX_SPAN`` before it."""


def data_hint(exc: BaseException, lines: tuple[str, ...]) -> str:
    """``"; ..."`` to add to ``exc``'s message, or ``""``."""
    kind = type(exc)
    # the interpreter's own errors carry one str: never str(exc), which would run a
    # script's __str__ (a TypeError(obj) thrown into a generator is not a `raise`)
    args = exc.args
    said = args[0] if len(args) == 1 and type(args[0]) is str else ""
    if kind is RuntimeError and said == _REUSED:
        # CPython's gather() is a future that replays its outcome; the sandbox's is a
        # coroutine, awaited once
        return ("; an awaitable (a call, a coroutine, an asyncio.gather(...)) is awaited "
                "once: keep its value in a name, `results = await asyncio.gather(...)`, and "
                "use that name again")
    if kind is TypeError and _METHOD_TYPE in said:
        return _method_hint(exc.__traceback__, lines)
    if kind is KeyError:
        text = False
    elif kind is TypeError and said.startswith(_STR_INDEX):
        text = True
    else:
        return ""
    found = _subscript(exc.__traceback__, lines)
    if found is None:
        return _TEXT_HINT.format(shown="the value") if text else ""
    shown, obj, key = found
    if text:
        if type(obj) is not str:
            return ""
        if obj[:_MAX_SCAN].lstrip()[:1] in ("{", "["):
            return (f"; {shown} is text (a str) holding JSON, not parsed data (a tool that "
                    f"declares no output schema answers text): parse it first, "
                    f"`data = json.loads({shown})`, then read `data[...]`")
        return _TEXT_HINT.format(shown=shown)
    if type(obj) is not dict or key is _MISSING:
        return ""
    keys = list(islice(obj, _SHOWN_KEYS + 1))
    listed = ", ".join(filter(None, map(_key_text, keys[:_SHOWN_KEYS])))
    more = ", …" if len(obj) > _SHOWN_KEYS else ""
    if not obj:
        return f"; {shown} is an empty dict"
    if type(key) is int and not any(type(k) is int for k in keys):
        first = next((k for k in keys if type(k) is str), None)
        example = f": `{shown}[{_key_text(first)}]`" if first is not None else ""
        return (f"; {shown} is an object (a dict with keys {listed}{more}), not a list: read "
                f"its values by key{example}")
    if type(key) is str:
        names = [k for k in islice(obj, _MAX_SCAN) if type(k) is str and len(k) <= _CLOSE_LEN]
        close = (difflib.get_close_matches(key, names[:_CLOSE_CANDIDATES], n=1)
                 if len(key) <= _CLOSE_LEN else [])
        mean = f"; did you mean {close[0]!r}?" if close else ""
        return (f"; {shown} has the keys {listed}{more}{mean} (`.get(key)` gives None for a "
                "missing one)")
    return ""


def _method_hint(trace: TracebackType | None, lines: tuple[str, ...]) -> str:
    """``for k in page.items:`` on a dict without an ``items`` key: the method itself is
    not iterable (nor sized, nor subscriptable); say to call it."""
    line = _script_line(trace)
    if line is None or not 0 < line <= len(lines):
        return ""
    text = lines[line - 1][:_LINE_SCAN]
    found = _UNCALLED.search(text)
    if found is None:
        return ""
    owner = _OWNER.search(text, max(0, found.start() - _MAX_SPAN), found.start())
    if owner is None:
        return ""
    shown, name = owner.group(), found.group(1)
    return (f"; `{shown}.{name}` without a call is the dict method itself: call it, "
            f"`{shown}.{name}()`")


def _script_line(trace: TracebackType | None) -> int | None:
    """The line of the innermost script frame of ``trace``: the error may come from a guard
    the line called (``'x' in page.values`` is the ``_in_`` guard's ``in``)."""
    line = None
    while trace is not None:
        if trace.tb_frame.f_code.co_filename == SCRIPT_FILENAME:
            line = trace.tb_lineno
        trace = trace.tb_next
    return line


def _key_text(key: Any) -> str:
    """A shown key's repr, at most ``_KEY_TEXT`` characters, made from a short piece (a
    str key of megabytes is not copied; an int past 4,300 digits cannot be rendered)."""
    if type(key) is str:
        return repr(key[:_KEY_TEXT])[:_KEY_TEXT]
    if type(key) is int and key.bit_length() <= 128:
        return repr(key)
    return ""


_TEXT_HINT: Final = ("; {shown} is text (a str), indexed by position only: if a tool "
                     "answered JSON as text, parse it first with `json.loads(...)`")


def _subscript(trace: TracebackType | None, lines: tuple[str, ...]) -> tuple[str, Any, Any] | None:
    """(the subscripted expression's source, its value, the key) of the subscript that
    raised in the innermost script frame, when they can be read without running code."""
    last = None
    while trace is not None:
        last = trace
        trace = trace.tb_next
    if last is None or last.tb_frame.f_code.co_filename != SCRIPT_FILENAME:
        return None
    code = last.tb_frame.f_code
    positions = list(islice(code.co_positions(), last.tb_lasti // 2, last.tb_lasti // 2 + 1))
    if not positions:
        return None
    line, end_line, col, end_col = positions[0]
    if line is None or line != end_line or col is None or end_col is None or not (
            0 < line <= len(lines)):
        return None
    data = lines[line - 1].encode("utf-8", "surrogatepass")
    span = data[col:end_col].decode("utf-8", "replace")
    if len(span) > _MAX_SPAN:
        return None
    try:
        node = parse_tree(span.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Subscript):
        return None
    frame = last.tb_frame
    obj = _value(node.value, frame, 0)
    if obj is _MISSING:
        return None
    return ast.unparse(node.value), obj, _value(node.slice, frame, 0)


def _value(node: ast.expr, frame: FrameType, depth: int) -> Any:
    """A name's value, a constant, or a constant key of a plain dict or list; else missing."""
    if depth > 8:
        return _MISSING
    if isinstance(node, ast.Constant) and type(node.value) in (str, int):
        return node.value
    if isinstance(node, ast.Name):
        value = frame.f_locals.get(node.id, _MISSING)
        return frame.f_globals.get(node.id, _MISSING) if value is _MISSING else value
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        container = _value(node.value, frame, depth + 1)
        key = node.slice.value
        if type(container) is dict and type(key) in (str, int) and len(container) <= _MAX_SCAN:
            # scanned, not looked up: a script key's own __hash__/__eq__ never runs here
            return next((v for k, v in container.items() if type(k) is type(key) and k == key),
                        _MISSING)
        if type(container) is list and type(key) is int and -len(container) <= key < len(container):
            return container[key]
    return _MISSING
