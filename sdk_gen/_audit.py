"""Check that a prompt kept what the model needs: names, required flags, enums, defaults, docs.

The prompt is compact by design; this audit is how tests and the benchmark prove that
compactness dropped nothing. It reads the prompt text as the model would, independently
of how it was rendered: each tool's block (its line and the indented lines under it),
and the glossary of shared descriptions. Top-level arguments are checked line by line;
keys of nested objects (parameters and results, through refs, arrays, unions) are
checked within the tool's block and counted as ``nested …`` facts.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any

from ._prompt import NOTE, SHARED, SHARED_MARK
from ._schema import annotated, normalize, py_literal, root_object
from ._specs import as_specs
from ._text import TRUNCATED, flat_text, prompt_text, tool_text

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from ._generate import GeneratedSDK
    from ._specs import SpecLike

__all__ = ["FACTS", "audit_prompt"]

FACTS = ("names", "required", "enums", "defaults", "descriptions")
"""Kinds of facts the audit checks (nested ones are counted as ``nested <kind>``)."""

_Fact = tuple[str, str, bool]


def audit_prompt(specs: Iterable[SpecLike], sdk: GeneratedSDK) -> tuple[Counter[str], list[str]]:
    """Return (facts checked per kind, descriptions of the facts the prompt lost)."""
    blocks, glossary = _parse(sdk.prompt)
    checked: Counter[str] = Counter()
    lost: list[str] = []
    for spec in as_specs(specs):
        path = sdk.names.wire_to_python(spec.name)
        block = blocks.get(path, [])
        to_py = {wire: py for py, wire in sdk.names.arguments[spec.name].items()}
        body, defs = normalize(spec.parameters)
        root = root_object(body, defs)
        facts: list[_Fact] = []
        if spec.description.strip():
            head = f"{path.rpartition('.')[2]}: "
            shown = block[0].removeprefix(head) if block and block[0].startswith(head) else ""
            facts.append(("descriptions", "tool", _tool_described(shown, spec.description)))
        for wire, schema in root.properties.items():
            described = annotated(schema, defs)
            facts.extend(_argument(to_py[wire], wire in root.required, described, block, glossary))
        text = "\n".join(block)
        nested = [(schema, defs) for schema in root.properties.values()]
        if spec.output_schema is not None:
            nested.append(normalize(spec.output_schema, key_prefix="Out"))
        for schema, schema_defs in nested:
            for key, sub, required in _nested_keys(schema, schema_defs):
                facts.extend(
                    (f"nested {kind}", what, kept)
                    for kind, what, kept in _key_facts(
                        key, annotated(sub, schema_defs), required, text, glossary
                    )
                )
        for kind, what, kept in facts:
            checked[kind] += 1
            if not kept:
                lost.append(f"{spec.name}: {kind} of {what}")
    return checked, lost


_TYPE_LINE = re.compile(r" ([A-Za-z_]\w*) = (.*)")
_NAMESPACE_LINE = re.compile(r"\[(\w+)\]")


def _parse(prompt: str) -> tuple[dict[str, list[str]], set[str]]:
    """Tool blocks by qualified name (``[ns]`` lines give the namespace; shared sentences
    and type names written out again), and the glossary's ``key: description`` lines."""
    blocks: dict[str, list[str]] = {}
    glossary: set[str] = set()
    notes: dict[str, str] = {}
    types: dict[str, str] = {}
    namespace = ""
    current: list[str] | None = None
    for line in prompt.splitlines()[1:]:
        if line.startswith(SHARED) and line.endswith("):"):
            current = None
        elif header := _NAMESPACE_LINE.fullmatch(line):
            namespace, current = header.group(1), None
        elif not line.startswith(" "):
            name = line.partition(": ")[0]
            current = blocks.setdefault(f"{namespace}.{name}" if namespace else name, [])
            current.append(line)
        elif current is not None:
            current.append(line)
        elif line.startswith(f" {NOTE}"):
            ref, _, sentence = line.strip().partition(" ")
            notes[ref] = sentence
        elif typed := _TYPE_LINE.fullmatch(line):
            types[typed.group(1)] = typed.group(2)
        else:
            glossary.add(line.strip())
    pattern = re.compile(f"{NOTE}\\d+")
    alternatives = "|".join(map(re.escape, types))
    named = re.compile(f"(?<=: )(?:{alternatives})(?= = | \\^$| # |$)") if types else None

    def expand(line: str) -> str:
        line = pattern.sub(lambda m: notes.get(m.group(), m.group()), line)
        return named.sub(lambda m: types[m.group()], line, count=1) if named else line

    return {name: [expand(ln) for ln in block] for name, block in blocks.items()}, glossary


def _tool_described(shown: str, description: str) -> bool:
    """Whether ``shown`` is the whole description, or a prefix of it marked as cut that keeps
    at least what cutting it alone would (shared sentences cost less, so it may keep more)."""
    whole = flat_text(description)
    if shown == whole:
        return True
    kept = shown.removesuffix(TRUNCATED)
    alone = tool_text(description).removesuffix(TRUNCATED)
    return kept != shown and whole.startswith(kept) and len(kept) >= len(alone)


def _argument(
    py: str, required: bool, schema: Any, block: list[str], glossary: set[str]
) -> Iterator[_Fact]:
    """Facts of one top-level argument, checked on its own line (enums: in the block)."""
    line = next((ln for ln in block[1:] if ln.startswith((f" {py}: ", f" {py}?: "))), "")
    yield ("names", py, bool(line))
    if required:
        yield ("required", py, line.startswith(f" {py}: "))
    if not isinstance(schema, dict):
        return
    text = "\n".join(block)
    enum = schema.get("enum")
    for value in enum if isinstance(enum, list) else []:
        if isinstance(value, str | int | float) or value is None:
            yield ("enums", f"{py}={value!r}", py_literal(value) in text)
    if "default" in schema:
        yield ("defaults", py, f" = {py_literal(schema['default'])}" in line)
    desc = schema.get("description")
    if isinstance(desc, str) and desc.strip():
        yield ("descriptions", py, _described(line, py, prompt_text(desc), glossary))
    for n, doc in _branch_docs(schema):
        yield ("descriptions", f"{py} variant {n}", _described(line, py, doc, glossary, part=True))


def _key_facts(
    key: str, schema: Any, required: bool, text: str, glossary: set[str]
) -> Iterator[_Fact]:
    """Facts of one nested key, checked anywhere in its tool's block."""
    shown = key if key.isidentifier() else py_literal(key)
    heads = [f"{shown}: ", f"{shown}?: "]
    found = [h for h in heads if f" {h}" in text or f"{{{h}" in text]
    yield ("names", shown, bool(found))
    if required:
        yield ("required", shown, heads[0] in found)
    if not isinstance(schema, dict):
        return
    enum = schema.get("enum")
    for value in enum if isinstance(enum, list) else []:
        if isinstance(value, str | int | float) or value is None:
            yield ("enums", f"{shown}={value!r}", py_literal(value) in text)
    lines = [ln for ln in text.splitlines() if ln.lstrip().startswith(tuple(heads))]
    if "default" in schema:
        default = f" = {py_literal(schema['default'])}"
        yield ("defaults", shown, any(default in ln for ln in lines))
    desc = schema.get("description")
    if isinstance(desc, str) and desc.strip():
        doc = prompt_text(desc)
        yield ("descriptions", shown, any(_described(ln, shown, doc, glossary) for ln in lines))
    for n, doc in _branch_docs(schema):
        kept = any(_described(ln, shown, doc, glossary, part=True) for ln in lines)
        yield ("descriptions", f"{shown} variant {n}", kept)


def _described(line: str, key: str, doc: str, glossary: set[str], *, part: bool = False) -> bool:
    """Whether ``line`` shows ``doc``, itself or through the glossary entry of ``key``.

    ``doc`` opens the description, or with ``part`` (a union branch's) appears in it.
    """
    if line.endswith(f" {SHARED_MARK}"):
        texts = [e[len(key) + 2 :] for e in glossary if e.startswith(f"{key}: ")]
        return any(doc in text if part else text.startswith(doc) for text in texts)
    return doc in line if part else f" # {doc}" in line


def _branch_docs(schema: Any) -> list[tuple[int, str]]:
    """``(branch number, description)`` of the described ``anyOf``/``oneOf`` branches."""
    branches = schema.get("anyOf") or schema.get("oneOf") if isinstance(schema, dict) else None
    if not isinstance(branches, list):
        return []
    return [
        (n, prompt_text(branch["description"]))
        for n, branch in enumerate(branches, start=1)
        if isinstance(branch, dict)
        and isinstance(branch.get("description"), str)
        and branch["description"].strip()
    ]


def _nested_keys(schema: Any, defs: dict[str, Any]) -> Iterator[tuple[str, Any, bool]]:
    """``(key, schema, required)`` of every object key below ``schema``, each ref once."""
    seen: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        ref = node.get("$ref")
        if isinstance(ref, str):
            key = ref.removeprefix("#/$defs/")
            if key not in seen:
                seen.add(key)
                stack.append(defs.get(key))
        props = node.get("properties")
        req = node.get("required")
        required = set(req) if isinstance(req, list) else set()
        if isinstance(props, dict):
            for name, sub in props.items():
                yield name, sub, name in required
                stack.append(sub)
        for k in ("items", "additionalProperties"):
            if isinstance(node.get(k), dict):
                stack.append(node[k])
        for k in ("anyOf", "oneOf", "allOf"):
            if isinstance(node.get(k), list):
                stack.extend(node[k])
