"""Helpers for the SDK generator tests: corpus loading, module import, recording transport."""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tool_corpus import corpus_dir

from sdk_gen._schema import normalize

if TYPE_CHECKING:
    from collections.abc import Mapping
    from types import ModuleType

    import sdk_gen

ROOT = Path(__file__).resolve().parents[2]


def load_corpus() -> list[dict[str, Any]]:
    """Every corpus tool as an MCP-style dict; LiveMCPBench tools get their server as namespace."""
    tools: list[dict[str, Any]] = []
    for path in sorted(corpus_dir().glob("*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")):
            tool = {
                k: item[k]
                for k in ("name", "description", "inputSchema", "outputSchema")
                if k in item
            }
            if isinstance(item.get("server"), str):
                tool["namespace"] = item["server"].rsplit("/", 1)[-1]
            tools.append(tool)
    return tools


def batches(tools: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Split tools into groups with unique names (one registry cannot hold duplicates)."""
    groups: list[tuple[set[str], list[dict[str, Any]]]] = []
    for tool in tools:
        for names, group in groups:
            if tool["name"] not in names:
                names.add(tool["name"])
                group.append(tool)
                break
        else:
            groups.append(({tool["name"]}, [tool]))
    return [group for _, group in groups]


def import_source(path: Path, name: str) -> ModuleType:
    """Import a generated module from a file under a unique name."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_sdk(sdk: sdk_gen.GeneratedSDK, directory: Path, name: str) -> ModuleType:
    """Write ``sdk`` into ``directory`` and import its module as ``name``."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.py"
    path.write_text(sdk.module_source, encoding="utf-8")
    (directory / f"{name}_stub.pyi").write_text(sdk.stub_source, encoding="utf-8")
    return import_source(path, name)


def type_check_and_lint(files: list[str], cache: Path) -> None:
    """One ``mypy --strict`` and one ruff run (the project's config) over generated files."""
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir",
         str(cache / ".mypy"), *files],
        capture_output=True, text=True, cwd=cache, check=False,
    )
    assert mypy.returncode == 0, mypy.stdout[-3000:]
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--config",
         str(ROOT / "pyproject.toml"), *files],
        capture_output=True, text=True, check=False,
    )
    assert ruff.returncode == 0, ruff.stdout[-3000:]


class Recorder:
    """A transport that records every call and answers with a fixed value."""

    def __init__(self, answer: Any = None) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answer = answer

    async def __call__(self, tool: str, arguments: dict[str, Any]) -> Any:
        self.calls.append((tool, arguments))
        return self.answer


def function_for(module: ModuleType, path: str) -> Any:
    """The generated callable at ``path`` (``name`` or ``namespace.name``)."""
    obj: Any = module
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


class InstanceMaker:
    """Builds argument objects for a schema: required keys plus a random share of optional ones.

    Deterministic for a given seed; aims for valid instances (callers check with jsonschema).
    """

    def __init__(self, schema: Mapping[str, Any], seed: int) -> None:
        self.root, self.defs = normalize(schema)
        self.rng = random.Random(seed)

    def arguments(self, properties: Mapping[str, Any], required: frozenset[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if name in required or self.rng.random() < 0.6:
                out[name] = self.value(sub, depth=0)
        return out

    def value(self, schema: Any, depth: int) -> Any:
        rng = self.rng
        if not isinstance(schema, dict):
            return "any"
        if "$ref" in schema:
            target = self.defs.get(schema["$ref"].removeprefix("#/$defs/"), {})
            return self.value(target, depth + 1) if depth < 6 else None
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return rng.choice(schema["enum"])
        if "default" in schema and rng.random() < 0.2:
            return schema["default"]
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list) and schema[key]:
                return self.value(rng.choice(schema[key]), depth + 1)
        if isinstance(schema.get("allOf"), list) and schema["allOf"]:
            merged: dict[str, Any] = {}
            for part in schema["allOf"]:
                value = self.value(part, depth + 1)
                if isinstance(value, dict):
                    merged.update(value)
            return merged
        types = schema.get("type")
        kinds = types if isinstance(types, list) else [types] if isinstance(types, str) else []
        if not kinds:
            kinds = ["object"] if "properties" in schema else ["string"]
        kind = rng.choice(kinds)
        if kind == "string":
            size = max(int(schema.get("minLength", 0) or 0), rng.randint(0, 8))
            text = "".join(rng.choice("abcXYZ é中-_ '\"") for _ in range(size))
            return text[: schema["maxLength"]] if isinstance(schema.get("maxLength"), int) else text
        if kind in ("integer", "number"):
            low = schema.get("minimum", schema.get("exclusiveMinimum", -50))
            high = schema.get("maximum", schema.get("exclusiveMaximum", 50))
            low = low if isinstance(low, int | float) else -50
            high = high if isinstance(high, int | float) and high >= low else low + 100
            number = rng.randint(int(low) + 1, int(high) - 1) if high - low > 2 else low
            return int(number) if kind == "integer" else number + (0.5 if high - low > 2 else 0)
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "null":
            return None
        if kind == "array":
            items = schema.get("items", {})
            low = int(schema.get("minItems", 0) or 0)
            count = low if depth > 3 else max(low, rng.randint(0, 2))
            return [
                self.value(items if isinstance(items, dict) else {}, depth + 1)
                for _ in range(count)
            ]
        if kind == "object":
            props = schema.get("properties", {}) if depth < 5 else {}
            req = frozenset(r for r in schema.get("required", []) if isinstance(r, str))
            out = {}
            for name, sub in props.items() if isinstance(props, dict) else ():
                if name in req or rng.random() < 0.5:
                    out[name] = self.value(sub, depth + 1)
            return out
        return "x"


LONG = "Word " * 400

SHAPES: list[dict[str, Any]] = [
    {
        "name": "any-of-objects",
        "description": "anyOf/oneOf with object branches and scalars.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "target": {
                    "anyOf": [
                        {
                            "type": "object",
                            "properties": {"id": {"type": "integer"}},
                            "required": ["id"],
                        },
                        {"type": "object", "properties": {"slug": {"type": "string"}}},
                        {"type": "string"},
                    ]
                },
                "shape": {
                    "oneOf": [
                        {
                            "type": "object",
                            "properties": {"kind": {"const": "circle"}, "r": {"type": "number"}},
                        },
                        {
                            "type": "object",
                            "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
                        },
                    ]
                },
                "scalar": {"oneOf": [{"type": "integer"}, {"type": "boolean"}]},
            },
            "required": ["target"],
        },
    },
    {
        "name": "nullables",
        "description": "Nullable via anyOf and via type lists.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "a": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "b": {"type": ["integer", "null"]},
                "c": {
                    "anyOf": [
                        {"type": "object", "properties": {"x": {"type": "string"}}},
                        {"type": "null"},
                    ]
                },
                "d": {"type": "string", "nullable": True},
            },
        },
    },
    {
        "name": "refs",
        "description": "$defs, definitions, refs with siblings, refs into properties, recursion.",
        "inputSchema": {
            "type": "object",
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    },
                    "required": ["value"],
                },
                "Color": {"enum": ["red", "green"]},
            },
            "definitions": {
                "Point": {
                    "type": "object",
                    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                }
            },
            "properties": {
                "tree": {"$ref": "#/$defs/Node"},
                "color": {
                    "$ref": "#/$defs/Color",
                    "description": "A colour, via a ref with siblings.",
                },
                "origin": {"$ref": "#/definitions/Point"},
                "same_as_origin": {"$ref": "#/properties/origin"},
                "remote": {"$ref": "https://example.invalid/schema.json"},
                "dangling": {"$ref": "#/$defs/Missing"},
            },
            "required": ["tree"],
        },
    },
    {
        "name": "all-of",
        "description": "allOf merging object parts.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "merged": {
                    "allOf": [
                        {
                            "type": "object",
                            "properties": {"a": {"type": "string"}},
                            "required": ["a"],
                        },
                        {"type": "object", "properties": {"b": {"type": "integer"}}},
                    ]
                },
                "single": {"allOf": [{"type": "string", "minLength": 2}]},
            },
        },
    },
    {
        "name": "maps",
        "description": "additionalProperties as a schema, free-form objects, arrays of objects.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "scores": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"n": {"type": "integer"}},
                    },
                },
                "anything": {"type": "object"},
                "free": {"type": "object", "additionalProperties": True},
                "rows": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {}}},
                },
                "matrix": {
                    "type": "array",
                    "items": {"type": "array", "items": {"type": "number"}},
                },
                "tuple": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
            },
        },
    },
    {
        "name": "enums-and-consts",
        "description": "Enums (with null, numbers, booleans, floats) and const.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "state": {"type": "string", "enum": ["open", "closed"]},
                "maybe": {"enum": ["a", None]},
                "level": {"type": "integer", "enum": [1, 2, 3]},
                "ratio": {"enum": [0.5, 1.5]},
                "flag": {"enum": [True, False]},
                "odd": {"enum": ["it's", 'say "hi"', "back\\slash"]},
                "version": {"const": "v1"},
                "object_enum": {"enum": [{"a": 1}, [1, 2]]},
            },
            "required": ["version"],
        },
    },
    {
        "name": "defaults",
        "description": "Defaults, including default null (which is not the same as omitted).",
        "inputSchema": {
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "default": 30, "minimum": 1, "maximum": 100},
                "cursor": {"type": ["string", "null"], "default": None},
                "tags": {"type": "array", "items": {"type": "string"}, "default": ["x", "y"]},
                "opts": {"type": "object", "default": {"deep": True}},
                "verbose": {"type": "boolean", "default": False},
            },
        },
    },
    {
        "name": "formats",
        "description": "Formats stay str and are documented.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "when": {"type": "string", "format": "date-time"},
                "site": {"type": "string", "format": "uri", "description": "Where."},
                "who": {"type": "string", "format": "email", "pattern": "^[^@]+@[^@]+$"},
                "nested": {
                    "type": "object",
                    "properties": {"id": {"type": "string", "format": "uuid"}},
                },
            },
        },
    },
    {
        "name": "odd-descriptions",
        "description": None,
        "inputSchema": {
            "type": "object",
            "properties": {
                "no_description": {"type": "string", "description": None},
                "quotes": {"type": "string", "description": 'Ends with """ and a backslash \\'},
                "control": {"type": "string", "description": "tab\tnull\x00 line\u2028sep"},
                "long": {"type": "string", "description": LONG},
                "surrogate": {"type": "string", "description": "lone \ud800 surrogate"},
            },
        },
    },
    {
        "name": "long-description",
        "description": LONG,
        "inputSchema": {"type": "object", "properties": {}},
    },
    {"name": "no-params", "description": "Takes nothing.", "inputSchema": {"type": "object"}},
    {"name": "empty-schema", "description": "Schema is {}.", "inputSchema": {}},
    {
        "name": "property-names",
        "description": "Property names that are not identifiers.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "from": {"type": "string"},
                "class": {"type": "string"},
                "@type": {"type": "string"},
                "type": {"type": "string"},
                "1st": {"type": "integer"},
                "_private": {"type": "boolean"},
                "user-id": {"type": "string"},
                "user_id": {"type": "string"},
                "año": {"type": "string"},
                "名前": {"type": "string"},
                "ﬁle": {"type": "string"},
                "_invoke": {"type": "string"},
                "extra_arguments": {"type": "string"},
                "": {"type": "string"},
                "I": {"type": "string"},
                "timeout": {"type": "number"},
                "MA(5)": {"type": "number"},
            },
            "required": ["from", "user-id"],
        },
    },
    {
        "name": "extra-keys",
        "description": "Root allows undeclared keys.",
        "inputSchema": {
            "type": "object",
            "properties": {"known": {"type": "string"}},
            "additionalProperties": {"type": "integer"},
        },
    },
    {
        "name": "required-not-declared",
        "description": "Requires a key the properties do not declare.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["a", "ghost"],
        },
    },
    {
        "name": "root-ref",
        "description": "Root is a $ref with allOf.",
        "inputSchema": {
            "$ref": "#/$defs/Args",
            "$defs": {
                "Args": {
                    "type": "object",
                    "properties": {"q": {"type": "string"}},
                    "required": ["q"],
                }
            },
        },
    },
    {
        "name": "with-output",
        "description": "Declares an output schema.",
        "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "outputSchema": {
            "type": "object",
            "properties": {
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
                "total": {"type": "integer"},
            },
            "$defs": {"Item": {"type": "object", "properties": {"id": {"type": "integer"}}}},
            "required": ["items"],
        },
    },
    {
        "name": "scalar-output",
        "description": "Output is a plain list.",
        "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {"type": "array", "items": {"type": "string"}},
    },
    {"name": "class", "description": "Keyword tool name.", "inputSchema": {"type": "object"}},
    {"name": "match", "description": "Soft keyword tool name.", "inputSchema": {"type": "object"}},
    {"name": "list", "description": "Builtin tool name.", "inputSchema": {"type": "object"}},
    {
        "name": "2fa.verify code",
        "description": "Digits, dots and spaces.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "get_issue",
        "namespace": "github",
        "description": "Namespaced.",
        "inputSchema": {
            "type": "object",
            "properties": {"number": {"type": "integer"}},
            "required": ["number"],
        },
    },
    {
        "name": "get-issue",
        "namespace": "github",
        "description": "Collides with get_issue after mapping.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "github",
        "description": "Collides with the namespace.",
        "inputSchema": {"type": "object"},
    },
    {
        "name": "AnyOfObjectsTarget",
        "description": "Named like a generated type.",
        "inputSchema": {"type": "object"},
    },
]
"""Synthetic schemas for every shape the issue lists that real schemas may lack."""
