"""Results: content blocks, the normalised ``ToolResult``, and how handler output becomes one.

Whatever a handler returns is turned into a ``ToolResult`` here, before any
observer sees it; anything that is not JSON becomes an error result.
"""

from __future__ import annotations

import inspect
import json
import time
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from codemode.dispatch.frozen import FrozenDict, NotJSONError, constructor, dumps, freeze, thaw
from codemode.jsontext import dumps_in_steps

__all__ = [
    "BLOCK_TYPES",
    "Envelope",
    "ErrorInfo",
    "ErrorKind",
    "ToolResult",
    "audio",
    "error_result",
    "image",
    "normalise",
    "normalise_timed",
    "resource",
    "text",
    "timed",
]

BLOCK_TYPES = frozenset({"text", "image", "audio", "resource", "resource_link"})

_REQUIRED_KEYS: Mapping[str, tuple[str, ...]] = {
    "text": ("text",),
    "image": ("data", "mimeType"),
    "audio": ("data", "mimeType"),
    "resource": ("resource",),
    "resource_link": ("uri",),
}

ErrorKind = Literal[
    "unknown_tool",
    "invalid_arguments",
    "denied",
    "handler_error",
    "invalid_result",
    "timeout",
    "cancelled",
]


@dataclass(frozen=True, kw_only=True, slots=True)
class ErrorInfo:
    """Why a result is an error, in fields a caller can branch on."""

    kind: ErrorKind
    """Which pipeline stage failed."""
    message: str
    """Readable message (also the result's text)."""
    path: str | None = None
    """JSON path of the offending argument, for ``invalid_arguments``."""


_NOT_GIVEN: Any = type("NotGiven", (), {"__repr__": lambda self: "NOT_GIVEN"})()


@dataclass(frozen=True, slots=True)
class Envelope:
    """What a handler returns to add host-side ``meta``, explicit ``structured`` data, or
    to report a domain failure without raising (``is_error``).

    A type of its own, so a handler's plain data is never mistaken for it: a dict such
    as ``{"content": "..."}`` is data, like any other dict.
    """

    content: Any
    """Model-visible content: a str, a content block, a list of blocks, or JSON data."""
    meta: Mapping[str, Any] | None = None
    """Host-side data (stored on the result and its event, never shown to the model)."""
    structured: Any = _NOT_GIVEN
    """Structured data (JSON); when not given, that of ``content`` (if it is data)."""
    is_error: bool = False
    """True: the call failed; ``content`` says why."""


@dataclass(frozen=True, kw_only=True, slots=True)
class ToolResult:
    """The normalised outcome of one dispatch: what observers and callers see."""

    call_id: str
    """The call's id."""
    name: str
    """Wire name of the tool."""
    content: tuple[Mapping[str, Any], ...]
    """Model-visible content blocks (frozen MCP-style dicts)."""
    structured: Any = None
    """Structured data the handler returned (frozen JSON), or None."""
    is_error: bool = False
    """True when the call failed; ``content`` then says why."""
    error: ErrorInfo | None = None
    """Details when ``is_error``."""
    meta: Mapping[str, Any] | None = None
    """Host-side data from the handler; persisted on events, never shown to the model."""
    duration: float = field(default=0.0, compare=False)
    """Seconds spent in the pipeline."""

    @property
    def text(self) -> str:
        """The text blocks joined by newlines (non-text blocks omitted)."""
        return "\n".join(b["text"] for b in self.content if b.get("type") == "text")


_new_result = constructor(ToolResult)
_perf = time.perf_counter


def timed(result: ToolResult, duration: float) -> ToolResult:
    """``result`` with its ``duration`` set (``dataclasses.replace`` costs three times
    more on the per-call path)."""
    return _new_result(call_id=result.call_id, name=result.name, content=result.content,
                       structured=result.structured, is_error=result.is_error,
                       error=result.error, meta=result.meta, duration=duration)


def text(value: str) -> FrozenDict:
    """A text content block."""
    return FrozenDict(type="text", text=value)


def image(data: str, mime_type: str) -> FrozenDict:
    """An image block; ``data`` is base64."""
    return FrozenDict(type="image", data=data, mimeType=mime_type)


def audio(data: str, mime_type: str) -> FrozenDict:
    """An audio block; ``data`` is base64."""
    return FrozenDict(type="audio", data=data, mimeType=mime_type)


def resource(
    uri: str, *, text: str | None = None, blob: str | None = None, mime_type: str | None = None
) -> FrozenDict:
    """An embedded resource block (text or base64 blob)."""
    body: dict[str, Any] = {"uri": uri}
    if text is not None:
        body["text"] = text
    if blob is not None:
        body["blob"] = blob
    if mime_type is not None:
        body["mimeType"] = mime_type
    return FrozenDict(type="resource", resource=FrozenDict(body))


def error_result(
    call_id: str, name: str, kind: ErrorKind, message: str, path: str | None = None
) -> ToolResult:
    """An ``is_error`` result whose text is ``message``."""
    return ToolResult(
        call_id=call_id,
        name=name,
        content=(text(message),),
        is_error=True,
        error=ErrorInfo(kind=kind, message=message, path=path),
    )


class InvalidResult(Exception):
    """Internal: handler output that cannot be normalised; becomes an error result."""


def _block_type(kind: Any) -> bool:
    """Whether a ``"type"`` value names a content block: a JSON schema's ``"type":
    ["string", "null"]`` (a list) or an object there is data, not an unhashable-type
    TypeError out of the pipeline."""
    return isinstance(kind, str) and kind in BLOCK_TYPES


def _is_block(value: Any) -> bool:
    return isinstance(value, Mapping) and _block_type(value.get("type"))


def _block(value: Mapping[str, Any]) -> FrozenDict:
    kind = value["type"]
    missing = [k for k in _REQUIRED_KEYS[kind] if k not in value]
    if missing:
        raise InvalidResult(f"{kind} block is missing {', '.join(missing)}")
    if kind == "text" and not isinstance(value["text"], str):
        raise InvalidResult("text block's 'text' must be a string")
    try:
        frozen = freeze(value)
    except NotJSONError as exc:
        raise InvalidResult(f"content block is not JSON ({exc})") from None
    assert isinstance(frozen, FrozenDict)
    return frozen


def content_of(value: Any, *, steps: bool = False) -> tuple[tuple[FrozenDict, ...], Any]:
    """Content blocks and structured data for one handler return value.

    ``str`` → one text block; a block or a list of blocks → those blocks;
    any other JSON → its JSON text plus the data as ``structured``. ``steps``: a heavy
    value on a worker thread, whose JSON text is written in short steps
    (``jsontext.dumps_in_steps``: one C call for all of it holds the GIL, and so the loop).
    """
    if isinstance(value, str):
        return (text(str.__str__(value)),), None  # a StrEnum member as its plain text
    plain = type(value) is dict  # the usual data: no ABC checks (a dict is no Sequence)
    if _block_type(value.get("type")) if plain else _is_block(value):
        return (_block(value),), None
    if (
        not plain
        and isinstance(value, Sequence)
        and not isinstance(value, (str, bytes, bytearray))
        and value
        and all(_is_block(v) for v in value)
    ):
        return tuple(_block(v) for v in value), None
    try:
        data = freeze(value)
    except NotJSONError as exc:
        hint = ""
        if isinstance(value, (bytes, bytearray)):
            hint = " (wrap binary data in an image/audio/resource block)"
        elif isinstance(value, Coroutine):
            if inspect.iscoroutine(value) and (
                    inspect.getcoroutinestate(value) == inspect.CORO_CREATED):
                value.close()  # never started: closed here, not warned about when collected
            hint = " (a coroutine: the tool misses an await)"
        raise InvalidResult(f"the tool returned non-JSON data: {exc}{hint}") from None
    try:
        encoded = dumps_in_steps(data) if steps else dumps(data)
    except ValueError as exc:  # an integer past the interpreter's digit limit for text
        raise InvalidResult(f"the tool returned data JSON text cannot hold: {exc}") from None
    return (text(encoded),), data


def normalise(call_id: str, name: str, value: Any, *, steps: bool = False) -> ToolResult:
    """Turn a handler's return value into a ``ToolResult``; raise InvalidResult if impossible.

    Besides plain values, a handler may return an :class:`Envelope`: ``meta`` stays
    host-side, ``is_error`` reports a domain failure without raising. A plain dict is
    always data, whatever its keys. ``steps``: see :func:`content_of`.
    """
    if type(value) is str:  # the common case first
        return ToolResult(call_id=call_id, name=name, content=(text(value),))
    meta = None
    structured: Any = None
    if isinstance(value, ToolResult):
        return _renormalise(call_id, name, value)
    envelope = isinstance(value, Envelope)
    if envelope:
        if type(value.is_error) is not bool:
            # a truthy stand-in (1, "yes") read as a success would hide the failure
            raise InvalidResult(f"'is_error' must be True or False, not "
                                f"{type(value.is_error).__name__}")
        raw_meta = value.meta
        if raw_meta is not None:
            if not isinstance(raw_meta, Mapping):
                raise InvalidResult("'meta' must be an object")
            try:
                meta = freeze(raw_meta)
            except NotJSONError as exc:
                raise InvalidResult(f"'meta' is not JSON ({exc})") from None
        content, structured = content_of(value.content, steps=steps)
        if value.structured is not _NOT_GIVEN:
            try:
                structured = freeze(value.structured)
            except NotJSONError as exc:
                raise InvalidResult(f"'structured' is not JSON ({exc})") from None
    else:
        content, structured = content_of(value, steps=steps)
    if envelope and value.is_error is True:
        message = "\n".join(b["text"] for b in content if b.get("type") == "text")
        if value.structured is not _NOT_GIVEN and structured is not None:
            # the error's details as data (an MCP server's structuredContent): a script
            # reads only the message, so it carries them unless the text already does
            details = dumps(structured)
            if details not in message and json.dumps(thaw(structured)) not in message:
                message = f"{message}\n{details}" if message else details
        return ToolResult(
            call_id=call_id,
            name=name,
            content=content,
            structured=structured,
            meta=meta,
            is_error=True,
            error=ErrorInfo(kind="handler_error", message=message),
        )
    return ToolResult(call_id=call_id, name=name, content=content, structured=structured, meta=meta)


_BIG_INT: Final = 1 << 1024
"""Integers past this go the long way (:func:`normalise`): their text may be refused."""


def normalise_timed(call_id: str, name: str, value: Any, start: float) -> ToolResult:
    """:func:`normalise`, with ``duration`` the seconds since ``start`` (``perf_counter``)
    once it is done: the common results (text, JSON data) are made as one object."""
    kind = type(value)
    if kind is str:
        content: tuple[FrozenDict, ...] = (text(value),)
        structured: Any = None
    elif (kind is int and -_BIG_INT < value < _BIG_INT) or kind is bool or value is None:
        content, structured = (text(dumps(value)),), value
    elif kind is dict or kind is list or kind is float:
        content, structured = content_of(value)
    else:
        return timed(normalise(call_id, name, value), _perf() - start)
    return _new_result(call_id=call_id, name=name, content=content, structured=structured,
                       duration=_perf() - start)


def _renormalise(call_id: str, name: str, value: ToolResult) -> ToolResult:
    """A ``ToolResult`` built by host code: checked, frozen, given this call's identity."""
    if not all(_is_block(b) for b in value.content):
        raise InvalidResult("a ToolResult's content must be content blocks")
    try:
        meta = None if value.meta is None else freeze(value.meta)
        structured = freeze(value.structured)
    except NotJSONError as exc:
        raise InvalidResult(f"ToolResult data is not JSON ({exc})") from None
    if meta is not None and not isinstance(meta, Mapping):
        raise InvalidResult("'meta' must be an object")
    return replace(
        value,
        call_id=call_id,
        name=name,
        content=tuple(_block(b) for b in value.content),
        structured=structured,
        meta=meta,
    )


def parse_json_text(value: str) -> Any:
    """Parse JSON text, for tools that declare JSON output."""
    return json.loads(value)
