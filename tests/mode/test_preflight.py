"""Static preflight: problems are found with script lines, and nothing runs."""

from __future__ import annotations

import ast

import pytest

from codemode.dispatch.spec import ToolSpec
from codemode.mode.preflight import _literal, check_script
from codemode.sandbox.language.policy import index_nodes

SPECS = {
    "search-issues": ToolSpec(
        name="search-issues",
        parameters={
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "limit": {"type": "integer", "maximum": 100},
                "from": {"$ref": "#/$defs/day"},
                "state": {"enum": ["open", "closed"]},
            },
            "required": ["query"],
            "$defs": {"day": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}},
        },
    ),
    "log": ToolSpec(
        name="log",
        parameters={
            "type": "object",
            "properties": {"level": {"type": "string"}},
            "additionalProperties": {"type": "string"},
        },
    ),
    "anything": ToolSpec(name="anything", parameters={"type": "object"}),
    "get_issue": ToolSpec(
        name="get_issue",
        parameters={
            "type": "object",
            "properties": {"number": {"type": "integer"}},
            "required": ["number"],
        },
        namespace="gh",
    ),
}
TOOLS = {
    "search_issues": "search-issues",
    "gh.get_issue": "get_issue",
    "log": "log",
    "anything": "anything",
}
ARGUMENTS = {
    "search-issues": {"query": "query", "limit": "limit", "from_": "from", "state": "state"},
    "get_issue": {"number": "number"},
    "log": {"level": "level"},
    "anything": {},
}


def check(source: str) -> list[str]:
    return [str(p) for p in check_script(source, tools=TOOLS, arguments=ARGUMENTS, specs=SPECS)]


_LABELS = ToolSpec(name="update_labels", parameters={  # the shape of GitHub's tool
    "type": "object",
    "properties": {"labels": {"type": "array", "items": {"anyOf": [
        {"type": "string"},
        {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "confidence": {"enum": ["LOW", "HIGH"]}}}]}},
        "at": {"$ref": "#/$defs/point"}},
    "$defs": {"point": {"type": "object", "required": ["x", "y"],
                        "properties": {"x": {"type": "number"}, "y": {"type": "number"}}}},
})


@pytest.mark.parametrize(("source", "expected"), [
    ("await tools.update_labels(labels=['a', {'name': 'b', 'confidence': 'SURE'}])",
     "line 1: tools.update_labels(labels=...): labels[1].confidence: 'SURE' is not one of"
     " ['LOW', 'HIGH']"),
    ("await tools.update_labels(at={'x': 1})",
     "line 1: tools.update_labels(at=...): 'y' is a required property"),
    ("await tools.update_labels(at={'x': 1, 'y': 'north'})",
     "line 1: tools.update_labels(at=...): at.y: 'north' is not of type 'number'"),
])
def test_a_problem_inside_an_argument_says_where(source: str, expected: str) -> None:
    """The message said only ``(labels=...): 'SURE' is not one of ...``: not which item."""
    problems = check_script(source, tools={"update_labels": "update_labels"},
                            arguments={"update_labels": {"labels": "labels", "at": "at"}},
                            specs={"update_labels": _LABELS})
    assert [str(p) for p in problems] == [expected]


@pytest.mark.parametrize(
    "source",
    [
        "x = await tools.search_issues(query='bug')",
        "x = await tools.gh.get_issue(number=3)",
        "x = await tools.search_issues(query='a', from_='2024-01-02', state='open', limit=5)",
        "kw = {'query': 'x'}\nx = await tools.search_issues(**kw)",
        "n = 5\nx = await tools.gh.get_issue(number=n)",
        "xs = await asyncio.gather(*[tools.gh.get_issue(number=i) for i in range(3)])",
        "f = tools.search_issues\nx = await f(query='q')",
        "await tools.log(level='info', user='ann', action='login')",
        "await tools.anything(color='red', size=3)",
    ],
    ids=[
        "simple",
        "namespaced",
        "all-args",
        "star-kwargs",
        "non-literal",
        "gather",
        "alias",
        "extra-keywords-allowed-by-schema",
        "free-form-object",
    ],
)
def test_valid_scripts_have_no_problems(source: str) -> None:
    assert check(source) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (
            "x = 1\nx = await tools.serch_issues(query='a')",
            "line 2: unknown tool tools.serch_issues; did you mean search_issues?",
        ),
        (
            "await tools.gh.get_isue(number=1)",
            "line 1: unknown tool tools.gh.get_isue; did you mean gh.get_issue?",
        ),
        (
            "await tools.search_issues(query='a', limt=1)",
            "line 1: tools.search_issues has no argument 'limt'; did you mean limit? "
            "(accepts: query, limit, from_, state)",
        ),
        (
            "await tools.search_issues(limit=5)",
            "line 1: tools.search_issues is missing required argument(s): query",
        ),
        (
            "await tools.search_issues('bug')",
            "line 1: tools.search_issues takes keyword arguments only "
            "(accepts: query, limit, from_, state)",
        ),
        (
            "await tools.search_issues(query='a', limit=500)",
            "line 1: tools.search_issues(limit=...): 500 is greater than the maximum of 100",
        ),
        (
            "await tools.search_issues(query='a', state='merged')",
            "line 1: tools.search_issues(state=...): 'merged' is not one of ['open', 'closed']",
        ),
        (
            "await tools.search_issues(query='a', from_='yesterday')",
            "line 1: tools.search_issues(from_=...): 'yesterday' does not match "
            "'^[0-9]{4}-[0-9]{2}-[0-9]{2}$'",
        ),
        (
            "await tools.gh.get_issue(number='7')",
            "line 1: tools.gh.get_issue(number=...): '7' is not of type 'integer'",
        ),
        (
            "tools.gh.get_issue(number=7)",
            "line 1: the result of tools.gh.get_issue(...) is discarded and the call never runs: "
            "add await",
        ),
        ("x = (\n  1 +\n", "line 1: SyntaxError: '(' was never closed"),
    ],
    ids=[
        "unknown-tool",
        "unknown-namespaced",
        "unknown-arg",
        "missing-required",
        "positional",
        "literal-maximum",
        "literal-enum",
        "literal-ref-pattern",
        "literal-type",
        "not-awaited",
        "syntax",
    ],
)
def test_problems_name_the_script_line(source: str, expected: str) -> None:
    assert check(source) == [expected]


def test_a_misspelt_required_argument_reports_both_problems() -> None:
    assert check("await tools.gh.get_issue(numbr=1)") == [
        "line 1: tools.gh.get_issue is missing required argument(s): number",
        "line 1: tools.gh.get_issue has no argument 'numbr'; did you mean number? "
        "(accepts: number)",
    ]


def test_all_problems_are_reported_in_line_order() -> None:
    source = "a = await tools.nope()\nb = await tools.gh.get_issue()\nc = await tools.x.y()\n"
    problems = check(source)
    assert [p.split(":")[0] for p in problems] == ["line 1", "line 2", "line 3"]


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("x = " + "1+" * 30000 + "1", "nested too deeply"),
        ("x = " + "-" * 90000 + "1", "nested too deeply"),
        ("x = " + "f(" * 900 + ")" * 900, "too many nested parentheses"),
        ("a" * 200_000, "too long"),
        ("a = 1\x00", "null bytes"),
    ],
    ids=["deep-binop-chain", "deep-unary-chain", "deep-calls", "huge-source", "null-byte"],
)
def test_hostile_sources_become_problems_not_host_exceptions(source: str, message: str) -> None:
    problems = check(source)
    assert len(problems) == 1 and problems[0].startswith("line 1: ")
    assert message in problems[0]


OPTIONAL_IMPORTS = [
    pytest.param("try:\n    import numpy as np\nexcept ImportError:\n    np = None\n", [],
                 id="fallback"),
    pytest.param("try:\n    from yaml import safe_load\nexcept (ModuleNotFoundError, KeyError):"
                 "\n    pass\n", [], id="tuple-of-handlers"),
    pytest.param("try:\n    if True:\n        import numpy\nexcept Exception:\n    pass\n", [],
                 id="nested-in-the-body"),
    pytest.param("try:\n    import numpy\nexcept ValueError:\n    pass\n", [2],
                 id="handler-misses-it"),
    pytest.param("try:\n    pass\nexcept ImportError:\n    import numpy\n", [4],
                 id="in-the-handler"),
    pytest.param("try:\n    def f():\n        import numpy\nexcept ImportError:\n    pass\n",
                 [3], id="runs-when-called"),
]


@pytest.mark.parametrize("walked", [True, False], ids=["dialect-walk", "visitor"])
@pytest.mark.parametrize(("source", "lines"), OPTIONAL_IMPORTS)
def test_an_import_with_its_own_fallback_is_left_to_the_script(
        source: str, lines: list[int], walked: bool) -> None:
    """``try: import numpy`` / ``except ImportError:`` runs its fallback (the runtime raises
    ModuleNotFoundError); an import nothing catches is still found before running."""
    tree = ast.parse(source)
    nodes, parents, kinds = index_nodes(tree)
    problems = (check_script(source, tools={}, arguments={}, specs={}, tree=tree,
                             nodes=nodes, parents=parents, kinds=kinds) if walked
                else check_script(source, tools={}, arguments={}, specs={}))
    assert [p.line for p in problems] == lines
    assert all("is not available in the sandbox" in p.message for p in problems)


@pytest.mark.parametrize("text", [
    "1+2j", "-1-2j", "1.5+2j", "2j-1", "True+1j", "1+True", "(1+2j)+3j", "a+b", "'x'+'y'",
    "1+2", "set()", "set(1)", "set(*a)", "str(x)", "f()", "x.set()", "[1, -2, (3, 4j)]",
    "{'a': {1, 2}}", "-x", "user['name']",
])
def test_an_argument_is_a_literal_exactly_when_literal_eval_reads_it(text: str) -> None:
    """``_literal`` answers binary operations and calls without ``literal_eval``'s
    exception, and agrees with it."""
    node = ast.parse(text, mode="eval").body
    try:
        expected = (True, ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError):
        expected = (False, None)
    assert repr(_literal(node)) == repr(expected)
