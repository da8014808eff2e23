"""The plugin as a harness suite sees it: an inner pytest run using the fixtures."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

HARNESS_TESTS = '''
import pytest
from codemode import ToolCall
from codemode.testing import ToolFailure

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
async def test_canned_answers(tool_registry, scripted_tools, tool_events):
    scripted_tools.add("get_issue", results=[{"n": 1}, ToolFailure("boom")])
    ok = await tool_registry.execute(ToolCall(call_id="1", name="get_issue", arguments={"x": 1}))
    bad = await tool_registry.execute(ToolCall(call_id="2", name="get_issue"))
    assert ok.structured == {"n": 1} and bad.text == "boom"
    tool_events.assert_called("get_issue", times=2)
    tool_events.assert_called("get_issue", times=1, with_arguments={"x": 1})

@pytest.mark.anyio
async def test_swallowed_dry_queue_still_fails(tool_registry, scripted_tools):
    scripted_tools.add("get_issue", results=[])
    result = await tool_registry.execute(ToolCall(call_id="1", name="get_issue"))
    assert result.is_error

def test_fresh_registry_per_test(tool_registry):
    assert len(tool_registry) == 0
'''

# Load the plugin explicitly and block the entry point name, so the run is the same
# whether or not the installed package already declares the pytest11 entry point.
EXPLICIT = ("-p", "no:codemode", "-p", "codemode.testing.plugin")


def test_fixtures_work_in_a_harness_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_harness=HARNESS_TESTS)
    result = pytester.runpytest_inprocess(*EXPLICIT)
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR at teardown of test_swallowed_dry_queue_still_fails*",
        "*scripted tools ran dry*",
        "*scripted tool 'get_issue' has no result left for call #1*",
    ])


def test_entry_point_names_the_plugin_module() -> None:
    found = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert found.get("codemode") == "codemode.testing.plugin"


def test_installed_plugin_needs_no_configuration(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_harness=HARNESS_TESTS)
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(passed=3, errors=1)
