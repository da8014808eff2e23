"""``urllib`` for scripts: the package of ``import urllib.parse``, holding ``parse`` only
(``urllib.request`` and the rest reach the network: scripts have the tools for that)."""

from __future__ import annotations

from typing import Final

from codemode.sandbox.language.facades import Facade, facade

__all__ = ["FACADE"]

FACADE: Final = Facade("urllib", {"parse": facade("urllib.parse")})
