"""SDK generator benchmark over the real tool corpus (``../shared/corpora/tool-schemas``).

Prints, measured side by side in one process:

* cold generation of the whole corpus (first call pays datamodel-code-generator's imports),
  then the same with imports warm but an empty cache;
* warm regeneration after changing one tool, and after disposing one (shared ``SdkCache``);
* prompt size against the raw JSON definitions, three ways of serialising them, and an
  audit that the prompt keeps every name, required flag, enum value, default and
  description of every argument and of every nested key (parameters and results).

Run: ``python benchmarks/sdk_gen.py`` (targets: warm regeneration ≤ 50 ms; prompt ≤ 50 %).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
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


def main() -> int:
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}")
        return 1
    here = Path(__file__).resolve().parent
    sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != here)]
    tools = load_corpus()
    groups = batches(tools)

    start = time.perf_counter()
    import sdk_gen

    imported = time.perf_counter()
    sdks = [sdk_gen.generate(group) for group in groups]
    cold = time.perf_counter()
    start_warm_imports = time.perf_counter()
    for group in groups:
        sdk_gen.generate(group, cache=sdk_gen.SdkCache())
    cold_warm_imports = time.perf_counter() - start_warm_imports
    print(f"corpus: {len(tools)} tools in {len(groups)} SDKs (largest {len(groups[0])} tools)")
    print(
        f"cold generation, fresh process: {cold - start:.2f} s "
        f"(import sdk_gen {1000 * (imported - start):.0f} ms)"
    )
    print(f"cold generation, imports warm, empty cache: {cold_warm_imports:.2f} s")
    typed = sum(1 for sdk in sdks for line in sdk.module_source.splitlines() if "_result: " in line)
    print(
        f"  (machine load average {os.getloadavg()[0]:.1f}; {typed} tools return generated types)"
    )

    big = groups[0]
    cache = sdk_gen.SdkCache()
    t0 = time.perf_counter()
    sdk_gen.generate(big, cache=cache)
    full = time.perf_counter() - t0
    changed_times, disposed_times = [], []
    for i in range(21):
        index = (i * 97) % len(big)
        changed = list(big)
        changed[index] = {**big[index], "description": f"changed {i}"}
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
