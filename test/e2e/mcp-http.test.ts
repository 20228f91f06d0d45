/**
 * `muster mcp --http`: the same tools, prompts and progress as stdio, over Streamable HTTP at /mcp, behind the
 * token, Host and Origin rules; and the official MCP conformance suite's server scenarios that apply to a
 * server without the suite's fixture tools, run with a pinned Node ≥ 22 (the suite needs it).
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, REPO, until, useSandbox } from "../helpers/cli.js";
import { type RawRequest, rawRequest } from "../helpers/http.js";

const sb = useSandbox("mt-mcphttp");
// In a folder not made yet: the server makes it.
const tokenFile = path.join(sb.home, "tokens", "mcp-token");

interface Served {
  proc: ChildProcess;
  port: number;
  stderr: () => string;
}

/** A real `muster mcp --http` on a free port of 127.0.0.1, once it says where it listens. */
async function serve(extra: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Served> {
  const proc = spawn(process.execPath, [BIN, "mcp", "--http", "--listen", "127.0.0.1:0", ...extra], {
    cwd: sb.cwd,
    env: { ...sb.env, ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let err = "";
  proc.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  // Both lines, the address and the token, may come in separate writes: wait for the token's too.
  const port = await until(
    () =>
      (/^muster mcp: token \S+/m.test(err) && Number(/http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err)?.[1])) ||
      undefined,
    15_000,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; the server said: ${err}`);
  });
  return { proc, port, stderr: () => err };
}

const request = (port: number, opts: RawRequest) => rawRequest(port, opts, "/mcp");

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
});

describe("muster mcp --http", () => {
  let served: Served;
  let token: string;

  beforeAll(async () => {
    served = await serve(["--token-file", tokenFile]);
    token = fs.readFileSync(tokenFile, "utf8").trim();
  }, 30_000);

  afterAll(async () => {
    served.proc.kill("SIGTERM");
    await new Promise((r) => served.proc.once("exit", r));
  });

  const bearer = () => ({ Authorization: `Bearer ${token}` });

  it("prints the endpoint and the token once; the token file is the owner's alone", () => {
    expect(served.stderr()).toContain(`token ${token}`);
    expect(served.stderr().split(token).length - 1).toBe(1);
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(token.length).toBeGreaterThanOrEqual(40);
  });

  it("serves the stdio tools and prompts, with live progress, to a client that sends the token", async () => {
    const client = new Client({ name: "muster-http-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${served.port}/mcp`), {
        requestInit: { headers: bearer() },
      }),
    );
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toContain("subagents_run");
      expect(names).toHaveLength(12);
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain("workflow:review-chain");
      const progress: string[] = [];
      const r = await client.callTool(
        { name: "subagents_run", arguments: { agent: "mock", prompt: "over http\nmock: tools=1 sleep=0.3" } },
        undefined,
        { onprogress: (p) => progress.push(p.message ?? ""), timeout: 60_000 },
      );
      const data = JSON.parse((r.content as { text: string }[])[0]!.text);
      expect(data).toMatchObject({ agent: "mock", status: "completed" });
      expect(progress.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it("refuses a request without the right token, for another Host, from another Origin, or elsewhere", async () => {
    const port = served.port;
    for (const p of ["/mcp", "/", "/favicon.ico"])
      expect((await request(port, { path: p })).status).toBe(401);
    expect((await request(port, { headers: { Authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await request(port, { headers: { Authorization: `Basic ${token}` } })).status).toBe(401);
    const rebound = await request(port, { headers: { ...bearer(), Host: `evil.example.com:${port}` } });
    expect(rebound.status).toBe(403);
    const foreign = await request(port, {
      method: "POST",
      headers: { ...bearer(), Origin: "http://evil.example.com", "content-type": "application/json" },
      body: INIT,
    });
    expect(foreign.status).toBe(403);
    // A cross-site form post carries no token: refused before anything reads it.
    const form = await request(port, {
      method: "POST",
      headers: { Origin: "https://evil.example.com", "content-type": "application/x-www-form-urlencoded" },
      body: "a=1",
    });
    expect(form.status).toBe(403);
    expect((await request(port, { path: "/", headers: bearer() })).status).toBe(404);
    expect((await request(port, { headers: bearer() })).status).toBe(400);
    const unknown = await request(port, {
      method: "POST",
      headers: { ...bearer(), "mcp-session-id": "nope" },
    });
    expect(unknown.status).toBe(404);
    // Its own origin is fine.
    const own = await request(port, {
      method: "POST",
      headers: {
        ...bearer(),
        Origin: `http://127.0.0.1:${port}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: INIT,
    });
    expect(own.status).toBe(200);
  });

  it("a session with no request for MUSTER_MCP_SESSION_IDLE_MS is ended (its client gets 404 and starts anew); one with a request open is not", async () => {
    const idle = await serve(["--token-file", `${tokenFile}-idle`], { MUSTER_MCP_SESSION_IDLE_MS: "1500" });
    const t = fs.readFileSync(`${tokenFile}-idle`, "utf8").trim();
    const headers = {
      Authorization: `Bearer ${t}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    };
    try {
      const begin = async (): Promise<string> => {
        const r = await request(idle.port, { method: "POST", headers, body: INIT });
        expect(r.status).toBe(200);
        return String(r.headers["mcp-session-id"]);
      };
      const call = (id: string, n: number, method: string, params: object = {}) =>
        request(idle.port, {
          method: "POST",
          headers: { ...headers, "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" },
          body: JSON.stringify({ jsonrpc: "2.0", id: n, method, params }),
        });
      const gone = await begin();
      const busy = await begin();
      // The busy session's one request lasts well past the idle bound: a turn that sleeps 4 s.
      const long = call(busy, 2, "tools/call", {
        name: "subagents_run",
        arguments: { agent: "mock", prompt: "a long one\nmock: sleep=4" },
      });
      await until(() => idle.stderr().includes(`session ${gone} ended after`) || undefined, 20_000);
      expect(idle.stderr()).not.toContain(`session ${busy} ended`);
      const refused = await call(gone, 3, "tools/list");
      expect(refused.status).toBe(404);
      expect(refused.body).toContain("start a new one with initialize");
      const answered = await long;
      expect(answered.status).toBe(200);
      expect(answered.body).toContain("completed");
      // Its request ended just now: the session is in use again from there.
      expect((await call(busy, 4, "tools/list")).status).toBe(200);
    } finally {
      idle.proc.kill("SIGTERM");
      await new Promise((r) => idle.proc.once("exit", r));
    }
  }, 60_000);

  it("bad options are one line and exit 2: a reachable address without --allow-remote, --listen without --http", async () => {
    const run = (args: string[]) =>
      execa(process.execPath, [BIN, "mcp", ...args], {
        cwd: sb.cwd,
        env: sb.env,
        reject: false,
        timeout: 20_000,
      });
    const cases: [string[], RegExp][] = [
      [["--http", "--listen", "0.0.0.0:0"], /reachable from other machines: add --allow-remote/],
      [["--listen", "127.0.0.1:0"], /--listen goes with --http/],
      [["--http", "--listen", "nowhere"], /--listen must be host:port/],
      [["--http", "--listen", `127.0.0.1:${served.port}`], /the port is in use/],
    ];
    for (const [args, said] of cases) {
      const r = await run(args);
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.stderr).toMatch(said);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});

describe("the MCP conformance suite against muster mcp --http", () => {
  let served: Served;
  let proxy: ChildProcess;
  let proxyPort = 0;
  let suite: { node: string; script: string };

  beforeAll(async () => {
    const { NODE_VERSIONS, pinnedConformance, pinnedNode } = await import("../../scripts/pinned-tools.mjs");
    const node = await pinnedNode(NODE_VERSIONS[0]);
    if (!node.ok) throw new Error(`Node ${NODE_VERSIONS[0].version} could not be installed: ${node.error}`);
    const conformance = await pinnedConformance();
    if (!conformance.ok)
      throw new Error(`the conformance suite could not be installed: ${conformance.error}`);
    suite = { node: node.bin, script: conformance.script };
    const file = path.join(sb.home, "conformance-token");
    served = await serve(["--token-file", file]);
    // The suite sends no headers of its own: a small proxy adds the token, as a client's config would.
    proxy = spawn(
      process.execPath,
      [path.join(REPO, "test", "fixtures", "bearer-proxy.mjs"), String(served.port), file],
      {
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    proxy.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
    });
    proxyPort = await until(() => Number(/listening (\d+)/.exec(out)?.[1]) || undefined, 10_000);
  }, 900_000);

  afterAll(async () => {
    proxy?.kill("SIGTERM");
    served?.proc.kill("SIGTERM");
    if (served) await new Promise((r) => served.proc.once("exit", r));
  });

  // What a server without the suite's fixture tools, prompts and resources can be held to; logging and
  // completions are capabilities muster does not offer.
  it.each([
    "server-initialize",
    "ping",
    "tools-list",
    "prompts-list",
    "dns-rebinding-protection",
  ])("%s passes", async (scenario) => {
    const r = await execa(
      suite.node,
      [suite.script, "server", "--url", `http://localhost:${proxyPort}/mcp`, "--scenario", scenario],
      { reject: false, timeout: 120_000, env: { ...process.env, NO_COLOR: "1" } },
    );
    const out = `${r.stdout}\n${r.stderr}`;
    expect(out, out).toMatch(/Passed: (\d+)\/\1, 0 failed/);
    expect(r.exitCode, out).toBe(0);
  }, 150_000);
});
