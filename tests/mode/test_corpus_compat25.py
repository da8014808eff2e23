"""Compat round 25: scripts as models write them for Code Mode hosts (Cloudflare-style
``await tools.x()``, smolagents' ``final_answer``, Monty-style plain scripts): asyncio
patterns, collections/itertools/re/json/datetime recipes, dataclasses and typing forms,
class protocols, pattern matching, walrus and comprehension tricks, error handling.

The rows live in ``data/compat25_scripts.toml``; each runs in the sandbox on both
executors and in CPython with the same handlers (:mod:`tests.mode.compat_harness`):
value, printed output and calls per tool equal. The ``refused`` rows are refused before
any call, saying what to write. Found missing or wrong here: a helper reading a dict's
``.get`` held as a dict's value beside the script's own tool-calling ``get`` method (refused
as a tool caller), ``dataclass(frozen=True, slots=True)`` (a new attribute is CPython's
``super()`` TypeError, not FrozenInstanceError), ``functools.partialmethod``, a plain
class's ``__slots__`` (any attribute was taken), "no accessible attribute" for a missing
attribute of the script's own object (CPython: "no attribute"), ``class S(str, Enum)``,
``add_note``/``__notes__``, and ``typing.get_type_hints``/``get_args``/``get_origin`` or a
``partialmethod`` of a method calling tools refused without saying why.
"""

from __future__ import annotations

import pytest

from tests.mode.compat_harness import corpus_test

pytestmark = pytest.mark.anyio

test_compat25_row = corpus_test("compat25")
