"""Format fields for scripts: f-string fields, and ``str.format``/``format_map``.

CPython's ``str.format`` resolves ``{0.name}`` and ``{0[key]}`` with a plain ``getattr``,
so a format string is a route to any attribute (``"{0.__class__}"``). Here the same
mini-language runs on :class:`string.Formatter` with the field lookup going through the
attribute guard (the rules of ``x.name`` in code), and every field is rendered as an
f-string field is (:func:`render_field`: width and rendering cost checked, host reprs
scrubbed). The text as a whole is sized before it is joined, and each field costs an
operation. :func:`install` (the runner calls it) lists the two methods for ``str``; until
then the guard refuses them.
"""

from __future__ import annotations

import _string  # type: ignore[import-not-found]  # string.Formatter's C half (no stub)
import string
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.builtins import PLAIN, check_format_spec
from codemode.sandbox.language.guards import ATTRIBUTES, SPECIAL_METHODS, guarded_getattr
from codemode.sandbox.language.render import charge_render, scrub
from codemode.sandbox.language.sizes import charge_operations, check_render, ensure_size
from codemode.sandbox.language.state import counted

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

__all__ = ["install", "render_field"]

_CONVERSIONS: Final[dict[str, Callable[[Any], str]]] = {"s": str, "r": repr, "a": ascii}


def render_field(value: Any, conversion: int, spec: str) -> str:
    """One field: ``value``, converted (``ord('r')`` …, or -1 for none), then formatted."""
    plain = type(value) in PLAIN
    charge_render(value)
    check_render(value, "f-string")
    if conversion == ord("s"):
        value = str(value)
    elif conversion == ord("r"):
        value = repr(value)
    elif conversion == ord("a"):
        value = ascii(value)
    check_format_spec(spec, value)
    charge_render(value)
    text = format(value, spec)
    return text if plain else scrub(text)


class _ScriptFormatter(string.Formatter):
    """``string.Formatter`` with guarded field lookups and sized fields (one per call)."""

    def __init__(self) -> None:
        self.size = 0

    def parse(self, format_string: str) -> Any:
        """CPython's parse, each piece (literal text and the field after it) counted: a
        template of millions of ``{{`` is a Python loop of ``string.Formatter`` that
        charges no field, so it meets the operation limit and the deadline here."""
        return counted(_string.formatter_parser(format_string))

    def get_field(self, field_name: str, args: Sequence[Any],
                  kwargs: Mapping[str, Any]) -> tuple[Any, Any]:
        first, rest = _split_field(field_name)
        value = self.get_value(first, args, kwargs)
        for is_attribute, key in rest:
            value = guarded_getattr(value, key) if is_attribute else value[key]
        return value, first

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        if conversion is None:
            return value
        convert = _CONVERSIONS.get(conversion)
        if convert is None:
            raise ValueError(f"Unknown conversion specifier {conversion}")
        charge_render(value)
        check_render(value, "str.format()")
        text = convert(value)
        return text if type(value) in PLAIN else scrub(text)  # no host address or name

    def format_field(self, value: Any, format_spec: str) -> str:
        charge_operations(1)
        text = render_field(value, -1, format_spec)
        self.size += len(text)
        ensure_size(self.size, "str.format()")
        return text


def _split_field(field_name: str) -> tuple[Any, Any]:
    """CPython's own split of ``0.name[key]``, the one ``string.Formatter`` uses."""
    return _string.formatter_field_name_split(field_name)  # type: ignore[no-any-return]


def _template_format(template: str) -> Callable[..., str]:
    def format(*args: Any, **kwargs: Any) -> str:
        return _ScriptFormatter().vformat(template, args, kwargs)
    return format


def _template_format_map(template: str) -> Callable[[Any], str]:
    def format_map(mapping: Any) -> str:
        return _ScriptFormatter().vformat(template, (), mapping)
    return format_map


def install() -> None:
    """Let scripts call ``str.format`` and ``format_map`` (the guarded ones above)."""
    SPECIAL_METHODS[(str, "format")] = _template_format
    SPECIAL_METHODS[(str, "format_map")] = _template_format_map
    ATTRIBUTES[str] = ATTRIBUTES[str] | {"format", "format_map"}
