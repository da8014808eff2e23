"""What a host adds to one run besides the script: inputs, names, argument orders.

Executors pass a script's source on as opaque text, so the prelude travels as
the source's first line (``#codemode:prelude <json>``); :func:`detach` splits
it off before compiling, so the script's own lines keep their numbers. The
prelude only ever holds JSON data and names: it cannot give a script anything
a script could not build itself (inputs are plain values, ``modules`` are the
facades an ``import`` would give, ``names`` are more spellings of the same
``tools`` functions, ``orders`` map positional arguments to their keyword names
before the arguments cross to the host).

A script handed to an executor directly may carry a prelude line of its own (the model
wrote it; CodeMode keeps such a line a comment): so the line is decoded only inside the
run, by :func:`parse` with the run's sized ``json.loads``, never where a host reads the
body (:func:`split`). A forged 9 MB line of ``[]`` was decoded uncharged on the host's
loop (the pool) or with the GIL held (in-process: a 0.7 s stall) and bound 3 million
lists past the script length cap and the run's memory.
"""

from __future__ import annotations

import json
import keyword
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from codemode.jsontext import compact_encoder

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

__all__ = ["PRELUDE_MARK", "Prelude", "attach", "detach", "parse", "split"]

PRELUDE_MARK: Final = "#codemode:prelude "


def _script_name(name: object) -> bool:
    return (isinstance(name, str) and name.isidentifier() and not name.startswith("_")
            and not keyword.iskeyword(name))


@dataclass(frozen=True, kw_only=True, slots=True)
class Prelude:
    """Globals and call conventions of one run (see the module docstring)."""

    inputs: Mapping[str, Any] = field(default_factory=dict)
    """Host inputs, bound as globals (JSON values)."""
    modules: tuple[str, ...] = ()
    """Sandbox modules bound as globals without an ``import`` (facade names)."""
    names: Mapping[str, str] = field(default_factory=dict)
    """Bare global → tool path or namespace prefix (``search`` → ``search``, ``gdrive``)."""
    orders: Mapping[str, Sequence[str] | None] = field(default_factory=dict)
    """Tool path → parameter names positional arguments fill, in order; None: the
    parameters have no clear order (keyword arguments or one dict of them only)."""
    dialects: bool = True
    """The dialects' runtime part: ``final_answer``, ``tools.x_sync``, positional
    arguments (False: only ``inputs`` and ``modules`` apply)."""
    texts: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Tool path → (its name, its description): what a LangChain tool's ``.name`` and
    ``.description`` read (the SDK in the prompt shows the same text)."""

    def to_json(self) -> dict[str, Any]:
        return {"inputs": dict(self.inputs), "modules": list(self.modules),
                "names": dict(self.names),
                "orders": {k: None if v is None else list(v) for k, v in self.orders.items()},
                "dialects": self.dialects,
                "texts": {k: list(v) for k, v in self.texts.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any],
                  each: Callable[[Iterable[Any]], Iterable[Any]] = iter) -> Prelude:
        """The prelude from its JSON; names a script could not spell are dropped, and so is
        an entry of the wrong type (not turned into text: a forged line's order given as
        one text of 16 million characters took seconds to split into a tuple, uncharged,
        and its run 'did not stop in time'). ``each`` walks every entry and every name of an
        order: in a run, charged one operation an item (a forged line of a million inputs
        or orders was checked entry by entry, ~1 s with the run's clock never read)."""
        inputs = data.get("inputs") or {}
        names = data.get("names") or {}
        orders = data.get("orders") or {}
        texts = data.get("texts") or {}
        return cls(
            inputs={k: v for k, v in each(inputs.items()) if _script_name(k)},
            modules=tuple(m for m in each(data.get("modules") or ()) if _script_name(m)),
            names={k: v for k, v in each(names.items()) if _script_name(k) and type(v) is str},
            orders={k: None if v is None else tuple(v) for k, v in each(orders.items())
                    if v is None or (type(v) is list and all(type(n) is str for n in each(v)))},
            dialects=data.get("dialects", True) is not False,
            texts={k: (v[0], v[1]) for k, v in each(texts.items()) if type(v) is list
                   and len(v) == 2 and type(v[0]) is str and type(v[1]) is str},
        )


_ENCODE: Final = compact_encoder(ascii=True, allow_nan=True)
"""``json.dumps(..., separators=(",", ":"))``'s text with its C encoder built once (every
new script's source gets a prelude line)."""


def attach(source: str, prelude: Prelude) -> str:
    """``source`` with ``prelude`` as its first line."""
    text = _ENCODE(prelude.to_json())
    return f"{PRELUDE_MARK}{text}\n{source}"


def split(source: str) -> tuple[str | None, str]:
    """``(the prelude line's JSON text or None, the script)``; nothing is decoded."""
    if not source.startswith(PRELUDE_MARK):
        return None, source
    head, _, rest = source.partition("\n")
    return head[len(PRELUDE_MARK):], rest


def parse(text: str | None, loads: Callable[[str], Any] = json.loads,
          each: Callable[[Iterable[Any]], Iterable[Any]] = iter) -> Prelude | None:
    """The prelude of :func:`split`'s JSON text (None when there is none or it is not
    valid); ``loads`` may raise what refuses its size, ``each`` what charges its entries
    (see :meth:`Prelude.from_json`)."""
    if text is None:
        return None
    try:
        data = loads(text)
        if not isinstance(data, dict):
            return None
        return Prelude.from_json(data, each)
    except (ValueError, TypeError, AttributeError, RecursionError):  # deeply nested JSON
        return None


def detach(source: str) -> tuple[Prelude | None, str]:
    """Split the prelude line off ``source`` and decode it (see the module docstring for
    where not to)."""
    text, rest = split(source)
    return parse(text), rest
