# A denied call: archive the to-do list, then delete it. The policy denies delete_file
# for direct calls and calls from code; known before the run, the script is refused there.
todo = await tools.read_file(path="todo.txt")
saved = await tools.write_file(path="archive/todo-2024-03.txt", content=todo)
print(f"archived {saved['bytes']} bytes to {saved['path']}")
await tools.delete_file(path="todo.txt")
"todo.txt deleted"
