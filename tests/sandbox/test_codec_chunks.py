"""UTF-16/32 codecs with an error handler run a chunk at a time (``guards._in_chunks``).

CPython calls the handler once per lone surrogate or bad code unit (~0.3 µs each), so one
C call over ten million of them held the GIL for seconds: an in-process host's event loop
stood still. In chunks, the run ticks between them. The bytes and texts made are the ones a
single call makes, surrogates and byte-order marks split across chunks included.
"""

from __future__ import annotations

import hashlib
import textwrap
from typing import Any

import pytest

from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor
from codemode.sandbox.executors.broker import CallBroker
from codemode.sandbox.language.guards import _CODEC_CHUNK
from codemode.sandbox.limits import Limits
from codemode.sandbox.runtime.runner import run_script
from tests.sandbox.host_ticks import host_ticks

pytestmark = pytest.mark.anyio

PATTERN = "a😀\ud800日\udc00\ud83d\ude00é\x00"
"""After one character, a chunk boundary falls between ``\ud83d`` and ``\ude00``."""
BYTES = b"\x00\x3d\xd8\xdc\xff\x41\xfe\x00\xd8\x3d\x00"
SCRIPT_TEXT = "text = 'x' + pattern * (2 * CHUNK // len(pattern) + 3)\n"
SCRIPT_BYTES = "data = b'=' + pattern * (2 * CHUNK // len(pattern) + 3)\n"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _value(source: str, **inputs: Any) -> Any:
    async def host(name: str, args: dict[str, Any]) -> Any:
        return args

    limits = Limits(timeout=20, operations=10**8, memory=512 * 2**20)
    prelude = "".join(f"{name} = {value!r}\n" for name, value in inputs.items())
    outcome = await run_script(prelude + textwrap.dedent(source),
                               call=CallBroker(host, limits).answer_json, tool_paths=[],
                               limits=limits)
    assert outcome.error is None, outcome.error
    return outcome.value


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf_16_be", "utf-32",
                                      "UTF-32-LE", "utf-8", "ascii", "latin-1"])
@pytest.mark.parametrize("errors", ["ignore", "replace"])
async def test_a_chunked_encode_makes_the_bytes_of_one_call(encoding: str, errors: str) -> None:
    text = "x" + PATTERN * (2 * _CODEC_CHUNK // len(PATTERN) + 3)
    assert text[_CODEC_CHUNK - 1:_CODEC_CHUNK + 1] == "\ud83d\ude00"
    digest = await _value(SCRIPT_TEXT + "import hashlib\n"
                          "hashlib.sha256(text.encode(encoding, errors)).hexdigest()",
                          pattern=PATTERN, CHUNK=_CODEC_CHUNK, encoding=encoding, errors=errors)
    assert digest == hashlib.sha256(text.encode(encoding, errors)).hexdigest()


ASCII_UNITS = b"ab\x00\x00\x00\x00bacdefg"
"""All-ASCII bytes that UTF-32 reads as valid units (``ab\\0\\0``, ``\\0\\0ba``) and bad ones
(four ASCII bytes are a unit past U+10FFFF unless two are NULs): they meet the error
handler, so they go in chunks too."""


@pytest.mark.parametrize(("encoding", "pattern"), [
    *((encoding, BYTES) for encoding in ("utf-16", "utf-16-le", "utf-16-be", "utf-32",
                                         "utf-32-be")),
    *((encoding, ASCII_UNITS) for encoding in ("utf-32", "utf-32-le", "UTF_32_BE"))])
@pytest.mark.parametrize("errors", ["ignore", "replace"])
async def test_a_chunked_decode_makes_the_text_of_one_call(encoding: str, pattern: bytes,
                                                            errors: str) -> None:
    data = b"=" + pattern * (2 * _CODEC_CHUNK // len(pattern) + 3)
    digest = await _value(
        SCRIPT_BYTES + "import hashlib\n"
        "hashlib.sha256(data.decode(encoding, errors).encode('utf-8', 'replace')).hexdigest()",
        pattern=pattern, CHUNK=_CODEC_CHUNK, encoding=encoding, errors=errors)
    expected = data.decode(encoding, errors).encode("utf-8", "replace")
    assert digest == hashlib.sha256(expected).hexdigest()


@pytest.mark.parametrize("kind", ["inprocess", "pool"])
async def test_a_missing_key_of_lone_surrogates_is_reported_without_stalling_the_host(
        kind: str) -> None:
    """The error's message is sized before it is rendered (``sizes.repr_text_size``): by a
    UTF-16 length that held the GIL 4.4 s for this key, in-process the host's own loop."""
    executor = InProcessExecutor() if kind == "inprocess" else WorkerPoolExecutor(size=1)
    async with executor, host_ticks() as ticks:
        result = await executor.run("d = {'a': 1}\nd['\\ud800' * 10_000_000]",
                                    call_tool=_no_tool, limits=Limits(timeout=20))
    assert result.error is not None and result.error.type == "KeyError", result.error
    assert not ticks.starved, ticks  # the rule of test_attacks' STALLERS


async def test_a_confined_worker_encodes_a_long_text_in_chunks() -> None:
    """The chunks go through the codec's incremental encoder, looked up in the registry: a
    confined worker cannot import, so its boot looks every allowed codec up."""
    async with WorkerPoolExecutor(size=1) as pool:
        result = await pool.run(
            "import hashlib\nx = 'a\\ud800' * 100_000\n"
            "[hashlib.sha256(x.encode(c, 'replace')).hexdigest() for c in "
            "('utf-16', 'utf-16-le', 'utf-16-be', 'utf-32', 'utf-32-le', 'utf-32-be')]",
            call_tool=_no_tool, limits=Limits(timeout=20))
    text = "a\ud800" * 100_000
    assert result.error is None, result.error
    assert result.value == [hashlib.sha256(text.encode(c, "replace")).hexdigest() for c in
                            ("utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le",
                             "utf-32-be")]


async def _no_tool(name: str, arguments: dict[str, Any]) -> Any:
    return None


UTF8_BYTES = "a😀日é".encode() + b"\xff\xe6\x97" + b"\xed\xa0\x80"
"""Valid sequences of one to four bytes, a stray byte, a truncated sequence and an encoded
surrogate (invalid in UTF-8): with a prefix of 0-15 bytes a chunk boundary falls inside
each of them."""


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "ascii"])
@pytest.mark.parametrize("errors", ["ignore", "replace"])
@pytest.mark.parametrize("prefix", [3, 12])
async def test_a_chunked_utf8_decode_makes_the_text_of_one_call(
        encoding: str, errors: str, prefix: int) -> None:
    """r46: UTF-8 and ASCII decoding with an error handler go a chunk at a time too (one call
    over 30 MB of bad bytes held the GIL 2.2 s); a sequence split by a chunk boundary
    decodes as in one call, and UTF-8-SIG drops its mark once."""
    data = b"\xef\xbb\xbf" + b"=" * prefix + UTF8_BYTES * (2 * _CODEC_CHUNK // len(UTF8_BYTES))
    digest = await _value(
        "data = mark + b'=' * prefix + pattern * (2 * CHUNK // len(pattern))\nimport hashlib\n"
        "hashlib.sha256(data.decode(encoding, errors).encode('utf-8', 'replace')).hexdigest()",
        mark=b"\xef\xbb\xbf", prefix=prefix, pattern=UTF8_BYTES, CHUNK=_CODEC_CHUNK,
        encoding=encoding, errors=errors)
    expected = data.decode(encoding, errors).encode("utf-8", "replace")
    assert digest == hashlib.sha256(expected).hexdigest()

