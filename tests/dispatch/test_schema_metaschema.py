"""A tool's schema is checked against its metaschema by jsonschema-rs where it can answer,
by jsonschema otherwise: prove the answer (accepted, or refused with which message) is the
one jsonschema alone gives, and that a schema too deep for either is refused, not a crash.

The reference run turns jsonschema-rs' metaschema check off (every schema then goes to
jsonschema, as before the fast path); both runs must agree on the corpus's schemas and on
seeded mutations of them (a keyword's value swapped for a value of the wrong type).
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from typing import Any

import jsonschema_rs
import pytest
from tool_corpus import corpus_or_skip

from codemode.dispatch.schema import MAX_SCHEMA_DEPTH, compile_schema
from codemode.dispatch.tool import define_tool
from codemode.errors import ToolDefinitionError

WRONG: list[Any] = [1, "x", None, True, [], {}, -1, 1.5, ["a"], {"type": "nope"}, [1, 2],
                    {"a": 1}, "nope"]


def _verdict(schema: Any) -> str:
    try:
        compile_schema("t", schema)
    except ToolDefinitionError as exc:
        return str(exc)
    return "accepted"


def _reference_verdict(schema: Any, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as patched:
        patched.setattr(jsonschema_rs.meta, "is_valid", lambda schema: False)
        return _verdict(schema)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(
        value, list) else ()
    for key, child in items:
        found.append((*path, key))
        found.extend(_paths(child, (*path, key)))
    return found


def _mutated(schema: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    out = copy.deepcopy(schema)
    paths = [p for p in _paths(out) if p != ("$schema",)]
    if not paths:
        return out
    path = rng.choice(paths)
    parent: Any = out
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = copy.deepcopy(rng.choice(WRONG))
    return out


def _corpus_schemas() -> list[dict[str, Any]]:
    schemas = []
    for path in sorted(corpus_or_skip().glob("*.json")):
        schemas += [tool["inputSchema"] for tool in json.loads(path.read_text("utf-8"))
                    if isinstance(tool.get("inputSchema"), dict)]
    return schemas


def test_corpus_and_its_mutations_get_jsonschemas_verdict(
        monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(18)
    schemas = _corpus_schemas()
    assert len(schemas) > 1000
    verdicts: set[bool] = set()
    checked: set[str] = set()  # the corpus repeats schemas (1,161 of them, 1,020 distinct)
    for schema in schemas:
        for candidate in [schema] + [_mutated(schema, rng) for _ in range(3)]:
            text = json.dumps(candidate)  # keys in order, 1 and 1.0 and true told apart
            if text in checked:
                continue
            checked.add(text)
            fast = _verdict(candidate)
            assert fast == _reference_verdict(candidate, monkeypatch), candidate
            verdicts.add(fast == "accepted")
    assert len(checked) > 4000
    assert verdicts == {True, False}


@pytest.mark.parametrize("schema", [
    pytest.param({"type": "object", "required": ("a",)}, id="tuple-for-array"),
    pytest.param({"type": "object", "properties": {"a": {"enum": ("x", "y")}}},
                 id="tuple-enum"),
    pytest.param({"type": "object", "properties": {"a": {"type": "string",
                                                          "pattern": "\\p{L}+"}}},
                 id="ecma-only-pattern"),
    pytest.param({"type": "object", "properties": {"a": {"pattern": "(unclosed"}}},
                 id="bad-pattern"),
    pytest.param({"type": "object", "properties": {"a": {"type": "strnig"}}},
                 id="unknown-type"),
    pytest.param({"type": "object", "properties": {"a": {"minimum": "1"}}},
                 id="string-minimum"),
])
def test_refused_as_jsonschema_refuses(schema: dict[str, Any],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Where jsonschema-rs would read a schema differently (tuples taken for arrays, an
    ECMA-only regex), jsonschema still decides, and says why."""
    verdict = _verdict(schema)
    assert verdict != "accepted"
    assert verdict == _reference_verdict(schema, monkeypatch)


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer"}
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


def test_a_deep_but_allowed_schema_compiles() -> None:
    tool = define_tool(name="deep", execute=lambda args: 1, parameters={
        "type": "object", "properties": {"a": _nested(MAX_SCHEMA_DEPTH // 2 - 2)}})
    assert tool.validator.is_valid({"a": []})


@pytest.mark.parametrize("where", ["parameters", "output"])
@pytest.mark.parametrize("depth", [MAX_SCHEMA_DEPTH + 1, 100_000])
def test_too_deep_a_schema_is_refused_by_name(where: str, depth: int) -> None:
    schema = _nested(depth)
    kwargs: dict[str, Any] = ({"parameters": {"type": "object", "properties": {"a": schema}}}
                              if where == "parameters" else {"output_schema": schema})
    with pytest.raises(ToolDefinitionError, match="nested too deeply"):
        define_tool(name="deep", execute=lambda args: 1, **kwargs)


def _child(code: str) -> str:
    """What ``code`` prints in a new interpreter (which must exit cleanly)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_a_schema_that_would_crash_jsonschema_rs_never_reaches_it() -> None:
    """100,000 levels crash jsonschema-rs' reader (a segfault, in C); the depth check
    refuses it first. In a child process, so a regression fails the test, not the run."""
    code = ("from codemode.dispatch.tool import define_tool\n"
            "from codemode.errors import ToolDefinitionError\n"
            "s = {'type': 'integer'}\n"
            "for _ in range(100_000):\n"
            "    s = {'type': 'array', 'items': s}\n"
            "try:\n"
            "    define_tool(name='d', execute=lambda a: 1, output_schema=s)\n"
            "except ToolDefinitionError as exc:\n"
            "    print('refused:', exc)\n")
    out = _child(code)
    assert "refused:" in out and "nested too deeply" in out


def test_jsonschema_is_imported_only_when_a_failure_needs_explaining() -> None:
    """jsonschema-rs checks and validates plain 2020-12 schemas alone; jsonschema (~45 ms of
    a new process) loads for the first message it writes. In a child process, to see
    ``sys.modules`` as a new host has it."""
    code = (
        "import sys, anyio, codemode as cm\n"
        "from codemode.sandbox import InProcessExecutor\n"
        "async def main():\n"
        "    reg = cm.ToolRegistry()\n"
        "    async def echo(args, ctx):\n"
        "        return args['n']\n"
        "    reg.register(cm.define_tool(name='echo', execute=echo, parameters={\n"
        "        'type': 'object', 'properties': {'n': {'type': 'integer'}},\n"
        "        'required': ['n']}))\n"
        "    mode = cm.CodeMode(reg, executor=InProcessExecutor())\n"
        "    ok = await mode.run('await tools.echo(n=2)')\n"
        "    print(ok.value, 'jsonschema' in sys.modules)\n"
        "    bad = await mode.run('await tools.echo(n=\"x\")')\n"
        "    print('is not of type' in bad.error.message, 'jsonschema' in sys.modules)\n"
        "    await mode.aclose()\n"
        "anyio.run(main)\n")
    assert _child(code).split() == ["2", "False", "True", "True"]
