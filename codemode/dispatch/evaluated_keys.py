"""The keys of an object a schema evaluates, for ``unevaluatedProperties``.

jsonschema 4's own walk (``find_evaluated_property_keys_by_schema``, and its draft 2019-09
form) searches ``patternProperties`` with Python's ``re`` on the caller's thread: a tool's
``^(a+)+$`` under ``unevaluatedProperties`` held a host's event loop for 2.75 s on a
script's 27-character key, and minutes on a few more (``re`` keeps the GIL while it
backtracks, so no thread helps). This is the same walk, keyword for keyword, with the key
searches made by the caller's bounded ``matches``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

__all__ = ["evaluated_keys"]


def _is_valid(errors: Iterator[Any]) -> bool:
    return next(errors, None) is None


def evaluated_keys(validator: Any, instance: dict[str, Any], schema: Any, *,
                   matches: Callable[[str, str], bool], legacy: bool) -> set[str]:
    """The keys of ``instance`` that ``schema`` evaluates. ``matches(pattern, key)`` is the
    bounded ``re.search`` (it raises what it raises when a search runs out of time);
    ``legacy``: draft 2019-09's rules (``$recursiveRef``; ``properties`` and its siblings
    evaluate by name or as a whole), else 2020-12's."""
    if validator.is_type(schema, "boolean"):
        return set()
    found: set[str] = set()

    def walk(sub_validator: Any, subschema: Any) -> None:
        found.update(evaluated_keys(sub_validator, instance, subschema, matches=matches,
                                    legacy=legacy))

    resolver = validator._resolver  # jsonschema's own reference lookup (>= 4.18)
    refs = [schema["$ref"]] if schema.get("$ref") is not None else []
    if not legacy and schema.get("$dynamicRef") is not None:
        refs.append(schema["$dynamicRef"])
    for ref in refs:
        resolved = resolver.lookup(ref)
        walk(validator.evolve(schema=resolved.contents, _resolver=resolved.resolver),
             resolved.contents)
    if legacy and "$recursiveRef" in schema:
        from referencing.jsonschema import lookup_recursive_ref

        resolved = lookup_recursive_ref(resolver)
        walk(validator.evolve(schema=resolved.contents, _resolver=resolved.resolver),
             resolved.contents)

    if legacy:
        for keyword in ("properties", "additionalProperties", "unevaluatedProperties"):
            value = schema.get(keyword)
            if validator.is_type(value, "boolean") and value:
                found.update(instance)
            elif validator.is_type(value, "object"):
                found.update(key for key in value if key in instance)
    else:
        properties = schema.get("properties")
        if validator.is_type(properties, "object"):
            found.update(properties.keys() & instance.keys())
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            subschema = schema.get(keyword)
            if subschema is not None:
                found.update(key for key, value in instance.items()
                             if _is_valid(validator.descend(value, subschema)))

    patterns = schema.get("patternProperties")
    if patterns is not None:
        found.update(key for key in instance if any(matches(p, key) for p in patterns))

    for key, subschema in schema.get("dependentSchemas", {}).items():
        if key in instance:
            walk(validator, subschema)

    for keyword in ("allOf", "oneOf", "anyOf"):
        for subschema in schema.get(keyword, ()):
            if _is_valid(validator.descend(instance, subschema)):
                walk(validator, subschema)

    if "if" in schema:
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            walk(validator, schema["if"])
            if "then" in schema:
                walk(validator, schema["then"])
        elif "else" in schema:
            walk(validator, schema["else"])
    return found
