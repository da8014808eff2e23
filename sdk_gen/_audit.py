"""Check that a prompt kept what the model needs: names, required flags, enums, defaults, docs.

The prompt is compact by design; this audit is how tests and the benchmark prove that
compactness dropped nothing at the top level of each tool's arguments.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ._render import prompt_escape
from ._schema import normalize, py_literal, root_object
from ._specs import as_specs
from ._text import prompt_text

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ._generate import GeneratedSDK
    from ._specs import SpecLike

__all__ = ["FACTS", "audit_prompt"]

FACTS = ("names", "required", "enums", "defaults", "descriptions")
"""Kinds of facts the audit checks."""


def audit_prompt(specs: Iterable[SpecLike], sdk: GeneratedSDK) -> tuple[Counter[str], list[str]]:
    """Return (facts checked per kind, descriptions of the facts the prompt lost)."""
    checked: Counter[str] = Counter()
    lost: list[str] = []
    blocks = {_qualname(block): block for block in sdk.prompt.split("\n\n")}
    for spec in as_specs(specs):
        path = sdk.names.wire_to_python(spec.name)
        block = blocks.get(path, "")
        signature = next((ln for ln in block.splitlines() if f"def {path}(" in ln), "")
        to_py = {wire: py for py, wire in sdk.names.arguments[spec.name].items()}
        body, defs = normalize(spec.parameters)
        root = root_object(body, defs)
        facts: list[tuple[str, str, bool]] = []
        if spec.description.strip():
            facts.append(("descriptions", "tool", _shown(spec.description) in block))
        for wire, schema in root.properties.items():
            py = to_py[wire]
            facts.append(("names", py, f"{py}: " in signature))
            if wire in root.required:
                facts.append(("required", py, not _has_default(signature, py)))
            if not isinstance(schema, dict):
                continue
            enum = schema.get("enum")
            for value in enum if isinstance(enum, list) else []:
                if isinstance(value, str | int | float) or value is None:
                    facts.append(("enums", f"{py}={value!r}", py_literal(value) in block))
            if "default" in schema:
                literal = py_literal(schema["default"])
                in_doc = f"{py}: " in block and f"Default: {literal}." in block
                shown = f"{py}: " in signature and (f"= {literal}" in signature or in_doc)
                facts.append(("defaults", py, shown))
            desc = schema.get("description")
            if isinstance(desc, str) and desc.strip():
                facts.append(("descriptions", py, _shown(desc) in block))
        for kind, what, kept in facts:
            checked[kind] += 1
            if not kept:
                lost.append(f"{spec.name}: {kind} of {what}")
    return checked, lost


def _shown(description: str) -> str:
    """A description as the prompt shows it (one line, cut, ``\"\"\"`` escaped)."""
    return prompt_escape(prompt_text(description)).rstrip()


def _qualname(block: str) -> str:
    for line in block.splitlines():
        if line.startswith("async def "):
            return line.removeprefix("async def ").partition("(")[0]
    return ""


def _has_default(signature: str, py: str) -> bool:
    """Whether parameter ``py`` has ``= ...`` in a one-line prompt signature."""
    start = signature.find(f"({py}: ")
    start = start + 1 if start >= 0 else signature.find(f", {py}: ") + 2
    depth = 0
    for ch in signature[start:]:
        if ch in "[({":
            depth += 1
        elif ch in "])}":
            depth -= 1
            if depth < 0:
                return False
        elif ch == "," and depth == 0:
            return False
        elif ch == "=" and depth == 0:
            return True
    return False
