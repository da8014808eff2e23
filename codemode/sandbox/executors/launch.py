"""How worker processes start: their command line and environment, and this process's
worker templates (``template.py``).

Apart from ``pool.py`` so that a host can start the default pool's template before it
imports the pool (``pool`` loads the runtime's compiler, protocol and broker, ~40 ms of a
fresh host's first run): :func:`prestart` needs the standard library and ``template.py``
only, and the template's ~150 ms boot then overlaps the host's own imports and its first
run's SDK and preflight instead of following them.
"""

from __future__ import annotations

import atexit
import functools
import json
import logging
import os
import subprocess
import sys
import threading
from typing import Any, Final

from codemode.sandbox.executors.template import TEMPLATE, Template, supported

__all__ = ["DEFAULT_RUNTIME", "LOCK", "TEMPLATES", "WORKER_ENV", "boot_plan", "prestart",
           "start_template", "worker_command"]

DEFAULT_RUNTIME: Final = "codemode.sandbox.runtime.runner:run_script"
"""``module:function`` of the script runtime each worker pre-imports."""

_PACKAGE_ROOT: Final = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__)))))
"""The directory holding ``codemode`` (``pathlib`` is not imported for it: ~3 ms a host
would pay at start-up)."""
_BOOTSTRAP: Final = """\
import gc, os, sys, types
gc.disable()
root, *extra = sys.argv[1].split(os.pathsep)
sys.path.insert(0, root)
sys.path.extend(extra)
for name in ("codemode", "codemode.sandbox"):
    package = types.ModuleType(name)
    package.__path__ = [root + "/" + name.replace(".", "/")]
    sys.modules[name] = package
from codemode.sandbox.executors.worker import main
main()
"""
"""Worker entry: the two parent packages are stubbed so their ``__init__`` (the
whole host API: registry, dispatch, SDK generator, executors) never loads in a
worker; it imports only the sandbox modules the runner needs. The cyclic collector is off
until the worker is booted (``worker.main`` turns it on): the boot's ~300 imports and
warm-up set off some 75 collections that found ~600 objects of garbage and cost ~8 % of
a boot (~14 ms of ~170). Its first argument is the
package root, then (``os.pathsep``-separated) the import directories of the host's own
interpreter when the worker runs that interpreter without ``site`` (see
:func:`worker_command`)."""
WORKER_ENV: Final = {"LC_ALL": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1", "MALLOC_ARENA_MAX": "1"}
"""All the environment a worker gets: no host variables (tokens, keys) leak into it.
One malloc arena: scripts run on a thread of their own, whose arena glibc would trim less
eagerly than the main one, so a heavy run's memory would linger into the next run's peak."""

LOCK: Final = threading.Lock()
"""Held while this process's templates (and the pool's spares) are read or changed: pools
on event loops in other threads take and keep them too."""
TEMPLATES: dict[tuple[str, str], Template] = {}
"""One worker template per (interpreter, runtime): it forks spares (see
``pool.worker_templates``)."""

_LOG: Final = logging.getLogger("codemode.sandbox")


@functools.cache
def worker_command(python: str) -> tuple[str, ...]:
    """The worker's command line up to its plan.

    The host's own interpreter starts with ``-S``: no ``site``, so none of the
    environment's ``.pth`` files (editable-install finders, coverage hooks, certificate
    patches …) runs in a worker, and it boots in about half the time (they imported
    ``pathlib``, ``zipfile``, ``tempfile``, ``certifi`` … into every worker, which its
    Landlock rules then had to allow). The directories ``site`` gave the host are passed
    instead, so the worker finds the same packages. Another interpreter keeps its ``site``
    (the host cannot know its paths).
    """
    if python != sys.executable:
        return (python, "-I", "-B", "-c", _BOOTSTRAP, _PACKAGE_ROOT)
    stdlib = os.path.dirname(os.__file__)
    standard = {stdlib, os.path.join(stdlib, "lib-dynload")}  # there without ``site`` too
    extra = [entry for entry in dict.fromkeys(sys.path)
             if os.path.isabs(entry) and os.path.isdir(entry) and entry != _PACKAGE_ROOT
             and entry not in standard and os.pathsep not in entry]
    return (python, "-I", "-S", "-B", "-c", _BOOTSTRAP, os.pathsep.join([_PACKAGE_ROOT, *extra]))


def boot_plan(plan: dict[str, Any], python: str) -> dict[str, Any]:
    """``plan`` for a worker's command line: with ``"bytecode"`` when the host writes
    bytecode (no ``-B``, no ``PYTHONDONTWRITEBYTECODE``) and the worker runs its
    interpreter. The worker then writes the ``.pyc`` of the modules its boot imports, as
    the host's own imports would: the runtime's ~45 modules that only workers import had
    none in a source checkout (``pip install -e``), so every boot compiled them again
    (~120 ms of a ~220 ms boot). Only the boot writes: the flag is off again before the
    worker forks, takes a plan or confines itself, and no script has run by then."""
    if sys.dont_write_bytecode or python != sys.executable:
        return plan
    return {**plan, "bytecode": True}


def start_template(key: tuple[str, str]) -> Template | None:
    """Start the template for ``key`` (holds :data:`LOCK`; None if it cannot start)."""
    python, runtime = key
    command = [*worker_command(python), json.dumps(boot_plan({"mode": TEMPLATE}, python)),
               runtime]
    try:
        template = TEMPLATES[key] = Template(command, WORKER_ENV)
    except (OSError, subprocess.SubprocessError) as exc:
        _LOG.info("no sandbox worker template: %s", exc)
        return None
    return template


def prestart() -> None:
    """Start the template a default pool (``WorkerPoolExecutor()``) forks its workers from,
    unless this process has one: a new ``CodeMode`` calls it before it imports the pool,
    which then finds the template booting and waits for it as if it had started it."""
    if not supported():
        return
    key = (sys.executable, DEFAULT_RUNTIME)
    with LOCK:
        if key not in TEMPLATES:
            start_template(key)


def _forget_in_child() -> None:
    """A process forked from the host must not talk to the host's templates (it would
    read their records, or end them when it exits): their sockets are closed in the
    child only."""
    for template in TEMPLATES.values():
        template.forget()
    TEMPLATES.clear()


os.register_at_fork(after_in_child=_forget_in_child)


@atexit.register
def _close_at_exit() -> None:
    """Stop the templates as the interpreter exits. Registered before ``pool``'s own exit
    handler, so it runs after it: the workers forked from a template are ended first, and
    their exit statuses come from it."""
    for template in list(TEMPLATES.values()):
        template.close()
