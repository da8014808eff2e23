"""Messy but valid tool definitions, generated: the SDK renders, imports and round-trips.

Hypothesis builds tools with awkward names (keywords, builtins, unicode, dots, dashes,
digits, collisions), nested objects and arrays, ``anyOf``/``oneOf``/``allOf``, recursive
``$ref``s, enums of mixed types, defaults that do not match their type and hostile
descriptions. Every generated SDK must compile and import, map names back exactly and send
a call built from Python names with the original wire names and values. Bugs the larger
exploratory runs found are pinned as explicit rows in ``REGRESSIONS``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from sdkgen_support import ROOT, InstanceMaker, Recorder, function_for

import sdk_gen
from codemode.errors import SdkGenerationError
from sdk_gen._schema import root_object

if TYPE_CHECKING:
    from pathlib import Path
    from types import ModuleType

# --- strategies -------------------------------------------------------------------------

AWKWARD_NAMES = [
    "a", "from", "class", "None", "True", "type", "match", "case", "_", "__init__", "self",
    "print", "list", "dict", "Any", "Literal", "TypedDict", "NotRequired", "TypeAlias", "OMIT",
    "Transport", "set_transport", "annotations", "_invoke", "_result", "_transport",
    "extra_arguments", "Awaitable", "Callable", "@type", "$id", "1st", "2fa.verify code",
    "a-b", "a_b", "a.b", "a b", "A-B", "a__b", "-", "", " ", "é", "año", "名前", "ﬁle", "file",
    "ｉｆ", "MA(5)", "x-y-z", "I", "l", "O", "timeout", "Model", "Root", "Sdkarg0Z", "T",
    "get_issue", "get-issue", "Get-Issue", "__", "_1", "__x", "_y", "__init__", "__getattr__",
    "\ud800", "a\x1fb", "c\u2028d", "e\x85", "a" * 120,
]  # fmt: skip
NAMES = st.one_of(
    st.sampled_from(AWKWARD_NAMES),
    st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12),
    st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_.\- ]{0,10}", fullmatch=True),
)
TEXTS = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "",
            '"""',
            'Ends with a quote"',
            "Ends with a backslash \\",
            "\\N{BULLET} \\u1234 \\x00",
            "tab\tnul\x00 cr\r lsep\u2028 vt\x0b",
            "lone \ud800 surrogate",
            "'''single''' and \"\"\"double\"\"\"",
            "# not a comment\n    indented: line\n\n\n",
            "Word " * 300,
            "\u200b\ufeff\u00a0",
            "{braces} %s %(x)s",
            "r'raw'",
        ]
    ),
    st.text(max_size=40),
)
SCALAR_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(["'", '"', "\\", '"""', "a'b\"c", "\ud800", "\n", "Literal", ""]),
)
JSON_VALUES = st.recursive(
    SCALAR_VALUES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
TYPE_NAMES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array", "object"])
DEF_NAMES = st.sampled_from(["Node", "node", "Item", "a-b", "a_b", "1x", "Model", "Any", "é", ""])


def _annotate(schema: dict[str, Any], draw: st.DrawFn) -> dict[str, Any]:
    """Add the keys that do not change a type: description, title, default, format…"""
    if draw(st.booleans()):
        schema["description"] = draw(TEXTS)
    if draw(st.integers(0, 5)) == 0:
        schema["title"] = draw(TEXTS)
    if draw(st.integers(0, 3)) == 0:
        schema["default"] = draw(JSON_VALUES)
    if draw(st.integers(0, 6)) == 0:
        schema["format"] = draw(st.sampled_from(["date-time", "uri", "uuid", "weird format"]))
    if draw(st.integers(0, 6)) == 0:
        schema["examples"] = draw(st.lists(JSON_VALUES, max_size=2))
    if draw(st.integers(0, 8)) == 0:
        schema["nullable"] = draw(st.booleans())
    if draw(st.integers(0, 8)) == 0:
        schema["deprecated"] = True
    if draw(st.integers(0, 10)) == 0:
        extra = st.sampled_from(["not", "if", "then", "else", "propertyNames", "contains"])
        schema[draw(extra)] = draw(st.sampled_from([{"type": "string"}, {}, True, False]))
    if draw(st.integers(0, 10)) == 0:
        schema["patternProperties"] = {"^x-": {"type": "integer"}, "(?i)y": {}}
    return schema


@st.composite
def scalar_schema(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.integers(0, 6))
    if kind == 0:
        schema: dict[str, Any] = {"enum": draw(st.lists(JSON_VALUES, min_size=1, max_size=5))}
        if draw(st.booleans()):
            schema["type"] = draw(TYPE_NAMES)
    elif kind == 1:
        schema = {"const": draw(JSON_VALUES)}
    elif kind == 2:
        schema = {"type": draw(st.lists(TYPE_NAMES, min_size=1, max_size=3, unique=True))}
    elif kind == 3:
        schema = {}
    else:
        schema = {"type": draw(TYPE_NAMES.filter(lambda t: t not in ("array", "object")))}
        bounds = ["minimum", "maximum", "exclusiveMinimum", "minLength", "pattern", "multipleOf"]
        for key in draw(st.lists(st.sampled_from(bounds), max_size=2, unique=True)):
            schema[key] = "^a.*$" if key == "pattern" else draw(st.integers(0, 10))
    return _annotate(schema, draw)


@st.composite
def compound_schema(draw: st.DrawFn, inner: st.SearchStrategy[dict[str, Any]],
                    refs: st.SearchStrategy[str]) -> dict[str, Any]:
    """One level of nesting over ``inner``. Decorated once, here: hypothesis parses a
    composite's source each time one is made (``st.composite`` checks that it uses
    ``draw``), and one made inside ``extend`` was parsed five times per ``schemas()``
    call: 1,200 parses, a third of this file's largest test's CPU."""
    kind = draw(st.integers(0, 8))
    if kind <= 2:
        props = draw(st.dictionaries(NAMES, inner, max_size=4))
        schema: dict[str, Any] = {"type": "object", "properties": props}
        if draw(st.integers(0, 2)) == 0:
            del schema["type"]
        names = [*props, *draw(st.lists(NAMES, max_size=1))]
        if names:
            schema["required"] = draw(st.lists(st.sampled_from(names), unique=True))
        if draw(st.integers(0, 3)) == 0:
            schema["additionalProperties"] = draw(st.one_of(st.booleans(), inner))
    elif kind == 3:
        schema = {"type": "array", "items": draw(inner)}
        if draw(st.integers(0, 4)) == 0:
            schema["items"] = draw(st.lists(inner, max_size=2))
    elif kind == 4:
        schema = {"type": "object", "additionalProperties": draw(inner)}
        if draw(st.booleans()):
            schema["additionalProperties"] = draw(st.booleans())
            schema["required"] = draw(st.lists(NAMES, max_size=2))
    elif kind == 5:
        key = draw(st.sampled_from(["anyOf", "oneOf", "allOf"]))
        schema = {key: draw(st.lists(inner, min_size=1, max_size=3))}
    elif kind == 6 and draw(st.booleans()):
        return {
            "$ref": draw(refs),
            **_nested(draw(st.dictionaries(NAMES, inner, max_size=2))),
        }
    else:
        schema = {"$ref": draw(refs)}
    return _annotate(schema, draw)


def schemas(refs: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Nested schemas whose ``$ref``s are drawn from ``refs``."""

    def extend(inner: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        return compound_schema(inner, refs)

    return st.recursive(scalar_schema(), extend, max_leaves=8)


@st.composite
def tool_schema(draw: st.DrawFn) -> dict[str, Any]:
    """A root object schema, possibly with ``$defs``/``definitions`` referring to each other."""
    def_names = draw(st.lists(DEF_NAMES, max_size=3, unique=True))
    pointers = [f"#/{where}/{name}" for name in def_names for where in ("$defs", "definitions")]
    pointers += ["#", "#/properties/p0", "#/$defs/missing", "https://example.invalid/s.json"]
    pointers += ["#/properties/p0/items", "#anchor", "#/$defs/a%20b"]
    sub = schemas(st.sampled_from(pointers))
    props = draw(st.dictionaries(NAMES, st.one_of(sub, st.booleans()), max_size=6))
    root: dict[str, Any] = {"type": "object", "properties": {"p0": draw(sub), **props}}
    if draw(st.booleans()):
        root["required"] = draw(st.lists(st.sampled_from([*root["properties"], "ghost"])))
    if def_names:
        root[draw(st.sampled_from(["$defs", "definitions"]))] = {n: draw(sub) for n in def_names}
    if draw(st.integers(0, 4)) == 0:
        root["additionalProperties"] = draw(st.one_of(st.booleans(), sub))
    if draw(st.integers(0, 5)) == 0:
        root = {
            "allOf": [
                root,
                {"type": "object", "properties": draw(st.dictionaries(NAMES, sub, max_size=2))},
            ]
        }
    return root


@st.composite
def tool_specs(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    specs = []
    for name in names:
        spec: dict[str, Any] = {"name": name, "inputSchema": draw(tool_schema())}
        description = draw(TEXTS)
        if description is not None or draw(st.booleans()):
            spec["description"] = description
        if draw(st.integers(0, 2)) == 0:
            spec["outputSchema"] = draw(tool_schema())
        if draw(st.integers(0, 3)) == 0:
            spec["namespace"] = draw(
                st.sampled_from(["github", "git-hub", "a.b", "list", "é", "1"])
            )
        specs.append(spec)
    return specs


# --- checks -----------------------------------------------------------------------------

PROMPT_FALLBACK = "prompt typed from the annotations"
"""The prompt renderer's own fallback (it recurses forever on ``allOf`` of a recursive ref
and more, see ``test_prompt_falls_back_on_all_of_a_recursive_ref_and_more``): module, stub
and names are unaffected, which is what this file checks."""


def import_module(source: str, name: str, directory: Path | None = None) -> ModuleType:
    """Import generated source (from a file in ``directory`` when given)."""
    if directory is None:
        module = type(sys)(name)
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)
        return module
    path = directory / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


async def check_sdk(
    specs: list[dict[str, Any]], name: str = "generated", directory: Path | None = None
) -> sdk_gen.GeneratedSDK:
    """Generate, import, compare names, and send instances through the module."""
    sdk = sdk_gen.generate(specs)
    assert [w for w in sdk.warnings if PROMPT_FALLBACK not in w] == []
    compile(sdk.stub_source, f"<{name}.pyi>", "exec")
    module = import_module(sdk.module_source, name, directory)
    if directory is not None:
        (directory / f"{name}_stub.pyi").write_text(sdk.stub_source, encoding="utf-8")
    assert sorted(sdk.names.tools.values()) == sorted(s["name"] for s in specs)
    assert sdk_gen.generate(list(reversed(specs))) == sdk, "order must not matter"
    recorder = Recorder()
    module.set_transport(recorder)
    for seed, spec in enumerate(specs):
        wire = spec["name"]
        path = sdk.names.wire_to_python(wire)
        assert sdk.names.python_to_wire(path) == wire
        table = sdk.names.arguments[wire]
        assert len(set(table.values())) == len(table), "argument names must map one to one"
        maker = InstanceMaker(spec.get("inputSchema", {}), seed)
        root = root_object(maker.root, maker.defs)
        assert set(table.values()) == set(root.properties)
        to_py = {w: p for p, w in table.items()}
        func = function_for(module, path)
        for _ in range(2):
            instance = maker.arguments(root.properties, root.required)
            assert (
                sdk.names.arguments_to_wire(wire, sdk.names.arguments_to_python(wire, instance))
                == instance
            )
            recorder.calls.clear()
            await func(**{to_py[k]: v for k, v in instance.items()})
            assert recorder.calls == [(wire, instance)]
    return sdk


def type_check(directory: Path) -> None:
    """One ``mypy --strict`` and one ``ruff check`` over every file in ``directory``."""
    files = sorted(str(p) for p in directory.iterdir() if p.suffix in {".py", ".pyi"})
    mypy = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", str(directory / ".mypy"), *files],
        capture_output=True, text=True, cwd=directory,
    )  # fmt: skip
    assert mypy.returncode == 0, mypy.stdout[-3000:]
    ruff = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache",
         "--config", str(ROOT / "pyproject.toml"), *files],
        capture_output=True, text=True,
    )  # fmt: skip
    assert ruff.returncode == 0, ruff.stdout[-3000:]


# --- tests ------------------------------------------------------------------------------


@pytest.mark.timeout(300)  # 60 generated SDKs, each imported: ~15 s idle, >120 s at load 8
@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(tool_specs())
async def test_messy_tools_generate_import_and_round_trip(specs: list[dict[str, Any]]) -> None:
    try:
        await check_sdk(specs)
    except SdkGenerationError:
        names = [s["name"] for s in specs]
        assert len(set(names)) < len(names), "only duplicate names may refuse"


def _tool(name: str, properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties, **extra}}


def _nested(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


_DEFS = "$defs"
_NULL_OR_ROOT = {"anyOf": [{"type": "null"}, {"$ref": "#"}]}
_ANCHORED = {
    "it": {"$anchor": "item", **_nested({"z": {"type": "integer"}})},
    "a b": {"type": "string"},
}
_M = {"$ref": "#/$defs/M"}
_RECURSIVE_UNION = _nested(
    {"n": {"anyOf": [{"type": ["boolean", "array", "null"]}, {"$ref": "#"}]}}
)

REGRESSIONS: list[tuple[str, list[dict[str, Any]]]] = [
    # Keys with characters str.splitlines() breaks at: the type source was cut into lines there.
    ("line-break-keys", [_tool("t", {"o": _nested({"a\x1fb": {}, "c\u2028d": {}, "e\x85": {}})})]),
    # A one-line docstring ending in a quote closed early: `""""""""`.
    ("quote-description", [{"name": "q", "description": '"'}, {"name": "r", "description": 'a "'}]),
    # Lone surrogates: in nested descriptions (the type generator writes UTF-8) and in keys.
    ("surrogate-description", [_tool("s", {"o": _nested({"a": {"description": "x\ud800"}})})]),
    ("surrogate-keys", [_tool("k", {"o": {
        **_nested({"\ud800": {}, "x\udfffy": {}}), "required": ["\ud800"]}})]),
    # $ref chains that only name themselves: refused by the type generator.
    ("self-alias", [_tool(
        "a", {"p": {**_M, "nullable": False}}, **{_DEFS: {"M": _M}}
    )]),
    ("self-property-ref", [_tool("b", {"p0": {"$ref": "#/properties/p0"}, "": {"$ref": "#"}})]),
    ("self-one-of", [_tool("c", {"p0": {"oneOf": [{"$ref": "#/properties/p0"}]}})]),
    ("mutual-unions", [_tool("d", {"p": {"$ref": "#/$defs/A"}}, **{_DEFS: {
        "A": {"anyOf": [{"$ref": "#/$defs/B"}, {"type": "string"}]},
        "B": {"anyOf": [{"$ref": "#/$defs/A"}, {"type": "integer"}]},
    }})]),
    # A union listing itself: mypy's "invalid recursive alias".
    ("union-of-itself", [_tool("e", {"p": {"$ref": "#/$defs/I"}}, **{_DEFS: {"I": {"anyOf": [
        {"$ref": "#/$defs/I", "default": 1}, _nested({"x": {}}), {"type": "number"}]}}})]),
    # A nested key named `Any`: the generator imports `Any as Any_aliased`.
    ("field-named-any", [_tool("f", {"o": _nested({"Any": {}, "x": {"type": "object"}})})]),
    # `__x` in a namespace class is name-mangled; `__getattr__` as a module function hooks it.
    ("private-names", [
        {**_tool("__x", {"__y": {"type": "string"}, "__z__": {}}), "namespace": "ns"},
        {**_tool("__getattr__", {"__y": {}}), "namespace": "__ns"},
        _tool("__name__", {"__y": {}}),
    ]),
    # Keys the type generator renames (`_p` → `field_p`) or Python normalises (`ﬁle` → `file`).
    ("renamed-keys", [_tool("g", {"o": _nested({"_p": {"description": "d"}, "ﬁle": {}})})]),
    # `type: array` beside an enum became an `Enum` class.
    ("array-enum", [_tool("h", {"o": _nested({"a": {"type": "array", "enum": [{}, [1]]}})})]),
    # A recursive array became a bare `list` alias.
    ("recursive-array", [_tool("i", {"p0": {"items": {"$ref": "#/properties/p0"}}})]),
    # A type name Python NFKC-normalises (`º` → `o`) mismatched its functional TypedDict name.
    ("nfkc-type-name", [{"name": "j", "outputSchema": _nested({
        "x": _nested({"ºÖ": _nested({"a-b": {}})})})}]),
    # Lint codes the wire names decide: E741/E742/E743, ASYNC109 only for parameters, UP013.
    ("ambiguous-names", [
        {**_tool("O", {"l": {}, "timeout": {}}), "namespace": "I"},
        _tool("l", {"o": _nested({"I": {}, "timeout": {}})}),
    ]),
    # Display width, not length, decides E501 (wide characters count twice).
    ("wide-lines", [_tool("w", {"名" * 60: {"type": "string"}, "o": _nested({"キ" * 60: {}})})]),
    # `Union[A | None, "Ref"]` (RUF036) and an unused `Optional` import from recursive unions.
    ("recursive-nullable-union", [{"name": "u", "inputSchema": _RECURSIVE_UNION}]),
    # `#name` ($anchor) was read as `#` (the whole root); `%20` in a pointer was not decoded.
    ("anchor-and-encoded-refs", [_tool(
        "x", {"a": {"$ref": "#item"}, "b": {"$ref": "#/$defs/a%20b"}}, **{_DEFS: _ANCHORED}
    )]),
    # A ref to itself beside a type of its own: refused as a loop.
    ("self-ref-with-siblings", [_tool("y", {"p0": {"type": "array", "items": {
        "$ref": "#/properties/p0/items", **_nested({"s": {}})}}})]),
    # A definition that is only a ref to a later type: `D: TypeAlias = "R"`, then `D | Any`
    # failed as the module ran (str | type).
    ("alias-to-a-later-type", [_tool(
        "z", {"_r": {"oneOf": [{"$ref": "#/$defs/"}, {}]}}, **{_DEFS: {"": {"$ref": "#"}}}
    )]),
    # `Optional["Root"]`, `Union[...]` for recursive types: UP045/UP007 (or not, by quotes).
    ("optional-forward-ref", [_tool("o", {"d": {"anyOf": [_NULL_OR_ROOT]}, "x-y": {}})]),
    # Pydantic 1 documents a model-typed field as `allOf: [ref]`: the prompt recursed without
    # end when the ref was recursive (now read as the ref itself, docs kept).
    ("all-of-one-recursive-ref", [
        _tool("r1", {"l": {"allOf": [{"$ref": "#"}], "description": "Same shape."}}),
        _tool("r2", {"n": {"allOf": [{"$ref": "#"}, {"description": "Doc branch."}]}}),
    ]),
    # Keys beside enum/const values that made the type generator read a map or an object:
    # valid values failed to type-check against the stub (see TYPED_CALLS).
    ("values-beside-shape-keys", [_tool("k", {
        "a": {"enum": [[], None], "patternProperties": {"^x-": {"type": "integer"}}},
        "b": {"enum": [[]], "propertyNames": {"type": "string"}},
        "c": {"const": {"k": 1}, **_nested({"k": {"type": "string"}})},
    })]),
    # Object keywords beside a scalar type, read as a map by the type generator.
    ("object-keys-beside-a-scalar-type", [_tool("m", {"o": _nested({
        "c": {"type": "number", "patternProperties": {"^x-": {"type": "integer"}}},
        "d": {"type": "string", "items": {"type": "integer"}},
    })})]),
    # Tabs in nested descriptions mixed with the generator's indentation (E101).
    ("tab-description", [_tool("v", {"o": _nested({"a": {"description": "\tindented\n\tmore"}})})]),
]  # fmt: skip


@pytest.mark.parametrize(("case", "specs"), REGRESSIONS, ids=[c for c, _ in REGRESSIONS])
async def test_regression_rows(case: str, specs: list[dict[str, Any]], tmp_path: Path) -> None:
    sdk = await check_sdk(specs, f"regression_{case.replace('-', '_')}", tmp_path)
    assert sdk.warnings == ()


TYPED_CALLS = {
    "values-beside-shape-keys": ["k(a=[], b=[], c={'k': 1})", "k(a=None)"],
    "renamed-keys": ["g(o={'_p': 'x', 'ﬁle': 1})"],
    "private-names": ["ns.x(_y='a', _z__=1)", "name__(__y=2)"],
    "anchor-and-encoded-refs": ["x(a={'z': 1}, b='s')"],
    "recursive-nullable-union": ["u(n={'n': None})", "u(n=[True])"],
    "object-keys-beside-a-scalar-type": ["m(o={'c': 9.5, 'd': 'text'})"],
}
"""Calls with schema-valid values that must type-check against the stub of their row."""


def test_regression_rows_type_check_and_lint(tmp_path: Path) -> None:
    """One mypy --strict and one ruff over every row's module and stub, and over calls
    made with valid values against those stubs."""
    imports, body = [], []
    for case, specs in REGRESSIONS:
        sdk = sdk_gen.generate(specs)
        name = f"regression_{case.replace('-', '_')}"
        (tmp_path / f"{name}.py").write_text(sdk.module_source, encoding="utf-8")
        (tmp_path / f"{name}_stub.pyi").write_text(sdk.stub_source, encoding="utf-8")
        if case in TYPED_CALLS:
            (tmp_path / f"typed_{name}.pyi").write_text(sdk.stub_source, encoding="utf-8")
            imports.append(f"import typed_{name}")
            body += [f"    await typed_{name}.{call}" for call in TYPED_CALLS[case]]
    calls = [*sorted(imports), "", "", "async def main() -> None:", *body]
    (tmp_path / "calls.py").write_text("\n".join(calls) + "\n", encoding="utf-8")
    type_check(tmp_path)


def test_keys_keep_their_wire_spelling_in_types() -> None:
    stub = sdk_gen.generate(dict(REGRESSIONS)["renamed-keys"]).stub_source
    assert '"_p": NotRequired[Any],' in stub and '"ﬁle": NotRequired[Any],' in stub
    assert "field_p" not in stub


def test_private_names_shrink_where_python_would_mangle_them() -> None:
    """Tools and namespaces lose their leading ``_`` (scripts reach them as attributes,
    and the sandbox refuses ``_`` attributes: BFCL's ``_query_meeting_room_list`` was
    ``tools.ns._query_meeting_room_list``, an AttributeError in every script)."""
    names = sdk_gen.generate(dict(REGRESSIONS)["private-names"]).names
    assert dict(names.tools) == {
        "name__": "__name__",
        "ns_.getattr__": "__getattr__",
        "ns.x": "__x",
    }
    assert dict(names.arguments["__x"]) == {"_y": "__y", "_z__": "__z__"}
    assert dict(names.arguments["__name__"]) == {"__y": "__y"}, "module functions keep them"


def test_all_of_one_recursive_ref_reads_as_the_ref() -> None:
    sdk = sdk_gen.generate(dict(REGRESSIONS)["all-of-one-recursive-ref"])
    assert "\nr1\n l?: Root # Same shape.\n" in sdk.prompt
    assert "\nr2\n n?: Root # Doc branch.\n" in sdk.prompt


def test_prompt_falls_back_on_all_of_a_recursive_ref_and_more() -> None:
    """The prompt renderer recurses without end here; its fallback keeps the SDK whole."""
    part = _nested({"z": {}})
    sdk = sdk_gen.generate([_tool("s", {"l": {"allOf": [{"$ref": "#"}, part]}})])
    assert all(PROMPT_FALLBACK in w for w in sdk.warnings)
    assert "\ns\n l?: " in sdk.prompt
    compile(sdk.module_source, "tools.py", "exec")


def test_anchor_and_percent_encoded_refs_resolve() -> None:
    sdk = sdk_gen.generate(dict(REGRESSIONS)["anchor-and-encoded-refs"])
    assert "\nx\n a?: {z?: int}\n b?: str\n" in sdk.prompt
    assert "class XItem(TypedDict):\n    z: NotRequired[int]" in sdk.stub_source


def test_recursive_types_keep_their_old_style_unions_lint_clean() -> None:
    source = sdk_gen.generate(dict(REGRESSIONS)["optional-forward-ref"]).module_source
    assert 'NotRequired[Optional["ORoot"]]' in source
    assert "# ruff: noqa: RUF100, UP045\n" in source
