"""Branch coverage of the host side and of the worker processes, in one test run.

    python -m pip install coverage
    python benchmarks/measure_coverage.py [pytest args ...]    (default: the whole suite)

A one-off measurement, not part of the test command. It prints two reports:

- host: ``coverage run --branch`` over pytest, for ``codemode/`` and ``sdk_gen/``;
- workers: worker processes run ``python -I`` with a bare environment, so
  ``COVERAGE_PROCESS_START`` never reaches them. For the length of the run this
  script drops a ``.pth`` file into site-packages that starts coverage in a
  process only if it is isolated (``-I``), is a worker of *this* run's pytest
  (its parent's pid is in the marker file) and runs unconfined; the worker saves
  its data every 50 ms from a daemon thread (the pool ends workers with SIGKILL,
  so ``atexit`` never runs: the last 50 ms of a worker are lost, so the figure is
  a lower bound). While the run lasts, ``WorkerPoolExecutor``'s default
  ``confinement`` becomes ``"off"`` (a confined worker may not write its data
  file); tests that ask for confinement explicitly keep it and are not measured.

The ``.pth`` file and the marker are removed when the run ends.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PTH_NAME = "zz_codemode_worker_coverage.pth"
MARKER_ENV = "CODEMODE_WORKER_COVERAGE_DIR"

_WORKER_START = '''\
import json, os, sys, threading, time
here = {here!r}
def _start():
    try:
        if json.loads(sys.argv[2]).get("mode") != "off":
            return
    except Exception:
        return
    import coverage
    cov = coverage.Coverage(data_file=os.path.join(here, ".coverage.worker"),
                            data_suffix=True, branch=True, source=[{source!r}])
    cov.set_option("run:disable_warnings", ["no-data-collected", "module-not-measured"])
    cov.start()
    def save():
        while True:
            time.sleep(0.05)
            try:
                cov.save()
            except Exception:
                return
    threading.Thread(target=save, daemon=True, name="coverage-save").start()
_start()
'''


# --- the pytest plugin side (loaded with -p benchmarks.measure_coverage) -------------------

def pytest_configure(config: Any) -> None:
    here = os.environ.get(MARKER_ENV)
    if not here:
        return
    Path(here, "host.pid").write_text(str(os.getpid()))
    from codemode.sandbox.executors import pool

    real_init = pool.WorkerPoolExecutor.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("confinement", "off")
        real_init(self, *args, **kwargs)

    pool.WorkerPoolExecutor.__init__ = init  # type: ignore[method-assign]


# --- the driver ---------------------------------------------------------------------------

def _pth_line(here: str) -> str:
    start = Path(here, "worker_start.py")
    start.write_text(_WORKER_START.format(here=here, source=str(ROOT / "codemode")))
    pid_file = Path(here, "host.pid")
    return (
        "import os, sys; "
        f"exec(open({str(start)!r}).read(), {{}}) if sys.flags.isolated "
        f"and os.path.exists({str(pid_file)!r}) "
        f"and open({str(pid_file)!r}).read() == str(os.getppid()) else None\n"
    )


def main(argv: list[str]) -> int:
    here = tempfile.mkdtemp(prefix="codemode-coverage-")
    pth = Path(site.getsitepackages()[0]) / PTH_NAME
    pth.write_text(_pth_line(here))
    env = {**os.environ, MARKER_ENV: here, "PYTHONPATH": str(ROOT)}
    host_data = str(Path(here, ".coverage.host"))
    try:
        subprocess.run(
            [sys.executable, "-m", "coverage", "run", "--branch", f"--data-file={host_data}",
             "--source", "codemode,sdk_gen", "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "-p", "benchmarks.measure_coverage", *argv],
            cwd=ROOT, env=env, check=False,
        )
    finally:
        pth.unlink(missing_ok=True)
        Path(here, "host.pid").unlink(missing_ok=True)
    worker_data = str(Path(here, ".coverage.worker"))
    subprocess.run([sys.executable, "-m", "coverage", "combine", f"--data-file={worker_data}",
                    here], cwd=ROOT, check=False, capture_output=True)
    print("\n=== host side: codemode/ and sdk_gen/ (branch coverage) ===")
    subprocess.run([sys.executable, "-m", "coverage", "report", f"--data-file={host_data}",
                    "--skip-covered"], cwd=ROOT, check=False)
    print("\n=== worker processes: codemode/ as run inside workers (branch coverage) ===")
    subprocess.run([sys.executable, "-m", "coverage", "report", f"--data-file={worker_data}",
                    "--include=*/codemode/sandbox/*"], cwd=ROOT, check=False)
    print(f"\ndata kept in {here}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
