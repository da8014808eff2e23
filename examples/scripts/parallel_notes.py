# Parallel fan-out: read every meeting note at once, measure each, collect the contacts.
import asyncio

listing = await tools.list_files(directory="notes", pattern="*.md")
paths = [f["path"] for f in listing["files"]]
texts = await asyncio.gather(*[tools.read_file(path=p) for p in paths])
counts = await asyncio.gather(*[tools.word_count(text=t, top=3) for t in texts])
contacts = await tools.extract_emails(text="\n".join(texts))

{
    "notes": [{"path": p, "words": c["words"], "top": c["top_words"][0]["word"]}
              for p, c in zip(paths, counts)],
    "total_words": sum(c["words"] for c in counts),
    "contacts": contacts["emails"],
}
