import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs fixture without types
import { startEndpoint, TOOL_COMMAND } from "../fixtures/llm-endpoint.mjs";

type Endpoint = {
  url: string;
  requests: { path: string; api: string | null; body: Record<string, unknown> }[];
  setScenario(s: string): void;
  close(): Promise<void>;
};
let ep: Endpoint;
beforeAll(async () => {
  ep = await startEndpoint();
});
afterAll(async () => {
  await ep.close();
});

/** POSTs and returns the SSE `data:` payloads, parsed (the final [DONE] kept as a string). */
async function stream(path: string, body: unknown): Promise<{ status: number; events: unknown[] }> {
  const r = await fetch(`${ep.url}${path}`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json" },
  });
  const text = await r.text();
  const events = text
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => l.slice(6))
    .map((d) => (d === "[DONE]" ? d : JSON.parse(d)));
  return { status: r.status, events };
}

const CASES = {
  anthropic: {
    path: "/v1/messages?beta=true",
    tools: { tools: [{ name: "Bash" }] },
    result: {
      messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "" }] }],
    },
  },
  chat: {
    path: "/v1/chat/completions",
    tools: { tools: [{ type: "function", function: { name: "bash" } }] },
    result: { messages: [{ role: "tool", content: "" }] },
  },
  responses: {
    path: "/v1/responses",
    tools: { tools: [{ type: "function", name: "exec_command" }] },
    result: { input: [{ type: "function_call_output", output: "" }] },
  },
  gemini: {
    path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    tools: { tools: [{ functionDeclarations: [{ name: "run_shell_command" }] }] },
    result: { contents: [{ parts: [{ functionResponse: { name: "run_shell_command" } }] }] },
  },
} as const;

const json = (x: unknown) => JSON.stringify(x);

describe("scripted LLM endpoint", () => {
  it("streams a plain answer in each API's shape and records the request", async () => {
    ep.setScenario("text");
    for (const [api, c] of Object.entries(CASES)) {
      const { status, events } = await stream(c.path, { model: "m", messages: [] });
      expect(status, api).toBe(200);
      expect(json(events), api).toMatch(/scripted answer \d+/);
      expect(ep.requests.at(-1)).toMatchObject({ api });
    }
    const chat = await stream(CASES.chat.path, {});
    expect(chat.events.at(-1)).toBe("[DONE]");
  });

  it("tool scenario: a shell call in the tool's own argument shape, then an answer once the result comes back", async () => {
    ep.setScenario("tool");
    const shapes: Record<string, string> = {
      anthropic: '"name":"Bash"',
      chat: '"name":"bash"',
      responses: '"name":"exec_command"',
      gemini: '"name":"run_shell_command"',
    };
    for (const [api, c] of Object.entries(CASES)) {
      const first = json((await stream(c.path, c.tools)).events);
      expect(first, api).toContain(shapes[api]);
      expect(first, api).toContain(TOOL_COMMAND);
      const second = json((await stream(c.path, { ...c.tools, ...c.result })).events);
      expect(second, api).toContain("out.txt now says hello");
    }
  });

  it("error500 answers 500 with a message; unknown paths get a harmless 404", async () => {
    ep.setScenario("error500");
    const r = await fetch(`${ep.url}/v1/messages`, { method: "POST", body: "{}" });
    expect(r.status).toBe(500);
    expect(await r.text()).toContain("scripted upstream failure");
    expect((await fetch(`${ep.url}/api/hello`, { method: "POST", body: "{}" })).status).toBe(404);
  });

  it("slow streams chunks until the client goes away", async () => {
    ep.setScenario("slow");
    const controller = new AbortController();
    const r = await fetch(`${ep.url}/v1/chat/completions`, {
      method: "POST",
      body: "{}",
      signal: controller.signal,
    });
    const reader = r.body!.getReader();
    // The role chunk and the first content chunk may come in one read or two (Node 26's fetch splits them).
    let seen = "";
    while (!seen.includes("slow chunk 0")) {
      const { value, done } = await reader.read();
      expect(done).toBe(false);
      seen += Buffer.from(value!).toString();
    }
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
  });
});
