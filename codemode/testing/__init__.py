"""Testing kit: scripted fake tools, event assertions and fixtures for harness CI suites.

Plain classes work anywhere; ``codemode.testing.plugin`` exposes them as pytest
fixtures (``tool_registry``, ``tool_events``, ``scripted_tools``,
``code_mode``, ``code_mode_limits``, ``run_code``)::

    async def test_summary(scripted_tools, tool_events, code_mode):
        scripted_tools.add("get_issue", results=[{"n": 1}, ToolFailure("gone")])
        run = await code_mode.run("...")
        tool_events.assert_called("get_issue", times=2)
"""

from ._events import ToolEvents as ToolEvents
from ._run import RunCode as RunCode
from ._run import assert_script_ok as assert_script_ok
from ._scripted import OPEN_PARAMETERS as OPEN_PARAMETERS
from ._scripted import RecordedCall as RecordedCall
from ._scripted import ScriptedTool as ScriptedTool
from ._scripted import ScriptedTools as ScriptedTools
from ._scripted import ToolFailure as ToolFailure

__all__ = [
    "OPEN_PARAMETERS",
    "RecordedCall",
    "RunCode",
    "ScriptedTool",
    "ScriptedTools",
    "ToolEvents",
    "ToolFailure",
    "assert_script_ok",
]
