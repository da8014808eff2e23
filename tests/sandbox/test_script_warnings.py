"""Warnings a script causes never reach the host (``language.script_warnings``).

CPython warns about script text while it parses and compiles it (an invalid escape,
``x is 1``, a literal called as a function, ``~True`` folded as a constant), about what
a script frame runs (``~flag``) and, on 3.11, about a float given to the ``random``
facade's ``randrange``: through the host's ``warnings`` filters, so a host run with
``-W always`` printed each of them on its stderr on every run (and one with ``-W error``
refused the script). pytest records warnings itself, which is why this runs in a plain
child interpreter.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SCRIPTS = {
    "x = 1\nx is 1": True,
    "len('\\d')": 2,
    "~True": -2,
    "flag = True\n~flag": -2,
    "[1, 2](3) if False else 0": 0,
}
"""Scripts CPython warns about (each on some of 3.11-3.13), and their values."""
if sys.version_info < (3, 12):
    SCRIPTS["import random\nrandom.randrange(1.0)"] = 0

CHILD = """
import asyncio, json, sys, warnings
import codemode.sandbox as sb
from codemode.sandbox.language.parsing import parse_tree

async def main():
    scripts = json.loads(sys.argv[1])
    late = sys.argv[2] if len(sys.argv) > 2 else None
    async def host(name, args):
        return args
    values = []
    async with sb.InProcessExecutor() as ex:
        if late is not None:
            await ex.run("1", call_tool=host)  # codemode's filter is in place
            warnings.simplefilter(late)  # the host's, first in the list now
        for source in scripts:
            parse_tree(source)  # the host's own parse (the preflight's, CodeMode's)
            r = await ex.run(source, call_tool=host)
            values.append([r.value, r.error and r.error.message])
    if late is not None:
        try:
            warnings.warn("the host's own", UserWarning)
        except UserWarning as exc:
            print(f"raised: {exc}", file=sys.stderr)
    print(json.dumps(values))

asyncio.run(main())
"""


def test_script_warnings_stay_out_of_the_host() -> None:
    """In a host that shows every warning (``-W always``), none of the scripts' shows, and
    each runs to its value."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    child = subprocess.run([sys.executable, "-W", "always", "-c", CHILD, json.dumps(list(SCRIPTS))],
                           cwd=root, capture_output=True, text=True, timeout=60, check=False)
    assert child.returncode == 0, child.stderr[-2000:]
    assert child.stderr == "", child.stderr[:2000]
    expected = [[value, None] for value in SCRIPTS.values()]
    assert json.loads(child.stdout) == expected


@pytest.mark.parametrize("action", ["always", "error"])
def test_a_host_filter_set_later_does_not_outrank_the_scripts(action: str) -> None:
    """A host that calls ``warnings.simplefilter`` after codemode set its filter put its
    own first: the scripts' warnings printed on its stderr (``always``) or failed them
    (``error``). The host's own warnings still follow its filter."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    child = subprocess.run([sys.executable, "-c", CHILD, json.dumps(list(SCRIPTS)), action],
                           cwd=root, capture_output=True, text=True, timeout=60, check=False)
    assert child.returncode == 0, child.stderr[-2000:]
    own = ("UserWarning: the host's own" if action == "always"
           else "raised: the host's own")
    lines = child.stderr.splitlines()
    shown = [line for line in lines if "Warning: " in line or line.startswith("raised: ")]
    assert shown == [next(line for line in lines if own in line)], child.stderr[:2000]
    expected = [[value, None] for value in SCRIPTS.values()]
    assert json.loads(child.stdout) == expected
