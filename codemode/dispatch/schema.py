"""JSON Schema handling: normalising parameter specs, checking them, validating arguments.

jsonschema defines the semantics and writes the error messages; a compiled
jsonschema-rs validator answers the hot-path question "is this valid?" in
well under a microsecond. Both are built once per tool, at definition time.
A differential test (tests/dispatch/test_schema_differential.py) keeps them in agreement.
"""

from __future__ import annotations

import copy
import functools
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeVar

import jsonschema_rs

from codemode.dispatch.alternatives import explain
from codemode.dispatch.evaluated_keys import evaluated_keys
from codemode.dispatch.frozen import thaw
from codemode.errors import ToolDefinitionError

if TYPE_CHECKING:
    import jsonschema.exceptions
    import jsonschema.protocols

    Reference = jsonschema.protocols.Validator

__all__ = ["MAX_SCHEMA_DEPTH", "PATTERN_TIMEOUT", "ArgumentProblem", "CompiledSchema",
           "argument_problem", "compile_schema", "normalise_parameters"]

MAX_SCHEMA_DEPTH = 200
"""Most levels of objects and arrays in a tool's schema (published schemas use under 20).
Deeper, copying and checking it recurse past Python's limit, and jsonschema-rs reading it
recurses in C (100,000 levels crash the process)."""

_FULL_SCHEMA_KEYS = frozenset(
    {
        "$schema",
        "$ref",
        "$defs",
        "$id",
        "definitions",
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "anyOf",
        "oneOf",
        "allOf",
        "unevaluatedProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
    }
)


def _is_full_schema(spec: Mapping[str, Any]) -> bool:
    """A compact spec maps names to schemas; a parameter named like a schema keyword
    (``properties``, ``required``, ``$ref`` …) therefore needs the full form."""
    if not spec or isinstance(spec.get("type"), (str, list)):
        return True
    return any(key in spec for key in _FULL_SCHEMA_KEYS)


def normalise_parameters(tool: str, spec: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return a full object JSON Schema for ``spec``.

    ``spec`` is a full JSON Schema with an object root, or the compact form
    ``{"path": {"type": "string", "required": True}, "limit": {"type": "integer"}}``
    (properties optional unless ``required: True``; unknown properties refused).
    """
    if spec is None:
        return {"type": "object", "properties": {}, "additionalProperties": False}
    if not isinstance(spec, Mapping):
        raise ToolDefinitionError(
            tool, f"parameters must be a JSON Schema object, got {type(spec).__name__}"
        )
    _check_depth(tool, "parameters", spec)
    if _is_full_schema(spec):
        schema = copy.deepcopy(dict(spec))
        root_type = schema.get("type")
        if root_type is None and "properties" in schema:
            schema["type"] = "object"
        elif root_type != "object" and schema:
            raise ToolDefinitionError(
                tool, f"parameters schema root must have type 'object', got {root_type!r}"
            )
        elif not schema:
            schema = {"type": "object", "properties": {}}
        return schema
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, prop in spec.items():
        if not isinstance(prop, Mapping):
            raise ToolDefinitionError(
                tool,
                f"compact parameter {name!r} must be a schema object, got {type(prop).__name__}",
            )
        prop = dict(prop)
        is_required = prop.pop("required", False)
        if not isinstance(is_required, bool):
            raise ToolDefinitionError(
                tool, f"compact parameter {name!r}: 'required' must be a bool"
            )
        if is_required:
            required.append(name)
        properties[name] = copy.deepcopy(prop)
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


@dataclass(frozen=True, kw_only=True, slots=True)
class ArgumentProblem:
    """One reason arguments are invalid."""

    path: str
    """JSON path of the offending value (``$`` is the arguments object; at most
    ``PROBLEM_TEXT`` characters, like the message: a key may be megabytes long)."""
    message: str
    """jsonschema's message (at most ``PROBLEM_TEXT`` characters of it)."""

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


PROBLEM_TEXT: Final = 400
"""Characters of one problem's message kept: jsonschema quotes the whole offending value
(``'aaa…' is not of type 'integer'`` for a 3 MB string, every key of a 100,000-key
object), and the message reaches the caller, events and logs. A longer one keeps its
start and end (the quoted value's beginning, the keyword's complaint) around a mark."""


def _clipped(message: str) -> str:
    if len(message) <= PROBLEM_TEXT:
        return message
    keep = PROBLEM_TEXT // 2
    return f"{message[:keep]} … [{len(message) - 2 * keep:,} characters] … {message[-keep:]}"


def _json_path(error: jsonschema.exceptions.ValidationError) -> str:
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _jsonschema() -> Any:
    """The jsonschema package, imported on first need (~45 ms of a new process: a schema
    jsonschema-rs checks and validates alone never needs it before a call fails)."""
    import jsonschema
    import jsonschema.exceptions
    import jsonschema.validators

    return jsonschema


@dataclass(frozen=True, kw_only=True, slots=True)
class CompiledSchema:
    """A schema checked once and compiled twice: fast yes/no, then readable errors."""

    schema: Mapping[str, Any]
    """The full JSON Schema."""
    is_valid: Callable[[Any], bool]
    """Hot path: True when the instance is valid."""
    make_reference: Callable[[], Reference] = field(repr=False)
    """Builds the jsonschema validator (the semantic reference, used to explain
    failures) the first time :attr:`reference` is read."""
    backend: str
    """``jsonschema-rs`` or, when it cannot compile the schema, ``jsonschema``."""
    timed: bool = False
    """True when the schema has a ``pattern``: one check may then take up to
    ``PATTERN_BUDGET`` (the dispatch pipeline runs it off the event loop)."""
    made: list[Reference] = field(default_factory=list, repr=False, compare=False)
    """The reference, once made (a frozen value's one mutable cache)."""

    @property
    def reference(self) -> Reference:
        """jsonschema's validator for :attr:`schema`."""
        if not self.made:
            self.made.append(self.make_reference())
        return self.made[0]

    def problems(self, instance: Any) -> list[ArgumentProblem]:
        """Every problem with ``instance``, best match first."""
        errors = _budgeted(lambda value: list(self.reference.iter_errors(value)))(
            thaw(instance))
        if not errors:
            return []
        best = _jsonschema().exceptions.best_match(errors)
        while all(best is not e for e in errors) and best.parent is not None:
            best = best.parent  # best_match descends into a union: explain the union whole
        ordered = [explain(best, self.schema)] + [
            explain(e, self.schema) for e in errors if e is not best]
        return [ArgumentProblem(path=_clipped(_json_path(e)),
                                message=_clipped(message + _left_out(e, self.schema)))
                for e, message in ordered]


def _left_out(error: Any, schema: Mapping[str, Any]) -> str:
    """What to write instead of ``name=None`` for an optional argument that takes no null
    (``after=cursor`` with no cursor yet): the SDK leaves an omitted one out."""
    path = list(error.absolute_path)
    required = schema.get("required")
    if (error.instance is not None or error.validator != "type" or len(path) != 1
            or not isinstance(path[0], str)
            or (isinstance(required, list) and path[0] in required)):
        return ""
    return f" (`{path[0]}` is optional: leave it out rather than pass None)"


PATTERN_TIMEOUT: Final = 0.05
"""Seconds one schema ``pattern`` may take on one string. Python's ``re`` cannot be
stopped and holds the GIL: a tool's ``^(a+)+$`` on 30 of a script's ``a`` and a ``b``
held the host (on any thread) for 40 s. Past this the string is refused as not
matching, and the message says why."""


PATTERN_BUDGET: Final = 0.1
"""Seconds all of one validation's pattern searches may take together (a list of a
thousand slow strings would otherwise cost a thousand timeouts); past it every further
search counts as timed out at once."""


class _SlowPattern(ValueError):
    """A schema pattern took longer than ``PATTERN_TIMEOUT`` on a string."""


class _Budget(threading.local):
    """The deadline of the validation running on this thread (``inf``: none running)."""

    deadline = math.inf


_BUDGET = _Budget()
_R = TypeVar("_R")


def _unbounded(check: Callable[[Any], _R]) -> Callable[[Any], _R]:
    return check


def _budgeted(check: Callable[[Any], _R]) -> Callable[[Any], _R]:
    """``check`` with its pattern searches under one ``PATTERN_BUDGET`` (nested calls share
    the outer one)."""

    def run(instance: Any) -> _R:
        if _BUDGET.deadline != math.inf:
            return check(instance)
        _BUDGET.deadline = time.monotonic() + PATTERN_BUDGET
        try:
            return check(instance)
        finally:
            _BUDGET.deadline = math.inf

    return run


@functools.lru_cache(maxsize=1024)
def _pattern_search(pattern: str) -> Callable[[str], bool]:
    """``re.search(pattern, text) is not None``, by the ``regex`` package in its
    ``re``-compatible mode (V0) with a timeout and the GIL released; ``re`` itself for the
    rare pattern ``regex`` does not take. Raises ``re.error`` as ``re.compile`` does."""
    plain = re.compile(pattern)
    import regex  # type: ignore[import-untyped]

    try:
        timed = regex.compile(pattern, flags=regex.V0)
    except (regex.error, ValueError, TypeError, OverflowError):
        return lambda text: plain.search(text) is not None

    def search(text: str) -> bool:
        left = min(PATTERN_TIMEOUT, _BUDGET.deadline - time.monotonic())
        if left <= 0:
            raise _SlowPattern(pattern)
        try:
            return timed.search(text, timeout=left, concurrent=True) is not None
        except TimeoutError:
            raise _SlowPattern(pattern) from None

    return search


def _pattern_keyword(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
    """jsonschema's ``pattern`` keyword (same message), searched by :func:`_pattern_search`."""
    if not validator.is_type(instance, "string"):
        return
    try:
        found = _pattern_search(patrn)(instance)
    except _SlowPattern:
        yield _jsonschema().exceptions.ValidationError(
            f"{instance!r} took more than {PATTERN_TIMEOUT} s to match {patrn!r}")
        return
    if not found:
        yield _jsonschema().exceptions.ValidationError(f"{instance!r} does not match {patrn!r}")


def _key_matches(pattern: str, key: str) -> bool:
    """``re.search(pattern, key)``, bounded as ``pattern`` is; a search that runs out of
    time raises :class:`_SlowPattern`."""
    return _pattern_search(pattern)(key)


def _slow_key(key: str, pattern: str) -> Any:
    return _jsonschema().exceptions.ValidationError(
        f"{key!r} took more than {PATTERN_TIMEOUT} s to match {pattern!r}")


def _pattern_properties_keyword(validator: Any, patterns: Any, instance: Any,
                                schema: Any) -> Any:
    """jsonschema's ``patternProperties`` keyword, its key searches bounded in time: it
    searched a script's keys with Python's ``re``, on the host (a tool's ``^(a+)+$`` on
    24 ``a`` and a ``b`` held the loop for 1.4 s; 30, for over a minute)."""
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            try:
                found = _key_matches(pattern, key)
            except _SlowPattern:
                yield _slow_key(key, pattern)
                continue
            if found:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties_keyword(validator: Any, additional: Any, instance: Any,
                                   schema: Any) -> Any:
    """jsonschema's ``additionalProperties`` keyword (same messages), its searches of the
    sibling ``patternProperties`` bounded in time as in
    :func:`_pattern_properties_keyword`."""
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras: set[str] = set()
    for key in instance:
        if key in properties:
            continue
        try:
            if any(_key_matches(pattern, key) for pattern in patterns):
                continue
        except _SlowPattern:
            yield _slow_key(key, "|".join(patterns))
            return
        extras.add(key)
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        error = _jsonschema().exceptions.ValidationError
        if patterns:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            listed = ", ".join(repr(each) for each in sorted(patterns))
            yield error(f"{joined} {verb} not match any of the regexes: {listed}")
        else:
            unexpected = sorted(extras, key=str)
            listed = ", ".join(repr(extra) for extra in unexpected)
            verb = "was" if len(unexpected) == 1 else "were"
            yield error(f"Additional properties are not allowed ({listed} {verb} unexpected)")


class _SlowKey(ValueError):
    """A key's search of ``pattern`` ran out of time while evaluated keys were found."""

    def __init__(self, key: str, pattern: str) -> None:
        super().__init__(key, pattern)
        self.key, self.pattern = key, pattern


def _bounded_key_matches(pattern: str, key: str) -> bool:
    try:
        return _key_matches(pattern, key)
    except _SlowPattern:
        raise _SlowKey(key, pattern) from None


def _unevaluated_keyword(legacy: bool) -> Any:
    """jsonschema's ``unevaluatedProperties`` keyword (same messages; ``legacy``: draft
    2019-09's), its evaluated keys found by :func:`evaluated_keys` with bounded searches."""

    def keyword(validator: Any, unevaluated: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        try:
            evaluated = evaluated_keys(validator, instance, schema,
                                       matches=_bounded_key_matches, legacy=legacy)
        except _SlowKey as exc:
            yield _slow_key(exc.key, exc.pattern)
            return
        left = [key for key in instance if key not in evaluated and not _is_valid_under(
            validator.descend(instance[key], unevaluated, path=key, schema_path=key))]
        if not left:
            return
        listed = sorted(left, key=str) if unevaluated is False else left
        joined = ", ".join(repr(key) for key in listed)
        verb = "was" if len(listed) == 1 else "were"
        error = _jsonschema().exceptions.ValidationError
        if unevaluated is False:
            yield error(f"Unevaluated properties are not allowed ({joined} {verb} unexpected)")
        else:
            yield error("Unevaluated properties are not valid under the given schema "
                        f"({joined} {verb} unevaluated and invalid)")

    return keyword


def _is_valid_under(errors: Any) -> bool:
    return next(errors, None) is None


_TIMED: dict[type[Any], type[Any]] = {}


def _timed_class(cls: type[Reference]) -> type[Reference]:
    """``cls`` with its ``pattern`` keyword and its searches of ``patternProperties`` bounded
    in time (:data:`PATTERN_TIMEOUT`), and its ``multipleOf`` and ``uniqueItems`` made safe
    for any value (:func:`_is_multiple`, :func:`_unique_items_keyword`). jsonschema's
    ``unevaluatedProperties``, where the draft has it, finds its evaluated keys with the
    same bounded searches (:func:`_unevaluated_keyword`)."""
    timed = _TIMED.get(cls)
    if timed is None:
        keywords = {
            "pattern": _pattern_keyword, "multipleOf": _multiple_of_keyword,
            "uniqueItems": _unique_items_keyword,
            "patternProperties": _pattern_properties_keyword,
            "additionalProperties": _additional_properties_keyword}
        if "unevaluatedProperties" in cls.VALIDATORS:
            legacy = "$recursiveRef" in cls.VALIDATORS
            keywords["unevaluatedProperties"] = _unevaluated_keyword(legacy)
        timed = _jsonschema().validators.extend(cls, keywords)
        _TIMED[cls] = timed
    return timed


class _PythonPattern:
    """jsonschema-rs keyword: ``pattern`` with Python ``re`` semantics, as jsonschema has.

    ECMA regexes differ from Python's on Unicode digit/word/space classes, ``.``
    and ``$``; the reference decides, so the fast validator asks Python's semantics too
    (:func:`_pattern_search`, bounded in time).
    """

    __slots__ = ("_search",)

    def __init__(self, parent_schema: Any, value: str, schema_path: Any) -> None:
        self._search = _pattern_search(value)

    def validate(self, instance: Any) -> None:
        if isinstance(instance, str) and not self._search(instance):
            raise ValueError("does not match pattern")


class _PythonMultipleOf:
    """jsonschema-rs keyword: ``multipleOf`` with jsonschema's float arithmetic."""

    __slots__ = ("_by",)

    def __init__(self, parent_schema: Any, value: float, schema_path: Any) -> None:
        self._by = value

    def validate(self, instance: Any) -> None:
        if type(instance) is bool or not isinstance(instance, (int, float)):
            return
        if not _is_multiple(instance, self._by):
            raise ValueError("not a multiple")


def _is_multiple(instance: float, by: float) -> bool:
    """jsonschema's ``multipleOf`` arithmetic, exact where floats overflow: jsonschema's own
    divides first, so an integer past 1e308 against a float ``multipleOf`` raised
    ``OverflowError`` out of validation (and out of ``ToolRegistry.execute``)."""
    if isinstance(by, float):
        try:
            quotient = instance / by
            return int(quotient) == quotient
        except OverflowError:
            from fractions import Fraction  # rare; imported here, off every start's path

            return (Fraction(instance) / Fraction(by)).denominator == 1
    return not instance % by


def _multiple_of_keyword(validator: Any, by: Any, instance: Any, schema: Any) -> Any:
    """jsonschema's ``multipleOf`` keyword (same message), by :func:`_is_multiple`."""
    if validator.is_type(instance, "number") and not _is_multiple(instance, by):
        yield _jsonschema().exceptions.ValidationError(f"{instance!r} is not a multiple of {by}")


_BOOL: Final = object()
_ARRAY: Final = object()
_OBJECT: Final = object()


def _json_key(value: Any) -> Any:
    """A hashable key, equal for exactly the values jsonschema calls equal (``1 == 1.0``,
    ``True != 1``, objects whatever their key order)."""
    if value is True or value is False:
        return (_BOOL, value)
    if isinstance(value, Mapping):
        return (_OBJECT, frozenset((key, _json_key(item)) for key, item in value.items()))
    if isinstance(value, (list, tuple)):
        return (_ARRAY, tuple(_json_key(item) for item in value))
    return value


def _unique_items_keyword(validator: Any, unique: Any, instance: Any, schema: Any) -> Any:
    """jsonschema's ``uniqueItems`` keyword (same message) in one pass over hashed keys:
    jsonschema compares items it cannot sort pairwise, so a script's 1,000 small lists held
    the host loop for 1.3 s."""
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _json_key(item)
        if key in seen:
            yield _jsonschema().exceptions.ValidationError(
                f"{instance!r} has non-unique elements")
            return
        seen.add(key)


_RS_KEYWORDS = {"pattern": _PythonPattern, "multipleOf": _PythonMultipleOf}


def _timed_keys(schema: Any) -> bool:
    """Whether checking a value searches with the schema's regexes (then it runs on a
    worker thread, within ``PATTERN_BUDGET``)."""
    return _uses_key(schema, "pattern") or _uses_key(schema, "patternProperties")


def _uses_key(schema: Any, key: str) -> bool:
    if isinstance(schema, Mapping):
        return key in schema or any(_uses_key(v, key) for v in schema.values())
    if isinstance(schema, list):
        return any(_uses_key(v, key) for v in schema)
    return False


def _check_depth(tool: str, what: str, schema: Any) -> None:
    """Refuse a schema nested deeper than ``MAX_SCHEMA_DEPTH`` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > MAX_SCHEMA_DEPTH:
            raise ToolDefinitionError(
                tool, f"{what} schema is nested too deeply (more than {MAX_SCHEMA_DEPTH} levels)"
            )
        stack.extend((child, depth + 1) for child in children)


_REGEX_KEYS = frozenset({"pattern", "patternProperties"})
"""Keys the metaschema checks with its ``regex`` format: jsonschema compiles the pattern
with Python's ``re``, jsonschema-rs with its own engine, so only jsonschema may judge them."""
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> bool:
    """True when ``value`` is made of exactly ``dict``, ``list`` and JSON scalars and uses no
    regex key: there jsonschema-rs reads it as jsonschema does (jsonschema-rs also takes
    a tuple for an array, which jsonschema refuses)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            if not _REGEX_KEYS.isdisjoint(item):
                return False
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind not in _SCALARS:
            return False
    return True


def _rs_accepts(schema: dict[str, Any]) -> bool:
    """Whether jsonschema-rs may answer the metaschema check for ``schema``, and finds it
    valid (see :func:`_check_metaschema`)."""
    if "$schema" in schema or not _plain(schema):
        return False
    try:
        return bool(jsonschema_rs.meta.is_valid(schema))
    except (ValueError, jsonschema_rs.ReferencingError):
        return False


def _check_metaschema(schema: Mapping[str, Any]) -> type[Reference] | None:
    """``check_schema`` of the draft ``schema`` declares (2020-12 if none), answered by
    jsonschema-rs where the two agree; returns that draft's jsonschema validator class,
    or None for 2020-12 as jsonschema-rs found it (jsonschema is not imported for it).

    jsonschema's check costs ~650 µs for a three-line schema (registering 1,000 tools took
    0.65 s, a new host's first run a few ms); jsonschema-rs answers in ~2 µs. Its
    "valid" is trusted only for an undeclared draft (2020-12 both ways) made of plain JSON
    values without regex keys; anything it calls invalid, or cannot read, goes to
    jsonschema, which raises ``SchemaError`` with the reason.
    tests/dispatch/test_schema_metaschema.py keeps the two in agreement over the tool
    corpus and its mutations.
    """
    plain = dict(schema)
    if _rs_accepts(plain):
        return None
    jsonschema = _jsonschema()
    cls: type[Reference] = jsonschema.validators.validator_for(
        plain, default=jsonschema.Draft202012Validator)
    cls.check_schema(plain)
    return cls


def _draft_2020_12() -> type[Reference]:
    """jsonschema's 2020-12 validator class, imported only when it is needed."""
    cls: type[Reference] = _jsonschema().Draft202012Validator
    return cls


class _Lazy:
    """A schema's jsonschema validator, made on first use (:attr:`CompiledSchema.reference`)."""

    __slots__ = ("_cls", "_schema")

    def __init__(self, cls: type[Reference] | None, schema: Mapping[str, Any]) -> None:
        self._cls = cls
        self._schema = schema

    def __call__(self) -> Reference:
        cls = _draft_2020_12() if self._cls is None else self._cls
        return _timed_class(cls)(self._schema)


def _older_dialect(schema: Mapping[str, Any]) -> type[Reference] | None:
    """The first older draft whose metaschema accepts ``schema``, if any."""
    jsonschema = _jsonschema()
    dialect: type[Reference]
    for dialect in (jsonschema.Draft7Validator, jsonschema.Draft4Validator):
        try:
            dialect.check_schema(dict(schema))
        except jsonschema.exceptions.SchemaError:
            continue
        return dialect
    return None


_INSTANCE_KEYS = frozenset({"enum", "const", "default", "examples", "example"})
"""Keywords whose values are data, not schemas: a ``$ref`` key in them is not a reference."""


def _refs(node: Any, where: str) -> list[tuple[str, str]]:
    """``(where, ref)`` of every ``$ref`` resolved against the root (none under a nested
    ``$id``, whose base URI would change what it means)."""
    if isinstance(node, list):
        return [found for i, item in enumerate(node) for found in _refs(item, f"{where}/{i}")]
    if not isinstance(node, dict) or (where and isinstance(node.get("$id"), str)):
        return []
    found = [(where or "<root>", node["$ref"])] if isinstance(node.get("$ref"), str) else []
    for key, value in node.items():
        if key not in _INSTANCE_KEYS:
            found += _refs(value, f"{where}/{key}")
    return found


def _check_refs(tool: str, what: str, schema: Mapping[str, Any],
                make: Callable[[], Reference]) -> None:
    """Refuse a ``$ref`` that resolves to nothing (a stale pointer, a URL: nothing is
    fetched); otherwise every call reaching it would fail inside the validator. The
    validator is made only for a schema that has a ``$ref``."""
    refs = _refs(schema, "")
    if not refs:
        return
    resolver = getattr(make(), "_resolver", None)  # jsonschema >= 4.18's own lookup
    if resolver is None:
        return
    import referencing.exceptions

    for where, ref in refs:
        try:
            resolver.lookup(ref)
        except referencing.exceptions.Unresolvable:
            raise ToolDefinitionError(
                tool, f"{what} schema has a $ref that points nowhere at {where}: {ref!r}"
            ) from None


def compile_schema(
    tool: str, schema: Mapping[str, Any], what: str = "parameters"
) -> CompiledSchema:
    """Check ``schema`` against its metaschema and compile both validators.

    A schema that declares no ``$schema`` is read as draft 2020-12; if only an
    older draft (7, then 4) accepts it, it is validated in that draft (by
    jsonschema alone) rather than refused. The fast validator is built to agree
    with jsonschema: formats are not
    asserted (jsonschema asserts none by default), ``pattern`` and
    ``multipleOf`` use jsonschema's Python semantics, and schemas with
    ``patternProperties`` (regex keys) use jsonschema alone.
    """
    _check_depth(tool, what, schema)
    try:
        cls: type[Reference] | None = _check_metaschema(schema)
    except Exception as exc:
        jsonschema = _jsonschema()
        if not isinstance(exc, jsonschema.exceptions.SchemaError):
            raise
        older = None if "$schema" in schema else _older_dialect(schema)
        if older is None:
            where = "/".join(str(p) for p in exc.absolute_path) or "<root>"
            raise ToolDefinitionError(
                tool, f"{what} schema is invalid at {where}: {exc.message}"
            ) from None
        # Written in an older draft without saying so (tuple ``items``, boolean
        # ``exclusiveMinimum``): validate it in that draft, with the reference validator.
        reference_old = _timed_class(older)(schema)
        _check_refs(tool, what, schema, lambda: reference_old)
        return CompiledSchema(
            schema=schema,
            is_valid=_budgeted(lambda instance: bool(reference_old.is_valid(thaw(instance)))),
            make_reference=lambda: reference_old,
            backend=f"jsonschema ({older.__name__.removesuffix('Validator')})",
            timed=_timed_keys(schema),
        )
    make = _Lazy(cls, schema)
    _check_refs(tool, what, schema, make)
    holder: list[CompiledSchema] = []

    def reference_is_valid(instance: Any) -> bool:
        return bool(holder[0].reference.is_valid(thaw(instance)))

    timed = _timed_keys(schema)
    bounded = _budgeted if timed else _unbounded
    fallback = CompiledSchema(schema=schema, is_valid=bounded(reference_is_valid),
                              make_reference=make,
                              backend="jsonschema", timed=timed)
    holder.append(fallback)
    if _uses_key(schema, "patternProperties"):
        return fallback
    try:
        fast = jsonschema_rs.validator_for(
            dict(schema), validate_formats=False, keywords=_RS_KEYWORDS
        )
    except (ValueError, jsonschema_rs.ValidationError, jsonschema_rs.ReferencingError):
        return fallback
    fast_is_valid = fast.is_valid

    def is_valid(instance: Any) -> bool:
        try:
            return bool(fast_is_valid(instance))
        except ValueError:
            # Not representable for jsonschema-rs (lone surrogates, non-string keys…).
            return reference_is_valid(instance)

    return CompiledSchema(schema=schema, is_valid=bounded(is_valid),  # one reference for both
                          make_reference=lambda: fallback.reference, backend="jsonschema-rs",
                          timed=timed)


_ARGUMENTS: dict[tuple[int, str], tuple[Mapping[str, Any], CompiledSchema | None]] = {}
"""(id of a parameters schema, argument) -> (that schema, the argument's validator): made
once per tool argument, not at every script (a spec's schema is frozen)."""


def _argument_schema(schema: Mapping[str, Any], wire_arg: str) -> CompiledSchema | None:
    key = (id(schema), wire_arg)
    known = _ARGUMENTS.get(key)
    if known is not None and known[0] is schema:
        return known[1]
    props = schema["properties"]
    wrapper: dict[str, Any] = {"type": "object", "properties": {wire_arg: props[wire_arg]}}
    required = schema.get("required")
    if isinstance(required, list) and wire_arg in required:
        wrapper["required"] = [wire_arg]  # (always present here: kept for the messages)
    for name in ("$defs", "definitions", "$schema"):
        if name in schema:
            wrapper[name] = schema[name]
    try:
        compiled: CompiledSchema | None = compile_schema("argument", wrapper)
    except ToolDefinitionError:
        compiled = None
    if len(_ARGUMENTS) >= 4096:
        _ARGUMENTS.clear()
    _ARGUMENTS[key] = (schema, compiled)
    return compiled


def argument_problem(schema: Mapping[str, Any], wire_arg: str,
                     value: Any) -> tuple[str, str] | None:
    """Where in one argument's ``value`` (``""`` for the value itself, ``[1].name``
    inside it) and jsonschema's message, under the parameters ``schema`` (checked in the
    root's context, so ``$defs`` and ``$ref`` resolve); None when it is valid, not
    declared, or cannot be judged. For a preflight of literal arguments: the fast
    validator answers first, jsonschema only explains a failure. The message alone did
    not say which item of a list of 50 was wrong."""
    props = schema.get("properties")
    if not isinstance(props, Mapping) or wire_arg not in props:
        return None
    try:
        compiled = _argument_schema(schema, wire_arg)
        if compiled is None or compiled.is_valid({wire_arg: value}):
            return None
        problems = compiled.problems({wire_arg: value})
    except Exception:  # advice only: what it cannot judge passes
        return None
    if not problems:
        return None
    first = problems[0]
    head = f"$.{wire_arg}"
    inner = first.path[len(head):] if first.path.startswith(head) else ""
    return inner, first.message
