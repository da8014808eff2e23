"""How many scripts written in each dialect run first try (issue #13).

Ten scripts per dialect, written the way models trained on other hosts write them,
run through ``CodeMode.run`` (in-process executor) against small real tools. A script
passes when it runs without error and its value is the expected one. Prints the count
per dialect and the message a model gets for each failure.

    python benchmarks/dialects.py [--strict]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import anyio  # noqa: E402

import codemode as cm  # noqa: E402

ITEMS = {1: "apple", 2: "pear", 3: "plum"}


def build() -> cm.ToolRegistry:
    registry = cm.ToolRegistry()

    @cm.tool
    def search(query: str, limit: int = 10) -> list[dict[str, Any]]:
        """Search items by name."""
        return [{"id": i, "name": n} for i, n in ITEMS.items() if query in n][:limit]

    @cm.tool
    def get_item(id: int) -> dict[str, Any]:
        """One item."""
        if id not in ITEMS:
            raise LookupError(f"no item {id}")
        return {"id": id, "name": ITEMS[id], "price": id * 1.5}

    @cm.tool
    def send_email(to: str, subject: str, body: str = "") -> dict[str, Any]:
        """Send an email."""
        return {"sent": True, "to": to}

    async def get_sheet(args: Any, ctx: cm.ExecContext) -> dict[str, Any]:
        return {"sheet": args["sheet_id"], "rows": [[1, 2], [3, 4]]}

    registry.register(search)
    registry.register(get_item)
    registry.register(send_email)
    registry.register(cm.define_tool(
        name="get_sheet", namespace="gdrive", execute=get_sheet,
        parameters={"type": "object", "properties": {"sheet_id": {"type": "string"}},
                    "required": ["sheet_id"], "additionalProperties": False}))
    return registry


# dialect -> [(script, expected value, inputs)]
CORPUS: dict[str, list[tuple[str, Any, dict[str, Any] | None]]] = {
    "bare tool names": [
        ('r = await search(query="p")\nlen(r)', 3, None),
        ('await get_item(id=1)', {"id": 1, "name": "apple", "price": 1.5}, None),
        ('x = await get_item(id=2)\nx["name"]', "pear", None),
        ('names = []\nfor h in await search(query="p"):\n    names.append(h["name"])\nnames',
         ["apple", "pear", "plum"], None),
        ('import asyncio\nrs = await asyncio.gather(get_item(id=1), get_item(id=2))\n'
         '[r["name"] for r in rs]', ["apple", "pear"], None),
        ('(await send_email(to="a@b", subject="hi"))["sent"]', True, None),
        ('r = await search(query="a", limit=1)\nr[0]["id"]', 1, None),
        ('async def f(i):\n    return (await get_item(id=i))["price"]\nawait f(3)', 4.5, None),
        ('try:\n    await get_item(id=7)\n    out = "found"\nexcept ToolCallError:\n'
         '    out = "missing"\nout', "missing", None),
        ('sum([(await get_item(id=i))["price"] for i in (1, 2)])', 4.5, None),
    ],
    "bare namespaces": [
        ('await gdrive.get_sheet(sheet_id="s")', {"sheet": "s", "rows": [[1, 2], [3, 4]]}, None),
        ('s = await gdrive.get_sheet(sheet_id="a")\nlen(s["rows"])', 2, None),
        ('s = await gdrive.get_sheet(sheet_id="b")\ns["sheet"]', "b", None),
        ('rows = (await gdrive.get_sheet(sheet_id="c"))["rows"]\nsum(r[0] for r in rows)', 4,
         None),
        ('import asyncio\nss = await asyncio.gather(*[gdrive.get_sheet(sheet_id=k) '
         'for k in "xy"])\n[s["sheet"] for s in ss]', ["x", "y"], None),
        ('sheet = await gdrive.get_sheet(sheet_id="d")\n{"n": len(sheet["rows"])}', {"n": 2},
         None),
        ('t = 0\nfor k in ["e", "f"]:\n    t += len((await gdrive.get_sheet(sheet_id=k))'
         '["rows"])\nt', 4, None),
        ('g = gdrive\ns = await g.get_sheet(sheet_id="h")\ns["sheet"]', "h", None),
        ('async def rows(k):\n    return (await gdrive.get_sheet(sheet_id=k))["rows"]\n'
         'await rows("i")', [[1, 2], [3, 4]], None),
        ('s = await gdrive.get_sheet(sheet_id="j")\ns["rows"][1][1]', 4, None),
    ],
    "positional / one dict of arguments": [
        ('await tools.get_item(1)', {"id": 1, "name": "apple", "price": 1.5}, None),
        ('r = await tools.search("p")\nlen(r)', 3, None),
        ('r = await tools.search("p", 1)\nr[0]["name"]', "apple", None),
        ('r = await tools.search({"query": "pl"})\nr[0]["id"]', 1, None),
        ('args = {"query": "a", "limit": 5}\nlen(await tools.search(args))', 2, None),
        ('(await tools.send_email("x@y", "s", "b"))["to"]', "x@y", None),
        ('(await tools.send_email("x@y", subject="s"))["sent"]', True, None),
        ('q = "pe"\n(await tools.search(q))[0]["name"]', "pear", None),
        ('import asyncio\nrs = await asyncio.gather(*[tools.get_item(i) for i in (1, 3)])\n'
         '[r["name"] for r in rs]', ["apple", "plum"], None),
        ('(await tools.gdrive.get_sheet("k"))["sheet"]', "k", None),
    ],
    "calls without await": [
        ('r = tools.get_item(id=1)\nr["name"]', "apple", None),
        ('hits = tools.search(query="p")\nlen(hits)', 3, None),
        ('[tools.get_item(id=h["id"])["name"] for h in tools.search(query="p")]',
         ["apple", "pear", "plum"], None),
        ('total = 0\nfor i in [1, 2, 3]:\n    total += tools.get_item(id=i)["price"]\ntotal',
         9.0, None),
        ('import asyncio\nrs = await asyncio.gather(tools.get_item(id=1), tools.get_item(id=2))\n'
         'len(rs)', 2, None),
        ('def price(i):\n    return tools.get_item(id=i)["price"]\nprice(2)', 3.0, None),
        ('tools.send_email(to="a", subject="b")\n"ok"', "ok", None),
        ('sum(tools.get_item(id=i)["price"] for i in (1, 3))', 6.0, None),
        ('tasks = [tools.get_item(id=i) for i in (1, 2)]\nimport asyncio\n'
         'rs = await asyncio.gather(*tasks)\n[r["id"] for r in rs]', [1, 2], None),
        ('r = tools.search(query="zzz")\n"none" if not r else "some"', "none", None),
    ],
    "host inputs as globals": [
        ('(await tools.get_item(id=item_id))["name"]', "pear", {"item_id": 2}),
        ('len(await tools.search(query=query))', 3, {"query": "p"}),
        ('[(await tools.get_item(id=i))["name"] for i in ids]', ["apple", "plum"],
         {"ids": [1, 3]}),
        ('(await tools.send_email(to=user["email"], subject="x"))["to"]', "u@x",
         {"user": {"email": "u@x"}}),
        ('limit', 3, {"limit": 3}),
        ('(await tools.search(query=q, limit=max_results))[0]["name"]', "pear",
         {"q": "pe", "max_results": 1}),
        ('(await tools.gdrive.get_sheet(sheet_id=server_id))["sheet"]', "srv",
         {"server_id": "srv"}),
        ('{"n": len(names)}', {"n": 2}, {"names": ["a", "b"]}),
        ('threshold * 2', 5.0, {"threshold": 2.5}),
        ('"on" if enabled else "off"', "on", {"enabled": True}),
    ],
    "final_answer(x)": [
        ('r = await tools.get_item(id=1)\nfinal_answer(r["name"])', "apple", None),
        ('final_answer(len(await tools.search(query="p")))', 3, None),
        ('for i in (1, 2, 3):\n    r = await tools.get_item(id=i)\n    if r["name"] == "pear":\n'
         '        final_answer(r["id"])', 2, None),
        ('x = 5\nfinal_answer(x)\nprint("never")', 5, None),
        ('final_answer({"ok": True})', {"ok": True}, None),
        ('names = [h["name"] for h in await tools.search(query="p")]\nfinal_answer(names)',
         ["apple", "pear", "plum"], None),
        ('async def go():\n    final_answer("from inside")\nawait go()', "from inside", None),
        ('try:\n    await tools.get_item(id=9)\nexcept ToolCallError as e:\n'
         '    final_answer("err")', "err", None),
        ('final_answer(answer="done")', "done", None),
        ('r = await tools.send_email(to="a", subject="b")\nfinal_answer(r["sent"])', True,
         None),
    ],
    "top-level return": [
        ('r = await tools.get_item(id=1)\nreturn r["name"]', "apple", None),
        ('return len(await tools.search(query="p"))', 3, None),
        ('for i in (1, 2, 3):\n    r = await tools.get_item(id=i)\n    if r["name"] == "plum":\n'
         '        return r["id"]\nreturn None', 3, None),
        ('hits = await tools.search(query="zzz")\nif not hits:\n    return "nothing"\n'
         'return hits', "nothing", None),
        ('return {"a": 1, "b": 2}', {"a": 1, "b": 2}, None),
        ('a = 1\nb = 2\nreturn a, b', [1, 2], None),
        ('try:\n    r = await tools.get_item(id=9)\nexcept ToolCallError:\n    return "missing"',
         "missing", None),
        ('x = [1, 2, 3]\nreturn sum(x)', 6, None),
        ('r = await tools.get_item(id=2)\nif r["price"] > 1:\n    return "pricey"\n'
         'return "cheap"', "pricey", None),
        ('return [h["id"] for h in await tools.search(query="a")]', [1, 2], None),
    ],
    "ending in an assignment": [
        ('result = await tools.get_item(id=1)', {"id": 1, "name": "apple", "price": 1.5}, None),
        ('r = await tools.search(query="p")\nnames = [h["name"] for h in r]',
         ["apple", "pear", "plum"], None),
        ('total = sum([1, 2, 3])', 6, None),
        ('summary: dict = {"n": len(await tools.search(query="p"))}', {"n": 3}, None),
        ('x = 1\ny = x + 1', 2, None),
        ('out = {}\nfor i in (1, 2):\n    out[str(i)] = (await tools.get_item(id=i))["name"]\n'
         'answer = out', {"1": "apple", "2": "pear"}, None),
        ('sheet = await tools.gdrive.get_sheet(sheet_id="s")\nrows = sheet["rows"]',
         [[1, 2], [3, 4]], None),
        ('r = await tools.send_email(to="a", subject="b")\nsent = r["sent"]', True, None),
        ('import json\ntext = json.dumps({"a": 1})', '{"a": 1}', None),
        ('hits = await tools.search(query="pl")\nfirst = hits[0]["name"]', "apple", None),
    ],
    "uncalled main() / asyncio.run(main())": [
        ('async def main():\n    return (await tools.get_item(id=1))["name"]\n', "apple", None),
        ('import asyncio\nasync def main():\n    return len(await tools.search(query="p"))\n'
         'asyncio.run(main())', 3, None),
        ('import asyncio\n\nasync def main():\n    r = await tools.get_item(id=2)\n'
         '    return r["name"]\n\nif __name__ == "__main__":\n    asyncio.run(main())\n',
         "pear", None),
        ('async def main():\n    out = []\n    for i in (1, 3):\n'
         '        out.append((await tools.get_item(id=i))["name"])\n    return out\n',
         ["apple", "plum"], None),
        ('import asyncio\nasync def main():\n    rs = await asyncio.gather(tools.get_item(id=1), '
         'tools.get_item(id=2))\n    return [r["id"] for r in rs]\nresult = asyncio.run(main())\n'
         'result', [1, 2], None),
        ('def main():\n    return 41 + 1\n', 42, None),
        ('async def helper(i):\n    return (await tools.get_item(id=i))["price"]\n\n'
         'async def main():\n    return await helper(1) + await helper(2)\n', 4.5, None),
        ('import asyncio\nasync def main():\n    return "hi"\nif __name__ == "__main__":\n'
         '    result = asyncio.run(main())\n    print(result)\n    final_answer(result)', "hi",
         None),
        ('async def run():\n    return (await tools.send_email(to="a", subject="b"))["sent"]\n',
         True, None),
        ('import asyncio\nasync def amain():\n    return 7\nasyncio.run(amain())', 7, None),
    ],
    "modules used without import": [
        ('json.dumps({"a": 1})', '{"a": 1}', None),
        ('math.floor(2.7)', 2, None),
        ('len(re.findall(r"p", "apple pear"))', 3, None),
        ('statistics.mean([1, 2, 3])', 2, None),
        ('datetime.date(2024, 1, 2).isoformat()', "2024-01-02", None),
        ('collections.Counter("aab").most_common(1)[0][0]', "a", None),
        ('list(itertools.islice(itertools.count(), 3))', [0, 1, 2], None),
        ('r = await tools.get_item(id=1)\njson.loads(json.dumps(r))["name"]', "apple", None),
        ('round(math.sqrt(16))', 4, None),
        ('string.ascii_lowercase[:3]', "abc", None),
    ],
    "type(e).__name__": [
        ('try:\n    await tools.get_item(id=9)\nexcept Exception as e:\n'
         '    out = type(e).__name__\nout', "ToolCallError", None),
        ('try:\n    1 / 0\nexcept Exception as e:\n    n = type(e).__name__\nn',
         "ZeroDivisionError", None),
        ('try:\n    {}["k"]\nexcept Exception as e:\n    n = e.__class__.__name__\nn', "KeyError",
         None),
        ('def f():\n    pass\nf.__name__', "f", None),
        ('type(1).__name__', "int", None),
        ('type([]).__name__', "list", None),
        ('class A:\n    pass\nA.__name__', "A", None),
        ('errors = []\nfor i in (1, 9):\n    try:\n        await tools.get_item(id=i)\n'
         '    except Exception as e:\n        errors.append(type(e).__name__)\nerrors',
         ["ToolCallError"], None),
        ('try:\n    int("x")\nexcept ValueError as e:\n    m = f"{type(e).__name__}: bad"\nm',
         "ValueError: bad", None),
        ('type("s").__name__ + type(1.0).__name__', "strfloat", None),
    ],
    "<tool>_sync aliases": [
        ('tools.get_item_sync(id=1)["name"]', "apple", None),
        ('get_item_sync(2)["name"]', "pear", None),
        ('len(tools.search_sync(query="p"))', 3, None),
        ('r = search_sync("pl")\nr[0]["id"]', 1, None),
        ('tools.send_email_sync(to="a", subject="b")["sent"]', True, None),
        ('[get_item_sync(i)["price"] for i in (1, 2)]', [1.5, 3.0], None),
        ('x = await tools.get_item_sync(id=3)\nx["name"]', "plum", None),
        ('total = 0\nfor i in (1, 3):\n    total += tools.get_item_sync(id=i)["price"]\ntotal',
         6.0, None),
        ('def name(i):\n    return get_item_sync(i)["name"]\nname(1)', "apple", None),
        ('tools.gdrive.get_sheet_sync(sheet_id="z")["sheet"]', "z", None),
    ],
}


async def main() -> None:
    strict = "--strict" in sys.argv
    kwargs: dict[str, Any] = {"strict": True} if strict else {}
    passed_all = total_all = 0
    async with cm.InProcessExecutor() as executor:
        try:
            mode = cm.CodeMode(build(), executor=executor, **kwargs)
        except TypeError:  # before issue #13: no strict option
            mode = cm.CodeMode(build(), executor=executor)
        for dialect, rows in CORPUS.items():
            passed = 0
            failures: list[str] = []
            for script, expected, inputs in rows:
                try:
                    run = await (mode.run(script, inputs=inputs) if inputs is not None
                                 else mode.run(script))
                except TypeError as exc:  # before issue #13: no inputs
                    failures.append(f"  TypeError (host): {exc}")
                    continue
                if run.error is None and run.value == expected:
                    passed += 1
                elif run.error is None:
                    failures.append(f"  wrong value {run.value!r} for {script!r}")
                else:
                    message = run.error.message.replace("\n", " | ")
                    failures.append(f"  {run.error.type}: {message}")
            passed_all += passed
            total_all += len(rows)
            print(f"{dialect}: {passed}/{len(rows)}")
            for failure in failures:
                print(failure)
    print(f"total: {passed_all}/{total_all}")


if __name__ == "__main__":
    anyio.run(main)
