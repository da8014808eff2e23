"""Suite-wide settings: async tests run on asyncio (the backend codemode ships for), the
helper modules next to this file are importable, and the longest tests run first."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# Tests run with --import-mode=importlib: make the suite's helper modules (tool_corpus)
# importable from every folder.
sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: three workers for every two CPUs. Many tests wait on other processes
    (servers, CLIs, pool workers), so one worker per CPU left ~18 % of the CPUs idle: the
    whole suite on 3.12, 2 idle CPUs, 6m09 with two workers and 5m48 with three (all
    passed in both)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, (cpus or 1) * 3 // 2)


LONG_TESTS_FIRST = (
    "tests/sdk_gen/test_corpus.py",  # with test_determinism: both build the corpus SDKs
    "tests/sdk_gen/test_generate_properties.py",
    "tests/sdk_gen/test_live_servers_more.py",
    "tests/sdk_gen/test_live_servers_extra.py",
    "tests/sdk_gen/test_mcp_servers.py",
    "tests/sdk_gen/test_determinism.py",
    "tests/test_docs.py",
    "tests/test_packaging.py",
    "tests/dispatch/test_schema_metaschema.py",  # jsonschema's own check of 4,600 schemas
    "tests/dispatch/test_schema_differential.py",
    "tests/integrations/test_corpus_end_to_end.py",
)
"""Modules holding single tests of 5-30 s (mypy, live servers, doc programs) that would
otherwise come last in the collection order. xdist hands the last tests out in small chunks,
so one long test there keeps one worker busy while the other idles; run first, they overlap
with the many short tests instead."""


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Move :data:`LONG_TESTS_FIRST` to the front, whole modules, in collection order (a stable
    sort: pytest's grouping by fixture scope inside each module is kept)."""
    items.sort(key=lambda item: item.nodeid.split("::", 1)[0] not in LONG_TESTS_FIRST)
