"""A new script's preflight parses it once (issue #18): the dialect plan, the preflight
and the compiler share one tree when no dialect rewrote the text."""

from __future__ import annotations

import ast
import threading
from typing import Any

import anyio
import anyio.lowlevel
from script_literals import script_literals

import codemode as cm
from codemode.errors import ScriptCompileError
from codemode.mode.dialects import plan
from codemode.sandbox import InProcessExecutor, WorkerPoolExecutor
from codemode.sandbox.language.compile import _checked, cached_script, compile_tree
from codemode.sandbox.language.policy import _binding_sites

_unique = iter(range(10**9))


def _registry() -> cm.ToolRegistry:
    registry = cm.ToolRegistry()

    async def echo(args: Any, ctx: cm.ExecContext) -> Any:
        return args["i"]

    registry.register(cm.define_tool(name="echo", execute=echo, parameters={
        "type": "object", "properties": {"i": {"type": "integer"}}, "required": ["i"],
        "additionalProperties": False}))
    return registry


def test_check_parses_a_canonical_script_once(parses: list[str]) -> None:
    mode = cm.CodeMode(_registry(), executor=InProcessExecutor())
    mode.sdk()
    script = f"x = await tools.echo(i=1)\ny = [x * i for i in range(3)]\ny\n# {next(_unique)}"
    parses.clear()
    assert mode.check(script) == []
    assert parses == [script]
    assert cached_script(script) is not None  # compiled from that tree


def test_a_script_awaited_in_line_is_compiled_from_its_own_tree(parses: list[str]) -> None:
    mode = cm.CodeMode(_registry(), executor=InProcessExecutor())
    mode.sdk()
    script = f"x = echo(1)\nx\n# {next(_unique)}"  # bare name, positional, no await
    parses.clear()
    assert mode.check(script) == []
    assert parses == [script]
    assert cached_script(script.replace("echo(1)", "(await echo(1))")) is not None


def test_a_rewritten_script_is_compiled_from_its_rewritten_text(parses: list[str]) -> None:
    mode = cm.CodeMode(_registry(), executor=InProcessExecutor())
    mode.sdk()
    # ``asyncio.run(main())`` made ``await main()``: no edit the tree follows
    script = (f"import asyncio\nasync def main():\n    return await tools.echo(i=1)\n"
              f"x = asyncio.run(main())\nx\n# {next(_unique)}")
    parses.clear()
    assert mode.check(script) == []
    assert parses[0] == script and len(parses) == 2 and parses[1] != script
    assert cached_script(parses[1]) is not None


async def test_a_script_refused_by_the_policy_is_refused_from_the_shared_tree() -> None:
    async with InProcessExecutor() as executor:
        mode = cm.CodeMode(_registry(), executor=executor)
        result = await mode.run(f"().__class__.__bases__\n# {next(_unique)}")
    assert result.error is not None and result.error.type == "PreflightError"
    assert "__class__" in result.error.message


def _corpus() -> list[str]:
    """Every string literal of the policy and attack tests that parses as a script."""
    return script_literals("sandbox/test_policy.py", "sandbox/test_attacks.py",
                           "sandbox/test_language_routes.py")


CORPUS = _corpus()


def test_the_corpus_is_the_policy_tests_scripts() -> None:
    assert len(CORPUS) > 300


def test_the_preflights_nodes_give_the_policy_what_its_own_walk_finds() -> None:
    # The policy's int proofs (unguarded arithmetic) rest on these sets: the preflight's
    # node list must give exactly what the policy's own walk of the tree gives.
    mode = cm.CodeMode(_registry(), executor=InProcessExecutor())
    sdk, specs = mode.sdk(), {spec.name: spec for spec in mode.visible_specs()}
    for source in CORPUS:
        tree = ast.parse(source)
        try:
            found = plan(source, tree, tools=sdk.names.tools, arguments=sdk.names.arguments,
                         specs=specs)
        except RecursionError:
            continue
        assert _binding_sites(tree, found.nodes) == _binding_sites(tree), source


def test_a_script_compiled_from_the_preflights_tree_is_the_script_compiled_alone() -> None:
    mode = cm.CodeMode(_registry(), executor=InProcessExecutor())
    sdk, specs = mode.sdk(), {spec.name: spec for spec in mode.visible_specs()}
    compared = 0
    for source in CORPUS:
        text = f"{source}\n# {next(_unique)}"
        tree = ast.parse(text)
        try:
            found = plan(text, tree, tools=sdk.names.tools, arguments=sdk.names.arguments,
                         specs=specs)
        except RecursionError:
            continue
        try:
            alone: Any = _checked(text, None, None).code
        except ScriptCompileError as exc:
            alone = exc.message
        try:
            shared: Any = compile_tree(text, tree, found.nodes).code
        except ScriptCompileError as exc:
            shared = exc.message
        assert shared == alone, source
        compared += 1
    assert compared > 300


async def test_a_first_run_starts_the_pools_workers_before_it_builds_the_sdk() -> None:
    mode = cm.CodeMode(_registry())
    booting: list[tuple[int, bool]] = []
    current = mode._current

    def watched() -> Any:
        pool = mode.executor
        assert isinstance(pool, WorkerPoolExecutor)
        booting.append((len(pool._idle), pool._template_booting()))
        return current()

    mode._current = watched  # type: ignore[method-assign]
    try:
        result = await mode.run("await tools.echo(i=3)")
    finally:
        await mode.aclose()
    assert result.value == 3
    # When the SDK was built, the run's worker was already started (the other one follows
    # from the loop's next turn), or (a process without a worker template yet) the
    # template they will be forked from was booting.
    started, template_booting = booting[0]
    assert started == 1 or (started == 0 and template_booting)


async def test_asking_for_the_prompt_on_a_loop_starts_the_pools_workers() -> None:
    # The workers boot while the model writes the script, not when its first run arrives.
    async with WorkerPoolExecutor(size=2, confinement="off", spare=False) as pool:
        mode = cm.CodeMode(_registry(), executor=pool)
        assert len(pool._idle) == 0
        assert "echo" in mode.prompt()
        assert len(pool._idle) == 1  # the first run's worker; the other one a turn later
        await anyio.lowlevel.checkpoint()
        started = list(pool._idle)
        assert len(started) == 2 and all(w.process.poll() is None for w in started)
        result = await mode.run("await tools.echo(i=4)")
        assert result.value == 4
        assert {id(w) for w in pool._idle} == {id(w) for w in started}  # no new boot


async def test_asking_for_the_prompt_on_a_loop_starts_the_in_process_script_thread() -> None:
    # an in-process host's first run finds its script thread (and its loop) started
    def script_threads() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name == "codemode-sandbox-script"}

    before = script_threads()
    async with InProcessExecutor() as executor:
        mode = cm.CodeMode(_registry(), executor=executor)
        assert "echo" in mode.prompt()
        started = script_threads() - before
        assert len(started) == 1
        result = await mode.run("await tools.echo(i=4)")
        assert result.value == 4
        assert script_threads() - before == started  # the run took it, started none


async def test_aprompt_starts_the_workers_but_prompt_off_the_loop_does_not() -> None:
    async with WorkerPoolExecutor(size=1, confinement="off", spare=False) as pool:
        mode = cm.CodeMode(_registry(), executor=pool)
        text = await anyio.to_thread.run_sync(mode.prompt)  # no loop in that thread
        assert "echo" in text and len(pool._idle) == 0
        assert await mode.aprompt() == text
        assert len(pool._idle) == 1


async def test_the_prompt_of_a_closed_code_mode_starts_no_pool() -> None:
    mode = cm.CodeMode(_registry())
    await mode.aclose()
    assert "echo" in mode.prompt()
    assert mode._executor is None  # no pool was made, so none is left running


def test_a_prompt_asked_without_a_loop_makes_no_pool() -> None:
    mode = cm.CodeMode(_registry())
    assert "echo" in mode.prompt()
    assert mode._executor is None


def test_a_script_seen_again_reuses_its_preflight_until_the_registry_changes(
        parses: list[str]) -> None:
    registry = _registry()
    mode = cm.CodeMode(registry, executor=InProcessExecutor())
    mode.sdk()
    script = f"x = await tools.later(i=1)\nx\n# {next(_unique)}"
    first = mode.check(script)
    assert first and "later" in first[0].message
    parses.clear()
    assert mode.check(script) == first  # answered again, not parsed again
    assert parses == []
    registry.register(cm.define_tool(name="later", execute=lambda args, ctx: 1, parameters={
        "type": "object", "properties": {"i": {"type": "integer"}}}))
    assert mode.check(script) == []  # a new registry version: planned again
    assert parses[0] == script
    parses.clear()
    assert mode.check(script, inputs={"n": 1}) == []  # with inputs: not cached
    assert parses[0] == script


def test_parses_counts_only_the_scripts_codemode_parses(parses: list[str]) -> None:
    # Other code parsing a module's source meanwhile, on any thread (pytest reading a
    # source, a library's inspection), is not a script's parse: the warm-up test once
    # took one for the warm-up script (26 problems, "module 'inspect' is not available").
    source = "import inspect\nx = inspect.isclass(int)\n"
    ast.parse(source)
    other = threading.Thread(target=ast.parse, args=(source, "source"))
    other.start()
    other.join()
    mode = cm.CodeMode(_registry(), executor=InProcessExecutor())
    script = f"x = await tools.echo(i=1)\nx\n# {next(_unique)}"
    assert mode.check(script) == []
    assert parses == [script]


async def test_a_prompt_on_a_loop_prepares_a_warm_up_script_once(parses: list[str]) -> None:
    # The model's turn runs the host's preparation code once, so the first real run does
    # not run it cold; the warm-up script itself is one the sandbox accepts as it is.
    async with InProcessExecutor() as executor:
        mode = cm.CodeMode(_registry(), executor=executor)
        assert "echo" in mode.prompt()
        assert parses == []  # later, in a loop callback: the prompt returns at once
        with anyio.fail_after(30):  # a loaded machine runs the callback late, not never
            while not parses:  # noqa: ASYNC110 (a loop callback of codemode's appends)
                await anyio.sleep(0.01)
        assert len(parses) == 1
        warm = parses[0]
        assert mode.check(warm) == []
        mode.prompt()
        await anyio.sleep(0.2)
        assert parses == [warm]  # once per CodeMode
        result = await mode.run("await tools.echo(i=5)")
        assert result.value == 5


async def test_no_warm_up_for_a_closed_code_mode_or_off_the_loop(parses: list[str]) -> None:
    closed = cm.CodeMode(_registry(), executor=InProcessExecutor())
    closed.prompt()
    await closed.aclose()
    await anyio.to_thread.run_sync(cm.CodeMode(_registry()).prompt)
    await anyio.sleep(0.2)
    assert parses == []
