"""Run model-written async scripts under RestrictedPython, with limits.

Two layers: the language layer (policy, guards, builtins, facades, runner)
decides what a script can reach; the process layer (executors) decides where
it runs. Both executors implement :class:`Executor` and give identical
``ScriptResult``s for the same script.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from codemode.exports import lazy_exports

if TYPE_CHECKING:
    from .executors.base import Executor as Executor
    from .executors.broker import CallBroker as CallBroker
    from .executors.broker import CallTool as CallTool
    from .executors.inprocess import InProcessExecutor as InProcessExecutor
    from .executors.pool import WorkerPoolExecutor as WorkerPoolExecutor
    from .executors.pool import spare_workers as spare_workers
    from .executors.pool import worker_templates as worker_templates
    from .limits import DEFAULT_LIMITS as DEFAULT_LIMITS
    from .limits import Limits as Limits
    from .runtime.result import CallRecord as CallRecord
    from .runtime.result import RunOutcome as RunOutcome
    from .runtime.result import ScriptError as ScriptError
    from .runtime.result import ScriptResult as ScriptResult
    from .runtime.result import Usage as Usage
    from .runtime.runner import run_script as run_script

_LAZY: Final = {
    "Executor": "executors.base",
    "CallBroker": "executors.broker",
    "CallTool": "executors.broker",
    "InProcessExecutor": "executors.inprocess",
    "WorkerPoolExecutor": "executors.pool",
    "spare_workers": "executors.pool",
    "worker_templates": "executors.pool",
    "DEFAULT_LIMITS": "limits",
    "Limits": "limits",
    "CallRecord": "runtime.result",
    "RunOutcome": "runtime.result",
    "ScriptError": "runtime.result",
    "ScriptResult": "runtime.result",
    "Usage": "runtime.result",
    "run_script": "runtime.runner",
}
"""Public name -> its module, imported on first use (see ``codemode.exports``)."""

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

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
    "spare_workers",
    "worker_templates",
]
