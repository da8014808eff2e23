"""The prompt's notation, its shared descriptions, and an audit that notices what goes missing."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import sdk_gen
from sdk_gen import _generate
from sdk_gen._audit import audit_prompt
from sdk_gen._prompt import HEADER, HEADER_CLAUSES, SHARED, SHARED_CLAUSES, SHARED_MIN_TOOLS
from sdk_gen._text import TOOL_LIMIT, TRUNCATED, tool_text

OWNER = "Repository owner (user or organization)"
SENTENCE = "This tool belongs to the repository system, which manages code and reviews."


def _tool(name: str, *, owner_doc: str = OWNER) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"{SENTENCE} Does {name}.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "owner": {"type": "string", "description": owner_doc},
                "state": {
                    "enum": ["open", "closed"],
                    "default": "open",
                    "description": f"State for {name}.",
                },
                "filter": {
                    "type": "object",
                    "properties": {
                        "label": {"type": "string", "description": "Label name."},
                        "mine": {"type": "boolean"},
                    },
                    "required": ["label"],
                },
            },
            "required": ["owner"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"total": {"type": "integer", "description": "How many matched."}},
        },
    }


TOOLS = [_tool(f"t{i}") for i in range(SHARED_MIN_TOOLS)]


@pytest.fixture(scope="module")
def sdk() -> sdk_gen.GeneratedSDK:
    return sdk_gen.generate(TOOLS)


def test_repeated_descriptions_are_listed_once(sdk: sdk_gen.GeneratedSDK) -> None:
    assert sdk.prompt.count(OWNER) == 1
    assert sdk.prompt.count(SENTENCE) == 1
    glossary = [" label: Label name.", f" owner: {OWNER}", " total: How many matched."]
    title = SHARED + "; ".join(SHARED_CLAUSES[1:]) + "):"  # no type is named here
    assert sdk.prompt.splitlines()[1:6] == [title, *glossary, f" §1 {SENTENCE}"]
    assert "\nt0: §1 Does t0.\n owner: str ^\n" in sdk.prompt


def test_descriptions_fewer_tools_repeat_stay_in_place() -> None:
    prompt = sdk_gen.generate(TOOLS[: SHARED_MIN_TOOLS - 1]).prompt
    assert SHARED not in prompt and "^" not in prompt and "§" not in prompt
    assert prompt.count(f" owner: str # {OWNER}\n") == SHARED_MIN_TOOLS - 1


def test_a_key_shares_only_its_most_used_description() -> None:
    tools = [*TOOLS, *(_tool(f"u{i}", owner_doc="Owner login.") for i in range(4))]
    prompt = sdk_gen.generate(tools).prompt
    assert " owner: Owner login.\n" in prompt
    assert prompt.count(" owner: str ^\n") == 4
    assert prompt.count(" owner: str # ") == SHARED_MIN_TOOLS  # the other text stays in place
    assert audit_prompt(tools, sdk_gen.generate(tools))[1] == []


def test_nested_keys_and_results_are_lines_under_their_argument(
    sdk: sdk_gen.GeneratedSDK,
) -> None:
    block = sdk.prompt.partition("\nt1: ")[2].partition("\nt2: ")[0]
    assert block.splitlines()[1:] == [
        " owner: str ^",
        ' state?: "open"|"closed" = "open" # State for t1.',
        " filter?: dict",
        "  label: str ^",
        "  mine?: bool",
        " -> dict",
        "  total?: int ^",
    ]


def test_the_audit_counts_nested_facts(sdk: sdk_gen.GeneratedSDK) -> None:
    checked, lost = audit_prompt(TOOLS, sdk)
    assert lost == []
    n = len(TOOLS)
    assert checked["nested names"] == 3 * n
    assert checked["nested required"] == n
    assert checked["nested descriptions"] == 2 * n


@pytest.mark.parametrize(
    ("old", "new", "lost"),
    [
        (" owner: str ^\n", " owner?: str ^\n", "t0: required of owner"),
        (" owner: str ^\n", " owner: str\n", "t0: descriptions of owner"),
        (f" owner: {OWNER}\n", "", "t0: descriptions of owner"),
        (f" §1 {SENTENCE}\n", "", "t0: descriptions of tool"),
        (' = "open" # State for t0.', " # State for t0.", "t0: defaults of state"),
        ('"open"|"closed" = "open"', '"open" = "open"', "t0: enums of state='closed'"),
        ("  label: str ^\n", "", "t0: nested names of label"),
        ("  label: str ^\n", "  label?: str ^\n", "t0: nested required of label"),
        ("  total?: int ^\n", "  total?: int\n", "t0: nested descriptions of total"),
    ],
)
def test_the_audit_notices_what_goes_missing(
    sdk: sdk_gen.GeneratedSDK, old: str, new: str, lost: str
) -> None:
    start = sdk.prompt.index("\nt0: ")
    end = sdk.prompt.index("\nt1: ")
    if sdk.prompt.find(old, start, end) >= 0:
        prompt = sdk.prompt[:start] + sdk.prompt[start:end].replace(old, new, 1) + sdk.prompt[end:]
    else:
        prompt = sdk.prompt.replace(old, new, 1)
    assert prompt != sdk.prompt
    _, found = audit_prompt(TOOLS, dataclasses.replace(sdk, prompt=prompt))
    assert lost in found


REGIONS = ["KR", "BR", "EUNE", "EUW", "LAN", "LAS", "NA", "OCE", "RU", "TR", "JP"]


def _regional(name: str, *, namespace: str | None = None) -> dict[str, Any]:
    tool: dict[str, Any] = {
        "name": name,
        "description": f"Ranks for {name}.",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"enum": REGIONS, "description": f"Where {name} looks."}},
            "required": ["region"],
        },
    }
    if namespace is not None:
        tool["namespace"] = namespace
    return tool


def test_a_long_literal_type_several_lines_repeat_is_named_once() -> None:
    tools = [_regional("ranks"), _regional("ladder")]
    sdk = sdk_gen.generate(tools)
    literal = "|".join(f'"{r}"' for r in REGIONS)
    assert sdk.prompt.count(literal) == 1
    assert f"\n Region = {literal}\n" in sdk.prompt
    assert "\n region: Region # Where ranks looks.\n" in sdk.prompt
    assert audit_prompt(tools, sdk)[1] == []
    without = sdk.prompt.replace(f" Region = {literal}\n", "")
    lost = audit_prompt(tools, dataclasses.replace(sdk, prompt=without))[1]
    assert "ranks: enums of region='KR'" in lost


def test_a_type_name_never_takes_a_name_a_tool_defines() -> None:
    node = {
        "type": "object",
        "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Region"}}},
    }
    recursive = {
        "name": "tree",
        "inputSchema": {
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Region"}},
            "$defs": {"Region": node},
        },
    }
    tools = [recursive, _regional("ranks"), _regional("ladder")]
    sdk = sdk_gen.generate(tools)
    assert "\n Region = {children?: list[Region]}" in sdk.prompt
    assert "\n Region2 = " in sdk.prompt and " region: Region2 # " in sdk.prompt
    assert audit_prompt(tools, sdk)[1] == []


def test_short_or_unrepeated_literal_types_stay_in_place() -> None:
    prompt = sdk_gen.generate([_regional("ranks"), *TOOLS]).prompt
    assert "Region =" not in prompt and ' region: "KR"|"BR"|' in prompt
    assert ' state?: "open"|"closed" = "open"' in prompt


def test_namespaced_tools_are_grouped_under_one_line() -> None:
    tools = [
        _regional("ranks", namespace="lol"),
        _regional("plain"),
        _regional("ladder", namespace="lol"),
    ]
    sdk = sdk_gen.generate(tools)
    lines = [ln for ln in sdk.prompt.splitlines() if not ln.startswith((" ", "#", "Shared"))]
    assert lines == ["plain: Ranks for plain.", "[lol]", "ladder: Ranks for ladder.",
                     "ranks: Ranks for ranks."]
    assert audit_prompt(tools, sdk)[1] == []
    moved = sdk.prompt.replace("[lol]\n", "")
    assert "ranks: descriptions of tool" in audit_prompt(
        tools, dataclasses.replace(sdk, prompt=moved))[1]


def test_a_schema_the_prompt_cannot_read_degrades_to_annotations(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise KeyError("surprise")

    monkeypatch.setattr(_generate, "tool_prompt", broken)
    sdk = sdk_gen.generate(TOOLS[:1])
    assert "\nt0: " in sdk.prompt
    assert ' state?: Literal["open", "closed"] = "open" # State for t0.\n' in sdk.prompt
    assert sdk.warnings == ("t0: prompt typed from the annotations (KeyError: 'surprise')",)


OBJ = {"type": "object", "properties": {"a": {"type": "string"}}}


@pytest.mark.parametrize(
    ("schema", "line"),
    [
        ({"allOf": [{"$ref": "#/$defs/O"}, {"required": ["a"]}]}, " x?: {a: str}"),
        ({"allOf": [OBJ, {"properties": {"b": {"type": "integer"}}}]}, " x?: {a?: str, b?: int}"),
        (  # keywords beside a $ref apply as well (2019-09+), annotations alone do not merge
            {"$ref": "#/$defs/O", "properties": {"b": {"type": "integer"}}},
            " x?: {a?: str, b?: int}",
        ),
        ({"$ref": "#/$defs/O", "description": "Doc."}, " x?: {a?: str} # Doc."),
        ({"allOf": [{"type": "string"}, {"minLength": 1}]}, " x?: str"),
        ({"allOf": [{"type": "string"}, {"enum": ["s"]}]}, ' x?: str&"s"'),
        ({"enum": ['a"|b', "c\\"]}, ' x?: \'a"|b\'|"c\\\\"'),
        ({"anyOf": [{"enum": ["a|b"]}, {"enum": ["a|b", None]}]}, ' x?: "a|b"|None'),
        ({"type": "array", "items": OBJ}, " x?: list[{a?: str}]"),
        (
            {"anyOf": [{"type": "string", "description": "One."}, {"type": "integer"}]},
            " x?: str|int # (str: One.)",
        ),
        ({"type": "object", "additionalProperties": OBJ}, " x?: dict[str, {a?: str}]"),
        ({"type": "object", "patternProperties": {"^[A-Z_]+$": {"type": "string"}},
          "additionalProperties": False}, " x?: dict[str, str] # (keys match ^[A-Z_]+$)"),
        ({"patternProperties": {"^x-": {"type": "integer"}, "^y-": OBJ}},
         " x?: dict[str, int|{a?: str}] # (keys match ^x- or ^y-)"),
        # named keys and pattern keys: the pattern keys' type was left out ({env?: str})
        ({"properties": {"env": {"type": "string"}}, "additionalProperties": False,
          "patternProperties": {"^x-": {"type": "integer"}}},
         " x?: {env?: str, **: int} # (other keys match ^x-)"),
        ({"properties": {"env": {"type": "string"}}, "additionalProperties": True,
          "patternProperties": {"^x-": {"type": "integer"}}},
         " x?: {env?: str, **: Any} # (other keys match ^x-)"),
        ({"type": ["object", "null"], "properties": {"a": {"default": 1}}}, " x?: dict|None"),
    ],
)
def test_shapes_in_the_prompt_notation(schema: dict[str, Any], line: str) -> None:
    params = {"type": "object", "properties": {"x": schema}, "$defs": {"O": OBJ}}
    sdk = sdk_gen.generate([{"name": "t", "inputSchema": params}])
    assert sdk.prompt.splitlines()[2] == line
    assert audit_prompt([{"name": "t", "inputSchema": params}], sdk)[1] == []


@pytest.mark.parametrize(
    ("schema", "line"),
    [
        ({"type": "string", "pattern": "^a\nimport os$"}, ' x?: str # (pattern "^a\\nimport os$")'),
        ({"type": "string", "format": "d\u2028t"}, ' x?: str # (format "d\\u2028t")'),
        ({"type": "string", "pattern": "a\rb\x85c"}, ' x?: str # (pattern "a\\rb\\x85c")'),
        ({"patternProperties": {"^k\n# x": {"type": "integer"}}},
         ' x?: dict[str, int] # (keys match "^k\\n# x")'),
        ({"type": "string", "description": "a\x00b\x1fc"}, " x?: str # a b c"),
    ],
)  # fmt: skip
def test_schema_text_with_line_breaks_or_controls_stays_on_its_line(
    schema: dict[str, Any], line: str
) -> None:
    """Patterns, formats and pattern keys come from untrusted servers: a raw newline or
    ``\\u2028`` in one ended the argument's line and started a line of its own."""
    params = {"type": "object", "properties": {"x": schema}}
    sdk = sdk_gen.generate([{"name": "t", "inputSchema": params}])
    assert sdk.prompt.splitlines()[2:] == [line]
    assert "\x00" not in sdk.prompt


def test_a_very_long_pattern_is_cut_in_the_prompt_and_whole_in_the_module() -> None:
    """Before: a server's 3,000-character pattern made a 3,000-character prompt line."""
    pattern = "x" * 3000
    props = {"k": {"type": "object", "properties": {"a": {"type": "string", "pattern": pattern}}}}
    sdk = sdk_gen.generate([{"name": "t", "inputSchema": {"type": "object", "properties": props}}])
    line = sdk.prompt.splitlines()[-1]
    assert line == "  a?: str # (" + ("pattern " + pattern)[:140] + " …)"
    assert pattern in sdk.module_source


def test_a_pattern_keyed_map_is_typed_in_the_module_too() -> None:
    """``patternProperties`` rendered as a bare ``dict``: no value type, no key pattern."""
    params = {"type": "object", "properties": {"env": {
        "type": "object", "description": "Env vars.", "additionalProperties": False,
        "patternProperties": {"^[A-Z_]+$": {"type": "string"}}}}, "required": ["env"]}
    sdk = sdk_gen.generate([{"name": "t", "inputSchema": params}])
    assert "    env: dict[str, str],\n" in sdk.module_source
    assert "        env: Env vars. (keys match ^[A-Z_]+$)\n" in sdk.module_source


REF_DEFS = {
    "Size": {"type": "integer", "description": "Page size.", "default": 30, "minimum": 1},
    "Color": {"enum": ["red", "blue"], "type": "string", "description": "A color."},
    "Alias": {"$ref": "#/$defs/Color"},
    "Address": {
        "type": "object",
        "description": "A postal address.",
        "properties": {"tint": {"$ref": "#/$defs/Color"}},
    },
}


@pytest.mark.parametrize(
    ("schema", "line", "docline"),
    [
        ({"$ref": "#/$defs/Size"}, " size?: int = 30 # Page size. (>= 1)", "Page size. (>= 1)"),
        ({"$ref": "#/$defs/Color"}, ' size?: "red"|"blue" # A color.', "A color."),
        ({"$ref": "#/$defs/Alias"}, ' size?: "red"|"blue" # A color.', "A color."),
        (
            {"$ref": "#/$defs/Color", "description": "Own words.", "default": "red"},
            ' size?: "red"|"blue" = "red" # Own words.',
            "Own words.",
        ),
        ({"$ref": "#/$defs/Address"}, " size?: dict # A postal address.", "A postal address."),
    ],
    ids=["scalar-target", "enum-target", "chain", "own-words-win", "object-target"],
)
def test_a_ref_property_shows_what_its_target_documents(
    schema: dict[str, Any], line: str, docline: str
) -> None:
    tool = {
        "name": "t",
        "inputSchema": {"type": "object", "$defs": REF_DEFS, "properties": {"size": schema}},
    }
    sdk = sdk_gen.generate([tool])
    assert f"\nt\n{line}\n" in sdk.prompt
    assert f"        size: {docline}" in sdk.module_source
    checked, lost = audit_prompt([tool], sdk)
    assert lost == [] and checked["descriptions"] == 1


def test_nested_ref_keys_show_their_target_description() -> None:
    tool = {
        "name": "t",
        "inputSchema": {
            "type": "object",
            "$defs": REF_DEFS,
            "properties": {"to": {"$ref": "#/$defs/Address"}},
        },
    }
    sdk = sdk_gen.generate([tool])
    assert '  tint?: "red"|"blue" # A color.\n' in sdk.prompt
    checked, lost = audit_prompt([tool], sdk)
    assert lost == [] and checked["nested descriptions"] == 1


@pytest.mark.parametrize(
    ("schema", "shown"),
    [
        (
            {"type": "object", "properties": {"id": {"type": "integer"}},
             "additionalProperties": {"type": "string"}},
            " p?: {id?: int, **: str}\n",
        ),
        (
            {"type": "object", "properties": {"id": {"type": "integer"}},
             "additionalProperties": {"type": "object", "description": "Per label.",
                                      "properties": {"n": {"type": "integer",
                                                           "description": "N."}}}},
            " p?: dict\n  id?: int\n  **: dict # Per label.\n   n?: int # N.\n",
        ),
        (
            {"additionalProperties": {"type": "object", "properties": {"n": {"type": "integer"}}}},
            " p?: dict[str, {n?: int}]\n",
        ),
        (
            {"type": "object", "properties": {"id": {"type": "integer"}},
             "additionalProperties": False},
            " p?: {id?: int}\n",
        ),
        (
            {"type": "object", "properties": {"id": {"type": "integer"}},
             "additionalProperties": {}},
            " p?: {id?: int}\n",
        ),
        (
            {"type": "object", "properties": {"id": {"type": "integer"}},
             "additionalProperties": {"$ref": "#/$defs/Item"}},
            " p?: dict\n  id?: int\n  **: dict\n   n?: int # N.\n",
        ),
        (
            {"additionalProperties": {"$ref": "#/$defs/Item"}},
            " p?: dict[str, dict]\n  n?: int # N.\n",
        ),
    ],
    ids=["typed-other-keys", "described-other-keys", "untyped-map", "closed", "any-other-key",
         "ref-other-keys", "untyped-ref-map"],
)  # fmt: skip
def test_other_keys_of_an_object_are_shown_as_a_star_star_key(
    schema: dict[str, Any], shown: str
) -> None:
    item = {"type": "object", "properties": {"n": {"type": "integer", "description": "N."}}}
    tool = {
        "name": "t",
        "inputSchema": {"type": "object", "$defs": {"Item": item}, "properties": {"p": schema}},
    }
    sdk = sdk_gen.generate([tool])
    assert f"\nt\n{shown}" in sdk.prompt
    assert audit_prompt([tool], sdk)[1] == []


@pytest.mark.parametrize(
    ("tool", "shown"),
    [
        (
            {"name": "t", "inputSchema": {"allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"a": {"description": "The a.", "enum": ["x", "y"]}}},
            ]}},
            '\nt\n a: "x"|"y" # The a.\n',
        ),
        (
            {"name": "t", "inputSchema": {"type": "object", "properties": {"o": {"allOf": [
                {"type": "object", "properties": {"a": {"type": "string", "default": "z"}}},
                {"properties": {"a": {"description": "The a."}}},
            ]}}}},
            '\nt\n o?: dict\n  a?: str = "z" # The a.\n',
        ),
        (
            {"name": "t", "outputSchema": {"allOf": [
                {"properties": {"a": {"default": False}}}, {"properties": {"a": {}}},
            ]}},
            "\nt\n -> dict\n  a?: Any = False\n",
        ),
    ],
    ids=["arguments", "nested-keys", "result-keys"],
)  # fmt: skip
def test_a_key_several_all_of_parts_describe_keeps_every_parts_words(
    tool: dict[str, Any], shown: str
) -> None:
    sdk = sdk_gen.generate([tool])
    assert shown in sdk.prompt
    assert audit_prompt([tool], sdk)[1] == []


@pytest.mark.parametrize(
    ("tools", "clauses"),
    [
        ([{"name": "ping"}], ['"a"|"b"', "-> type"]),
        (
            [{"name": "t", "namespace": "ns", "description": "Word " * 100,
              "inputSchema": {"type": "object", "properties": {"o": {
                  "type": "object", "properties": {"a": {"type": "string", "description": "A."}},
                  "additionalProperties": {"type": "integer"}}}}}],
            ["deeper lines", "`**`", '"a"|"b"', "-> type", "[ns]", "cut short"],
        ),
    ],
    ids=["nothing-special", "everything"],
)  # fmt: skip
def test_the_header_explains_only_the_notation_in_use(
    tools: list[dict[str, Any]], clauses: list[str]
) -> None:
    header = sdk_gen.generate(tools).prompt.splitlines()[0]
    assert header.startswith(HEADER) and header.endswith(".")
    said = [clause for _, clause in HEADER_CLAUSES if clause in header]
    assert len(said) == len(clauses)
    assert all(any(part in clause for clause in said) for part in clauses)


PREAMBLE = " ".join(
    f"This tool belongs to the file system, part {n} of a long shared preamble."
    for n in range(5)
)


def test_a_shared_preamble_does_not_use_up_a_tools_description_room() -> None:
    assert len(PREAMBLE) > TOOL_LIMIT
    tools = [
        {"name": name, "description": f"{PREAMBLE} Tool description: {does}."}
        for name, does in (("touch", "Create a new file"), ("mkdir", "Create a directory"))
    ]
    sdk = sdk_gen.generate(tools)
    assert "\ntouch: §1 §2 §3 §4 §5 Tool description: Create a new file.\n" in sdk.prompt
    assert "\nmkdir: §1 §2 §3 §4 §5 Tool description: Create a directory.\n" in sdk.prompt
    assert audit_prompt(tools, sdk)[1] == []
    alone = sdk_gen.generate(tools[:1]).prompt
    assert f"\ntouch: {tool_text(tools[0]['description'])}\n" in alone
    assert "Create a new file" not in alone and alone.count(TRUNCATED + "\n") == 1


def test_the_audit_notices_a_tool_description_cut_shorter_than_promised() -> None:
    tool = {"name": "t", "description": "Word " * 100}
    sdk = sdk_gen.generate([tool])
    shorter = sdk.prompt.replace("Word Word" + TRUNCATED, "Word" + TRUNCATED)
    assert shorter != sdk.prompt
    assert audit_prompt([tool], sdk)[1] == []
    assert audit_prompt([tool], dataclasses.replace(sdk, prompt=shorter))[1] == [
        "t: descriptions of tool"
    ]


FRAGMENTS = [
    "Keep a one-line file (e.g. \"Call X.\") beside it.",
    "This preamble sentence is shared by every tool of this family here.",
    "Short.",
    "A sentence that runs on and on with many small words to fill the room up",
    "第一句话很长，没有空格，但是有中文标点。",
    "Averyveryverylongwordwithoutanyspaceatallthatgoesonforeverandeverandever",
    "i.e. a clause.",
    "Ends here!",
]


@pytest.mark.parametrize("seed", range(40))
def test_cut_descriptions_always_keep_a_prefix_the_audit_accepts(seed: int) -> None:
    import random

    rng = random.Random(seed)
    shared = " ".join(rng.choices(FRAGMENTS, k=rng.randint(0, 6)))
    tools = [
        {
            "name": f"t{n}",
            "description": " ".join([shared, *rng.choices(FRAGMENTS, k=rng.randint(1, 12))]),
        }
        for n in range(3)
    ]
    sdk = sdk_gen.generate(tools)
    assert audit_prompt(tools, sdk)[1] == []


@pytest.mark.parametrize(
    ("schema", "shown"),
    [
        ({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}],
          "minItems": 2, "maxItems": 2}, "tuple[str, int] # (min items 2; max items 2)"),
        ({"type": "array", "prefixItems": [{"type": "string"}], "items": False}, "tuple[str]"),
        ({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}},
         "tuple[str, *int]"),
        ({"type": "array", "prefixItems": [{"type": "string"}]}, "tuple[str, *Any]"),
        ({"type": "array", "items": [{"type": "string"}, {"type": "number"}],
          "additionalItems": False}, "tuple[str, float]"),
        ({"type": "array", "items": [{"type": "string"}]}, "tuple[str, *Any]"),
    ],
    ids=["pydantic-pair", "closed", "typed-rest", "open", "draft7-closed", "draft7-open"],
)  # fmt: skip
def test_tuples_show_one_type_per_position(schema: dict[str, Any], shown: str) -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"p": schema}}}
    assert f"\nt\n p?: {shown}\n" in sdk_gen.generate([tool]).prompt


@pytest.mark.parametrize(
    ("schema", "shown"),
    [
        ({"anyOf": [{"type": "string", "description": "The name."}, {"type": "null"}]},
         "str|None # The name."),
        ({"anyOf": [{"type": "string", "description": "A name."},
                    {"type": "integer", "description": "An id."}]},
         "str|int # (str: A name.; int: An id.)"),
    ],
    ids=["optional-value", "real-alternatives"],
)  # fmt: skip
def test_branch_descriptions_name_their_branch_only_between_alternatives(
    schema: dict[str, Any], shown: str
) -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"p": schema}}}
    sdk = sdk_gen.generate([tool])
    assert f"\nt\n p?: {shown}\n" in sdk.prompt
    assert audit_prompt([tool], sdk)[1] == []


@pytest.mark.parametrize(
    ("schema", "shown"),
    [
        ({"anyOf": [{"type": "string"}, {}]}, " p?: str|Any\n"),
        ({"anyOf": [{}, {"type": "null"}]}, " p?: Any\n"),
        ({"oneOf": [{"properties": {"z": {"type": "string", "description": "Z."}}}, {}]},
         " p?: dict|Any\n  z?: str # Z.\n"),
    ],
    ids=["scalar-or-anything", "anything-or-null", "object-or-anything"],
)  # fmt: skip
def test_a_union_with_anything_still_shows_its_other_members(
    schema: dict[str, Any], shown: str
) -> None:
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {"p": schema}}}
    sdk = sdk_gen.generate([tool])
    assert f"\nt\n{shown}" in sdk.prompt
    assert audit_prompt([tool], sdk)[1] == []


def test_no_tools_says_so_instead_of_explaining_an_unused_notation() -> None:
    """Before: the header's notation legend and nothing under it."""
    assert sdk_gen.generate([]).prompt == "# No tools: scripts compute with Python alone.\n"
    hidden = sdk_gen.generate([{"name": "t", "inputSchema": {"type": "object"}}])
    assert hidden.prompt.startswith("# Call `await tools.<name>(")
