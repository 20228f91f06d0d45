import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";
import { connectMcp } from "../helpers/mcp.js";

const sb = useSandbox("mt-mcperr");
let client: Client;

beforeAll(async () => {
  client = await connectMcp(sb);
});
afterAll(async () => {
  await client?.close();
});

/** The message a rejected request gives the client. */
const rejection = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => "(accepted)",
    (e: Error) => e.message,
  );

describe("MCP errors say their code once", () => {
  it("prompts/get of an unknown workflow or prompt, and an unknown tool: one `MCP error -32602:` prefix", async () => {
    const flow = await rejection(client.getPrompt({ name: "workflow:no-such-flow" }));
    expect(flow).toMatch(/^MCP error -32602: .*unknown workflow/);
    expect(flow.match(/MCP error/g)).toHaveLength(1);
    const other = await rejection(client.getPrompt({ name: "other" }));
    expect(other).toBe('MCP error -32602: unknown prompt "other"');
    const tool = await rejection(client.callTool({ name: "subagents_nope", arguments: {} }));
    expect(tool).toBe("MCP error -32602: unknown tool subagents_nope");
  });

  it("an argument that does not fit the schema is invalid_argument: like every other refused call", async () => {
    const text = async (name: string, args: Record<string, unknown>): Promise<string> => {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError).toBe(true);
      return (r.content as { text: string }[])[0]!.text;
    };
    expect(await text("subagents_agents", { verbose: true })).toBe(
      'invalid_argument: unknown argument "verbose"',
    );
    expect(await text("subagents_run", { agent: "mock" })).toBe(
      'invalid_argument: missing argument "prompt"',
    );
    expect(await text("subagents_run", { agent: "mock", prompt: "" })).toMatch(/^invalid_argument: /);
  });
});
