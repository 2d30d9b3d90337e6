// One session of the official TypeScript MCP SDK client against `vaultctl mcp`: the calls a host
// makes, each result checked by the SDK itself (it validates structuredContent against each
// tool's outputSchema and throws on a mismatch). Prints one JSON report on stdout.
//
//   node ts_client.mjs '{"command": "...", "args": ["mcp"], "env": {...}}'
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

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

await client.connect(transport);
report.server = client.getServerVersion();
report.protocol = transport._protocolVersion ?? null;
await step("list_tools", async () => {
  const { tools } = await client.listTools();
  return { count: tools.length, with_output_schema: tools.filter((t) => t.outputSchema).length };
});
await step("read", async () => {
  const result = await client.callTool({ name: "vault_list", arguments: {} });
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
await client.close();
process.stdout.write(JSON.stringify(report) + "\n");
