"""Fixtures shared by the SDK generator tests: the corpus SDKs, generated once per session."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

# Tests run with --import-mode=importlib: make the shared helper module importable.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from sdkgen_support import SHAPES, batches, load_corpus, load_sdk
from tool_corpus import corpus_or_skip

import sdk_gen

if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType


@dataclass(frozen=True)
class CorpusSdk:
    """One batch of corpus tools, its generated SDK and the imported module."""

    tools: list[dict[str, Any]]
    sdk: sdk_gen.GeneratedSDK
    module: ModuleType


@pytest.fixture(scope="session")
def generated_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Directory holding every module and stub generated in this session (mypy runs on it)."""
    return tmp_path_factory.mktemp("generated")


@pytest.fixture(scope="session")
def corpus_sdks(generated_dir: Path) -> list[CorpusSdk]:
    corpus_or_skip()
    out = []
    for index, group in enumerate(batches(load_corpus())):
        sdk = sdk_gen.generate(group)
        module = load_sdk(sdk, generated_dir, f"corpus_{index}")
        out.append(CorpusSdk(tools=group, sdk=sdk, module=module))
    return out


@pytest.fixture(scope="session")
def shapes_sdk() -> sdk_gen.GeneratedSDK:
    return sdk_gen.generate(SHAPES)


@pytest.fixture(scope="session")
def shapes_module(shapes_sdk: sdk_gen.GeneratedSDK, generated_dir: Path) -> ModuleType:
    return load_sdk(shapes_sdk, generated_dir, "shapes")
