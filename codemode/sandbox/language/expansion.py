"""Charge ``**mapping`` expansions (``f(**d)``, ``{**d}``) by their size before C copies them.

CPython copies every key of a dict expanded with ``**`` in C, with no operation tick: a
loop of 2,000 ``f(**d)`` calls with a 20,000-key ``d`` spent ~3 s of CPU (``dict(**d)``
9 s, a script class's constructor 7 s) on 24,000 operations. So a dict is charged one
operation a key. Any other mapping is read by C through its ``keys()`` and one
``__getitem__`` call a key, which ticks (a script function on entry, a host function a
script made the method through ``ScriptMeta``). ``*items`` needs nothing here: the policy
draws its items through the budget (``visit_Starred``).
"""

from __future__ import annotations

from typing import Any, Final

from codemode.sandbox.language.compare import charge_collisions, drawn_mapping
from codemode.sandbox.language.policy import FREE_KEYS
from codemode.sandbox.language.sizes import charge_operations

__all__ = ["GUARDS"]

def _charge_table(mapping: Any) -> None:
    if isinstance(mapping, dict):
        size = dict.__len__(mapping)  # C copies the table whatever ``len()`` says
        if size > FREE_KEYS:
            charge_operations(size)


def keyword_mapping(mapping: Any) -> Any:
    """``_kwargs_``: the ``**mapping`` of a call."""
    if type(mapping) is dict:
        if len(mapping) > FREE_KEYS:
            charge_operations(len(mapping))
    else:
        _charge_table(mapping)
    return mapping


def merged_mapping(mapping: Any) -> Any:
    """``_merged_``: a ``**mapping`` of a dict display (``{**d, **e}``); keys sharing a hash
    are charged too (each insert compares the key with the others), and a mapping that is
    not a dict is read into one first (:func:`~compare.drawn_mapping`)."""
    if not isinstance(mapping, dict) and hasattr(mapping, "keys"):
        mapping = drawn_mapping(mapping)
    _charge_table(mapping)
    charge_collisions(mapping)
    return mapping


GUARDS: Final = {"_kwargs_": keyword_mapping, "_merged_": merged_mapping}
"""Names the compiled script calls for ``**`` expansions (see the policy)."""
