"""An exception's ``add_note`` notes as a script reads them (``e.__notes__``) and as a
traceback prints them after its last line (a logged ``exc_info``, the run's error)."""

from __future__ import annotations

from codemode.sandbox.language.render import scrub, scrub_each

__all__ = ["notes_of"]


def notes_of(error: BaseException, limit: int | None = None) -> list[str] | None:
    """The notes ``add_note`` gave ``error`` (it takes text only), each scrubbed as an
    error message is; None when it has none. In a run (no ``limit``) each note is charged
    as it is scrubbed; ``limit``: read only until that many characters, a line break each
    (a traceback shows them after the run, when nothing is charged, and an error raised
    again and again in a loop can gather a million notes)."""
    notes = error.__dict__.get("__notes__") if hasattr(error, "__dict__") else None
    if type(notes) is not list:
        return None
    if limit is None:  # charged per text and by its length (render.scrub_each)
        return [note for note in scrub_each(notes) if type(note) is str]
    found: list[str] = []
    size = 0
    for note in notes:
        if type(note) is not str:
            continue
        if limit is not None and size + len(note) + 1 > limit:
            found.append(scrub(note[:max(limit - size - 1, 0)]) + "…")
            break
        size += len(note) + 1
        found.append(scrub(note))
    return found
