// An MCP server written with the official TypeScript SDK (McpServer, stdio) whose tool set
// changes at run time: `grow` registers one more tool (`extra_1`, `extra_2` ...) and
// `shrink` removes the newest; the SDK sends notifications/tools/list_changed for each.
// argv[2]: the folder of node_modules that holds @modelcontextprotocol/sdk.
"use strict";
const path = require("node:path");
const { createRequire } = require("node:module");

const sdk = createRequire(path.join(process.argv[2], "..", "package.json"));
const { McpServer } = sdk("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = sdk("@modelcontextprotocol/sdk/server/stdio.js");

const server = new McpServer({ name: "changing", version: "1.0.0" });
const added = [];
const text = (t) => ({ content: [{ type: "text", text: t }] });

server.registerTool("grow", { description: "Add one tool." }, async () => {
  const name = `extra_${added.length + 1}`;
  added.push(server.registerTool(name, { description: `Added tool ${name}.` },
    async () => text(`${name} answers`)));
  return text(name);
});
server.registerTool("shrink", { description: "Remove the newest added tool." }, async () => {
  const tool = added.pop();
  if (tool === undefined) return { ...text("nothing to remove"), isError: true };
  tool.remove();
  return text(`removed extra_${added.length + 1}`);
});

server.connect(new StdioServerTransport());
