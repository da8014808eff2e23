# A denied call: archive the to-do list, then delete it. The workspace policy denies
# delete_file for direct calls and for calls from code alike, so the script stops there.
todo = await tools.read_file(path="todo.txt")
saved = await tools.write_file(path="archive/todo-2024-03.txt", content=todo)
print(f"archived {saved['bytes']} bytes to {saved['path']}")
await tools.delete_file(path="todo.txt")
"todo.txt deleted"
