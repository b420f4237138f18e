// The official TypeScript MCP client on `tuiagent mcp serve`: re-lists on every tools/list_changed while it saves
// a tool N times (one save per notification), then prints {"notifications": n, "lists": m, "result": ...} as JSON.
// Usage: node relist_client.mjs <sdk dir> <python> <project> <saves>
import { renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, python, project, savesText] = process.argv.slice(2);
const sdk = (path) => import(pathToFileURL(join(sdkDir, "dist/esm", path)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { ToolListChangedNotificationSchema } = await sdk("types.js");

const transport = new StdioClientTransport({ command: python, args: ["-m", "tui_agent.cli", "--project", project, "mcp", "serve"],
                                             cwd: project, env: process.env, stderr: "inherit" });
const client = new Client({ name: "relist-client", version: "1.0.0" });
let notifications = 0, lists = 0, waiting = null;
client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
  notifications += 1;
  await client.listTools();
  lists += 1;
  if (waiting) waiting();
});
await client.connect(transport);
for (let i = 0; i < 3; i++) { await client.listTools(); }
const saves = Number(savesText);
const source = (n) => `def double(x: int) -> int:\n    """Double a number.\n\n    Args:\n        x: the number\n    """\n    return 2 * x + ${n}\n`;
for (let save = 1; save <= saves; save++) {
  let timer;  // cleared once the notification is in: a pending timer would keep node running for its 30 s
  const arrived = new Promise((resolve, reject) => { waiting = resolve; timer = setTimeout(() => reject(new Error(`save ${save}: no notification`)), 30000); });
  // saved whole, as an editor that renames over the file does: an in-place write seen between its truncate and its
  // write is a broken file for a moment, announced (the tool leaves the list) and then announced again
  const target = join(project, ".agent", "tools", "double.py");
  writeFileSync(`${target}.tmp`, source(save)); renameSync(`${target}.tmp`, target);
  const t0 = Date.now(); await arrived; clearTimeout(timer); if (process.env.RELIST_TIMING) console.error(`save ${save}: ${Date.now() - t0} ms`);
  while (notifications > lists) { await new Promise((r) => setTimeout(r, 10)); }
}
await new Promise((r) => setTimeout(r, 2000));  // anything late arrives now
const result = await client.callTool({ name: "double", arguments: { x: 1 } });
console.log(JSON.stringify({ notifications, lists, result }));
await client.close();
