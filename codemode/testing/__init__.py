"""Testing kit: scripted fake tools, event assertions and fixtures for harness CI suites.

Plain classes work anywhere (no pytest needed); ``codemode.testing.plugin`` (the
``codemode`` pytest11 plugin) exposes them as fixtures: ``tool_registry``,
``tool_events``, ``scripted_tools``, ``code_mode_limits``, ``code_mode``, ``run_code``::

    async def test_triage(scripted_tools, tool_events, run_code):
        scripted_tools.add("get_issue", parameters=GET_ISSUE,
                           results=[{"title": "a"}, ToolFailure("issue 2 is gone")])
        result = await run_code(SCRIPT, call_id="c1")
        tool_events.assert_called("get_issue", times=2)
        tool_events.assert_parent("c1:code:", tool_events.token_of("c1"))

- ``ScriptedTools.add(name, parameters=..., results=[...], default=...)`` / ``.fake(real)``:
  canned answers (data, text, blocks, ``ToolFailure``, exceptions, callables), every
  call recorded; a queue that runs dry fails the call and ``check()``.
- ``ToolEvents``: filters (``calls``, ``results``, ``progress``, ``children``),
  ``token_of``, ``max_in_flight`` and ``assert_*`` helpers over ``tool/*`` events.
- ``RunCode``: dispatch ``run_code`` through the registry like a model's call.
- ``assert_script_ok(result)``: the value, or an AssertionError with the script's error.
"""

from codemode.testing._events import ToolEvents as ToolEvents
from codemode.testing._run import RunCode as RunCode
from codemode.testing._run import assert_script_ok as assert_script_ok
from codemode.testing._scripted import OPEN_PARAMETERS as OPEN_PARAMETERS
from codemode.testing._scripted import RecordedCall as RecordedCall
from codemode.testing._scripted import ScriptedTool as ScriptedTool
from codemode.testing._scripted import ScriptedTools as ScriptedTools
from codemode.testing._scripted import ToolFailure as ToolFailure

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
