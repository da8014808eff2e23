"""Recording a registry's ``tool/*`` events and asserting on them.

Events are the ground truth of what ran: every dispatch (direct or from a
script) emits ``tool/call`` then ``tool/result``, with its token and its
parent's token, so a test can check the shape of a run without touching the
tools themselves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, final

from codemode.dispatch.frozen import thaw

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from codemode.dispatch.context import Token
    from codemode.dispatch.events import EventType, ToolEvent
    from codemode.dispatch.registry import ToolRegistry

__all__ = ["ToolEvents"]


def _show(event: ToolEvent) -> str:
    parent = f" parent={event.parent}" if event.parent else ""
    if event.type == "tool/call":
        return f"  call   {event.name} id={event.call_id}{parent} args={_plain(event.arguments)!r}"
    if event.type == "tool/result":
        state = f"error: {event.error}" if event.is_error else "ok"
        return f"  result {event.name} id={event.call_id}{parent} {state}"
    return f"  progress {event.name} id={event.call_id} data={_plain(event.data)!r}"


def _plain(value: Any) -> Any:
    return thaw(value) if value is not None else None


def _matches(arguments: Mapping[str, Any] | None, expected: Mapping[str, Any]) -> bool:
    actual = _plain(arguments) or {}
    return all(key in actual and actual[key] == thaw(value) for key, value in expected.items())


@final
class ToolEvents:
    """Collects every event of one registry; usable as a subscriber and as assertions.

    ``ToolEvents(registry)`` subscribes at once; ``close()`` unsubscribes.
    Assertion helpers raise ``AssertionError`` with the recorded events listed.
    """

    def __init__(self, registry: ToolRegistry | None = None) -> None:
        self.events: list[ToolEvent] = []
        """Every event received, in order."""
        self._unsubscribe: Callable[[], None] | None = None
        if registry is not None:
            self.attach(registry)

    def attach(self, registry: ToolRegistry) -> ToolEvents:
        """Subscribe to ``registry`` (one registry at a time)."""
        self.close()
        self._unsubscribe = registry.subscribe(self)
        return self

    def close(self) -> None:
        """Stop recording (events already recorded stay)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def __call__(self, event: ToolEvent) -> None:
        self.events.append(event)

    def __iter__(self) -> Iterator[ToolEvent]:
        return iter(tuple(self.events))

    def __len__(self) -> int:
        return len(self.events)

    def clear(self) -> None:
        """Forget the events recorded so far."""
        self.events.clear()

    def _select(self, kind: EventType, name: str | None, parent: Token | str | None,
                call_id: str | None) -> list[ToolEvent]:
        wanted_parent = None if parent is None else str(parent)
        return [e for e in self.events if e.type == kind
                and (name is None or e.name == name)
                and (wanted_parent is None or e.parent == wanted_parent)
                and (call_id is None or e.call_id.startswith(call_id))]

    def calls(self, name: str | None = None, *, parent: Token | str | None = None,
              call_id: str | None = None) -> list[ToolEvent]:
        """``tool/call`` events, filtered by tool name, parent token and call-id prefix."""
        return self._select("tool/call", name, parent, call_id)

    def results(self, name: str | None = None, *, is_error: bool | None = None,
                parent: Token | str | None = None, call_id: str | None = None) -> list[ToolEvent]:
        """``tool/result`` events, filtered like ``calls`` and by ``is_error``."""
        found = self._select("tool/result", name, parent, call_id)
        return found if is_error is None else [e for e in found if e.is_error is is_error]

    def updates(self, name: str | None = None, *, call_id: str | None = None) -> list[ToolEvent]:
        """``tool/update`` events (partial results a handler reported)."""
        return self._select("tool/update", name, None, call_id)

    def names(self) -> list[str]:
        """Tool names of the ``tool/call`` events, in dispatch order."""
        return [e.name for e in self.calls()]

    def arguments(self, name: str | None = None) -> list[dict[str, Any]]:
        """Plain copies of the arguments of each matching call, in order."""
        return [_plain(e.arguments) or {} for e in self.calls(name)]

    def result_of(self, call_id: str) -> ToolEvent:
        """The ``tool/result`` event of the call with exactly this id."""
        found = [e for e in self.results() if e.call_id == call_id]
        if len(found) != 1:
            self._fail(f"expected one result for call_id {call_id!r}, found {len(found)}")
        return found[0]

    def token_of(self, call_id: str) -> str:
        """The dispatch token of the call with exactly this id (to compare with ``parent``)."""
        found = [e for e in self.calls() if e.call_id == call_id]
        if len(found) != 1:
            self._fail(f"expected one call with call_id {call_id!r}, found {len(found)}")
        return found[0].token

    def children(self, parent: Token | str) -> list[ToolEvent]:
        """``tool/call`` events whose parent is ``parent``."""
        return self.calls(parent=parent)

    def max_in_flight(self, name: str | None = None) -> int:
        """Most calls (of ``name``, or of any tool) dispatched and not yet finished at once.

        Counted from the order of ``tool/call`` and ``tool/result`` events, not
        from clocks, so it shows real overlap (e.g. of ``asyncio.gather``) deterministically.
        """
        current = peak = 0
        for event in self.events:
            if name is not None and event.name != name:
                continue
            if event.type == "tool/call":
                current += 1
                peak = max(peak, current)
            elif event.type == "tool/result":
                current -= 1
        return peak

    def _fail(self, message: str) -> None:
        shown = "\n".join(_show(e) for e in self.events) or "  (no events)"
        raise AssertionError(f"{message}\nrecorded events:\n{shown}")

    def assert_called(self, name: str, *, times: int | None = None,
                      with_arguments: Mapping[str, Any] | None = None) -> list[ToolEvent]:
        """Assert ``name`` was called (``times`` times exactly, if given).

        With ``with_arguments``, only calls whose arguments contain those keys with
        those values count (a subset match; arrays compare as lists).
        """
        found = self.calls(name)
        if with_arguments is not None:
            found = [e for e in found if _matches(e.arguments, with_arguments)]
        what = f"{name!r}" + (f" with {dict(with_arguments)!r}" if with_arguments else "")
        if times is None and not found:
            self._fail(f"{what} was never called")
        if times is not None and len(found) != times:
            self._fail(f"{what} was called {len(found)} time(s), expected {times}")
        return found

    def assert_not_called(self, name: str) -> None:
        """Assert no call to ``name`` was dispatched (denied calls are dispatched: they count)."""
        if self.calls(name):
            self._fail(f"{name!r} was called {len(self.calls(name))} time(s), expected none")

    def assert_parent(self, call_id_prefix: str, token: Token | str) -> list[ToolEvent]:
        """Assert calls whose id starts with the prefix exist and all have ``token`` as parent.

        Typical use: every nested call of a ``run_code`` call ``c1`` (ids
        ``c1:code:<n>``) names the ``run_code`` dispatch's token as its parent.
        """
        found = self.calls(call_id=call_id_prefix)
        if not found:
            self._fail(f"no call has a call_id starting with {call_id_prefix!r}")
        wrong = [e for e in found if e.parent != str(token)]
        if wrong:
            listed = ", ".join(f"{e.call_id} (parent={e.parent})" for e in wrong)
            self._fail(f"calls under {call_id_prefix!r} with a parent other than {token}: {listed}")
        return found

    def assert_no_errors(self) -> None:
        """Assert every ``tool/result`` so far succeeded."""
        failed = self.results(is_error=True)
        if failed:
            listed = "; ".join(f"{e.name} ({e.call_id}): {e.error}" for e in failed)
            self._fail(f"{len(failed)} call(s) failed: {listed}")

    def assert_complete(self) -> None:
        """Assert every ``tool/call`` has exactly one ``tool/result`` (nothing left in flight)."""
        calls = [e.token for e in self.calls()]
        results = [e.token for e in self.results()]
        missing = [t for t in calls if results.count(t) != 1]
        if missing:
            self._fail(f"calls without exactly one result (tokens): {missing}")
