"""Discovery quality and prompt size of ``codemode serve`` over the real tool corpus.

All 1,161 tools of ``../shared/corpora/tool-schemas`` are registered in one gateway (the
way upstream MCP servers' tools are: ``mcp_tools`` with its schema repairs; namespace =
LiveMCPBench server, or the corpus file for the others; a name already taken gets the
namespace as prefix). Then:

* **recall@5 of search_tools**: for each tool, the query is its own description with its
  name and its argument names removed (whole words, case-insensitive, also in their
  space-separated form: ``get_issue`` removes ``get_issue`` and ``get issue``); a hit is the
  tool among the first 5 results. Tools whose description is empty after that have no
  query and count as misses.
* **size**: the ``run_code`` description clients read against the full prompt (rules +
  whole SDK) at 10, 100 and all tools, in characters and in tokens by the documented
  estimate (``ceil(chars / 4)``, ``codemode.integrations.discovery.estimate_tokens``).

Run: ``python benchmarks/serve_discovery.py`` (targets: recall@5 ≥ 0.9; description ≤
4,000 tokens whatever the tool count).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CORPUS = Path(
    os.environ.get("CODEMODE_TOOL_CORPUS", ROOT.parent / "shared" / "corpora" / "tool-schemas")
)


class _NoSession:
    """Registered handlers are never called here."""

    async def list_tools(self, *, params: Any = None) -> Any:
        raise NotImplementedError

    async def call_tool(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def load(limit: int | None = None) -> tuple[Any, list[tuple[str, dict[str, Any]]]]:
    """A Gateway holding the corpus (first ``limit`` tools), and (wire name, listing) pairs."""
    from codemode.integrations.gateway import Gateway
    from codemode.integrations.mcp import mcp_tools
    from codemode.sandbox import InProcessExecutor

    gateway = Gateway(executor=InProcessExecutor())
    registered: list[tuple[str, dict[str, Any]]] = []
    items: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(CORPUS.glob("*.json")):
        for item in json.loads(path.read_text(encoding="utf-8")):
            server = item.get("server")
            space = server.rsplit("/", 1)[-1] if isinstance(server, str) else path.stem
            items.append((re.sub(r"\W+", "_", space), item))
    for space, item in items[:limit]:
        listing = {k: item[k] for k in ("name", "description", "inputSchema", "outputSchema")
                   if k in item}
        prefix = f"{space}_" if item["name"] in gateway.registry else ""
        if prefix + item["name"] in gateway.registry:
            # the name repeats within its namespace (BFCL lists some functions in two
            # files): one tool in the registry, and its query must find that one
            registered.append((prefix + item["name"], listing))
            continue
        (tool,) = mcp_tools([listing], _NoSession(), namespace=space, prefix=prefix)
        gateway.registry.register(tool)
        registered.append((tool.name, listing))
    return gateway, registered


def query_for(listing: dict[str, Any]) -> str:
    """The tool's description without its name and argument names."""
    text = listing.get("description") or ""
    props = (listing.get("inputSchema") or {}).get("properties") or {}
    names = [listing["name"], *props]
    for name in sorted(names, key=len, reverse=True):
        spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).replace("_", " ").replace("-", " ")
        for form in {name, spaced}:
            text = re.sub(rf"(?<!\w){re.escape(form)}(?!\w)", " ", text, flags=re.I)
    return " ".join(text.split())


def recall(
    gateway: Any, registered: list[tuple[str, dict[str, Any]]], k: int = 5
) -> dict[str, Any]:
    paths = {wire: path for path, wire in gateway.mode.sdk().names.tools.items()}
    hits = empty = 0
    misses: list[str] = []
    started = time.perf_counter()
    for wire, listing in registered:
        query = query_for(listing)
        if not query:
            empty += 1
            continue
        found = [m["tool"] for m in gateway.discovery.search(query, k)]
        if paths[wire] in found:
            hits += 1
        else:
            misses.append(paths[wire])
    elapsed = time.perf_counter() - started
    return {"tools": len(registered), "hits": hits, "no_query": empty,
            "recall": hits / len(registered), "ms_per_query": 1000 * elapsed / len(registered),
            "misses": misses, "distinct": len({w for w, _ in registered})}


def sizes(counts: tuple[int | None, ...] = (10, 100, None)) -> list[dict[str, Any]]:
    from codemode.integrations.discovery import estimate_tokens

    rows = []
    for count in counts:
        gateway, registered = load(count)
        full = gateway.mode.prompt()
        description = gateway.run_code_description()
        rows.append({
            "tools": len({w for w, _ in registered}),
            "full_prompt_chars": len(full),
            "full_prompt_tokens": estimate_tokens(full),
            "run_code_chars": len(description),
            "run_code_tokens": estimate_tokens(description),
            "discovery": "tools.search" in description,
        })
    return rows


def main() -> None:
    gateway, registered = load()
    result = recall(gateway, registered)
    print(f"recall@5 of search_tools over {result['tools']} tools"
          f" ({result['distinct']} distinct in the registry): {result['recall']:.3f}"
          f" ({result['hits']} hits; {result['no_query']} tools without a query;"
          f" {result['ms_per_query']:.2f} ms per query)")
    print("  misses (first 10):", ", ".join(result["misses"][:10]))
    print(f"{'tools':>6} {'full prompt chars':>18} {'~tokens':>8} {'run_code chars':>15}"
          f" {'~tokens':>8}  mode")
    for row in sizes():
        print(f"{row['tools']:>6} {row['full_prompt_chars']:>18,} {row['full_prompt_tokens']:>8,}"
              f" {row['run_code_chars']:>15,} {row['run_code_tokens']:>8,}  "
              + ("index + discovery" if row["discovery"] else "whole SDK"))


if __name__ == "__main__":
    main()
