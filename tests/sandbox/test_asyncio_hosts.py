"""A host that runs its loop with plain ``asyncio.run`` (not ``anyio.run``, not pytest's
anyio runner) gets the same runs from both executors, and nothing on its stderr.

The worker pool's session reads the worker's pipe in loop callbacks, which start tasks
(a call the script cancels, a large frame decoded on a thread). anyio finds the library
through sniffio when sniffio is installed, and in a callback sniffio finds none: every
such callback raised ``NoEventLoopError`` onto the host's stderr and the run timed out.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

TOOLS = textwrap.dedent('''
    import sys
    import anyio
    import codemode as cm
    from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor

    @cm.tool
    async def slow(s: float) -> str:
        """Sleep."""
        await anyio.sleep(s)
        return "slept"

    @cm.tool
    async def size(text: str) -> int:
        """Length."""
        return len(text)

    def new_mode(timeout):
        registry = cm.ToolRegistry()
        registry.register(slow)
        registry.register(size)
        executor = (WorkerPoolExecutor(size=1) if sys.argv[1] == "pool"
                    else InProcessExecutor())
        return cm.CodeMode(registry, executor=executor, limits=cm.Limits(timeout=timeout))
''')
"""The tools both hosts register (``anyio.sleep`` runs under either library), and their
``CodeMode`` on the executor ``argv[1]`` names."""

HOST = textwrap.dedent('''
    import sys
    if sys.argv[2] == "without-sniffio":
        sys.modules["sniffio"] = None  # an import of sniffio now fails, as when absent
    import asyncio, json
''') + TOOLS + textwrap.dedent('''

    CANCELLED = """
    import asyncio
    try:
        await asyncio.wait_for(tools.slow(s=10), 0.05)
        r = 'not cancelled'
    except asyncio.TimeoutError:
        r = 'timed out'
    r
    """
    LARGE = "await tools.size(text='x' * 3_000_000)"

    async def main():
        answers = []
        async with new_mode(10) as mode:
            for script in (CANCELLED, LARGE):
                result = await mode.run(script)
                answers.append([result.value, None if result.error is None
                                else result.error.message])
        print(json.dumps({"answers": answers, "sniffio": "sniffio" in sys.modules
                          and sys.modules["sniffio"] is not None}))

    asyncio.run(main())
''')


@pytest.mark.parametrize("sniffio", ["with-sniffio", "without-sniffio"])
@pytest.mark.parametrize("executor", ["pool", "inprocess"])
def test_plain_asyncio_run_host(executor: str, sniffio: str) -> None:
    done = subprocess.run([sys.executable, "-c", HOST, executor, sniffio],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == "", done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["answers"] == [["timed out", None], [3_000_000, None]]
    assert report["sniffio"] is (sniffio == "with-sniffio")


TRIO_HOST = textwrap.dedent('''
    import sys, json
''') + TOOLS + textwrap.dedent('''

    SCRIPTS = [
        "await tools.size(text='abc') + await tools.size(text='de')",
        """
    import asyncio
    try:
        await asyncio.wait_for(tools.slow(s=10), 0.05)
        r = 'not cancelled'
    except asyncio.TimeoutError:
        r = 'timed out'
    r
    """,
        "await tools.size(text='x' * 3_000_000)",
        "import asyncio\\nawait asyncio.sleep(30)",
    ]

    async def main():
        answers = []
        async with new_mode(3) as mode:
            for script in SCRIPTS:
                result = await mode.run(script)
                answers.append([result.value, None if result.error is None
                                else result.error.type])
                if result.error is not None and "timeout" not in result.error.message:
                    answers.append(result.error.message)
        print(json.dumps(answers))

    anyio.run(main, backend="trio")
''')


@pytest.mark.parametrize("executor", ["pool", "inprocess"])
def test_trio_host(executor: str) -> None:
    """Under a trio host the in-process executor's script loop is still asyncio to anyio:
    the callback that starts a run inherits the host's context, where sniffio names trio
    (``anyio.current_time`` there raised, and every in-process run failed)."""
    done = subprocess.run([sys.executable, "-c", TRIO_HOST, executor],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == "", done.stderr[-2000:]
    assert json.loads(done.stdout) == [[5, None], ["timed out", None], [3_000_000, None],
                                       [None, "LimitExceeded"]]
