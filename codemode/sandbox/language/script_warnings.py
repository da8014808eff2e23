"""Warnings a script causes are the model's, never the host's.

CPython warns about script text while parsing and compiling it (an invalid escape,
``x is 1``, a literal called as a function, ``~True`` folded as a constant: attributed to
the file ``<script>`` or to the frame that converts it), about what script frames run
(``~flag``: the module ``__script__``) and about what a facade is asked to do (3.11's
``random.randrange(1.0)``: the facade's module). Through the host's filters they printed
on its stderr on every run (a host with ``-W always``: 14,000 ``is`` comparisons wrote
1 MB and cost ~1 s) or became errors (``-W error``). :func:`silence` puts one ``ignore``
filter first for exactly those modules. A filter, not ``catch_warnings``: that swaps the
process-wide list and is not thread-safe (the in-process executor compiles and runs on its
script threads while the host's thread warns).

A host's own filter set later (``warnings.simplefilter("error")`` after importing
codemode) goes first and outranked this one: so every parse, compile and run puts it
first again, at the cost of a comparison when it still is. The host's filters keep their
order between them, and none matches a warning of the host's own code differently.
"""

from __future__ import annotations

import re
import warnings
from typing import Final

from codemode.sandbox.language.meter import SCRIPT_FILENAME, SCRIPT_MODULE

__all__ = ["silence"]

_MODULES: Final = "|".join((
    re.escape(SCRIPT_FILENAME) + r"\Z",
    re.escape(SCRIPT_MODULE) + r"\Z",
    r"codemode\.sandbox\.language\.parsing\Z",
    r"codemode\.sandbox\.language\.facades\.",
))
"""Where a warning a script caused is attributed (``module`` of a filter: a match at the
start of the module name, or the file name without ``.py``)."""


_FIRST: Final[list[tuple[object, ...]]] = []
"""The filter as ``warnings`` keeps it, once made."""


def silence() -> None:
    """Put the filter first, unless it is (an identical filter is moved, not repeated:
    moving it resets the registries of warnings ``default`` shows once)."""
    filters = warnings.filters
    if _FIRST and filters and filters[0] == _FIRST[0]:
        return
    warnings.filterwarnings("ignore", module=_MODULES)
    if not _FIRST:
        _FIRST.append(warnings.filters[0])
