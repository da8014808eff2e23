// A client written with the official TypeScript MCP SDK, run against `codemode serve` by
// tests/integrations/test_node_client.py. argv[2] is a JSON object: `nodeModules` (where
// @modelcontextprotocol/sdk is installed), `transport` ("stdio" or "http"), then `command`,
// `args`, `env` (stdio) or `url`, `token` (http). It initializes, lists tools, asks for
// debug logs, runs scripts (one that succeeds with progress and a log message, one that
// fails, one it cancels, one that makes an upstream add a tool: then it waits for
// notifications/tools/list_changed and lists again) and prints what it saw as one JSON
// object on stdout.
"use strict";
const path = require("node:path");
const { createRequire } = require("node:module");

const spec = JSON.parse(process.argv[2]);
const sdk = createRequire(path.join(spec.nodeModules, "..", "package.json"));
const { Client } = sdk("@modelcontextprotocol/sdk/client/index.js");
const types = sdk("@modelcontextprotocol/sdk/types.js");

function transport() {
  if (spec.transport === "stdio") {
    const { StdioClientTransport } = sdk("@modelcontextprotocol/sdk/client/stdio.js");
    return new StdioClientTransport({
      command: spec.command, args: spec.args, env: spec.env, stderr: "inherit",
    });
  }
  const { StreamableHTTPClientTransport } = sdk("@modelcontextprotocol/sdk/client/streamableHttp.js");
  return new StreamableHTTPClientTransport(new URL(spec.url), {
    requestInit: { headers: { Authorization: `Bearer ${spec.token}` } },
  });
}

// every message the server sends, as the transport hands it to the client, and every one
// the client sends
function tap(target, seen, sent) {
  const send = target.send.bind(target);
  target.send = (message, options) => { sent.push(message); return send(message, options); };
  let handler;
  Object.defineProperty(target, "onmessage", {
    configurable: true,
    get() { return handler && ((message, extra) => { seen.push(message); handler(message, extra); }); },
    set(h) { handler = h; },
  });
}

const text = (result) => result.content.filter((b) => b.type === "text").map((b) => b.text).join("\n");

// The run's progress as the server sent it, from the transport: the SDK's client hands a
// notification to its handler a microtask later but settles a response at once, so
// progress that comes in the same read as the response is dropped before it reaches
// `onprogress` (typescript-sdk#2580). `afterAnswer` counts any sent after the response.
async function runCode(client, io, code) {
  const from = io.seen.length;
  const result = await client.callTool({ name: "run_code", arguments: { code } }, undefined, {
    onprogress: () => {}, resetTimeoutOnProgress: true, timeout: 60000,
  });
  const request = io.sent.findLast((m) => m.method === "tools/call" && m.params.arguments.code === code);
  const token = request.params._meta.progressToken;
  const later = io.seen.slice(from);
  const answer = later.findIndex((m) => m.id === request.id);
  const progress = later.filter((m) => m.method === "notifications/progress" && m.params.progressToken === token);
  return { isError: result.isError === true, text: text(result), structured: result.structuredContent ?? null,
           kinds: result.content.map((b) => b.type),
           progress: progress.map((m) => ({ progress: m.params.progress, message: m.params.message })),
           afterAnswer: later.slice(answer).filter((m) => progress.includes(m)).length };
}

async function main() {
  const seen = [];
  const sent = [];
  const logs = [];
  const out = {};
  const t = transport();
  tap(t, seen, sent);
  const io = { seen, sent };
  const client = new Client({ name: "ts-interop", version: "1.0.0" }, { capabilities: {} });
  let logged = () => {};
  const firstLog = new Promise((resolve) => { logged = resolve; });
  client.setNotificationHandler(types.LoggingMessageNotificationSchema, (n) => { logs.push(n.params); logged(); });
  let changed = 0;
  let announce = () => {};
  const announced = new Promise((resolve) => { announce = resolve; });
  client.setNotificationHandler(types.ToolListChangedNotificationSchema, () => { changed += 1; announce(); });
  await client.connect(t);
  const init = seen.find((m) => m.result && m.result.protocolVersion);
  out.protocolVersion = init.result.protocolVersion;
  out.server = client.getServerVersion();
  out.capabilities = client.getServerCapabilities();
  const listed = await client.listTools();
  out.tools = listed.tools.map((tool) => tool.name).sort();
  out.runCodeSchema = listed.tools.find((tool) => tool.name === "run_code").inputSchema;
  await client.setLoggingLevel("debug");

  out.run = await runCode(client, io, spec.script);

  out.failing = await runCode(client, io, spec.failing);

  // cancel a run once its first progress arrives (the nested call has started)
  const controller = new AbortController();
  const started = [];
  const cancelled = client.callTool({ name: "run_code", arguments: { code: spec.cancelled } }, undefined, {
    signal: controller.signal, timeout: 60000,
    onprogress: (p) => { started.push(p); controller.abort("the user pressed stop"); },
  });
  try {
    await cancelled;
    out.cancelled = { rejected: false };
  } catch (error) {
    out.cancelled = { rejected: true, error: String(error), progress: started };
  }
  out.after = await runCode(client, io, spec.after);
  const request = sent.find((m) => m.method === "tools/call" && m.params.arguments.code === spec.cancelled);
  out.cancelNotices = sent.filter((m) => m.method === "notifications/cancelled")
    .map((m) => ({ sameId: m.params.requestId === request.id, reason: m.params.reason }));
  out.answersToCancelled = seen.filter((m) => m.id === request.id);

  const before = (await client.listTools()).tools.find((tool) => tool.name === "run_code");
  out.grow = await runCode(client, io, spec.grow);
  await announced; // the test's timeout bounds the wait
  const after = (await client.listTools()).tools.find((tool) => tool.name === "run_code");
  out.listChanged = { count: changed, before: before.description.split("\n").filter((l) => l.startsWith("extra_")),
                      after: after.description.split("\n").filter((l) => l.startsWith("extra_")) };
  // over HTTP a log message comes on the GET stream, not the run's: it may come after
  await firstLog; // the test's timeout bounds the wait
  out.logs = logs;
  await client.close();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((error) => {
  process.stdout.write(JSON.stringify({ crashed: String(error && error.stack || error) }) + "\n");
  process.exitCode = 1;
});
