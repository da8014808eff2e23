"""``urllib.parse`` for scripts: quoting, query strings and URL splitting on ``str``.

Quoting and the query-string parsers loop in Python per byte or per field with no
operation ticks (``quote`` of 10 MB is a second of one call), so each is sized and
charged from counts taken at C speed before the stdlib runs. ``urlsplit`` (which
``urlparse`` and ``urljoin`` call) and the quoters keep an ``lru_cache`` that outlives
the run, so URLs and ``safe`` sets are bounded: a script's text stays in the host at
most 16 KiB per entry. Text arguments are exactly ``str`` or ``bytes``: the stdlib calls
their methods. Parse results are named tuples of the stdlib's result classes:
``.scheme``/``.netloc``/``.hostname``/``geturl()`` and ``_replace``/``_asdict`` as on any
named tuple, nothing else of the host class.
"""

from __future__ import annotations

import urllib.parse
from typing import TYPE_CHECKING, Any, Final

from codemode.sandbox.language.compare import TEXT_UNIT
from codemode.sandbox.language.facades import Facade
from codemode.sandbox.language.guards import (
    EXTRA_NAMES,
    FACADE_CLASSES,
    NAMED_TUPLES,
    ScriptMeta,
    check_codec,
)
from codemode.sandbox.language.sizes import charge_operations, ensure_size
from codemode.sandbox.language.state import counted

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["FACADE"]

MAX_URL: Final = 16384
"""Longest URL ``urlparse``/``urlsplit``/``urljoin`` take: the stdlib caches 128 splits."""
_MAX_SAFE: Final = 256
"""Longest ``safe`` set (the stdlib caches one quoter per set; ASCII has 128 characters)."""
_MAX_SEPARATOR: Final = 16
_FIELD_STEP: Final = 64
"""Operations per query field ``parse_qsl``/``urlencode`` handle in Python (~3 µs)."""
_ESCAPE_STEP: Final = 8
"""Operations per ``%XX`` escape ``unquote`` decodes in Python (~0.4 µs)."""
_OBJECT: Final = 64
"""Bytes of one small str object and its list slot."""
_NUMBER: Final = 32
"""Characters of ``str()`` of a float, a bool or None, at most."""
_SCALARS: Final = (str, bytes, int, float, bool, type(None))


def _text(value: Any, what: str, name: str = "string") -> str:
    if type(value) is not str:
        raise TypeError(f"urllib.parse.{what}() {name} must be a str, not "
                        f"{type(value).__name__!r}")
    return value


def _codec(encoding: Any, errors: Any) -> tuple[str | None, str | None]:
    """``encoding``/``errors`` through the sandbox's codec allowlist (a lookup of any other
    name imports a codec module)."""
    if encoding is not None or errors is not None:
        check_codec("utf-8" if encoding is None else encoding,
                    "strict" if errors is None else errors)
    return encoding, errors


def _utf8_bound(text: str | bytes) -> int:
    """Bytes ``text`` encodes to, at most (exact for bytes and ASCII)."""
    return len(text) if isinstance(text, bytes) or text.isascii() else 4 * len(text)


def _safe(safe: Any, what: str) -> str | bytes:
    if type(safe) is not str and type(safe) is not bytes:
        raise TypeError(f"urllib.parse.{what}() safe must be a str or bytes")
    if len(safe) > _MAX_SAFE:
        raise ValueError(f"urllib.parse.{what}(): safe is limited to {_MAX_SAFE} characters "
                         "in the sandbox")
    return safe


def _charge_quote(text: str | bytes, what: str) -> None:
    """Size the list of per-byte pieces and the ``%XX`` text, and charge the Python loop
    over the bytes, before quoting."""
    size = _utf8_bound(text)
    ensure_size(11 * size, f"urllib.parse.{what}() of {len(text)} characters")
    charge_operations(size)


def _quoted(real: Callable[..., str], what: str, string: Any, safe: Any, encoding: Any,
            errors: Any) -> str:
    if type(string) is not str and type(string) is not bytes:
        raise TypeError(f"urllib.parse.{what}() expects a str or bytes, not "
                        f"{type(string).__name__!r}")
    safe = _safe(safe, what)
    encoding, errors = _codec(encoding, errors)
    _charge_quote(string, what)
    return real(string, safe, encoding, errors)


def quote(string: str | bytes, safe: str | bytes = "/", encoding: str | None = None,
          errors: str | None = None) -> str:
    """``string`` with every byte outside the unreserved set and ``safe`` as ``%XX``."""
    return _quoted(urllib.parse.quote, "quote", string, safe, encoding, errors)


def quote_plus(string: str | bytes, safe: str | bytes = "", encoding: str | None = None,
               errors: str | None = None) -> str:
    """``quote`` for a query-string value: spaces become ``+``."""
    return _quoted(urllib.parse.quote_plus, "quote_plus", string, safe, encoding, errors)


def _charge_unquote(string: str, what: str) -> None:
    """The stdlib splits the text at every ``%`` (a small object each) and decodes the
    pieces in a Python loop."""
    escapes = string.count("%")
    ensure_size(2 * len(string) + escapes * _OBJECT,
                f"urllib.parse.{what}() of {len(string)} characters")
    charge_operations(escapes * _ESCAPE_STEP + len(string) // TEXT_UNIT)


def unquote(string: str, encoding: str = "utf-8", errors: str = "replace") -> str:
    """``string`` with its ``%XX`` escapes decoded."""
    _charge_unquote(_text(string, "unquote"), "unquote")
    check_codec(encoding, errors)
    return urllib.parse.unquote(string, encoding, errors)


def unquote_plus(string: str, encoding: str = "utf-8", errors: str = "replace") -> str:
    """``unquote`` for a query-string value: ``+`` becomes a space."""
    _charge_unquote(_text(string, "unquote_plus"), "unquote_plus")
    check_codec(encoding, errors)
    return urllib.parse.unquote_plus(string, encoding, errors)


_QUOTERS: Final = {quote: urllib.parse.quote, quote_plus: urllib.parse.quote_plus}


def _query_pairs(query: Any, doseq: bool) -> list[tuple[Any, Any]]:
    """The pairs of a dict or a sequence of pairs, checked: keys and values plain scalars
    (``str()`` of anything else is a repr nobody meant, or the script's own code), lists
    only with ``doseq`` (copied: the stdlib walks them after the check)."""
    items = query.items() if isinstance(query, dict) else query
    if isinstance(query, str | bytes) or not hasattr(items, "__iter__"):
        raise TypeError("urllib.parse.urlencode() expects a dict or a sequence of pairs")
    pairs: list[tuple[Any, Any]] = []
    for pair in counted(items):
        if not (type(pair) in (tuple, list) and len(pair) == 2):
            raise TypeError("urllib.parse.urlencode() expects a dict or a sequence of "
                            "(key, value) pairs")
        key, value = pair
        values = value if doseq and type(value) in (list, tuple) else (value,)
        for item in (key, *values):
            if type(item) not in _SCALARS:
                hint = "" if doseq else " (pass doseq=True to repeat the key for a list)"
                raise TypeError(f"urllib.parse.urlencode() takes str, bytes, int, float, "
                                f"bool or None keys and values, not "
                                f"{type(item).__name__!r}{hint}")
        pairs.append((key, tuple(values) if values is value else value))
    return pairs


def urlencode(query: Any, doseq: bool = False, safe: str | bytes = "",
              encoding: str | None = None, errors: str | None = None,
              quote_via: Any = quote_plus) -> str:
    """A query string ``k=v&k2=v2`` from a dict or a sequence of pairs (values quoted
    with ``quote_via``: this module's ``quote_plus`` or ``quote``)."""
    real_quote = _QUOTERS.get(quote_via)
    if real_quote is None:
        raise TypeError("urllib.parse.urlencode(): quote_via must be urllib.parse.quote_plus "
                        "or urllib.parse.quote in the sandbox")
    safe = _safe(safe, "urlencode")
    encoding, errors = _codec(encoding, errors)
    pairs = _query_pairs(query, bool(doseq))
    size = fields = largest = 0
    for key, value in pairs:
        for item in ((key, *value) if type(value) is tuple else (key, value)):
            fields += 1
            length = (_utf8_bound(item) if isinstance(item, str | bytes) else
                      item.bit_length() // 3 + 2 if type(item) is int else _NUMBER)
            size += length
            largest = max(largest, length)
    # each value is quoted through a list of its bytes; the text is the pieces, joined
    ensure_size(3 * size + fields * _OBJECT + 8 * largest,
                f"urllib.parse.urlencode() of {fields} fields")
    charge_operations(size + fields * _FIELD_STEP)
    return urllib.parse.urlencode(pairs, bool(doseq), safe, encoding, errors, real_quote)


def _charge_query(qs: Any, separator: Any, max_num_fields: Any, what: str) -> None:
    _text(qs, what, "qs")
    if type(separator) is not str or not 0 < len(separator) <= _MAX_SEPARATOR:
        raise ValueError(f"urllib.parse.{what}(): separator must be a non-empty str of at "
                         f"most {_MAX_SEPARATOR} characters")
    if max_num_fields is not None and type(max_num_fields) is not int:
        raise TypeError(f"urllib.parse.{what}(): max_num_fields must be an int or None")
    fields = qs.count(separator) + 1
    ensure_size(2 * len(qs) + fields * 4 * _OBJECT, f"urllib.parse.{what}() of {fields} fields")
    charge_operations(fields * _FIELD_STEP + qs.count("%") * _ESCAPE_STEP
                      + len(qs) // TEXT_UNIT)


def parse_qsl(qs: str, keep_blank_values: bool = False, strict_parsing: bool = False,
              encoding: str = "utf-8", errors: str = "replace", max_num_fields: int | None = None,
              separator: str = "&") -> list[tuple[str, str]]:
    """The ``(key, value)`` pairs of a query string, decoded."""
    _charge_query(qs, separator, max_num_fields, "parse_qsl")
    check_codec(encoding, errors)
    return urllib.parse.parse_qsl(qs, bool(keep_blank_values), bool(strict_parsing), encoding,
                                  errors, max_num_fields, separator)


def parse_qs(qs: str, keep_blank_values: bool = False, strict_parsing: bool = False,
             encoding: str = "utf-8", errors: str = "replace", max_num_fields: int | None = None,
             separator: str = "&") -> dict[str, list[str]]:
    """A query string as ``{key: [values]}``, decoded."""
    _charge_query(qs, separator, max_num_fields, "parse_qs")
    check_codec(encoding, errors)
    return urllib.parse.parse_qs(qs, bool(keep_blank_values), bool(strict_parsing), encoding,
                                 errors, max_num_fields, separator)


def _result_class(real: type) -> type:
    """A script-visible subclass of the stdlib's result class ``real``: its fields, the
    named tuple API (``_replace`` builds this class again), and ``geturl()`` and
    ``hostname``/``port``/``username``/``password`` read from a plain ``real`` of the
    fields once they are checked (strings, sized: ``geturl`` joins them, and a script's
    subclass may override the field properties the stdlib's code reads). Shared by every
    run, never writable."""
    base = real.__bases__[0]  # the namedtuple the stdlib's class extends
    NAMED_TUPLES.add(base)

    def plain(self: Any) -> Any:
        if not isinstance(self, cls):
            raise TypeError(f"this applies only to {real.__name__} objects")
        parts = tuple.__iter__(self)  # the items themselves: no script method runs
        fields = list(parts)
        if not all(type(part) is str for part in fields):
            raise TypeError(f"{real.__name__} fields must be strings")
        ensure_size(sum(map(len, fields)), f"{real.__name__}.geturl()")
        return real(*fields)

    def geturl(self: Any) -> str:
        """The URL these parts make."""
        return str(plain(self).geturl())

    def read(name: str) -> property:
        return property(lambda self: getattr(plain(self), name))

    fields: tuple[str, ...] = base._fields  # type: ignore[attr-defined]
    names = frozenset(fields) | {"count", "index"}
    namespace = {"__slots__": (), EXTRA_NAMES: names, "geturl": geturl,
                 **{name: read(name) for name in ("hostname", "port", "username",
                                                  "password")}}
    cls = type.__new__(ScriptMeta, real.__name__, (real,), namespace)
    FACADE_CLASSES.add(cls)
    return cls


ParseResult: Final = _result_class(urllib.parse.ParseResult)
SplitResult: Final = _result_class(urllib.parse.SplitResult)


def _url(value: Any, what: str, name: str = "url") -> str:
    url = _text(value, what, name)
    if len(url) > MAX_URL:
        raise ValueError(f"urllib.parse.{what}(): URLs are limited to {MAX_URL} characters "
                         "in the sandbox")
    charge_operations(len(url) // TEXT_UNIT)
    return url


def urlparse(url: str, scheme: str = "", allow_fragments: bool = True) -> Any:
    """``(scheme, netloc, path, params, query, fragment)`` of a URL."""
    parts = urllib.parse.urlparse(_url(url, "urlparse"), _url(scheme, "urlparse", "scheme"),
                                  bool(allow_fragments))
    return ParseResult(*parts)


def urlsplit(url: str, scheme: str = "", allow_fragments: bool = True) -> Any:
    """``(scheme, netloc, path, query, fragment)`` of a URL."""
    parts = urllib.parse.urlsplit(_url(url, "urlsplit"), _url(scheme, "urlsplit", "scheme"),
                                  bool(allow_fragments))
    return SplitResult(*parts)


def _parts(components: Any, count: int, what: str) -> tuple[str, ...]:
    if not (isinstance(components, tuple | list) and len(components) == count
            and all(type(part) is str for part in components)):
        raise TypeError(f"urllib.parse.{what}() expects {count} strings (a parse result "
                        "or a tuple)")
    ensure_size(sum(map(len, components)), f"urllib.parse.{what}()")
    return tuple(components)


def urlunparse(components: Any) -> str:
    """The URL of ``(scheme, netloc, path, params, query, fragment)``."""
    return urllib.parse.urlunparse(_parts(components, 6, "urlunparse"))


def urlunsplit(components: Any) -> str:
    """The URL of ``(scheme, netloc, path, query, fragment)``."""
    return urllib.parse.urlunsplit(_parts(components, 5, "urlunsplit"))


def urljoin(base: str, url: str, allow_fragments: bool = True) -> str:
    """``url`` resolved against ``base`` (a relative link on a page): the stdlib resolves
    the path in a Python loop over its segments."""
    base, url = _url(base, "urljoin", "base"), _url(url, "urljoin")
    charge_operations(base.count("/") + url.count("/"))
    return urllib.parse.urljoin(base, url, bool(allow_fragments))


FACADE: Final = Facade("urllib.parse", {
    "quote": quote, "quote_plus": quote_plus, "unquote": unquote,
    "unquote_plus": unquote_plus, "urlencode": urlencode, "parse_qs": parse_qs,
    "parse_qsl": parse_qsl, "urlparse": urlparse, "urlsplit": urlsplit,
    "urlunparse": urlunparse, "urlunsplit": urlunsplit, "urljoin": urljoin,
    "ParseResult": ParseResult, "SplitResult": SplitResult,
})
