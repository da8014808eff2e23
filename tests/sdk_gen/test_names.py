"""Wire name → Python identifier: edge cases, collisions, and the exact way back."""

from __future__ import annotations

import keyword

import pytest

import sdk_gen
from sdk_gen._names import assign_identifiers, to_identifier


@pytest.mark.parametrize(
    ("wire", "py"),
    [
        ("search_repos", "search_repos"),
        ("search-repos", "search_repos"),
        ("get.issue", "get_issue"),
        ("run query", "run_query"),
        ("1st", "_1st"),
        ("2fa.verify", "_2fa_verify"),
        ("from", "from_"),
        ("class", "class_"),
        ("None", "None_"),
        ("@type", "type"),
        ("_private", "_private"),
        ("__dunder-x", "__dunder_x"),
        ("user-id", "user_id"),
        ("MA(5)", "MA_5"),
        ("año", "año"),
        ("名前", "名前"),
        ("ﬁle", "file"),
        ("x²", "x2"),
        ("", "arg"),
        ("@", "arg"),
        ("match", "match"),
    ],
)
def test_to_identifier(wire: str, py: str) -> None:
    assert to_identifier(wire) == py
    assert py.isidentifier() and not keyword.iskeyword(py)


@pytest.mark.parametrize(
    ("wires", "reserved", "avoid_soft", "expected"),
    [
        (["user-id", "user_id"], (), False, {"user_id": "user_id", "user-id": "user_id_"}),
        (
            ["user id", "user-id", "user_id"],
            (),
            False,
            {"user_id": "user_id", "user id": "user_id_", "user-id": "user_id_2"},
        ),
        (["from", "from_"], (), False, {"from_": "from_", "from": "from_2"}),
        (["print", "list"], ("print", "list"), False, {"print": "print_", "list": "list_"}),
        (["match", "type", "_"], (), True, {"match": "match_", "type": "type_", "_": "__"}),
        (["match", "type"], (), False, {"match": "match", "type": "type"}),
        (["a", "a_"], ("a",), False, {"a_": "a_", "a": "a_2"}),
    ],
)
def test_collisions_resolved_deterministically(
    wires: list[str], reserved: tuple[str, ...], avoid_soft: bool, expected: dict[str, str]
) -> None:
    assert assign_identifiers(wires, reserved=reserved, avoid_soft=avoid_soft) == expected
    assert assign_identifiers(reversed(wires), reserved=reserved, avoid_soft=avoid_soft) == expected


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        ([{"name": "search-repos"}], {"search_repos": "search-repos"}),
        ([{"name": "print"}, {"name": "list"}], {"print_": "print", "list_": "list"}),
        (
            [{"name": "OMIT"}, {"name": "set_transport"}],
            {"OMIT_": "OMIT", "set_transport_": "set_transport"},
        ),
        ([{"name": "Any"}, {"name": "Literal"}], {"Any_": "Any", "Literal_": "Literal"}),
        (
            [{"name": "_invoke"}, {"name": "_transport"}],
            {"invoke": "_invoke", "transport": "_transport"},  # no `_`: scripts reach them
        ),
        (
            [{"name": "a.b"}, {"name": "a-b"}, {"name": "a_b"}],
            {"a_b": "a_b", "a_b_": "a-b", "a_b_2": "a.b"},
        ),
        (
            [{"name": "get", "namespace": "git-hub"}, {"name": "git_hub"}],
            {"git_hub.get": "get", "git_hub_": "git_hub"},
        ),
        ([{"name": "class", "namespace": "def"}], {"def_.class_": "class"}),
    ],
)
def test_tool_paths(tools: list[dict[str, str]], expected: dict[str, str]) -> None:
    sdk = sdk_gen.generate([{**t, "inputSchema": {"type": "object"}} for t in tools])
    assert dict(sdk.names.tools) == expected
    for path, wire in expected.items():
        assert sdk.names.python_to_wire(path) == wire
        assert sdk.names.wire_to_python(wire) == path


def test_argument_mapping_helpers() -> None:
    sdk = sdk_gen.generate(
        [
            {
                "name": "t",
                "inputSchema": {
                    "type": "object",
                    "properties": {"from": {}, "user-id": {}, "q": {}},
                },
            }
        ]
    )
    assert dict(sdk.names.arguments["t"]) == {"from_": "from", "user_id": "user-id", "q": "q"}
    wire = sdk.names.arguments_to_wire("t", {"from_": 1, "user_id": 2, "q": 3, "other": 4})
    assert wire == {"from": 1, "user-id": 2, "q": 3, "other": 4}
    assert sdk.names.arguments_to_python("t", wire) == {
        "from_": 1,
        "user_id": 2,
        "q": 3,
        "other": 4,
    }


def test_duplicate_tool_names_are_rejected() -> None:
    from codemode.errors import SdkGenerationError

    with pytest.raises(SdkGenerationError, match="duplicate"):
        sdk_gen.generate([{"name": "x"}, {"name": "x", "namespace": "other"}])
