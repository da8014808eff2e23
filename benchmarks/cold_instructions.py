"""Instructions per new script, step by step, under callgrind (issue #18).

    python benchmarks/cold_instructions.py [--quick]

Wall times on a loaded machine drift by 2x from one run to the next; instruction counts
(``valgrind --tool=callgrind``) do not. Each step is measured as the difference between
a child process that prepares ``k`` unique scripts and one that prepares none (imports,
SDK and warm-up cancel out), for the 15-line, 3-call script and the 303-line script of
``vs_monty.py``: ``parse`` (``ast.parse``), then the dialect ``plan``, the
``preflight``, the sandbox ``policy`` and CPython's ``compile`` of the rewritten tree,
each row adding one step; ``check()`` is the whole of ``CodeMode.check``; ``CPython``
compiles the source and runs it (the 303-line script) or compiles it (the 15-line one,
whose calls need the host), the anchor of the 3x target. Skipped with a line when
valgrind is not installed.
"""

from __future__ import annotations

import ast
import gc
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import codemode as cm  # noqa: E402

# codemode is imported: benchmarks/codemode.py can no longer shadow it
sys.path.insert(0, str(Path(__file__).resolve().parent))
import vs_monty  # noqa: E402

from codemode.mode.dialects import plan  # noqa: E402
from codemode.mode.preflight import check_script  # noqa: E402
from codemode.sandbox.language.meter import SCRIPT_FILENAME  # noqa: E402
from codemode.sandbox.language.policy import SandboxPolicy  # noqa: E402

SCRIPTS = {"15 lines": vs_monty.CANONICAL, "303 lines": vs_monty.LONG}
STEPS = ("parse", "plan", "preflight", "policy", "compile")
WARM = 3


def child(script: str, step: str, k: int) -> None:
    """Prepare ``WARM + k`` unique copies of ``script`` up to ``step`` (the cyclic
    collector off: where a full collection falls differs between the two children, and
    one is tens of millions of instructions)."""
    gc.collect()
    gc.disable()
    source = SCRIPTS[script]
    sources = [f"{source}# {i}\n" for i in range(WARM + k)]
    mode = cm.CodeMode(vs_monty.registry(), executor=cm.InProcessExecutor())
    if step == "check()":
        for text in sources:
            mode.check(text)
        return
    if step == "CPython":
        for text in sources:
            code = compile(text, "<s>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            if script == "303 lines":
                exec(code, {})  # the benchmark's own fixed script
        return
    sdk, specs = mode.sdk(), {spec.name: spec for spec in mode.visible_specs()}
    tools, arguments = sdk.names.tools, sdk.names.arguments
    last = STEPS.index(step)
    for text in sources:
        tree = ast.parse(text)
        if last < 1:
            continue
        found = plan(text, tree, tools=tools, arguments=arguments, specs=specs)
        if last >= 2:
            check_script(text, tools=tools, arguments=arguments, specs=specs, tree=tree,
                         tool_of=found.tool_of, orders=found.prelude.orders,
                         nodes=found.nodes, parents=found.parents, kinds=found.kinds)
        if last >= 3:
            SandboxPolicy(kinds=found.kinds).visit(tree)
        if last >= 4:
            compile(tree, SCRIPT_FILENAME, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                    dont_inherit=True)


def instructions(valgrind: str, script: str, step: str, k: int) -> int:
    done = subprocess.run(
        [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
         __file__, "--child", script, step, str(k)],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert found is not None, done.stderr[-2000:]
    return int(found.group(1))


def main() -> None:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("cold instructions: valgrind is not installed (skipped)")
        return
    quick = "--quick" in sys.argv
    print(f"instructions per new script (python {sys.version.split()[0]}, callgrind)")
    for script in SCRIPTS:
        k = (2 if quick else 5) if script == "303 lines" else (5 if quick else 20)
        base: dict[str, int] = {}
        shown: list[str] = []
        previous = 0
        for step in (*STEPS, "check()", "CPython"):
            per = (instructions(valgrind, script, step, k)
                   - base.setdefault(step, instructions(valgrind, script, step, 0))) // k
            if step in STEPS:
                shown.append(f"{step} {(per - previous) / 1e6:.2f}M")
                previous = per
            else:
                shown.append(f"{step} {per / 1e6:.2f}M")
        print(f"  {script}: " + ", ".join(shown))


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()
