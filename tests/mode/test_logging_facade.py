"""``logging`` in scripts, as CPython shows it: records in the run's output.

Each row runs through ``CodeMode`` on both executors and in a fresh CPython process (the
logging state is per process: one row's ``basicConfig`` must not reach the next) with
stderr merged into stdout, as the run's output holds both: value and output must be
equal (``exception()``'s traceback names the script's file ``<script>``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING, Any

import pytest

import codemode as cm

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from codemode.sandbox import Executor

pytestmark = pytest.mark.anyio


@pytest.fixture
async def mode(executor: Executor) -> AsyncIterator[cm.CodeMode]:
    yield cm.CodeMode(cm.ToolRegistry(), executor=executor)


_RUNNER = textwrap.dedent('''
    import ast, json, sys
    tree = ast.parse(sys.argv[1])
    last = tree.body[-1]
    tree.body[-1] = ast.copy_location(
        ast.Assign([ast.Name("result", ast.Store())], last.value), last)
    namespace = {"__name__": "__main__"}
    exec(compile(ast.fix_missing_locations(tree), "<cpython>", "exec"), namespace)
    print("\\0" + json.dumps(namespace["result"]))
''')


def cpython(script: str) -> tuple[Any, str]:
    """(the last expression's value, stdout and stderr as one text) in a fresh CPython."""
    done = subprocess.run([sys.executable, "-u", "-c", _RUNNER, script], check=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=60)
    output, _, value = done.stdout.rpartition("\0")
    return json.loads(value), output


# (name, script): value and output as in CPython
ROWS: list[tuple[str, str]] = [
    ("module_functions_configure_the_root", '''
import logging
logging.info("not shown: the root is at WARNING")
logging.warning("disk at %d%%", 91)
logging.error("failed: %s", {"code": 3})
logging.getLogger().getEffectiveLevel()'''),
    ("named_logger_without_config_prints_the_message_alone", '''
import logging
logger = logging.getLogger(__name__)
logger.debug("no")
logger.info("no")
logger.warning("careful %s", "now")
print("between")
logger.critical("down")
[logger.name, logger.level, logger.getEffectiveLevel(), logger.isEnabledFor(logging.INFO)]'''),
    ("basic_config_level_and_format", '''
import logging
logging.basicConfig(level=logging.INFO, format="%(levelname)-8s %(name)s | %(message)s")
log = logging.getLogger("app.db")
log.info("connected to %s", "db1")
log.debug("hidden")
logging.basicConfig(level=logging.DEBUG, format="ignored %(message)s")
log.debug("still hidden: basicConfig runs once")
logging.basicConfig(level="DEBUG", format="%(name)s:%(levelno)d:%(message)s", force=True)
log.debug("shown after force")
[log.getEffectiveLevel(), logging.getLevelName(logging.INFO), logging.getLevelName("ERROR")]'''),
    ("hierarchy_and_set_level", '''
import logging
logging.basicConfig()
logging.getLogger("svc").setLevel(logging.DEBUG)
child = logging.getLogger("svc").getChild("worker")
child.debug("from the child")
logging.getLogger("other").debug("not shown")
logging.log(logging.ERROR, "via log(%s)", "x")
logging.getLogger("svc.worker") is child'''),
    ("disable_and_mapping_argument", '''
import logging
logger = logging.getLogger("m")
logger.warning("%(user)s did %(n)d things", {"user": "ann", "n": 2})
logging.disable(logging.WARNING)
logger.warning("dropped")
logger.error("kept")
logging.disable(logging.NOTSET)
logger.warning(["not", "a", "str"])
repr(logger)'''),
]


@pytest.mark.parametrize(("name", "script"), ROWS, ids=[r[0] for r in ROWS])
async def test_logging_as_cpython(mode: cm.CodeMode, name: str, script: str) -> None:
    run = await mode.run(script)
    assert run.error is None, run.error
    assert (run.value, run.output) == cpython(script)


async def test_exception_prints_the_script_frames(mode: cm.CodeMode) -> None:
    """``exception()`` and ``exc_info=`` print CPython's traceback: the script's frames
    (a function's too, innermost last) and the exception's line; CPython names the file
    ``<cpython>`` here, the sandbox ``<script>``."""
    script = '''
import logging
log = logging.getLogger("jobs")

def lookup(key):
    return {}[key]

try:
    lookup("missing")
except KeyError:
    log.exception("lookup failed for %s", "missing")
try:
    1 / 0
except ZeroDivisionError as e:
    logging.error("bad", exc_info=e)
logging.exception("outside a handler")
"done"'''
    run = await mode.run(script)
    assert run.error is None, run.error
    value, output = cpython(script)
    assert (run.value, run.output) == (value, output.replace("<cpython>", "<script>"))
    assert run.output.count('File "<script>"') == 3


@pytest.mark.parametrize(("script", "error", "message"), [
    ('import logging\nlogging.basicConfig(filename="app.log")',
     "ValueError", "no files or handlers in the sandbox: records go to the run's output"),
    ('import logging\nlogging.getLogger("x").addHandler(None)',
     "AttributeError", "Logger.addHandler is not available in the sandbox"),
    ('import logging\nlogging.basicConfig(format="%(process)d %(message)s")',
     "ValueError", "Formatting field not found in record: 'process'"),
    ('import logging\nlogging.basicConfig(format="{message}", style="{")',
     "ValueError", "only style='%' formats in the sandbox"),
])
async def test_what_logging_refuses_says_what_to_write(mode: cm.CodeMode, script: str,
                                                       error: str, message: str) -> None:
    run = await mode.run(script)
    assert run.error is not None and run.error.type == error
    assert message in run.error.message
    assert run.output == ""


async def test_no_run_sees_another_runs_logging(mode: cm.CodeMode) -> None:
    first = await mode.run('import logging\nlogging.basicConfig(level=logging.DEBUG, '
                           'format="%(message)s!")\nlogging.getLogger("s").setLevel(10)\n'
                           'logging.getLogger("s").debug("one")\n1')
    second = await mode.run('import logging\nlogging.getLogger("s").debug("two")\n'
                            'logging.getLogger("s").warning("three")\n'
                            'logging.getLogger("s").level')
    assert (first.output, first.value) == ("one!\n", 1)
    assert (second.output, second.value) == ("three\n", 0)


async def test_a_smolagents_script_with_logging_left_in_runs(executor: Executor) -> None:
    # the corpus row that used to be refused ("module 'logging' is not available")
    registry = cm.ToolRegistry()

    @registry.register
    @cm.tool
    def get_watchlist() -> dict[str, Any]:
        """The symbols watched."""
        return {"watchlist": ["A", "B"]}

    @registry.register
    @cm.tool
    def get_stock_info(symbol: str) -> dict[str, Any]:
        """A symbol's price."""
        return {"price": {"A": 1.25, "B": 2.5}[symbol]}

    run = await cm.CodeMode(registry, executor=executor).run('''
import logging

logging.basicConfig(level=logging.INFO)
log = logging.getLogger(__name__)
watch = get_watchlist()["watchlist"]
log.info("watchlist has %d symbols", len(watch))
final_answer(round(sum(get_stock_info(symbol=s)["price"] for s in watch), 2))
''')
    assert run.error is None, run.error
    assert (run.value, run.output) == (3.75, "INFO:__main__:watchlist has 2 symbols\n")
    assert [c.name for c in run.calls] == ["get_watchlist", "get_stock_info", "get_stock_info"]
