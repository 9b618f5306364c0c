// A real MCP client, the official TypeScript SDK, driven by cmd/petal's tests.
// Usage: node client.mjs plan.json. The plan names the transport and the
// calls; the answer (tools/list and each call's result) goes to stdout as JSON.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const transport =
  plan.transport === "stdio"
    ? new StdioClientTransport({ command: plan.command, args: plan.args, env: plan.env, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(plan.url));
const client = new Client({ name: "petal-test-client", version: "1.0.0" });
await client.connect(transport);

const out = { server: client.getServerVersion(), tools: [], results: [] };
let cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : {});
  out.tools.push(...page.tools);
  cursor = page.nextCursor;
} while (cursor);

for (const call of plan.calls ?? []) {
  const progress = [];
  try {
    const result = await client.callTool(
      { name: call.name, arguments: call.arguments },
      CallToolResultSchema,
      call.progress ? { onprogress: (p) => progress.push(p) } : undefined,
    );
    out.results.push({ name: call.name, result, progress });
  } catch (err) {
    out.results.push({ name: call.name, thrown: String(err?.message ?? err), progress });
  }
}
await client.close();
process.stdout.write(JSON.stringify(out));
