"""Compat round 26: scripts as models write them for Code Mode hosts (Cloudflare-style
``await tools.x()``, smolagents' ``final_answer``, Monty-style plain scripts): data munging
over tool results (itertools, collections, statistics, decimal, fractions, datetime, re,
json, textwrap), asyncio (TaskGroup, semaphores, queues, ``wait_for``, ``as_completed``),
class protocols (ordering, sequences, context managers, ``__format__``, callables),
dataclasses, enums, NamedTuple/TypedDict annotations, pattern matching, generators,
error handling and print-heavy reports.

The rows live in ``data/compat26_scripts.toml``; each runs in the sandbox on both
executors and in CPython with the same handlers (:mod:`tests.mode.compat_harness`):
value, printed output and calls per tool equal. The ``refused`` rows are refused before
any call, saying what to write. Found missing or wrong here: ``hasattr(Cls, slot)`` of a
class with ``__slots__`` (False; CPython's member descriptor), a logged exception's
``add_note`` notes (not printed), a name read only where a constant test never goes
(``x if False else y``, ``if False:``; refused as unbound), ``dataclasses.fields(Cls)``
of a class whose ``__post_init__`` calls tools (refused as if it built one), and refusals
of ``cls.__mro__``, ``asyncio.shield`` and ``string.Formatter`` that did not say what to
write instead.
"""

from __future__ import annotations

import pytest

from tests.mode.compat_harness import corpus_test

pytestmark = pytest.mark.anyio

test_compat26_row = corpus_test("compat26")
