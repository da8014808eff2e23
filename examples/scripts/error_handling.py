# Error handling: each risky request is tried; failures are reported and the script goes on.
problems = []

try:
    notes = await tools.read_file(path="notes/2024-03-25-standup.md")
except ToolCallError as e:
    problems.append({"tool": e.tool, "message": e.message})
    listing = await tools.list_files(directory="notes", pattern="*.md")
    latest = listing["files"][-1]["path"]
    notes = await tools.read_file(path=latest)

try:
    await tools.read_file(path="../shop.db")
except ToolCallError as e:
    problems.append({"tool": e.tool, "message": e.message})

try:
    await tools.query(sql="UPDATE orders SET status = 'shipped' WHERE status = 'pending'")
except ToolCallError as e:
    problems.append({"tool": e.tool, "message": e.message})

big = await tools.query(sql="SELECT quantity FROM orders WHERE quantity > ?", params=[100])
try:
    stats = await tools.summarize_numbers(values=[r["quantity"] for r in big["rows"]])
except ToolCallError as e:
    problems.append({"tool": e.tool, "message": e.message, "path": e.path})
    stats = None

print(f"{len(problems)} problem(s) handled")
{"fallback_note_lines": len(notes.splitlines()), "big_order_stats": stats, "problems": problems}
