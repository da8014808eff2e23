"""What every ``codemode`` subcommand parses the same way: usage errors, seconds, version.

A usage error is one line on stderr and exit 2 (argparse would print the usage block
first); ``--timeout`` takes positive seconds only (``0`` used to mean "no limit" silently).
"""

from __future__ import annotations

import argparse
import math
from importlib import metadata
from typing import NoReturn

__all__ = ["EXIT_USAGE", "Parser", "positive_seconds", "version"]

EXIT_USAGE = 2
"""Exit code of a usage error (bad arguments, an unreadable script)."""


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line, with where to read more."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def positive_seconds(text: str) -> float:
    """``--timeout`` values: a finite number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, got {text}")
    return value


def version() -> str:
    """The installed distribution's version (``codemode --version``)."""
    try:
        return metadata.version("codemode")
    except metadata.PackageNotFoundError:  # running from a checkout that was never installed
        return "0+unknown"
