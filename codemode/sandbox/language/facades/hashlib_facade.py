"""``hashlib`` for scripts: the common digests, as objects with only the hash API.

A script's hash object is a sandbox object wrapping the real one: it answers
``update``/``digest``/``hexdigest``/``copy``/``name``/``digest_size``/``block_size`` and
nothing else (no class, no ``type()``). Hashing runs in C (without the GIL past 2 KiB)
but takes time per byte, so every input is charged like a scan of that many bytes
before it is hashed. Only fixed-size digests: a SHAKE ``hexdigest(n)`` would allocate
what the script asks.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final, final

from codemode.sandbox.language.builtins import shown_type
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded, refuse
from codemode.sandbox.language.sizes import charge_operations

__all__ = ["FACADE"]

_ALGORITHMS: Final = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256",
                      "sha3_512", "blake2b", "blake2s")
_HASH_BYTES: Final = 16
"""Bytes hashed per operation (SHA-256 ~2 ms per MB, an operation ~50 ns)."""
_MAX_NAME: Final = 40
_READABLE: Final = frozenset({"update", "digest", "hexdigest", "copy", "name", "digest_size",
                              "block_size"})


def _data(data: Any, what: str) -> bytes | bytearray:
    if isinstance(data, str):
        raise TypeError(f"{what}: Strings must be encoded before hashing "
                        "(write text.encode())")
    if type(data) is not bytes and type(data) is not bytearray:
        raise TypeError(f"{what}: object supporting the buffer API required (bytes or "
                        f"bytearray), not {type(data).__name__!r}")
    charge_operations(len(data) // _HASH_BYTES)
    return data


@final
class Hash(SelfGuarded):
    """One running digest (``hashlib.sha256()``'s result in a script)."""

    __slots__ = ("_hash",)

    def __init__(self, real: Any) -> None:
        self._hash = real

    def __repr__(self) -> str:
        return f"<{self._hash.name} hash object>"

    def sandbox_getattr(self, name: str) -> Any:
        if name not in _READABLE:
            raise refuse(self, name)
        if name in ("name", "digest_size", "block_size"):
            return getattr(self._hash, name)
        return getattr(self, name)

    def update(self, data: bytes | bytearray) -> None:
        """Add ``data`` (bytes) to the digest."""
        self._hash.update(_data(data, f"{self._hash.name}.update()"))

    def digest(self) -> bytes:
        """The digest of the data so far, as bytes."""
        return bytes(self._hash.digest())

    def hexdigest(self) -> str:
        """The digest of the data so far, as hex text."""
        return str(self._hash.hexdigest())

    def copy(self) -> Hash:
        """An independent copy of this digest's state."""
        return Hash(self._hash.copy())


def _constructor(algorithm: str) -> Any:
    real = getattr(hashlib, algorithm)
    sized = algorithm.startswith("blake2")

    def new_hash(data: bytes | bytearray = b"", *, usedforsecurity: bool = True,
                 **options: Any) -> Hash:
        if options and not (sized and options.keys() == {"digest_size"}
                            and type(options["digest_size"]) is int):
            raise TypeError(f"hashlib.{algorithm}() takes data and usedforsecurity"
                            f"{' (and an int digest_size)' if sized else ''} in the sandbox")
        return Hash(real(_data(data, f"hashlib.{algorithm}()"),
                         usedforsecurity=bool(usedforsecurity), **options))
    new_hash.__doc__ = f"A {algorithm} hash object, fed ``data`` when given."
    return new_hash


_CONSTRUCTORS: Final = {algorithm: _constructor(algorithm) for algorithm in _ALGORITHMS}


def new(name: str, data: bytes | bytearray = b"", *, usedforsecurity: bool = True) -> Hash:
    """A hash object of the algorithm ``name`` (one of ``algorithms_available``)."""
    known = type(name) is str and len(name) <= _MAX_NAME
    constructor = _CONSTRUCTORS.get(name.lower()) if known else None
    if constructor is None:
        shown = repr(name) if known else "that name"
        raise ValueError(f"unsupported hash type {shown} in the sandbox (available: "
                         f"{', '.join(_ALGORITHMS)})")
    hashed: Hash = constructor(data, usedforsecurity=usedforsecurity)
    return hashed


shown_type(Hash, "_hashlib", "HASH")

FACADE: Final = Facade("hashlib", {
    **_CONSTRUCTORS, "new": new,
    "algorithms_available": frozenset(_ALGORITHMS),
    "algorithms_guaranteed": frozenset(_ALGORITHMS),
})
