"""@tool: the parameters schema from type hints, descriptions from the docstring."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pydantic
import pytest
from typing_extensions import TypedDict

import codemode as cm
from codemode.dispatch.decorator import parse_docstring

from .support import call


class Owner(TypedDict):
    id: int
    name: str


@cm.tool
async def search(
    query: str,
    limit: int = 10,
    mode: Literal["fast", "exact"] = "fast",
    tags: list[str] | None = None,
) -> list[str]:
    """Search the index.

    Results are ranked.

    Args:
        query: What to look for.
        limit: Most results to return;
            at least one.
        mode: Matching strategy.

    Returns:
        Matching titles.
    """
    return [f"{query}:{limit}:{mode}:{tags}"]


def test_schema_comes_from_the_type_hints() -> None:
    assert search.name == "search"
    assert search.spec.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for."},
            "limit": {
                "type": "integer",
                "default": 10,
                "description": "Most results to return; at least one.",
            },
            "mode": {
                "enum": ["fast", "exact"],
                "type": "string",
                "default": "fast",
                "description": "Matching strategy.",
            },
            "tags": {
                "anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                "default": None,
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    }
    assert search.spec.description == "Search the index.\n\nResults are ranked."


async def test_decorated_tools_run_through_the_pipeline(registry: cm.ToolRegistry) -> None:
    registry.register(search)
    ok = await registry.execute(call("search", {"query": "q", "tags": ["a"]}))
    assert ok.structured == ("q:10:fast:['a']",)
    bad = await registry.execute(call("search", {"query": "q", "mode": "fuzzy"}))
    assert bad.error is not None and (bad.error.kind, bad.error.path) == (
        "invalid_arguments",
        "$.mode",
    )


def test_sphinx_docstrings_describe_parameters() -> None:
    @cm.tool(name="fetch-page", description=None)
    def fetch(url: str, timeout: float = 5.0) -> str:
        """Fetch a page.

        :param url: Address to fetch.
        :param float timeout: Seconds before giving up,
            then retry.
        :returns: The body.
        """
        return url

    assert fetch.name == "fetch-page"
    assert fetch.spec.description == "Fetch a page."
    props = fetch.spec.parameters["properties"]
    assert props["url"]["description"] == "Address to fetch."
    assert props["timeout"] == {
        "type": "number",
        "default": 5.0,
        "description": "Seconds before giving up, then retry.",
    }


@pytest.mark.parametrize(
    ("doc", "summary", "params"),
    [
        (None, "", {}),
        ("Just a summary.", "Just a summary.", {}),
        (
            "Do it.\n\nArgs:\n    a (int): First.\n    b: Second\n        continued.\n\nRaises:\n"
            "    ValueError: never.",
            "Do it.",
            {"a": "First.", "b": "Second continued."},
        ),
        ("Do it.\n\nParameters:\n    x: The x.", "Do it.", {"x": "The x."}),
        (
            "Do it.\n\n:param a: First.\n:param str b: Second.\n:return: nothing",
            "Do it.",
            {"a": "First.", "b": "Second."},
        ),
    ],
)
def test_parse_docstring(doc: str | None, summary: str, params: dict[str, str]) -> None:
    assert parse_docstring(doc) == (summary, params)


async def test_exec_context_parameter_is_injected_not_in_the_schema(
    registry: cm.ToolRegistry,
) -> None:
    @cm.tool
    async def whoami(greeting: str, ctx: cm.ExecContext) -> str:
        ctx.progress("working")
        return f"{greeting} from {ctx.name}/{ctx.call_id}"

    assert list(whoami.spec.parameters["properties"]) == ["greeting"]
    registry.register(whoami)
    result = await registry.execute(
        cm.ToolCall(call_id="c9", name="whoami", arguments={"greeting": "hi"})
    )
    assert result.text == "hi from whoami/c9"


async def test_nested_types_and_plain_values(registry: cm.ToolRegistry) -> None:
    seen: list[Any] = []

    @cm.tool(execution_mode="sequential", namespace="crm")
    def save(owner: Owner, scores: Annotated[list[int], pydantic.Field(max_length=2)]) -> str:
        """Save an owner."""
        owner["name"] = owner["name"].upper()
        scores.append(0)
        seen.append((owner, scores))
        return "saved"

    assert save.execution_mode == "sequential" and save.spec.namespace == "crm"
    assert save.spec.parameters["properties"]["scores"] == {
        "type": "array",
        "items": {"type": "integer"},
        "maxItems": 2,
    }
    registry.register(save)
    ok = await registry.execute(call("save", {"owner": {"id": 1, "name": "ada"}, "scores": [1]}))
    assert ok.text == "saved"
    assert seen == [({"id": 1, "name": "ADA"}, [1, 0])]
    missing = await registry.execute(call("save", {"owner": {"id": 1}, "scores": []}))
    assert missing.error is not None and missing.error.path == "$.owner"
    too_many = await registry.execute(
        call("save", {"owner": {"id": 1, "name": "x"}, "scores": [1, 2, 3]})
    )
    assert too_many.error is not None and too_many.error.path == "$.scores"


def test_output_schema_and_visibility_are_passed_on() -> None:
    @cm.tool(output_schema={"type": "object"}, visible_in_code=False)
    def status() -> dict[str, int]:
        return {"ok": 1}

    assert status.spec.output_schema == {"type": "object"}
    assert not status.spec.visible_in_code
    assert status.spec.parameters == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def _star_args(*items: int) -> None: ...


def _star_kwargs(**options: int) -> None: ...


def _positional_only(x: int, /) -> None: ...


def _unresolvable(x: NoSuchType) -> None: ...  # type: ignore[name-defined]  # noqa: F821


def _unschemable(x: object = object()) -> None: ...


@pytest.mark.parametrize(
    ("fn", "problem"),
    [
        (_star_args, r"cannot take \*items"),
        (_star_kwargs, r"cannot take \*options"),
        (_positional_only, "positional-only"),
        (_unresolvable, "cannot resolve type hints"),
        (_unschemable, "cannot derive a JSON Schema"),
        (1, "@tool takes a function, not int"),  # was AttributeError: no __name__
        ("search", "@tool takes a function, not str"),
    ],
)
def test_unsupported_functions_fail_at_definition(fn: Any, problem: str) -> None:
    with pytest.raises(cm.ToolDefinitionError, match=problem):
        cm.tool(fn)
