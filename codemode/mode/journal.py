"""Journals: a fixed, resubmitted script resumes without repeating side effects.

A journal records every call of a run (tool, canonical arguments, result) as one JSON
line. The next run given the same journal is answered from it while it makes the same
calls: the recorded sequence is split into groups of calls that were in flight together
(an ``asyncio.gather``), and a call is answered by an unused entry with the same tool,
canonical arguments and spec digest --

- in the current group (the first with unused entries), in any order: a group matches
  as a multiset;
- or in a later group, when the new run proves it concurrent with the entries it
  skips: the call is held (not answered) until calls of the new run that arrive while
  it waits have used every entry before its own. A script cannot make a call that
  depends on a result it has not received, so calls made while this one is held are
  concurrent with it, and the recorded order is one the new script allows. A gather
  recorded one by one (fast handlers), reordered, or sequential calls turned into a
  gather resume; sequential calls in another order do not (nothing arrives while the
  first is held: after ``reorder_wait`` it runs live).

The first call that matches nothing (or whose hold ends unproven), and every call after
it, runs live. A recorded failure is never replayed (the fix may have been for it), and
``replay="always_live"`` tools run live while keeping their place. Each run then
rewrites the journal with its own calls; calls answered while a hold was pending are
recorded as one group, so the next run matches them as a multiset at once.

The file is plain JSONL (no pickle): a header line, one line per call as it finishes,
and an end line saying whether the run failed. It is bounded (entries and bytes: past
either bound recording stops, so the rest of a later run is live), and each entry
carries its tool's spec digest, so a changed tool is never replayed with stale results.
"""

from __future__ import annotations

import hashlib
import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, final

import anyio

from codemode.dispatch.content import ErrorInfo, ToolResult
from codemode.dispatch.frozen import freeze, thaw

if TYPE_CHECKING:
    from collections.abc import Mapping

    from codemode.dispatch.tool import Tool

__all__ = ["Journal", "JournalEntry", "canonical", "spec_digest"]

FORMAT: Final = 1
"""Version of the file format (the header's ``codemode_journal``)."""

AHEAD: Final = 256
"""A call is matched at most this many groups past the current one."""


def canonical(arguments: Mapping[str, Any]) -> str:
    """The arguments as canonical JSON text: what two calls must share to be the same."""
    return json.dumps(thaw(arguments), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False, default=str)


def spec_digest(tool: Tool) -> str:
    """A digest of everything about a tool that could change what a call means."""
    spec = tool.spec
    data = {"name": spec.name, "description": spec.description,
            "parameters": thaw(spec.parameters),
            "output_schema": None if spec.output_schema is None else thaw(spec.output_schema),
            "namespace": spec.namespace, "replay": tool.replay,
            "labels": sorted(tool.labels), "refuses": sorted(tool.refuses)}
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def registry_digest(digests: Mapping[str, str]) -> str:
    """One digest over every tool's: the header's ``registry`` field."""
    text = json.dumps(sorted(digests.items()), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True, kw_only=True, slots=True)
class JournalEntry:
    """One recorded call."""

    seq: int
    """0-based position of the call in its run (start order)."""
    group: int
    """Calls that were in flight together share a group; groups match as a whole."""
    tool: str
    """Wire name of the tool."""
    digest: str
    """The tool's spec digest when the call was made."""
    arguments: str
    """Canonical JSON of the arguments."""
    ok: bool
    """False when the call failed (a failure is recorded, never replayed)."""
    content: tuple[Mapping[str, Any], ...] = ()
    """The result's content blocks."""
    structured: Any = None
    """The result's structured data."""
    error: str | None = None
    """The error message, when not ok."""
    labels: Mapping[str, str] | None = None
    """The labels the result carried beyond its tool's own (``meta["labels"]``: a
    background task's), so a replayed result adds them to the run as the live one did."""

    def to_json(self) -> dict[str, Any]:
        """The entry as one JSON object (a line of the file)."""
        out = {"seq": self.seq, "group": self.group, "tool": self.tool,
               "digest": self.digest, "ok": self.ok, "arguments": json.loads(self.arguments),
               "content": list(self.content), "structured": self.structured,
               "error": self.error}
        if self.labels:
            out["labels"] = dict(self.labels)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> JournalEntry:
        """Inverse of :meth:`to_json`; raises on anything malformed."""
        content = data["content"]
        if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
            raise ValueError("content must be a list of blocks")
        fields = {"seq": data["seq"], "group": data["group"], "tool": data["tool"],
                  "digest": data["digest"], "ok": data["ok"]}
        if not (isinstance(fields["seq"], int) and isinstance(fields["group"], int)
                and isinstance(fields["tool"], str) and isinstance(fields["digest"], str)
                and isinstance(fields["ok"], bool)):
            raise ValueError("malformed entry")
        error = data.get("error")
        labels = data.get("labels")
        if labels is not None and not (isinstance(labels, dict) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in labels.items())):
            raise ValueError("labels must map label to where it came from")
        return cls(seq=fields["seq"], group=fields["group"], tool=fields["tool"],
                   digest=fields["digest"], ok=fields["ok"],
                   arguments=canonical(data["arguments"]),
                   content=tuple(freeze(block) for block in content),
                   structured=freeze(data.get("structured")),
                   error=error if isinstance(error, str) else None,
                   labels=freeze(labels) if labels else None)

    def result(self, call_id: str) -> ToolResult:
        """The recorded result, as the pipeline would have returned it to ``call_id``."""
        return ToolResult(call_id=call_id, name=self.tool, content=self.content,
                          structured=self.structured, is_error=not self.ok,
                          error=None if self.ok else ErrorInfo(kind="handler_error",
                                                               message=self.error or ""),
                          meta=freeze({"labels": dict(self.labels)}) if self.labels else None)


@final
class Journal:
    """Where a run's calls are recorded, so that the next run of a fixed script resumes.

    ``Journal()`` keeps the last run in memory; ``Journal(path)`` also writes it to a JSONL
    file as it goes (a crashed host leaves the calls made so far) and reads it back, so a
    resume may happen in another process. One run at a time uses a journal.
    """

    def __init__(self, path: str | Path | None = None, *, max_entries: int = 1_000,
                 max_bytes: int = 4_000_000, reorder_wait: float = 0.5) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("max_entries and max_bytes must be positive")
        if not reorder_wait >= 0:
            raise ValueError("reorder_wait must be a number of seconds, 0 or more")
        self.path = None if path is None else Path(path)
        self.reorder_wait = reorder_wait
        """Seconds a call matching an entry past the current group waits for the calls
        that would prove it concurrent (0: such a call runs live at once)."""
        self.max_entries = max_entries
        """At most this many calls are recorded per run."""
        self.max_bytes = max_bytes
        """At most this many bytes of JSONL are written per run."""
        self._entries: list[JournalEntry] = []
        self._failed: bool | None = None
        self._busy = False
        if self.path is not None and self.path.exists():
            self._entries, self._failed = _load(self.path, max_entries, max_bytes)

    @property
    def entries(self) -> tuple[JournalEntry, ...]:
        """The calls of the last recorded run, in start order."""
        return tuple(sorted(self._entries, key=lambda e: e.seq))

    @property
    def failed(self) -> bool | None:
        """Whether the last recorded run failed (True too when it never finished); None
        when nothing was recorded."""
        return self._failed

    def clear(self) -> None:
        """Forget every recorded call (the next run is all live)."""
        self._entries, self._failed = [], None
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def begin(self, registry: str, *, resume: bool = True) -> Resume:
        """Start a run: it replays from what is recorded (unless ``resume`` is False) and
        records its own calls in their place."""
        if self._busy:
            raise RuntimeError("this journal is already recording a run")
        self._busy = True
        previous = self.entries if resume else ()
        self._entries, self._failed = [], True
        return Resume(self, previous, registry)

    def _write(self, line: dict[str, Any], *, first: bool = False) -> int:
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n"
        if self.path is not None:
            with self.path.open("w" if first else "a", encoding="utf-8") as file:
                file.write(text)
        return len(text.encode())

    def _append(self, text: str) -> None:
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as file:
                file.write(text)

    def _finish(self, failed: bool) -> None:
        self._failed = failed
        self._busy = False


def _load(path: Path, max_entries: int, max_bytes: int) -> tuple[list[JournalEntry], bool]:
    """The entries of a journal file; a file that is not one of ours yields nothing."""
    entries: list[JournalEntry] = []
    failed = True
    try:
        with path.open(encoding="utf-8") as file:
            text = file.read(max_bytes + 1)
    except (OSError, UnicodeDecodeError):
        return [], True
    lines = text.splitlines()
    try:
        header = json.loads(lines[0]) if lines else None
    except ValueError:
        return [], True
    if not isinstance(header, dict) or header.get("codemode_journal") != FORMAT:
        return [], True
    for line in lines[1:]:
        try:
            data = json.loads(line)
            if isinstance(data, dict) and "end" in data:
                failed = bool(data["end"].get("failed", True))
                break
            entries.append(JournalEntry.from_json(data))
        except (ValueError, KeyError, TypeError, AttributeError):
            break  # a torn last line (the host died while writing it) ends the journal
        if len(entries) >= max_entries:
            break
    return entries, failed


@dataclass(slots=True)
class _Group:
    entries: list[JournalEntry]
    used: list[bool] = field(default_factory=list)
    unused: int = 0


@dataclass(slots=True)
class _Hold:
    """A call answered by an entry of a later group, waiting for proof of concurrency."""

    group: int
    """Index of the entry's group: the hold ends when every group before it is used."""
    event: anyio.Event = field(default_factory=anyio.Event)


@final
class Resume:
    """One run's use of a journal: which calls it may replay, and what it records."""

    def __init__(self, journal: Journal, previous: tuple[JournalEntry, ...],
                 registry: str) -> None:
        self._journal = journal
        self._groups: list[_Group] = []
        for entry in previous:
            if self._groups and self._groups[-1].entries[-1].group == entry.group:
                self._groups[-1].entries.append(entry)
            else:
                self._groups.append(_Group([entry]))
        self._index: dict[tuple[str, str], deque[tuple[int, int]]] = {}
        for at, group in enumerate(self._groups):
            group.used = [False] * len(group.entries)
            group.unused = len(group.entries)
            for index, entry in enumerate(group.entries):
                self._index.setdefault((entry.tool, entry.arguments), deque()).append(
                    (at, index))
        self._at = 0
        self._diverged = not self._groups
        self._holds: list[_Hold] = []
        self._burst: int | None = None
        self._seq = 0
        self._live = 0
        self._group = -1
        self._groups_made = 0
        self._replay_groups: dict[int, int] = {}
        self._written = journal._write({"codemode_journal": FORMAT, "registry": registry},
                                       first=True)
        self._recording = True
        self._replayed: list[int] = []

    @property
    def replayed(self) -> tuple[int, ...]:
        """Positions (0-based, start order) of the calls answered from the journal."""
        return tuple(sorted(self._replayed))

    async def start(self, tool: str, digest: str, arguments: str,
                    always_live: bool) -> tuple[int, int, JournalEntry | None]:
        """A call begins: (its position, its group, the entry that answers it or None).

        A call matching an entry past the current group waits here (see the module
        docstring) until calls made meanwhile prove it concurrent, or it runs live."""
        seq = self._seq
        self._seq += 1
        found = self._match(tool, digest, arguments)
        if found is not None:
            at, entry = found
            if not entry.ok:
                self._diverge()
            elif always_live:
                pass  # it keeps its place but runs live
            else:
                group = self._burst
                if at > self._at:
                    group = await self._proven(at)
                    replay = group is not None
                else:
                    replay = True
                if replay:
                    if group is None:
                        group = self._replay_groups.setdefault(entry.group, self._new_group())
                    self._replayed.append(seq)
                    return seq, group, entry
        if self._live == 0:
            self._group = self._new_group()
        self._live += 1
        return seq, self._group, None

    def _new_group(self) -> int:
        self._groups_made += 1
        return self._groups_made - 1

    def _match(self, tool: str, digest: str,
               arguments: str) -> tuple[int, JournalEntry] | None:
        """(group index, entry) of the first unused entry of this call, marked used; None
        (and the replay ends) when there is none within ``AHEAD`` groups or its tool
        changed."""
        if self._diverged:
            return None
        places = self._index.get((tool, arguments))
        while places:
            at, index = places.popleft()
            group = self._groups[at]
            if group.used[index]:
                continue
            if at - self._at > AHEAD:
                break
            entry = group.entries[index]
            if entry.digest != digest:
                break
            group.used[index] = True
            group.unused -= 1
            self._advance()
            return at, entry
        self._diverge()
        return None

    def _advance(self) -> None:
        """Move past used groups; release the holds they proved."""
        groups = self._groups
        while self._at < len(groups) and groups[self._at].unused == 0:
            self._at += 1
        for hold in self._holds:
            if hold.group <= self._at:
                hold.event.set()

    def _diverge(self) -> None:
        self._diverged = True
        for hold in self._holds:
            hold.event.set()

    async def _proven(self, at: int) -> int | None:
        """Hold a call answered by group ``at`` until every earlier group is used by calls
        of this run: the group to record it in, or None when the replay ended or
        ``reorder_wait`` passed first (the call runs live)."""
        hold = _Hold(group=at)
        self._holds.append(hold)
        if self._burst is None:
            self._burst = self._new_group()
        burst = self._burst
        try:
            with anyio.move_on_after(self._journal.reorder_wait):
                await hold.event.wait()
        finally:
            self._holds.remove(hold)
            if not self._holds:
                self._burst = None
        if self._diverged or self._at < at:
            self._diverge()
            return None
        return burst

    def done(self, seq: int, group: int, tool: str, digest: str, arguments: str,
             result: ToolResult, *, live: bool) -> None:
        """A call finished: record it (while the journal's bounds allow)."""
        if live:
            self._live -= 1
        if not self._recording:
            return
        carried = result.meta.get("labels") if result.meta is not None else None
        labels = {k: str(v) for k, v in carried.items() if isinstance(k, str)} \
            if isinstance(carried, dict) else None
        entry = JournalEntry(seq=seq, group=group, tool=tool, digest=digest,
                             arguments=arguments, ok=not result.is_error,
                             content=result.content if not result.is_error else (),
                             structured=result.structured if not result.is_error else None,
                             error=result.error.message if result.error else None,
                             labels=labels or None)
        journal = self._journal
        if len(journal._entries) >= journal.max_entries:
            self._recording = False
            return
        line = {"seq": seq, "group": group, "tool": tool, "digest": digest, "ok": entry.ok,
                "content": list(entry.content), "structured": entry.structured,
                "error": entry.error}  # the arguments are canonical JSON text already
        if entry.labels:
            line["labels"] = entry.labels
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":"), default=str)
        text = f'{text[:-1]},"arguments":{arguments}}}\n'
        size = len(text.encode())
        if self._written + size > journal.max_bytes:
            self._recording = False
            return
        self._written += size
        journal._append(text)
        journal._entries.append(entry)

    def done_cancelled(self) -> None:
        """A live call ended without a result (cancelled): nothing to record."""
        self._live -= 1

    def finish(self, *, failed: bool) -> None:
        """The run ended; the journal is free for the next one."""
        self._journal._write({"end": {"failed": failed}})
        self._journal._finish(failed)
