"""Journals: a fixed, resubmitted script resumes without repeating side effects.

A journal records every call of a run (tool, canonical arguments, result) as one JSON
line. The next run given the same journal is answered from it while it makes the same
calls in the same places: the recorded sequence is split into groups of calls that
were in flight together (an ``asyncio.gather``), a call matches an unused entry of the
current group (same tool, same canonical arguments, same spec digest) or, looking
ahead, of the calls of the same tool that follow it, and the first call that matches
nothing, and every call after it, runs live. A recorded failure is
never replayed (the fix may have been for it), and ``replay="always_live"`` tools run
live while keeping their place. Each run then rewrites the journal with its own calls.

The file is plain JSONL (no pickle): a header line, one line per call as it finishes,
and an end line saying whether the run failed. It is bounded (entries and bytes: past
either bound recording stops, so the rest of a later run is live), and each entry
carries its tool's spec digest, so a changed tool is never replayed with stale results.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, final

from codemode.dispatch.content import ErrorInfo, ToolResult
from codemode.dispatch.frozen import freeze, thaw

if TYPE_CHECKING:
    from collections.abc import Mapping

    from codemode.dispatch.tool import Tool

__all__ = ["Journal", "JournalEntry", "canonical", "spec_digest"]

FORMAT: Final = 1
"""Version of the file format (the header's ``codemode_journal``)."""


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

    def to_json(self) -> dict[str, Any]:
        """The entry as one JSON object (a line of the file)."""
        return {"seq": self.seq, "group": self.group, "tool": self.tool,
                "digest": self.digest, "ok": self.ok, "arguments": json.loads(self.arguments),
                "content": list(self.content), "structured": self.structured,
                "error": self.error}

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
        return cls(seq=fields["seq"], group=fields["group"], tool=fields["tool"],
                   digest=fields["digest"], ok=fields["ok"],
                   arguments=canonical(data["arguments"]),
                   content=tuple(freeze(block) for block in content),
                   structured=freeze(data.get("structured")),
                   error=error if isinstance(error, str) else None)

    def result(self, call_id: str) -> ToolResult:
        """The recorded result, as the pipeline would have returned it to ``call_id``."""
        return ToolResult(call_id=call_id, name=self.tool, content=self.content,
                          structured=self.structured, is_error=not self.ok,
                          error=None if self.ok else ErrorInfo(kind="handler_error",
                                                               message=self.error or ""))


@final
class Journal:
    """Where a run's calls are recorded, so that the next run of a fixed script resumes.

    ``Journal()`` keeps the last run in memory; ``Journal(path)`` also writes it to a JSONL
    file as it goes (a crashed host leaves the calls made so far) and reads it back, so a
    resume may happen in another process. One run at a time uses a journal.
    """

    def __init__(self, path: str | Path | None = None, *, max_entries: int = 1_000,
                 max_bytes: int = 4_000_000) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("max_entries and max_bytes must be positive")
        self.path = None if path is None else Path(path)
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
        for group in self._groups:
            group.used = [False] * len(group.entries)
        self._at = 0
        self._diverged = not self._groups
        self._seq = 0
        self._live = 0
        self._group = -1
        self._groups_made = 0
        self._replay_groups: dict[int, int] = {}
        self._written = journal._write({"codemode_journal": FORMAT, "registry": registry},
                                       first=True)
        self._recording = True
        self.replayed: list[int] = []
        """Positions (0-based, start order) of the calls answered from the journal."""

    def start(self, tool: str, digest: str, arguments: str,
              always_live: bool) -> tuple[int, int, JournalEntry | None]:
        """A call begins: (its position, its group, the entry that answers it or None)."""
        seq = self._seq
        self._seq += 1
        match = self._match(tool, digest, arguments)
        if match is not None and match.ok and not always_live:
            group = self._replay_groups.setdefault(match.group, self._new_group())
            self.replayed.append(seq)
            return seq, group, match
        if match is not None and not match.ok:
            self._diverged = True
        if self._live == 0:
            self._group = self._new_group()
        self._live += 1
        return seq, self._group, None

    def _new_group(self) -> int:
        self._groups_made += 1
        return self._groups_made - 1

    def _match(self, tool: str, digest: str, arguments: str) -> JournalEntry | None:
        """The unused entry answering this call: in the current group, or further on while
        the entries are calls of the same tool (a gather of fast calls may have been
        recorded one by one, and its calls arrive in any order)."""
        if self._diverged:
            return None
        for at in range(self._at, len(self._groups)):
            group = self._groups[at]
            for index, entry in enumerate(group.entries):
                if group.used[index]:
                    continue
                if at > self._at and entry.tool != tool:
                    self._diverged = True
                    return None
                if entry.tool == tool and entry.arguments == arguments:
                    group.used[index] = True
                    while self._at < len(self._groups) and all(self._groups[self._at].used):
                        self._at += 1
                    self._diverged = self._at >= len(self._groups)
                    if entry.digest != digest:
                        self._diverged = True
                        return None
                    return entry
            if at == self._at and any(entry.tool != tool for entry, used in
                                      zip(group.entries, group.used, strict=True) if not used):
                break  # the group still waits on calls of other tools: no looking ahead
        self._diverged = True
        return None

    def done(self, seq: int, group: int, tool: str, digest: str, arguments: str,
             result: ToolResult, *, live: bool) -> None:
        """A call finished: record it (while the journal's bounds allow)."""
        if live:
            self._live -= 1
        if not self._recording:
            return
        entry = JournalEntry(seq=seq, group=group, tool=tool, digest=digest,
                             arguments=arguments, ok=not result.is_error,
                             content=result.content if not result.is_error else (),
                             structured=result.structured if not result.is_error else None,
                             error=result.error.message if result.error else None)
        journal = self._journal
        if len(journal._entries) >= journal.max_entries:
            self._recording = False
            return
        line = {"seq": seq, "group": group, "tool": tool, "digest": digest, "ok": entry.ok,
                "content": list(entry.content), "structured": entry.structured,
                "error": entry.error}  # the arguments are canonical JSON text already
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
