"""SDK generator benchmark over the real tool corpus (``../shared/corpora/tool-schemas``,
read in place) and a generated set of 1,000 tools with nested schemas.

Prints, measured side by side (wall and CPU seconds: on a shared machine wall time
includes waiting for a core):

* 1,000 nested tools: ``CodeMode.prompt()`` cold in a fresh process (names and prompt;
  datamodel-code-generator is not imported), then after changing one tool (the registry's
  cached specs), how long the event loop stalls while ``aprompt()`` generates, and the
  typed files (module + stub, datamodel-code-generator) for 100 of them;
* the corpus: names and prompt cold (fresh process), typed files, warm regeneration after
  changing one tool and after disposing one (shared ``SdkCache``);
* prompt size against the raw JSON definitions, three ways of serialising them, and an
  audit that the prompt keeps every name, required flag, enum value, default and
  description of every argument and of every nested key (parameters and results).

Run: ``python benchmarks/sdk_gen.py`` (targets: cold prompt of 1,000 nested tools <= 1 s,
regeneration after one change <= 50 ms; prompt <= 50 % of the JSON).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(
    os.environ.get("CODEMODE_TOOL_CORPUS", ROOT.parent / "shared" / "corpora" / "tool-schemas")
)


def load_corpus() -> list[dict[str, Any]]:
    """Corpus tools as MCP-style dicts; LiveMCPBench servers become namespaces."""
    tools = []
    for path in sorted(CORPUS.glob("*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")):
            keys = ("name", "description", "inputSchema", "outputSchema")
            tool = {k: item[k] for k in keys if k in item}
            if isinstance(item.get("server"), str):
                tool["namespace"] = item["server"].rsplit("/", 1)[-1]
            tools.append(tool)
    return tools


def batches(tools: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Groups with unique tool names (the corpus repeats some names across sources)."""
    groups: list[tuple[set[str], list[dict[str, Any]]]] = []
    for tool in tools:
        for names, group in groups:
            if tool["name"] not in names:
                names.add(tool["name"])
                group.append(tool)
                break
        else:
            groups.append(({tool["name"]}, [tool]))
    return [group for _, group in groups]


def _descriptions(schema: Any) -> Iterator[str]:
    """Every description in a schema that the prompt shows (keys, branches, results)."""
    if isinstance(schema, list):
        for item in schema:
            yield from _descriptions(item)
    elif isinstance(schema, dict):
        for key, value in schema.items():
            if key == "description" and isinstance(value, str):
                yield value
            elif key == "properties" and isinstance(value, dict):
                for sub in value.values():
                    yield from _descriptions(sub)
            elif key not in ("enum", "const", "default", "examples"):
                yield from _descriptions(value)


def description_stats(tools: list[dict[str, Any]]) -> dict[str, Counter[str]]:
    """Per kind (tool's own, keys'): count, cut, characters in full and as the prompt keeps them."""
    from sdk_gen._text import TRUNCATED, one_line, prompt_text, tool_text

    stats: dict[str, Counter[str]] = {"tool": Counter(), "key": Counter()}
    for tool in tools:
        own = tool.get("description")
        texts = [("tool", own, tool_text)] if isinstance(own, str) else []
        rest = {k: v for k, v in tool.items() if k != "description"}
        texts.extend(("key", text, prompt_text) for text in _descriptions(rest))
        for kind, text, cut in texts:
            kept = cut(text)
            stats[kind].update(
                n=1, full=len(one_line(text)), kept=len(kept), cut=kept.endswith(TRUNCATED)
            )
    return stats


def nested_tools(n: int) -> list[dict[str, Any]]:
    """``n`` order tools, each with three levels of nested objects, arrays of objects, enums,
    defaults, constraints and an output schema (names and descriptions differ per tool)."""
    tools = []
    for i in range(n):
        geo = {"type": "object", "required": ["lat", "lon"],
               "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}}}
        address = {"type": "object", "description": f"Postal address ({i}).",
                   "required": ["street", "city"],
                   "properties": {"street": {"type": "string"},
                                  "city": {"type": "string", "description": "City name."},
                                  "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                                  "geo": geo}}
        option = {"type": "object", "required": ["key"],
                  "properties": {"key": {"type": "string"},
                                 "value": {"type": ["string", "number", "boolean"]}}}
        item = {"type": "object", "required": ["sku", "qty"],
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer", "minimum": 1},
                               "tags": {"type": "array", "items": {"enum": ["new", "sale"]}},
                               "options": {"type": "array", "items": option}}}
        params = {"type": "object", "required": ["customer", "items"],
                  "properties": {
                      "customer": {"type": "object", "required": ["name"],
                                   "properties": {"name": {"type": "string"},
                                                  "email": {"type": "string", "format": "email"},
                                                  "address": address}},
                      "items": {"type": "array", "items": item,
                                "description": f"Lines of order {i}."},
                      "priority": {"enum": ["low", "normal", "high"], "default": "normal"},
                      "note": {"type": ["string", "null"]}}}
        output = {"type": "object", "required": ["id", "status"],
                  "properties": {"id": {"type": "string"},
                                 "status": {"enum": ["ok", "queued", "failed"]},
                                 "lines": {"type": "array", "items": {"type": "object",
                                           "properties": {"sku": {"type": "string"},
                                                          "total": {"type": "number"}}}}}}
        tools.append({"name": f"create_order_{i}", "description": f"Create order {i}.",
                      "inputSchema": params, "outputSchema": output})
    return tools


_NESTED_RUN = textwrap.dedent(
    """
    import gc, importlib.util, json, statistics, sys, time
    spec = importlib.util.spec_from_file_location("sdk_gen_bench", sys.argv[1])
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    tools = bench.nested_tools(1000)
    clock = lambda: (time.perf_counter(), time.process_time())
    t0 = clock()
    import anyio
    import codemode as cm
    t1 = clock()

    def define(tool, description=None):
        return cm.define_tool(name=tool["name"], parameters=tool["inputSchema"],
                              description=description or tool["description"],
                              output_schema=tool["outputSchema"], execute=lambda args: None)

    registry = cm.ToolRegistry()
    for tool in tools:
        registry.register(define(tool))
    mode = cm.CodeMode(registry, executor=cm.InProcessExecutor())
    t2 = clock()
    full_gc = {"window": None, "cold": [], "changed": [], "aprompt": []}
    started = []

    def on_gc(phase, info):  # full collections inside a measured window, and their length
        if phase == "start":
            started[:] = [time.perf_counter()]
        elif info["generation"] == 2 and full_gc["window"] and started:
            full_gc[full_gc["window"]].append(time.perf_counter() - started[0])

    gc.callbacks.append(on_gc)
    full_gc["window"] = "cold"
    prompt = mode.prompt()
    t3 = clock()
    full_gc["window"] = None
    changed = []
    for i in range(21):
        registry.register(define(tools[(i * 97) % 1000], f"changed {i}"), replace=True)
        full_gc["window"] = "changed"
        a = clock()
        mode.prompt()
        b = clock()
        full_gc["window"] = None
        changed.append((b[0] - a[0], b[1] - a[1]))

    async def stall():
        fresh = cm.CodeMode(registry, executor=cm.InProcessExecutor())
        gaps, done = [], anyio.Event()

        async def tick():
            last = time.perf_counter()
            while not done.is_set():
                await anyio.sleep(0.005)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        async with anyio.create_task_group() as tg:
            tg.start_soon(tick)
            full_gc["window"] = "aprompt"
            await fresh.aprompt()
            full_gc["window"] = None
            done.set()
        return max(gaps)

    gap = anyio.run(stall)
    print(json.dumps({
        "import": [t1[0] - t0[0], t1[1] - t0[1]], "cold": [t3[0] - t2[0], t3[1] - t2[1]],
        "changed_wall": statistics.median(c[0] for c in changed),
        "changed_cpu": statistics.median(c[1] for c in changed),
        "changed_max_cpu": max(c[1] for c in changed),
        "changed_max_wall": max(c[0] for c in changed),
        "full_gc": {k: v for k, v in full_gc.items() if k != "window"},
        "gc_tracked": len(gc.get_objects()),
        "datamodel": "datamodel_code_generator" in sys.modules,
        "chars": len(prompt), "loop_gap": gap,
    }))
    """
)


def bench_nested(root: Path) -> None:
    """The 1,000 nested tools, in a fresh process (so "cold" is cold)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", _NESTED_RUN, str(Path(__file__).resolve())],
        capture_output=True, text=True, env=env, check=True, cwd=root)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    wall, cpu = got["cold"]
    print(f"1,000 nested tools: CodeMode.prompt() cold, fresh process: {wall:.2f} s wall, "
          f"{cpu:.2f} s CPU (target <= 1 s); import codemode {got['import'][0]:.2f} s wall; "
          f"{got['chars']} chars; datamodel-code-generator imported: {got['datamodel']}")
    print(f"  after changing one tool: median {1000 * got['changed_wall']:.1f} ms wall, "
          f"{1000 * got['changed_cpu']:.1f} ms CPU, max {1000 * got['changed_max_cpu']:.1f} ms"
          " CPU (target <= 50 ms)")
    print(f"  aprompt() cold: the event loop's longest gap between 5 ms ticks "
          f"{1000 * got['loop_gap']:.0f} ms (target <= 50 ms)")
    passes = got["full_gc"]
    print(f"  worst case after changing one tool: {1000 * got['changed_max_wall']:.1f} ms wall;"
          " full GC passes (process-wide, " + f"{got['gc_tracked']} tracked objects) inside: "
          + "; ".join(f"{k} {len(v)}" + (f" ({', '.join(f'{1000 * t:.0f}' for t in v)} ms)"
                                          if v else "") for k, v in passes.items()))
    import sdk_gen

    sample = nested_tools(100)
    sdk = sdk_gen.generate(sample)
    t0, c0 = time.perf_counter(), time.process_time()
    sdk.render_files()
    print(f"  typed files (module + stub) for 100 of them: {time.perf_counter() - t0:.2f} s wall,"
          f" {time.process_time() - c0:.2f} s CPU")


def main() -> int:
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}")
        return 1
    here = Path(__file__).resolve().parent
    sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != here)]
    print(f"machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    bench_nested(ROOT)
    tools = load_corpus()
    groups = batches(tools)

    start, cpu = time.perf_counter(), time.process_time()
    import sdk_gen

    imported = time.perf_counter()
    sdks = [sdk_gen.generate(group) for group in groups]
    cold, cold_cpu = time.perf_counter(), time.process_time()
    for sdk in sdks:
        sdk.render_files()
    typed_wall, typed_cpu = time.perf_counter() - cold, time.process_time() - cold_cpu
    start_warm_imports = time.perf_counter()
    for group in groups:
        sdk_gen.generate(group, cache=sdk_gen.SdkCache())
    cold_warm_imports = time.perf_counter() - start_warm_imports
    print(f"corpus: {len(tools)} tools in {len(groups)} SDKs (largest {len(groups[0])} tools)")
    print(
        f"names + prompt cold, fresh process: {cold - start:.2f} s wall, {cold_cpu - cpu:.2f} s"
        f" CPU (import sdk_gen {1000 * (imported - start):.0f} ms)"
    )
    print(f"  then the typed files (module + stub): {typed_wall:.2f} s wall, {typed_cpu:.2f} s CPU")
    print(f"names + prompt, imports warm, empty cache: {cold_warm_imports:.2f} s")
    typed = sum(1 for sdk in sdks for line in sdk.module_source.splitlines() if "_result: " in line)
    print(f"  ({typed} tools return generated types)")

    big = [sdk_gen.as_spec(tool) for tool in groups[0]]  # specs, as a registry holds them
    cache = sdk_gen.SdkCache()
    t0 = time.perf_counter()
    sdk_gen.generate(big, cache=cache)
    full = time.perf_counter() - t0
    changed_times, disposed_times = [], []
    for i in range(21):
        index = (i * 97) % len(big)
        changed = list(big)
        changed[index] = sdk_gen.as_spec(
            {**groups[0][index], "description": f"changed {i}"}
        )
        t0 = time.perf_counter()
        sdk_gen.generate(changed, cache=cache)
        changed_times.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        sdk_gen.generate(big[:index] + big[index + 1 :], cache=cache)
        disposed_times.append(time.perf_counter() - t0)
    print(
        f"warm regeneration of {len(big)} tools after changing one: "
        f"median {1000 * statistics.median(changed_times):.1f} ms, "
        f"max {1000 * max(changed_times):.1f} ms (target <= 50 ms)"
    )
    print(
        f"warm regeneration after disposing one: "
        f"median {1000 * statistics.median(disposed_times):.1f} ms"
    )
    print(
        f"  side by side: full render of those {len(big)} tools {1000 * full:.0f} ms;"
        f" incremental = {statistics.median(changed_times) / full:.3f} of it"
    )

    prompt = sum(sdk.prompt_chars for sdk in sdks)
    bare = [{k: v for k, v in t.items() if k != "namespace"} for t in tools]
    ways = {
        "compact json (no spaces, utf-8)": {"separators": (",", ":"), "ensure_ascii": False},
        "json.dumps defaults": {},
        "pretty json (indent=2, utf-8)": {"indent": 2, "ensure_ascii": False},
    }
    stats = description_stats(bare)
    described = sum(kind["kept"] for kind in stats.values())
    print(f"prompt: {prompt} chars for {len(tools)} tools, {described} of them descriptions")
    for label, kwargs in ways.items():
        raw = sum(len(json.dumps(t, **kwargs)) for t in bare)
        print(
            f"  vs {label}: {raw} chars, ratio {prompt / raw:.3f} (target <= 0.50);"
            f" descriptions alone (before sharing) {described / raw:.3f}, the rest"
            f" {(prompt - described) / (raw - described):.3f}"
        )
    from sdk_gen._text import KEY_LIMIT, SLACK, TOOL_LIMIT

    for kind, limit in (("tool", TOOL_LIMIT), ("key", KEY_LIMIT)):
        got = stats[kind]
        print(
            f"  {kind} descriptions: {got['n']}, {got['cut']} of them (over {SLACK}x {limit}"
            f" chars) cut near {limit} (counted as if nothing were shared);"
            f" the prompt keeps {got['kept']} of their {got['full']} chars"
            f" ({got['kept'] / max(got['full'], 1):.3f}; the module keeps all)"
        )
    from sdk_gen._audit import audit_prompt

    checked: Counter[str] = Counter()
    lost: list[str] = []
    for group, sdk in zip(groups, sdks, strict=True):
        group_checked, group_lost = audit_prompt(group, sdk)
        checked.update(group_checked)
        lost.extend(group_lost)
    kept = ", ".join(f"{kind} {checked[kind]}" for kind in sorted(checked))
    print(f"prompt audit, facts checked: {kept}; lost {len(lost)}")
    for item in lost[:10]:
        print(f"  lost: {item}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
