# Loop + filter + aggregate: revenue of shipped/delivered orders per country, top customers.
orders = await tools.query(sql="SELECT customer_id, quantity, unit_price, status FROM orders")
customers = await tools.query(sql="SELECT id, name, country FROM customers")
by_id = {c["id"]: c for c in customers["rows"]}

revenue = {}
per_customer = {}
for order in orders["rows"]:
    if order["status"] not in ("shipped", "delivered"):
        continue
    customer = by_id[order["customer_id"]]
    amount = order["quantity"] * order["unit_price"]
    revenue[customer["country"]] = revenue.get(customer["country"], 0) + amount
    per_customer[customer["name"]] = per_customer.get(customer["name"], 0) + amount

stats = await tools.summarize_numbers(values=list(per_customer.values()))
top = sorted(per_customer.items(), key=lambda kv: kv[1], reverse=True)[:3]
print(f"{len(orders['rows'])} orders, {len(per_customer)} customers with revenue")

{
    "revenue_by_country": {country: round(total, 2) for country, total in sorted(revenue.items())},
    "top_customers": [{"name": name, "revenue": round(total, 2)} for name, total in top],
    "mean_per_customer": stats["mean"],
}
