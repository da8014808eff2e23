"""Instructions per new script, step by step, under callgrind (issue #18).

    python benchmarks/cold_instructions.py [--quick]

Wall times on a loaded machine drift by 2x from one run to the next; instruction counts
(``valgrind --tool=callgrind``) do not. One child process per script warms up (imports,
SDK, a few scripts), then prepares ``k`` unique copies of the script one step at a time,
each step of all ``k`` inside ``sys.call_tracing`` (a C function nothing else calls):
callgrind collects only inside it and dumps its count as it returns
(``--toggle-collect``, ``--dump-after``), so each step is counted alone, in one process
(the first version ran two children per step, each spending 2.2G instructions importing).
Scripts: the 15-line, 3-call script of ``vs_monty.py``, the same ending in ``result =
{...}`` (a dialect appends ``result``), the same with bare tool names and no ``await``
(the plan's rewriting walk; its ``(await ...)`` edits are made to the script's tree, the
text not parsed again), and the 303-line script. Steps: ``parse`` (``ast.parse``), the
dialect ``plan``, the ``preflight``, ``rewrite`` (the tree of the rewritten text,
:func:`~codemode.mode.rewritten.rewritten_tree` or a parse of it), the sandbox
``policy``, CPython's ``compile`` of the result; then ``check()``, the whole of
``CodeMode.check``, and ``CPython``, which compiles the source and runs it (the 303-line
script) or compiles it (the others, whose calls need the host), the anchor of the 3x
target. Skipped with a line when valgrind is not installed.
"""

from __future__ import annotations

import ast
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import codemode as cm  # noqa: E402

# codemode is imported: benchmarks/codemode.py can no longer shadow it
sys.path.insert(0, str(Path(__file__).resolve().parent))
import vs_monty  # noqa: E402

from codemode.mode.dialects import plan  # noqa: E402
from codemode.mode.preflight import check_script  # noqa: E402
from codemode.mode.rewritten import rewritten_tree  # noqa: E402
from codemode.sandbox.language.meter import SCRIPT_FILENAME  # noqa: E402
from codemode.sandbox.language.policy import SandboxPolicy  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable

RESULT = vs_monty.CANONICAL.replace("\n{'names'", "\nresult = {'names'")
assert RESULT != vs_monty.CANONICAL
SCRIPTS = {"15 lines": vs_monty.CANONICAL, "15 lines, result =": RESULT,
           "15 lines, bare": vs_monty.BARE, "303 lines": vs_monty.LONG}
STEPS = ("parse", "plan", "preflight", "rewrite", "policy", "compile")
WARM = 3


def counted(work: Callable[[], Any]) -> Any:
    """``work()`` inside the region callgrind counts (see the module docstring)."""
    return sys.call_tracing(work, ())


def child(script: str, k: int) -> None:
    """Warm up, then count each step of ``k`` unique copies of ``script`` (the cyclic
    collector off: where a full collection falls would move counts by tens of millions)."""
    gc.collect()
    gc.disable()
    source = SCRIPTS[script]
    fresh = iter(range(10**9))

    def sources() -> list[str]:
        return [f"{source}# {next(fresh)}\n" for _ in range(k)]

    mode = cm.CodeMode(vs_monty.registry(), executor=cm.InProcessExecutor())
    for text in [f"{source}# warm {i}\n" for i in range(WARM)]:
        mode.check(text)
    sdk, specs = mode.sdk(), {spec.name: spec for spec in mode.visible_specs()}
    tools, arguments = sdk.names.tools, sdk.names.arguments
    texts = sources()
    trees: list[Any] = counted(lambda: [ast.parse(text) for text in texts])
    founds = counted(lambda: [plan(text, tree, tools=tools, arguments=arguments, specs=specs)
                              for text, tree in zip(texts, trees, strict=True)])
    counted(lambda: [check_script(
        text, tools=tools, arguments=arguments, specs=specs, tree=tree, tool_of=found.tool_of,
        orders=found.prelude.orders, nodes=found.nodes, parents=found.parents,
        kinds=found.kinds) for text, tree, found in zip(texts, trees, founds, strict=True)])
    rewritten = counted(lambda: [
        rewritten_tree(text, tree, found) or (ast.parse(found.source), None)
        for text, tree, found in zip(texts, trees, founds, strict=True)])
    counted(lambda: [SandboxPolicy(kinds=kinds).visit(tree) for tree, kinds in rewritten])
    counted(lambda: [compile(tree, SCRIPT_FILENAME, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
                             dont_inherit=True) for tree, _ in rewritten])
    checks = sources()
    counted(lambda: [mode.check(text) for text in checks])
    plain = sources()

    def cpython() -> None:
        for text in plain:
            code = compile(text, "<s>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            if script == "303 lines":
                exec(code, {})  # the benchmark's own fixed script

    counted(cpython)


def counts(valgrind: str, script: str, k: int) -> list[int]:
    """Instructions of each counted region of ``script``'s child, in order."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "cg"
        subprocess.run(
            [valgrind, "--tool=callgrind", "--collect-atstart=no",
             "--toggle-collect=sys_call_tracing", "--dump-after=sys_call_tracing",
             f"--callgrind-out-file={out}", sys.executable, __file__, "--child", script,
             str(k)],
            capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        dumps = sorted(Path(folder).glob("cg.*"), key=lambda p: int(p.suffix[1:]))
        found = [re.search(r"^totals: (\d+)", p.read_text(), re.MULTILINE) for p in dumps]
        assert all(found) and len(found) == len(STEPS) + 2, [p.name for p in dumps]
        return [int(m.group(1)) for m in found if m is not None]


def main() -> None:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        print("cold instructions: valgrind is not installed (skipped)")
        return
    quick = "--quick" in sys.argv
    print(f"instructions per new script (python {sys.version.split()[0]}, callgrind)")
    for script in SCRIPTS:
        k = (2 if quick else 5) if script == "303 lines" else (5 if quick else 20)
        per = [n / k / 1e6 for n in counts(valgrind, script, k)]
        shown = [f"{step} {n:.2f}M" for step, n in zip((*STEPS, "check()", "CPython"), per,
                                                       strict=True)]
        print(f"  {script}: " + ", ".join(shown) + f" (steps {sum(per[:len(STEPS)]):.2f}M)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]))
    else:
        main()
