"""Presentation cards: how an editor shows a tool call, in codemode's own neutral terms.

A tool may declare two pure methods (``define_tool(present_call=...,
present_result=...)``): ``present_call(args)`` gives the pending card,
``present_result(args, result)`` the finished one. A card is one of three
intents, a tagged union of frozen values: :class:`GenericCard`,
:class:`TerminalCard`, :class:`DiffCard`. A bridge (ACP, a web UI) maps each
``card`` tag to its wire format; nothing here is a protocol type.

The presenters run live and again when a session log is replayed, so they are
pure functions of their inputs. :func:`present_call` / :func:`present_result`
soft-validate: arguments that fail the tool's schema (malformed, or an old
log's shape), a presenter that raises or returns something else all give
None, and the caller shows :func:`fallback_card` (tool name + raw arguments).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, TypeVar

from codemode.dispatch.frozen import thaw

if TYPE_CHECKING:
    from codemode.dispatch.events import ToolEvent

__all__ = [
    "Card",
    "CardNode",
    "CardResult",
    "DiffCard",
    "FileDiff",
    "GenericCard",
    "Location",
    "PresentCall",
    "PresentResult",
    "TerminalCard",
    "card_from_json",
    "fallback_card",
    "present_call",
    "present_result",
    "read_session",
    "render_session",
    "with_cards",
]

CardKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch",
                   "other"]
"""Icon hints for a generic card."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Location:
    """A file a call touches, so a capable editor can follow it."""

    path: str
    """The path as the tool names it (the bridge makes it relative for display)."""
    line: int | None = None
    """1-based line, when known."""

    def to_json(self) -> dict[str, Any]:
        """JSON form; ``line`` only when set."""
        return {"path": self.path} if self.line is None else {"path": self.path, "line": self.line}


@dataclass(frozen=True, kw_only=True, slots=True)
class FileDiff:
    """One file's change on a diff card."""

    path: str
    """The file."""
    old_text: str | None
    """Its text before (None: a new file, or not known to a pure presenter)."""
    new_text: str
    """Its text after."""

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {"path": self.path, "old_text": self.old_text, "new_text": self.new_text}


@dataclass(frozen=True, kw_only=True, slots=True)
class GenericCard:
    """The default card: a title, an icon kind, the input, some text, the files touched."""

    title: str
    """One line naming what the call does."""
    kind: CardKind | None = None
    """Icon hint (``read``, ``search``, ``edit`` …)."""
    raw_input: Any = None
    """The call's arguments as JSON, when the card shows them."""
    content: str | None = None
    """Plain text body (the bridge decides how to format it)."""
    locations: tuple[Location, ...] = ()
    """Files the call touches."""
    card: Literal["generic"] = field(default="generic", init=False)
    """The union's tag."""

    def to_json(self) -> dict[str, Any]:
        """JSON form with the fields that are set (the tag first)."""
        out: dict[str, Any] = {"card": self.card, "title": self.title}
        if self.kind is not None:
            out["kind"] = self.kind
        if self.raw_input is not None:
            out["raw_input"] = self.raw_input
        if self.content is not None:
            out["content"] = self.content
        if self.locations:
            out["locations"] = [loc.to_json() for loc in self.locations]
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class TerminalCard:
    """A call that is a command: the command as title; the result adds raw output and
    exit metadata (the bridge adds any fences)."""

    title: str
    """The command."""
    description: str | None = None
    """Shown above the terminal."""
    cwd: str | None = None
    """Working directory, when the tool knows it from its arguments."""
    output: str | None = None
    """Raw output, on the result card."""
    exit_code: int | None = None
    """Exit status, on the result card."""
    timed_out: bool = False
    """Whether the command was stopped by a deadline."""
    card: Literal["terminal"] = field(default="terminal", init=False)
    """The union's tag."""

    def to_json(self) -> dict[str, Any]:
        """JSON form with the fields that are set (the tag first)."""
        out: dict[str, Any] = {"card": self.card, "title": self.title}
        for name in ("description", "cwd", "output", "exit_code"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.timed_out:
            out["timed_out"] = True
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class DiffCard:
    """A call that creates or changes files, shown as inline diffs."""

    title: str
    """One line naming the change."""
    diffs: tuple[FileDiff, ...] = ()
    """The changes (a result's applied hunks usually come from ``meta``)."""
    locations: tuple[Location, ...] = ()
    """Files touched."""
    card: Literal["diff"] = field(default="diff", init=False)
    """The union's tag."""

    def to_json(self) -> dict[str, Any]:
        """JSON form with the fields that are set (the tag first)."""
        out: dict[str, Any] = {"card": self.card, "title": self.title,
                               "diffs": [d.to_json() for d in self.diffs]}
        if self.locations:
            out["locations"] = [loc.to_json() for loc in self.locations]
        return out


Card: TypeAlias = GenericCard | TerminalCard | DiffCard
"""A presentation intent, tagged by ``card``."""
_CARDS = (GenericCard, TerminalCard, DiffCard)


@dataclass(frozen=True, kw_only=True, slots=True)
class CardResult:
    """What ``present_result`` sees of a finished call: what the ``tool/result`` event
    persists, so a replay gives it the same."""

    content: tuple[Mapping[str, Any], ...] = ()
    """The model-visible content blocks."""
    is_error: bool = False
    """Whether the call failed."""
    meta: Mapping[str, Any] | None = None
    """The handler's persisted ``meta`` (UI data such as applied hunks)."""
    error: str | None = None
    """The error message, on a failed call."""

    @property
    def text(self) -> str:
        """The text blocks joined by newlines."""
        return "\n".join(str(b.get("text", "")) for b in self.content if b.get("type") == "text")


PresentCall: TypeAlias = Callable[[Mapping[str, Any]], "Card | None"]
"""``present_call(args) -> Card | None``: pure."""
PresentResult: TypeAlias = Callable[[Mapping[str, Any], CardResult], "Card | None"]
"""``present_result(args, result) -> Card | None``: pure."""


def _valid(tool: Any, args: Any) -> Mapping[str, Any] | None:
    if not isinstance(args, Mapping):
        return None
    plain = thaw(args)
    validator = getattr(tool, "validator", None)
    try:
        if validator is not None and not validator.is_valid(plain):
            return None
    except Exception:
        return None
    return plain if isinstance(plain, Mapping) else None


def present_call(tool: Any, args: Any) -> Card | None:
    """The tool's pending card, or None (no presenter, args that fail the schema, a
    presenter that raised or returned something else); never raises."""
    presenter = getattr(tool, "present_call", None)
    if presenter is None:
        return None
    plain = _valid(tool, args)
    if plain is None:
        return None
    try:
        card = presenter(plain)
    except Exception:
        return None
    return card if isinstance(card, _CARDS) else None


def present_result(tool: Any, args: Any, result: CardResult) -> Card | None:
    """The tool's finished card, or None, as :func:`present_call`; never raises."""
    presenter = getattr(tool, "present_result", None)
    if presenter is None:
        return None
    plain = _valid(tool, args)
    if plain is None:
        return None
    try:
        card = presenter(plain, result)
    except Exception:
        return None
    return card if isinstance(card, _CARDS) else None


def fallback_card(name: str, args: Any) -> GenericCard:
    """The card a bridge shows when a tool has none: its name, its raw arguments."""
    raw = thaw(args) if isinstance(args, Mapping) else args
    try:
        json.dumps(raw)
    except (TypeError, ValueError):
        raw = repr(raw)
    return GenericCard(title=name, raw_input=raw)


def card_from_json(data: Mapping[str, Any]) -> Card:
    """Rebuild a card from its ``to_json()`` form (a stored view); ValueError otherwise."""
    tag = data.get("card")
    locations = tuple(Location(path=loc["path"], line=loc.get("line"))
                      for loc in data.get("locations", ()))
    if tag == "generic":
        return GenericCard(title=data["title"], kind=data.get("kind"),
                           raw_input=data.get("raw_input"), content=data.get("content"),
                           locations=locations)
    if tag == "terminal":
        return TerminalCard(title=data["title"], description=data.get("description"),
                            cwd=data.get("cwd"), output=data.get("output"),
                            exit_code=data.get("exit_code"),
                            timed_out=bool(data.get("timed_out", False)))
    if tag == "diff":
        diffs = tuple(FileDiff(path=d["path"], old_text=d.get("old_text"),
                               new_text=d["new_text"]) for d in data.get("diffs", ()))
        return DiffCard(title=data["title"], diffs=diffs, locations=locations)
    raise ValueError(f"not a card: {tag!r}")


@dataclass(frozen=True, kw_only=True, slots=True)
class CardNode:
    """One call's cards in a session, with the calls it caused (a script's nested calls
    under their ``run_code`` call)."""

    call_id: str
    """The call's id."""
    name: str
    """The tool's wire name."""
    call: Card
    """The pending card (a fallback when the tool has none)."""
    result: Card | None = None
    """The finished card; None while the call runs, or when the tool has no
    ``present_result`` (the bridge keeps the pending card then)."""
    children: tuple[CardNode, ...] = ()
    """Cards of the calls this one caused, in start order."""

    def to_json(self) -> dict[str, Any]:
        """JSON form (the view a snapshot or a bridge compares)."""
        out: dict[str, Any] = {"call_id": self.call_id, "name": self.name,
                               "call": self.call.to_json(),
                               "result": None if self.result is None else self.result.to_json()}
        if self.children:
            out["children"] = [child.to_json() for child in self.children]
        return out


def _field(event: Any, name: str) -> Any:
    return event.get(name) if isinstance(event, Mapping) else getattr(event, name, None)


def render_session(events: Iterable[ToolEvent | Mapping[str, Any]],
                   tools: Callable[[str], Any | None]) -> tuple[CardNode, ...]:
    """Every call's cards from a session's events (live ``ToolEvent``s or the dicts of a
    :class:`~codemode.dispatch.events.JsonlSessionLog`), as a forest by ``parent``.

    ``tools(name)`` gives the tool that presents a call (None, or an exception such as
    ``registry.get``'s for a tool that is gone: the fallback card). The same events give
    the same cards, live or replayed.
    """
    calls: dict[str, dict[str, Any]] = {}
    order: list[str] = []
    latest: dict[str, str] = {}  # token → key of its latest call (a token may repeat)
    for event in events:
        kind, token = _field(event, "type"), str(_field(event, "token"))
        if kind == "tool/call":
            # replayed calls share the token "journal": each call is its own node
            key = token if token not in latest else f"{token}#{len(order)}"
            latest[token] = key
            calls[key] = {"event": event, "result": None}
            order.append(key)
        elif kind == "tool/result" and token in latest:
            calls[latest[token]]["result"] = event
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for token in order:
        parent = _field(calls[token]["event"], "parent")
        if parent is not None and str(parent) in calls:
            children.setdefault(str(parent), []).append(token)
        else:
            roots.append(token)

    def node(token: str) -> CardNode:
        entry = calls[token]
        name = str(_field(entry["event"], "name"))
        args = _field(entry["event"], "arguments")
        try:
            tool = tools(name)
        except Exception:  # ``registry.get`` of a tool that is gone by now
            tool = None
        call = present_call(tool, args) or fallback_card(name, args)
        finished = entry["result"]
        result = None
        if finished is not None:
            result = present_result(tool, args, _card_result(finished))
        return CardNode(call_id=str(_field(entry["event"], "call_id")), name=name, call=call,
                        result=result,
                        children=tuple(node(t) for t in children.get(token, ())))

    return tuple(node(token) for token in roots)


def _card_result(event: Any) -> CardResult:
    content = _field(event, "content") or ()
    meta = _field(event, "meta")
    return CardResult(
        content=tuple(thaw(block) for block in content if isinstance(block, Mapping)),
        is_error=bool(_field(event, "is_error")),
        meta=thaw(meta) if isinstance(meta, Mapping) else None,
        error=_field(event, "error"),
    )


def read_session(path: str | Path) -> Iterator[dict[str, Any]]:
    """The events of a ``JsonlSessionLog`` file, as dicts, in order (blank lines skipped)."""
    with Path(path).open(encoding="utf-8") as file:
        for line in file:
            if line.strip():
                yield json.loads(line)


_T = TypeVar("_T")


def with_cards(tool: _T, *, present_call: PresentCall | None = None,
               present_result: PresentResult | None = None) -> _T:
    """A copy of ``tool`` (from ``define_tool`` or ``@tool``) with these presenters."""
    return replace(tool, present_call=present_call,  # type: ignore[type-var]
                   present_result=present_result)
