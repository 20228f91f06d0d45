import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BIN, type Sandbox } from "./cli.js";

/** A client connected to a real `muster mcp` process in the sandbox (its stderr piped, not shown). */
export async function connectMcp(sb: Sandbox): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    env: sb.env as Record<string, string>,
    cwd: sb.cwd,
    stderr: "pipe",
  });
  const client = new Client({ name: "muster-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}
