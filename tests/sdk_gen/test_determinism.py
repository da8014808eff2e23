"""Same specs → byte-identical files, whatever the order, process or hash seed."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sdkgen_support import ROOT, SHAPES

import sdk_gen

if TYPE_CHECKING:
    from conftest import CorpusSdk

HERE = Path(__file__).resolve().parent

SCRIPT = """
import hashlib, sys
sys.path[:0] = [{root!r}, {here!r}, {tests!r}]
import sdk_gen
from sdkgen_support import SHAPES, batches, load_corpus
sdks = [sdk_gen.generate(SHAPES)] + [sdk_gen.generate(b) for b in batches(load_corpus())]
digest = hashlib.sha256()
for sdk in sdks:
    for name, text in sdk.files.items():
        digest.update(name.encode() + b"\\0" + text.encode() + b"\\0")
print(digest.hexdigest())
"""


def _digest(sdks: list[sdk_gen.GeneratedSDK]) -> str:
    digest = hashlib.sha256()
    for sdk in sdks:
        for name, text in sdk.files.items():
            digest.update(name.encode() + b"\0" + text.encode() + b"\0")
    return digest.hexdigest()


def test_order_of_specs_does_not_matter() -> None:
    shuffled = SHAPES[:]
    random.Random(7).shuffle(shuffled)
    assert sdk_gen.generate(shuffled) == sdk_gen.generate(SHAPES)


@pytest.mark.timeout(300)
def test_identical_bytes_in_another_process_with_another_hash_seed(
    shapes_sdk: sdk_gen.GeneratedSDK, corpus_sdks: list[CorpusSdk]
) -> None:
    here = _digest([shapes_sdk, *(batch.sdk for batch in corpus_sdks)])
    seed = "1" if os.environ.get("PYTHONHASHSEED") != "1" else "2"
    env = {**os.environ, "PYTHONHASHSEED": seed}
    code = SCRIPT.format(root=str(ROOT), here=str(HERE), tests=str(HERE.parent))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == here, f"PYTHONHASHSEED={seed} produced different bytes"
