"""The uncaught-error hints are host code reading a failed script's data: what the script
holds must not set their cost (the attack tables check they run no script code and
cannot fail)."""

from __future__ import annotations

import difflib
from typing import Any

import pytest

from codemode.sandbox import InProcessExecutor, Limits

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def no_tools(path: str, args: dict[str, Any]) -> Any:
    raise AssertionError(path)


async def test_the_close_key_search_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """difflib is Python and quadratic in a key's length: 1,000 keys of 100 characters
    (permutations of the missing one) held the host's CPU for seconds after the run."""
    compared: list[tuple[str, list[str]]] = []
    real = difflib.get_close_matches

    def spy(word: str, possibilities: list[str], *args: Any, **kwargs: Any) -> list[str]:
        compared.append((word, list(possibilities)))
        return real(word, possibilities, *args, **kwargs)

    monkeypatch.setattr(difflib, "get_close_matches", spy)
    script = "key = 'ab' * 18\nd = {key + str(j): j for j in range(2000)}\nd[key]"
    async with InProcessExecutor() as executor:
        outcome = await executor.run(script, call_tool=no_tools, tool_paths=(),
                                     limits=Limits(operations=10**6))
        assert outcome.error is not None and outcome.error.type == "KeyError"
        long_key = await executor.run("d = {'k' * 60: 1}\nd['k' * 59]", call_tool=no_tools,
                                      tool_paths=(), limits=Limits())
    assert long_key.error is not None and "did you mean" not in long_key.error.message
    assert compared, "the hint looked for no close key"
    for word, names in compared:
        assert len(word) <= 40
        assert len(names) <= 250
        assert all(len(name) <= 40 for name in names)
