// One session of the official TypeScript MCP SDK client against `vaultctl mcp`: the calls a host
// makes, each result checked by the SDK itself (it validates structuredContent against each
// tool's outputSchema and throws on a mismatch). Prints one JSON report on stdout.
//
//   node ts_client.mjs '{"command": "...", "args": ["mcp", ...], "env": {...}, "cwd": "...",
//                        "toolset_args": ["mcp", "--tools", "core"], "edit": "Home.md"}'
//
// toolset_args: a second session with another --tools, whose tool names are reported; edit: a
// note (relative to cwd) the client subscribes to, rewrites on disk, and waits to hear of.
import { writeFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const server = JSON.parse(process.argv[2]);
const report = { sdk: "@modelcontextprotocol/sdk", steps: {} };
const client = new Client({ name: "vaultd-interop-ts", version: "1" });
const transport = new StdioClientTransport({ command: server.command, args: server.args, env: server.env,
                                             cwd: server.cwd, stderr: "ignore" });

function errorBody(result) {
  // A refusal carries {code, message, issues, issues_omitted, candidates} as JSON in its text content.
  return JSON.parse(result.content[0].text);
}

async function step(name, fn) {
  try {
    report.steps[name] = { ok: true, value: await fn() };
  } catch (err) {
    report.steps[name] = { ok: false, error: String(err && err.message ? err.message : err) };
  }
}

// The SDK hands the negotiated revision to a transport that takes it (HTTP does; stdio has no use for it).
let negotiated = null;
transport.setProtocolVersion = (version) => { negotiated = version; };
await client.connect(transport);
report.server = client.getServerVersion();
report.protocol = negotiated;
await step("list_tools", async () => {
  const { tools } = await client.listTools();
  return { count: tools.length, with_output_schema: tools.filter((t) => t.outputSchema).length };
});
await step("read", async () => {
  const result = await client.callTool({ name: "status", arguments: { view: "vaults" } });
  return { is_error: !!result.isError, vaults: result.structuredContent.vaults.map((v) => v.entry.id) };
});
await step("write", async () => {
  const result = await client.callTool({ name: "note_create", arguments: { path: "interop/from-ts", body: "# From TS\n" } });
  return { is_error: !!result.isError, applied: result.structuredContent?.outcome === "applied" };
});
await step("refusal", async () => {
  const result = await client.callTool({ name: "note_read", arguments: { target: "surely no such note" } });
  return { is_error: !!result.isError, body: errorBody(result) };
});
await step("ambiguous", async () => {
  const result = await client.callTool({ name: "note_read", arguments: { target: "Twin" } });
  return { is_error: !!result.isError, body: errorBody(result) };
});
await step("preview_confirm", async () => {
  const args = { target: "interop/from-ts", to: "interop/moved-ts" };
  const preview = await client.callTool({ name: "note_move", arguments: args });
  const done = await client.callTool({ name: "note_move", arguments: { ...args, confirm: true,
                                                                        fingerprint: preview.structuredContent.fingerprint } });
  return { preview: preview.structuredContent.outcome === "preview", applied: done.structuredContent.outcome === "applied" };
});
await step("read_many", async () => {
  const result = await client.callTool({ name: "note_read_many", arguments: { targets: ["Home", "Twin"] } });
  const [home, twin] = result.structuredContent.notes;
  return { is_error: !!result.isError, first: home.note?.path ?? null, second: twin.error?.code ?? null };
});
await step("resources", async () => {
  const listed = await client.listResources();
  const { resourceTemplates } = await client.listResourceTemplates();
  const read = await client.readResource({ uri: "vault://main/Home.md" });
  return {
    uris: listed.resources.map((r) => r.uri).sort(),
    templates: resourceTemplates.map((t) => t.uriTemplate),
    text: read.contents[0].text,
    mime: read.contents[0].mimeType,
  };
});
if (server.edit) {
  await step("subscribe", async () => {
    const uri = `vault://main/${server.edit}`;
    const heard = new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no notifications/resources/updated within 60 s")), 60_000);
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (note) => {
        if (note.params.uri === uri) {
          clearTimeout(timer);
          resolve(note.params.uri);
        }
      });
    });
    await client.subscribeResource({ uri });
    const file = join(server.cwd, server.edit);
    writeFileSync(file, readFileSync(file, "utf8") + "\nEdited while subscribed.\n");
    const updated = await heard;
    const read = await client.readResource({ uri });
    await client.unsubscribeResource({ uri });
    return { updated, reread: read.contents[0].text.includes("Edited while subscribed.") };
  });
}
await client.close();
if (server.toolset_args) {
  await step("toolset", async () => {
    const other = new Client({ name: "vaultd-interop-ts-toolset", version: "1" });
    await other.connect(new StdioClientTransport({ command: server.command, args: server.toolset_args, env: server.env,
                                                   cwd: server.cwd, stderr: "ignore" }));
    const { tools } = await other.listTools();
    await other.close();
    return { names: tools.map((t) => t.name) };
  });
}
process.stdout.write(JSON.stringify(report) + "\n");
