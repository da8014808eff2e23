"""Same specs → byte-identical files, whatever the order, process or hash seed."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from sdkgen_support import CORPUS, CORPUS_MISSING, ROOT, SHAPES, batches, load_corpus

import sdk_gen

HERE = Path(__file__).resolve().parent

SCRIPT = """
import hashlib, sys
sys.path[:0] = [{root!r}, {here!r}]
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
def test_identical_bytes_across_processes_and_hash_seeds() -> None:
    if not CORPUS.is_dir():
        pytest.skip(CORPUS_MISSING)
    here = _digest(
        [sdk_gen.generate(SHAPES)] + [sdk_gen.generate(b) for b in batches(load_corpus())]
    )
    code = SCRIPT.format(root=str(ROOT), here=str(HERE))
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == here, f"PYTHONHASHSEED={seed} produced different bytes"
