"""Run model-written async scripts under RestrictedPython, with limits.

Two layers: the language layer (policy, guards, builtins, facades, runner)
decides what a script can reach; the process layer (executors) decides where
it runs. Both executors implement :class:`Executor` and give identical
``ScriptResult``s for the same script.
"""

from __future__ import annotations

from .broker import CallBroker as CallBroker
from .broker import CallTool as CallTool
from .executor import Executor as Executor
from .inprocess import InProcessExecutor as InProcessExecutor
from .limits import DEFAULT_LIMITS as DEFAULT_LIMITS
from .limits import Limits as Limits
from .pool import WorkerPoolExecutor as WorkerPoolExecutor
from .result import CallRecord as CallRecord
from .result import RunOutcome as RunOutcome
from .result import ScriptError as ScriptError
from .result import ScriptResult as ScriptResult
from .result import Usage as Usage
from .runner import run_script as run_script

__all__ = [
    "DEFAULT_LIMITS",
    "CallBroker",
    "CallRecord",
    "CallTool",
    "Executor",
    "InProcessExecutor",
    "Limits",
    "RunOutcome",
    "ScriptError",
    "ScriptResult",
    "Usage",
    "WorkerPoolExecutor",
    "run_script",
]
