"""Compat round 24: scripts as models write them for Code Mode hosts (Cloudflare-style
``await tools.x()``, smolagents' ``final_answer``, Monty-style plain scripts): dataclass
options, typing idioms, collections and itertools recipes, the format mini-language,
``re``/``json`` options, exception groups, asyncio patterns, class protocols.

The rows live in ``data/compat24_scripts.toml``; each runs in the sandbox on both
executors and in CPython with the same handlers (:mod:`tests.mode.compat_harness`):
value, printed output and calls per tool equal. The ``refused`` rows are refused before
any call, saying what to write. Found missing or wrong here: ``deque.extendleft``
(appended on the right), ``typing.assert_never``/``NewType``/``assert_type``,
``Box[int]`` of a ``class Box(Generic[T])``, ``ExceptionGroup.split``/``subgroup``,
``__radd__ = __add__`` in a class body, ``dataclass(slots=True)`` (took any attribute),
a protocol's bases checked for CPython's MRO (``class P(Protocol, Impl)`` on 3.11,
``class P(Protocol, P0)`` everywhere), and ``jobs.get(k)`` beside the script's own
tool-calling ``get`` (awaited the coroutine the dict held).
"""

from __future__ import annotations

import pytest

from tests.mode.compat_harness import corpus_test

pytestmark = pytest.mark.anyio

test_compat24_row = corpus_test("compat24")
