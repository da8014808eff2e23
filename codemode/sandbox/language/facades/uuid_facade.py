"""``uuid`` for scripts: random (``uuid4``) and name-based (``uuid3``/``uuid5``) UUIDs.

A UUID is a sandbox value holding a real ``uuid.UUID`` (whose class, module and
``__dict__`` stay in the host): ``str``, ``repr``, ``hex``, ``int``, ``bytes``, ``urn``,
``version``, ``variant``, ``==``, ordering and hashing. No ``uuid1``: it embeds the host's
MAC address and clock; ``uuid4()`` is 122 bits from the OS's random source.
"""

from __future__ import annotations

import os
import uuid
from typing import TYPE_CHECKING, Any, Final, final

from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import SelfGuarded, refuse
from codemode.sandbox.language.sizes import charge_operations, ensure_size

if TYPE_CHECKING:
    import builtins

__all__ = ["FACADE", "UUID"]

_MAX_TEXT: Final = 128
"""Longest text ``UUID(...)`` parses (32 hex digits, hyphens, braces, ``urn:uuid:``)."""
_SCAN_BYTES: Final = 32
_READABLE: Final = frozenset({"hex", "int", "bytes", "urn", "version", "variant"})
_INT: Final = int
_BYTES: Final = bytes


@final
class UUID(SelfGuarded):
    """``uuid.UUID(text)``, ``UUID(int=...)`` or ``UUID(bytes=...)``."""

    __slots__ = ("_value",)

    def __init__(self, hex: Any = None, bytes: Any = None, *,
                 int: Any = None, version: Any = None) -> None:
        if [hex, bytes, int].count(None) != 2:
            raise TypeError("one of the hex, bytes or int arguments must be given")
        if hex is not None:
            if type(hex) is not str:
                raise TypeError(f"UUID() takes a str, not {type(hex).__name__!r}")
            if len(hex) > _MAX_TEXT:
                raise ValueError("badly formed hexadecimal UUID string")
        elif bytes is not None and type(bytes) is not _BYTES:
            raise TypeError("bytes must be a bytes object")
        if int is not None and type(int) is not _INT:
            raise TypeError("int must be an int")
        if version is not None and type(version) is not _INT:
            raise TypeError("version must be an int")
        self._value = uuid.UUID(hex=hex, bytes=bytes, int=int, version=version)

    @classmethod
    def _wrap(cls, value: uuid.UUID) -> UUID:
        made = object.__new__(cls)
        made._value = value
        return made

    def __str__(self) -> str:
        return str(self._value)

    def __repr__(self) -> str:
        return f"UUID('{self._value}')"

    def __eq__(self, other: object) -> bool:
        if type(other) is not UUID:
            return NotImplemented
        return self._value == other._value

    def __lt__(self, other: object) -> bool:
        if type(other) is not UUID:
            return NotImplemented
        return self._value < other._value

    def __le__(self, other: object) -> bool:
        if type(other) is not UUID:
            return NotImplemented
        return self._value <= other._value

    def __gt__(self, other: object) -> bool:
        if type(other) is not UUID:
            return NotImplemented
        return self._value > other._value

    def __ge__(self, other: object) -> bool:
        if type(other) is not UUID:
            return NotImplemented
        return self._value >= other._value

    def __hash__(self) -> builtins.int:
        return hash(self._value)

    def __int__(self) -> builtins.int:
        return self._value.int

    def sandbox_getattr(self, name: str) -> Any:
        if name in _READABLE:
            return getattr(self._value, name)
        raise refuse(self, name)


def uuid4() -> UUID:
    """A random UUID."""
    return UUID._wrap(uuid.UUID(bytes=os.urandom(16), version=4))


def _named(namespace: Any, name: Any, what: str) -> str | bytes:
    """``name`` checked and charged (a bytes name: Python 3.12+, as ``uuid`` takes it)."""
    if type(namespace) is not UUID:
        raise TypeError(f"uuid.{what}() takes a UUID namespace (uuid.NAMESPACE_DNS, "
                        f"NAMESPACE_URL …), not {type(namespace).__name__!r}")
    if type(name) is str:
        size = 4 * len(name)
    elif type(name) is bytes:
        size = len(name)
    else:
        raise TypeError(f"uuid.{what}() takes a str or bytes name, not "
                        f"{type(name).__name__!r}")
    ensure_size(3 * size, f"uuid.{what}() of {len(name)} characters")
    charge_operations(size // _SCAN_BYTES)
    return name  # type: ignore[no-any-return]


def uuid5(namespace: UUID, name: str | bytes) -> UUID:
    """The UUID of ``name`` in ``namespace`` (SHA-1 based)."""
    data = _named(namespace, name, "uuid5")
    return UUID._wrap(uuid.uuid5(namespace._value, data))  # type: ignore[arg-type]


def uuid3(namespace: UUID, name: str | bytes) -> UUID:
    """The UUID of ``name`` in ``namespace`` (MD5 based)."""
    data = _named(namespace, name, "uuid3")
    return UUID._wrap(uuid.uuid3(namespace._value, data))  # type: ignore[arg-type]


FACADE: Final = Facade("uuid", {
    "UUID": UUID, "uuid4": uuid4, "uuid5": uuid5, "uuid3": uuid3,
    "NAMESPACE_DNS": UUID._wrap(uuid.NAMESPACE_DNS),
    "NAMESPACE_URL": UUID._wrap(uuid.NAMESPACE_URL),
    "NAMESPACE_OID": UUID._wrap(uuid.NAMESPACE_OID),
    "NAMESPACE_X500": UUID._wrap(uuid.NAMESPACE_X500),
})
