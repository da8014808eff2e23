"""``base64`` for scripts: Base64 (standard and URL-safe), Base32 and Base16 on bytes.

Each call is sized (its result and the copies the stdlib makes on the way) and charged
by its input before it runs: Base64 and Base16 are C loops, Base32 is a Python loop
over 5-byte groups with no operation ticks (~0.1 s per MB to encode on 3.11, twice that
to decode). ``altchars`` is checked here: the stdlib's own check is an ``assert`` with
the repr of whatever it was given.
"""

from __future__ import annotations

import base64
from typing import Any, Final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.sizes import charge_operations, ensure_size

__all__ = ["FACADE"]

_SCAN_BYTES: Final = 32
"""Bytes a C codec (Base64, hex) handles per operation."""
_B32_ENCODE_STEPS: Final = 2
_B32_DECODE_STEPS: Final = 5
"""Operations per byte of the stdlib's Base32 loops (~50 ns each)."""


def _binary(data: Any, what: str) -> bytes | bytearray:
    if type(data) is not bytes and type(data) is not bytearray:
        raise TypeError(f"base64.{what}() expects bytes or bytearray (a bytes-like object "
                        f"is required, not {type(data).__name__!r}; write text.encode())")
    return data


def _encoded(data: Any, what: str) -> bytes | bytearray | str:
    """Input of a decoder: bytes, or a str of ASCII characters (as the stdlib accepts)."""
    if type(data) is str:
        return data
    if type(data) is not bytes and type(data) is not bytearray:
        raise TypeError(f"base64.{what}() expects bytes or an ASCII str, not "
                        f"{type(data).__name__!r}")
    return data


def _altchars(altchars: Any, what: str) -> bytes | bytearray | str | None:
    if altchars is None:
        return None
    if type(altchars) not in (bytes, bytearray, str) or len(altchars) != 2:
        raise ValueError(f"base64.{what}(): altchars must be 2 bytes")
    return altchars  # type: ignore[no-any-return]


def _charge(size: int, result: int, what: str, per_operation: int = _SCAN_BYTES) -> None:
    ensure_size(result, f"base64.{what}() of {size} bytes")
    charge_operations(size // per_operation)


def b64encode(s: bytes | bytearray, altchars: bytes | None = None) -> bytes:
    """``s`` in Base64 (``altchars``: the two characters that replace ``+`` and ``/``)."""
    data, alt = _binary(s, "b64encode"), _altchars(altchars, "b64encode")
    if isinstance(alt, str):
        raise TypeError("base64.b64encode(): altchars must be bytes")
    _charge(len(data), 2 * (len(data) + 2) // 3 * 4, "b64encode")
    return base64.b64encode(data, alt)


def b64decode(s: bytes | bytearray | str, altchars: bytes | None = None,
              validate: bool = False) -> bytes:
    """The bytes of Base64 text (``validate``: refuse characters outside the alphabet
    instead of skipping them)."""
    data, alt = _encoded(s, "b64decode"), _altchars(altchars, "b64decode")
    _charge(len(data), 3 * len(data), "b64decode")
    return base64.b64decode(data, alt, bool(validate))


def standard_b64encode(s: bytes | bytearray) -> bytes:
    """``b64encode(s)``."""
    return b64encode(s)


def standard_b64decode(s: bytes | bytearray | str) -> bytes:
    """``b64decode(s)``."""
    return b64decode(s)


def urlsafe_b64encode(s: bytes | bytearray) -> bytes:
    """Base64 with ``-`` and ``_`` for ``+`` and ``/`` (safe in URLs and file names)."""
    return b64encode(s, b"-_")


def urlsafe_b64decode(s: bytes | bytearray | str) -> bytes:
    """The bytes of URL-safe Base64 text."""
    return b64decode(s, b"-_")


def b32encode(s: bytes | bytearray) -> bytes:
    """``s`` in Base32."""
    data = _binary(s, "b32encode")
    _charge(len(data), 3 * (len(data) + 4) // 5 * 8, "b32encode")
    charge_operations(len(data) * _B32_ENCODE_STEPS)
    return base64.b32encode(data)


def b32decode(s: bytes | bytearray | str, casefold: bool = False) -> bytes:
    """The bytes of Base32 text (``casefold``: accept lowercase)."""
    data = _encoded(s, "b32decode")
    _charge(len(data), 3 * len(data), "b32decode")
    charge_operations(len(data) * _B32_DECODE_STEPS)
    return base64.b32decode(data, bool(casefold))


def b16encode(s: bytes | bytearray) -> bytes:
    """``s`` in Base16 (uppercase hex)."""
    data = _binary(s, "b16encode")
    _charge(len(data), 4 * len(data), "b16encode")
    return base64.b16encode(data)


def b16decode(s: bytes | bytearray | str, casefold: bool = False) -> bytes:
    """The bytes of Base16 text (``casefold``: accept lowercase)."""
    data = _encoded(s, "b16decode")
    _charge(len(data), 3 * len(data), "b16decode", _SCAN_BYTES // 4)
    return base64.b16decode(data, bool(casefold))


FACADE: Final = Facade("base64", {
    "b64encode": b64encode, "b64decode": b64decode,
    "standard_b64encode": standard_b64encode, "standard_b64decode": standard_b64decode,
    "urlsafe_b64encode": urlsafe_b64encode, "urlsafe_b64decode": urlsafe_b64decode,
    "b32encode": b32encode, "b32decode": b32decode,
    "b16encode": b16encode, "b16decode": b16decode,
})
