"""Reading messy real-world JSON Schemas: refs, roots, inline annotations and doc notes.

Flat shapes (scalars, enums, arrays of scalars, free-form maps, unions of those) are
rendered here directly; anything with named fields is left to datamodel-code-generator
(see ``_types``), which answers ``None`` from :func:`inline_annotation`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from ._text import encodable, hide_surrogates

__all__ = [
    "RootObject",
    "annotated",
    "constraint_notes",
    "for_types",
    "forget_normalized",
    "inline_annotation",
    "map_values",
    "merge_key",
    "normalize",
    "plain",
    "py_literal",
    "ref_key",
    "root_object",
]

_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool", "null": "None"}
_DATA_KEYS = frozenset({"enum", "const", "default", "examples", "example"})
_DEF_POINTER = re.compile(r"^/(\$defs|definitions)/([^/]+)$")


_LEAVES = frozenset({str, int, float, bool, type(None)})


def plain(value: Any) -> Any:
    """Deep copy into plain dicts/lists (specs may hold read-only mappings and tuples)."""
    kind = type(value)
    if kind in _LEAVES:  # most of a schema; ``isinstance(x, Mapping)`` is slow
        return value
    if kind is dict or isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def _sanitize_key(name: str) -> str:
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", name) if p]
    key = "".join(p[:1].upper() + p[1:] for p in parts)
    return key if key and key[0].isalpha() else "D" + key


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _resolve(root: Any, pointer: str) -> Any:
    node = root
    for token in pointer.split("/")[1:]:
        token = _unescape(token)
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _anchor(node: Any, name: str) -> Any:
    """The schema ``#name`` points at: ``$anchor: name`` (or a draft 4-7 ``$id``/``id``)."""
    if isinstance(node, list):
        for item in node:
            found = _anchor(item, name)
            if found is not None:
                return found
        return None
    if not isinstance(node, dict):
        return None
    if node.get("$anchor") == name or f"#{name}" in (node.get("$id"), node.get("id")):
        return node
    return _anchor(list(node.values()), name)


_SUBSCHEMA = frozenset(
    {
        "items",
        "additionalProperties",
        "not",
        "if",
        "then",
        "else",
        "contains",
        "propertyNames",
        "additionalItems",
        "unevaluatedProperties",
        "unevaluatedItems",
        "anyOf",
        "oneOf",
        "allOf",
        "prefixItems",
    }
)
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_DROPPED = frozenset({"$defs", "definitions", "$schema", "$id", "$anchor", "$comment"})


_NORMALIZED: dict[tuple[int, str], tuple[Any, tuple[Any, dict[str, Any]]]] = {}
"""``normalize`` results by schema identity while one tool renders: its render and its
prompt read the same schemas back to back (results are shared, read-only)."""


def forget_normalized() -> None:
    """Start a tool afresh: a caller may have changed a schema dict since (same identity)."""
    _NORMALIZED.clear()


def normalize(schema: Any, *, key_prefix: str = "") -> tuple[Any, dict[str, Any]]:
    """Return ``(schema, defs)`` with every local ``$ref`` pointing at ``#/$defs/<key>``.

    Refs into ``#/properties/...`` (or anywhere) are copied into ``defs``; remote refs and
    unresolvable ones are dropped (the node then accepts any value) so nothing is ever
    fetched. Only reachable definitions are kept, under sanitized, prefixed keys.
    """
    memo_key = (id(schema), key_prefix)
    hit = _NORMALIZED.get(memo_key)
    if hit is not None and hit[0] is schema:
        return hit[1]
    result = _normalize(schema, key_prefix)
    if len(_NORMALIZED) >= 8:
        _NORMALIZED.clear()
    _NORMALIZED[memo_key] = (schema, result)
    return result


def _normalize(schema: Any, key_prefix: str) -> tuple[Any, dict[str, Any]]:
    defs: dict[str, Any] = {}
    memo: dict[str, str] = {}
    copied: list[Any] = []

    def root() -> Any:
        """The whole schema as plain data, copied only when a local ``$ref`` needs it."""
        if not copied:
            copied.append(plain(schema))
        return copied[0]

    def key_for(pointer: str) -> str:
        match = _DEF_POINTER.match(pointer)
        last = pointer.rsplit("/", 1)[-1]
        base = _sanitize_key(_unescape(match.group(2) if match else last or "Root"))
        key, n = key_prefix + base, 2
        while key in defs:
            key = f"{key_prefix}{base}{n}"
            n += 1
        return key

    def ref_target(ref: str) -> str | None:
        if not ref.startswith("#"):
            return None
        pointer = unquote(ref[1:])  # a URI fragment: `#/$defs/a%20b` names "a b"
        if pointer not in memo:
            whole = root()
            local = pointer[:1] in ("", "/")
            target = _resolve(whole, pointer) if local else _anchor(whole, pointer)
            if not isinstance(target, dict | bool):
                return None
            key = memo[pointer] = key_for(pointer)
            defs[key] = True
            defs[key] = walk(target)
        return f"#/$defs/{memo[pointer]}"

    def walk(node: Any) -> Any:
        """A plain copy (as ``plain`` makes) with refs pointed into ``defs``, in one pass."""
        kind = type(node)
        if kind in _LEAVES:
            return node
        if kind is not dict:
            if isinstance(node, list | tuple):
                return [walk(item) for item in node]
            if not isinstance(node, Mapping):
                return node
        out: dict[str, Any] = {}
        for k, v in node.items():
            if type(k) is not str:
                k = str(k)
            if k in _DROPPED:
                continue
            if k == "$ref":
                target = ref_target(v) if isinstance(v, str) else None
                if target is not None:
                    out[k] = target
            elif k in _SCHEMA_MAPS and isinstance(v, Mapping):
                out[k] = {str(name): walk(sub) for name, sub in v.items()}
            elif k in _SUBSCHEMA:
                out[k] = walk(v)
            else:
                out[k] = v if type(v) in _LEAVES else plain(v)
        return _unwrap_all_of(out)

    out = walk(schema)
    _ground_alias_loops(defs)
    return _skip_aliases(out, defs)


_STRUCTURE = frozenset(
    {"type", "properties", "items", "additionalProperties", "enum", "const", "prefixItems"}
)
"""Keys that give a schema a type of its own, whatever ``$ref``/``anyOf`` sit beside them."""
_BRANCHES = ("anyOf", "oneOf", "allOf")


def _ground_alias_loops(defs: dict[str, Any]) -> None:
    """Drop the parts of definitions that only name the definition itself again.

    ``A = {"$ref": A}``, ``A = A | B`` (``anyOf``/``oneOf``/``allOf`` branches that lead
    back to ``A`` through refs and unions alone) add nothing to what ``A`` accepts, have no
    type to stand for, and make the type generator (or mypy) refuse the alias. What is left
    is kept; with nothing left, ``A`` accepts anything. Recursion through a container
    (``A = {"items": A}``) is ordinary and stays.
    """

    def reach(node: Any, found: set[str]) -> set[str]:
        if not isinstance(node, dict) or set(node) & _STRUCTURE:
            return found
        ref = node.get("$ref")
        key = ref.removeprefix("#/$defs/") if isinstance(ref, str) else None
        if key is not None and key not in found:
            found.add(key)
            reach(defs.get(key), found)
        for union in _BRANCHES:
            branches = node.get(union)
            for branch in branches if isinstance(branches, list) else ():
                reach(branch, found)
        return found

    pruned: dict[str, dict[str, Any]] = {}
    for key, node in defs.items():
        if not isinstance(node, dict):
            continue
        kept = dict(node)
        if key in reach({"$ref": kept.get("$ref")}, set()):
            del kept["$ref"]  # with siblings too (`{"$ref": itself, "type": "object"}`)
        for union in () if set(node) & _STRUCTURE else _BRANCHES:
            branches = kept.get(union)
            if isinstance(branches, list):
                left = [b for b in branches if key not in reach(b, set())]
                if left:
                    kept[union] = left
                else:
                    del kept[union]
        if kept != node:
            pruned[key] = kept
    defs.update(pruned)


def _skip_aliases(root: Any, defs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """Point refs to a definition that is only a ref (``D = {"$ref": R}``) at ``R`` itself.

    The type generator writes such a ``D`` as ``D: TypeAlias = "R"`` when ``R`` comes later,
    a string that breaks ``D | None`` when the module runs.
    """
    named = {k: ref_key(node) for k, node in defs.items()}
    alias = {k: target for k, target in named.items() if target is not None and target != k}
    if not alias:
        return root, defs

    def final(key: str) -> str:
        seen = {key}
        while key in alias and alias[key] not in seen:
            key = alias[key]
            seen.add(key)
        return key

    def point(node: Any) -> Any:
        if isinstance(node, list):
            return [point(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {k: point(v) if k not in _DATA_KEYS else v for k, v in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.removeprefix("#/$defs/") in alias:
            out["$ref"] = "#/$defs/" + final(ref.removeprefix("#/$defs/"))
        return out

    kept = {k: point(node) for k, node in defs.items() if k not in alias}
    return point(root), kept


_DOC_KEYS = frozenset({"description", "title", "default", "examples", "example", "deprecated"})


def _unwrap_all_of(node: dict[str, Any]) -> dict[str, Any]:
    """``{"allOf": [{"$ref": R}], "description": …}`` (how pydantic 1 documents a field of
    a model type) is ``{"$ref": R, "description": …}``: one ref, read the same everywhere."""
    parts = node.get("allOf")
    if not (isinstance(parts, list) and set(node) - {"allOf"} <= _DOC_KEYS):
        return node
    docs = [p for p in parts if isinstance(p, dict) and set(p) <= _DOC_KEYS]
    rest = [p for p in parts if p not in docs]
    if len(rest) != 1 or ref_key(rest[0]) is None or "$ref" not in rest[0]:
        return node
    merged = {**rest[0]}
    for doc in docs:  # branches that only document (`{"description": …}`)
        merged.update({k: v for k, v in doc.items() if k not in merged})
    return {**merged, **{k: v for k, v in node.items() if k != "allOf"}}


def ref_key(schema: Any) -> str | None:
    """The definition a pure ``{"$ref": "#/$defs/<key>"}`` (plus annotations) names."""
    if not isinstance(schema, dict) or not set(schema) <= _REF_ONLY:
        return None
    ref = schema.get("$ref")
    return ref.removeprefix("#/$defs/") if isinstance(ref, str) else None


_REF_ONLY = frozenset({"$ref", "description", "title", "default", "examples", "deprecated"})


def for_types(node: Any, refs: Mapping[str, str], *, stand_in: int | None = None) -> Any:
    """Copy of a normalized schema as the type generator should see it.

    ``$ref`` keys are renamed through ``refs``; ``format`` goes (formats stay ``str``);
    the notes a type cannot carry (default, bounds, format) are appended to each field's
    description, which becomes the field's docstring in the module and its comment in the
    prompt. With ``stand_in``, lone surrogates in keys become private-use characters of
    that block (see ``hide_surrogates``): the type generator writes UTF-8.
    """
    if isinstance(node, list):
        return [for_types(item, refs, stand_in=stand_in) for item in node]
    if not isinstance(node, dict):
        return node

    def named(name: str) -> str:
        return hide_surrogates(name, stand_in) if stand_in is not None else name

    values = [node["const"]] if "const" in node else node.get("enum")
    values = values if isinstance(values, list) else None
    structured = values is not None and any(isinstance(v, dict | list) for v in values)
    out: dict[str, Any] = {}
    for k, v in node.items():
        if k == "format" and isinstance(v, str):
            continue
        if k == "type" and (structured or ("enum" in node and "array" in _listed(v))):
            continue  # beside an enum, ``type: array`` makes the type generator write an ``Enum``
        if k in _SHAPE_KEYS and (values is not None or _not_for(node.get("type"), k)):
            continue  # the values (or the type) say it all; it would read a map or an object
        if k in ("description", "title") and isinstance(v, str):
            out[k] = _doc_text(v)
            continue
        if k == "$ref" and isinstance(v, str):
            key = v.removeprefix("#/$defs/")
            out[k] = f"#/$defs/{refs[key]}" if key in refs else v
        elif k == "properties" and isinstance(v, dict):
            out[k] = {
                named(name): _documented(for_types(sub, refs, stand_in=stand_in), sub)
                for name, sub in v.items()
            }
        elif k == "required" and isinstance(v, list):
            out[k] = [named(r) if isinstance(r, str) else r for r in v]
        elif k in _SCHEMA_MAPS and isinstance(v, dict):
            out[k] = {
                named(name): for_types(sub, refs, stand_in=stand_in) for name, sub in v.items()
            }
        elif k in _SUBSCHEMA:
            out[k] = for_types(v, refs, stand_in=stand_in)
        else:
            out[k] = v
    return out


_SHAPE_KEYS = frozenset(
    {"properties", "patternProperties", "additionalProperties", "propertyNames", "items"}
)


def _not_for(types: Any, key: str) -> bool:
    """Whether ``key`` (an object or array keyword) cannot apply to a value of ``types``."""
    if not isinstance(types, str | list) or not types:
        return False
    return ("array" if key == "items" else "object") not in _listed(types)


def _doc_text(text: str) -> str:
    """Text the type generator can write: UTF-8 encodable, no tabs to mix with its indent."""
    return encodable(text).expandtabs(4)


def _listed(types: Any) -> list[Any]:
    return types if isinstance(types, list) else [types]


def _documented(field: Any, original: Any) -> Any:
    if not isinstance(field, dict) or not isinstance(original, dict):
        return field
    notes = constraint_notes(original, annotation="Literal[")
    if "default" in original:
        notes.append(f"default {py_literal(original['default'])}")
    if not notes:
        return field
    desc = original.get("description")
    text = _doc_text(desc.strip()) if isinstance(desc, str) else ""
    tail = "(" + "; ".join(notes) + ")"
    return {**field, "description": f"{text} {tail}" if text else tail}


@dataclass(frozen=True, kw_only=True, slots=True)
class RootObject:
    """The argument object of a tool, flattened from its root schema."""

    properties: dict[str, Any] = field(default_factory=dict)
    """Wire property name → (normalized) schema, in schema order."""
    required: frozenset[str] = frozenset()
    """Wire names the schema requires."""
    extra: Any = None
    """Schema of undeclared keys when the root allows them explicitly, else ``None``."""


def merge_key(first: Any, second: Any) -> Any:
    """One key that two ``allOf`` parts (or branches) both describe: both apply.

    The first part's keywords win; the second fills in what the first leaves unsaid (a
    description, a default, an enum), so neither part's words are lost.
    """
    if first is None or first == {} or first is True:
        return second
    if not isinstance(first, dict) or not isinstance(second, dict) or not second:
        return first
    return {**second, **first}


def root_object(schema: Any, defs: Mapping[str, Any]) -> RootObject:
    """Collect the keyword arguments of a tool from its (normalized) root schema.

    Follows a root ``$ref``, merges ``allOf`` branches, and offers ``anyOf``/``oneOf``
    branch properties as optional ones; required names missing from ``properties`` still
    become (untyped) arguments.
    """
    props: dict[str, Any] = {}
    required: set[str] = set()
    extra: Any = None

    def visit(node: Any, *, optional: bool, seen: frozenset[str]) -> None:
        nonlocal extra
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            key = ref.removeprefix("#/$defs/")
            if key not in seen:
                visit(defs.get(key), optional=optional, seen=seen | {key})
        p = node.get("properties")
        if isinstance(p, dict):
            for name, sub in p.items():
                props[name] = merge_key(props.get(name), sub)
        req = node.get("required")
        if not optional and isinstance(req, list):
            required.update(r for r in req if isinstance(r, str))
        addl = node.get("additionalProperties")
        if addl is True or (isinstance(addl, dict) and addl):
            extra = addl
        for sub in node.get("allOf", []) if isinstance(node.get("allOf"), list) else []:
            visit(sub, optional=optional, seen=seen)
        for k in ("anyOf", "oneOf"):
            branches = node.get(k)
            if isinstance(branches, list):
                for sub in branches:
                    visit(sub, optional=True, seen=seen)

    visit(schema, optional=False, seen=frozenset())
    for name in sorted(required - props.keys()):
        props[name] = {}
    return RootObject(properties=props, required=frozenset(required), extra=extra)


def _union(members: Sequence[str]) -> list[str]:
    seen = list(dict.fromkeys(members))
    if "Any" in seen:
        return ["Any"]
    if "None" in seen:
        seen.remove("None")
        seen.append("None")
    return seen


def _literal(values: Sequence[Any]) -> list[str] | None:
    members: list[str] = []
    lits: list[str] = []
    for v in values:
        if v is None:
            members.append("None")
        elif isinstance(v, bool | int | str):
            lits.append(py_literal(v))
        elif isinstance(v, float):
            members.append("float")
        else:
            return None
    if lits:
        members.insert(0, f"Literal[{', '.join(dict.fromkeys(lits))}]")
    return _union(members) if members else ["Any"]


_ANNOTATION_KEYS = frozenset(
    {"allOf", "description", "title", "default", "examples", "example", "deprecated", "nullable"}
)
"""Keys beside a one-part ``allOf`` that do not change its type."""

Hoist = Callable[[Any, str], str]
"""``hoist(schema, hint)``: name (placeholder) of a generated type for ``schema``; ``hint``
is the name suffix of its position (``Item``, ``Value``, ``1``…)."""


def inline_annotation(schema: Any, hoist: Hoist | None = None) -> str | None:
    """Python annotation for ``schema``.

    Flat shapes are written inline. A part that needs a generated type (an object with
    named fields, a ``$ref``, a multi-part ``allOf``) is handed to ``hoist``; without one,
    the answer is ``None``. Containers stay inline around hoisted parts
    (``list[Item] | None``), so signatures read without aliases.
    """
    members = _members(schema, hoist, "")
    return None if members is None else " | ".join(members)


def _members(schema: Any, hoist: Hoist | None, hint: str) -> list[str] | None:
    if not isinstance(schema, dict):
        return ["Any"]
    if "$ref" in schema:
        return [hoist(schema, hint)] if hoist else None
    core = _core(schema, hoist, hint)
    if core is None:
        return [hoist(schema, hint)] if hoist else None
    return _union([*core, "None"]) if schema.get("nullable") is True else core


def _core(schema: dict[str, Any], hoist: Hoist | None, hint: str) -> list[str] | None:
    if "const" in schema:
        return _literal([schema["const"]])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return _literal(schema["enum"])
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            parts: list[str] = []
            for index, branch in enumerate(branches, start=1):
                sub = _members(branch, hoist, f"{hint}{index}")
                if sub is None:
                    return None
                parts.extend(sub)
            return _union(parts)
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and all_of:
        if len(all_of) == 1 and set(schema) <= _ANNOTATION_KEYS:
            return _members(all_of[0], hoist, hint)
        return [hoist(schema, hint)] if hoist else None
    types = schema.get("type")
    names = types if isinstance(types, list) else [types]
    names = [t for t in names if isinstance(t, str)]
    if not names:
        if "properties" in schema or map_values(schema):
            names = ["object"]
        elif "items" in schema:
            names = ["array"]
        else:
            return ["Any"]
    members: list[str] = []
    for t in names:
        if t in _SCALARS:
            members.append(_SCALARS[t])
        elif t == "array":
            items = schema.get("items")
            inner = _members(items, hoist, hint + "Item") if isinstance(items, dict) else ["Any"]
            if inner is None:
                return None
            members.append(f"list[{' | '.join(inner)}]")
        elif t == "object":
            if isinstance(schema.get("properties"), dict) and schema["properties"]:
                if hoist is None:
                    return None
                fields = {k: v for k, v in schema.items() if k != "nullable"}
                members.append(hoist({**fields, "type": "object"}, hint))
                continue
            value: list[str] = []
            for sub in map_values(schema):
                inner = _members(sub, hoist, hint + "Value")
                if inner is None:
                    return None
                value.extend(inner)
            members.append(f"dict[str, {' | '.join(_union(value) or ['Any'])}]")
        else:
            members.append("Any")
    return _union(members)


def map_values(schema: Mapping[str, Any]) -> list[Any]:
    """The value schemas of an object used as a map: its ``patternProperties`` values and a
    typed ``additionalProperties`` (``[]``: none typed or some keys hold anything: a plain
    ``dict``). Keys outside the
    patterns, when not forbidden, are taken as the author's oversight, not ``Any``: the
    patterns say what the map holds."""
    values: list[Any] = []
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict):
        if any(v is True or v == {} for v in patterns.values()):
            return []  # some keys hold anything
        values.extend(v for v in patterns.values() if isinstance(v, dict))
    addl = schema.get("additionalProperties")
    if isinstance(addl, dict) and addl:
        values.append(addl)
    return values


_NOTES = (
    ("minimum", ">= {}"),
    ("exclusiveMinimum", "> {}"),
    ("maximum", "<= {}"),
    ("exclusiveMaximum", "< {}"),
    ("multipleOf", "multiple of {}"),
    ("minLength", "min length {}"),
    ("maxLength", "max length {}"),
    ("pattern", "pattern {}"),
    ("minItems", "min items {}"),
    ("maxItems", "max items {}"),
    ("format", "format {}"),
)


_CARRIED = ("description", "default", "deprecated", *(key for key, _ in _NOTES))
"""What a ``$ref`` target says about a value that the referring schema may leave unsaid."""


def annotated(schema: Any, defs: Mapping[str, Any]) -> Any:
    """``schema`` with the description, default and bounds its ``$ref`` target carries.

    A property that is only ``{"$ref": ...}`` documents nothing itself: pydantic puts an
    enum's docstring on its definition, and a type alias carries its own bounds. The
    referring schema's own words win; a chain of refs is followed, each target once.
    """
    if not isinstance(schema, dict) or not isinstance(schema.get("$ref"), str):
        return schema
    merged = dict(schema)
    seen: set[str] = set()
    node: Any = schema
    while isinstance(node, dict) and isinstance(node.get("$ref"), str):
        key = node["$ref"].removeprefix("#/$defs/")
        if key in seen:
            break
        seen.add(key)
        node = defs.get(key)
        if isinstance(node, dict):
            merged.update({k: node[k] for k in _CARRIED if k in node and k not in merged})
    return merged


_NOTED = frozenset(
    {key for key, _ in _NOTES}
    | {"uniqueItems", "deprecated", "enum", "anyOf", "oneOf", "patternProperties"}
)
"""Keys without which a schema has no notes (most nodes: the fast way out)."""


def constraint_notes(schema: Any, *, annotation: str | None = None) -> list[str]:
    """Short notes for what a type annotation cannot say (bounds, formats, enum values)."""
    if not isinstance(schema, dict) or _NOTED.isdisjoint(schema):
        return []
    bounds = {**_optional_branch(schema), **schema}
    notes = [
        tmpl.format(
            _note_text(bounds[key]) if isinstance(bounds[key], str) else py_literal(bounds[key])
        )
        for key, tmpl in _NOTES
        if key in bounds and isinstance(bounds[key], int | float | str)
    ]
    if bounds.get("uniqueItems") is True:
        notes.append("unique items")
    patterns = schema.get("patternProperties")
    if isinstance(patterns, dict) and patterns:  # dict[str, T] cannot say which keys
        notes.append("keys match " + " or ".join(_note_text(str(p)) for p in patterns))
    if schema.get("deprecated") is True:
        notes.append("deprecated")
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and (annotation is None or "Literal[" not in annotation):
        notes.append("one of " + ", ".join(py_literal(v) for v in enum))
    return notes


def _note_text(text: str) -> str:
    """A pattern or format as written when it is all printable, else quoted with escapes.

    Schemas come from untrusted servers: a raw newline, ``\\r``, ``\\u2028`` or NUL in a
    pattern would end the prompt's one line per argument and start a line of its own.
    """
    return text if text.isprintable() else py_literal(text)


def _optional_branch(schema: dict[str, Any]) -> dict[str, Any]:
    """The bounds of the one non-null branch of an optional value (``{"anyOf": [X, null]}``).

    pydantic writes ``Annotated[int, Field(ge=0)] | None`` and ``datetime | None`` so: the
    bounds and format sit in the branch, where a note on the field would not see them. They
    hold for every value the field can take but ``null``, so the field's note may say them.
    """
    for union in ("anyOf", "oneOf"):
        branches = schema.get(union)
        if not isinstance(branches, list):
            continue
        rest = [b for b in branches if not (isinstance(b, dict) and b.get("type") == "null")]
        if len(rest) == 1 and len(branches) > 1 and isinstance(rest[0], dict):
            keys = {key for key, _ in _NOTES} | {"uniqueItems"}
            return {k: v for k, v in rest[0].items() if k in keys}
    return {}


def py_literal(value: Any) -> str:
    """Python source for a JSON value (deterministic; keys keep their order)."""
    if isinstance(value, str):
        text = repr(value)
        return f'"{text[1:-1]}"' if text.startswith("'") and '"' not in value else text
    if value is None or isinstance(value, bool | int):
        return repr(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)
        return f"float({str(value)!r})"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(py_literal(v) for v in value) + "]"
    if isinstance(value, Mapping):
        pairs = (f"{py_literal(str(k))}: {py_literal(v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    return repr(str(value))
