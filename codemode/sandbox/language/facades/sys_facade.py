"""``sys`` for scripts: the output streams, ``exit`` and ``maxsize``, nothing of the host.

``sys.stdout`` and ``sys.stderr`` both write to the run's output (what ``print`` writes),
so ``print(..., file=sys.stderr)`` and ``sys.stdout.write(text)`` keep working; ``exit``
stops the script as the ``exit()`` builtin does (a status other than ``None``/``0`` is
the run's error). No ``argv``, ``path``, ``modules``, ``stdin`` or recursion limit: the
refusal of those says what to write instead.
"""

from __future__ import annotations

import sys
from typing import Final

from codemode.sandbox.language.builtins import STDERR, STDOUT, exit_
from codemode.sandbox.language.facades import Facade

__all__ = ["FACADE"]


def exit(status: object = None, /) -> None:
    """``sys.exit(status)``: stop the script (see ``exit()``)."""
    exit_(status)


FACADE: Final = Facade("sys", {
    "stdout": STDOUT, "stderr": STDERR, "exit": exit, "maxsize": sys.maxsize,
})
