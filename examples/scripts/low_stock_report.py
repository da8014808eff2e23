# Chaining files and SQL: stock from the inventory CSV minus pending orders, written as a report.
inventory = await tools.read_file(path="data/inventory.csv")
header, *lines = inventory.strip().splitlines()
stock = {}
for line in lines:
    sku, product, count, price = line.split(",")
    stock[sku] = {"product": product, "stock": int(count)}

pending = await tools.query(
    sql="SELECT sku, SUM(quantity) AS units FROM orders WHERE status = ? GROUP BY sku ORDER BY sku",
    params=["pending"],
)
rows = []
for row in pending["rows"]:
    item = stock[row["sku"]]
    left = item["stock"] - row["units"]
    rows.append({"sku": row["sku"], "product": item["product"], "pending": row["units"],
                 "left_after_pending": left})

low = [r for r in rows if r["left_after_pending"] < 25]
report = "# Low stock\n\n" + "\n".join(
    f"- {r['product']} ({r['sku']}): {r['left_after_pending']} left after {r['pending']} pending"
    for r in low
)
saved = await tools.write_file(path="reports/low-stock.md", content=report + "\n")
{"report": saved["path"], "low": [r["sku"] for r in low], "checked": len(rows)}
