// Each pinned agent CLI as the PARENT: `muster mcp install <client>` into a throwaway HOME, then headless
// turns against the scripted endpoint in which the parent's model calls muster's tools by the name the CLI
// offers. Nothing but the install makes the calls work: no approval flags on the parent's argv. Each also
// reaches muster over HTTP: a real `muster mcp --http`, `muster mcp install <client> --url …`, and the token
// only in the parent's environment. Every pinned version speaks Streamable HTTP to an MCP server: Claude Code
// `"type": "http"`, Codex `url` + `bearer_token_env_var`, Gemini CLI `"type": "http"` + `url`, OpenCode
// `"type": "remote"`.
import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { cliBinDir, cliCache } from "../../scripts/pinned-clis.mjs";
// @ts-expect-error plain JS fixture
import { prepareCli } from "../fixtures/cli-setup.mjs";
// @ts-expect-error plain JS fixture
import { startEndpoint } from "../fixtures/llm-endpoint.mjs";
import { BIN, type Sandbox, until, useSandbox } from "../helpers/cli.js";

type Client = "claude" | "codex" | "gemini" | "opencode";
interface Step {
  tool: string;
  args: Record<string, unknown> | ((last: string) => Record<string, unknown>);
}
interface Endpoint {
  url: string;
  requests: { path: string; api: string | null; body: unknown; scenario: string }[];
  setScenario(s: string, steps?: Step[]): void;
  close(): Promise<void>;
}

/** One headless turn of the parent CLI, with argv as a user would type it (nothing that approves tools). */
function parentArgv(client: Client, prompt: string): string[] {
  switch (client) {
    case "claude":
      return [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        "claude-sonnet-4-5",
        "--",
        prompt,
      ];
    case "codex":
      return ["exec", "--json", "--skip-git-repo-check", "--", prompt];
    case "gemini":
      // --skip-trust: the test's settings turn folder trust on, and Gemini starts stdio servers only in a trusted folder.
      return [
        "--output-format",
        "stream-json",
        "--skip-trust",
        "-m",
        "gemini-2.5-flash",
        `--prompt=${prompt}`,
      ];
    case "opencode":
      return ["run", "--format", "json", "--", prompt];
  }
}

/** The tool calls and results of a model request (its system prompt and tool list left out). */
function traffic(body: unknown): string {
  const b = body as { input?: unknown[]; messages?: unknown[]; contents?: unknown[] };
  const items = (b.input ?? b.messages ?? b.contents ?? []).map((i) => JSON.stringify(i).slice(0, 400));
  return JSON.stringify(items).slice(-2500);
}

const sha = (s: string) => createHash("sha256").update(Buffer.from(s, "utf8")).digest("hex");
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

/** One parent CLI, where it runs, and the scripted endpoint its model is. */
interface Parent {
  client: Client;
  binDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  ep: Endpoint;
}

/** Runs one parent turn with the scripted steps; returns its output and the model requests it made. */
async function parentTurn(p: Parent, steps: Step[], prompt: string) {
  p.ep.setScenario("mcp", steps);
  const before = p.ep.requests.length;
  const r = await execa(path.join(p.binDir, p.client), parentArgv(p.client, prompt), {
    cwd: p.cwd,
    // OpenCode takes its project directory (and so its MCP server's cwd) from PWD, as a shell sets it.
    env: { ...p.env, PWD: p.cwd },
    extendEnv: false,
    stdin: "ignore",
    reject: false,
    timeout: 200_000,
  });
  const requests = p.ep.requests.slice(before).filter((q) => q.api !== null);
  const out = `${r.stdout}\n${r.stderr}`;
  const why = () =>
    `exit ${r.exitCode}\n${out.slice(-3000)}\nrequests (tool traffic): ${requests.map((q) => traffic(q.body)).join("\n---\n")}`;
  return { r, out, requests, why };
}

/** The run tool, offered by the name the client gives it, starts a mock child whose answer reaches the model. */
async function expectRunAnswered(
  client: Client,
  turn: (s: Step[], prompt: string) => ReturnType<typeof parentTurn>,
) {
  const task = `parent-${client}-run ${randomBytes(4).toString("hex")}`;
  const t = await turn([{ tool: "subagents_run", args: { agent: "mock", prompt: task } }], "delegate this");
  expect(t.out, t.why()).toContain("MCP RESULT:");
  // The first request that offers tools (OpenCode first asks for a session title, with none).
  const tools = (q: { body: unknown }) => (q.body as { tools?: unknown[] }).tools ?? [];
  const offered = JSON.stringify(tools(t.requests.find((q) => tools(q).length > 0) ?? { body: {} }));
  // Codex offers MCP tools through its tool_search (the model searches first); the others offer them directly.
  expect(offered, "the first request offers muster's run tool").toMatch(
    client === "codex" ? /"type":"tool_search"/ : /subagents_run/,
  );
  // The mock child's answer names the sha256 of the exact prompt: only its result can carry it.
  const withAnswer = t.requests.findIndex((q) =>
    JSON.stringify(q.body).includes(`prompt-sha256: ${sha(task)}`),
  );
  expect(withAnswer, t.why()).toBeGreaterThan(0);
  expect(t.out).toContain(sha(task));
}

/** The parent CLI's environment: the sandbox's, with the CLI's own config pointed at the endpoint. */
function parentEnv(client: Client, sb: Sandbox, ep: Endpoint): NodeJS.ProcessEnv {
  const binDir = cliBinDir(client) as string;
  if (!fs.existsSync(path.join(binDir, client)))
    throw new Error(`${client} is not installed in ${cliCache()}: run node scripts/install-clis.mjs`);
  const tmp = path.join(sb.cwd, "..", "tmp");
  fs.mkdirSync(tmp, { recursive: true });
  // The sandbox's env first: its HOME, MUSTER_HOME and private tmux socket keep everything out of the user's.
  return {
    ...sb.env,
    ...prepareCli(client, ep.url, sb.env.HOME as string),
    PATH: `${binDir}${path.delimiter}${sb.env.PATH}`,
    TMPDIR: tmp,
    // Claude Code finds its home through the passwd entry, not HOME: point it into the sandbox.
    ...(client === "claude" ? { CLAUDE_CONFIG_DIR: path.join(sb.env.HOME as string, ".claude") } : {}),
  };
}

function defineParent(client: Client, scope: "user" | "project"): void {
  describe(`${client} as the parent through muster mcp install --${scope}`, { timeout: 240_000 }, () => {
    const sb = useSandbox(`mp-${client}-${scope}`);
    const binDir = cliBinDir(client) as string;
    const mark = `mark-${randomBytes(6).toString("hex")}`;
    const keyMark = `sk-mark-${randomBytes(6).toString("hex")}`;
    let ep: Endpoint;
    let env: NodeJS.ProcessEnv;

    beforeAll(async () => {
      ep = (await startEndpoint()) as Endpoint;
      env = {
        ...parentEnv(client, sb, ep),
        // What the env check looks for in the child: one name passed with --env, one from the default list
        // that Gemini would strip as secret-looking.
        MUSTER_TEST_MARK: mark,
        OPENAI_API_KEY: keyMark,
      };
      // A child that prints the two variables it was started with.
      const agents = path.join(sb.cwd, ".muster", "agents");
      fs.mkdirSync(agents, { recursive: true });
      fs.writeFileSync(
        path.join(agents, "envecho.md"),
        [
          "---",
          "description: prints two variables of its environment",
          "runner: command",
          `command: ["sh", "-c", "printf 'mark=%s key=%s\\\\n' \\"$MUSTER_TEST_MARK\\" \\"$OPENAI_API_KEY\\"", "sh"]`,
          "---",
          "",
        ].join("\n"),
      );
      const args = ["mcp", "install", client, `--${scope}`, "--env", "MUSTER_TEST_MARK"];
      const r = await sb.run(args, { env });
      expect(r.exitCode, r.stderr).toBe(0);
      const again = await sb.run(args, { env });
      expect(again.stdout).toContain("already configured");
      if (client === "codex" && scope === "project") {
        // Codex reads a project's .codex/config.toml only in a trusted project (the user's own decision);
        // mcp doctor checks that trust.
        const user = path.join(env.CODEX_HOME as string, "config.toml");
        fs.appendFileSync(user, `\n[projects.${JSON.stringify(sb.cwd)}]\ntrust_level = "trusted"\n`);
      }
      const doc = await sb.run(["mcp", "doctor", ...args.slice(2)], { env });
      expect(doc.exitCode, doc.stdout).toBe(0);
      if (client === "gemini" && scope === "project")
        // Gemini CLI reads a project's .gemini/settings.json only in a trusted folder (`gemini trust` writes this).
        fs.writeFileSync(
          path.join(sb.env.HOME as string, ".gemini", "trustedFolders.json"),
          JSON.stringify({ [sb.cwd]: "TRUST_FOLDER" }),
        );
    });
    afterAll(async () => {
      await ep?.close();
    });

    const turn = (steps: Step[], prompt: string) =>
      parentTurn({ client, binDir, cwd: sb.cwd, env, ep }, steps, prompt);

    it("calls the run tool by the name it offers; the next model request carries the child's answer", async () => {
      await expectRunAnswered(client, turn);
    });

    // OpenCode gives a server request 5 s unless the entry says otherwise ("MCP error -32001: Request timed
    // out" without the install's timeout); the other clients' defaults are a minute or more.
    if (scope === "user" && client === "opencode")
      it("a run that outlasts the client's default request timeout (5 s) still returns its answer", async () => {
        const task = `parent-${client}-long ${randomBytes(4).toString("hex")}\nmock: sleep=7`;
        const t = await turn(
          [{ tool: "subagents_run", args: { agent: "mock", prompt: task } }],
          "a long one",
        );
        expect(t.out, t.why()).toContain(`prompt-sha256: ${sha(task)}`);
      });

    // The project install is checked with one run; the rest does not depend on where the entry lives.
    if (scope === "user")
      it("starts a child with await: false, then collects it with the await tool", async () => {
        const task = `parent-${client}-async ${randomBytes(4).toString("hex")}`;
        const t = await turn(
          [
            {
              tool: "subagents_run",
              args: { agent: "mock", prompt: `${task}\nmock: sleep=1`, await: false },
            },
            {
              tool: "subagents_await",
              args: (last) => ({ ids: [UUID.exec(last)?.[0] ?? "none"], mode: "all" }),
            },
          ],
          "delegate and wait",
        );
        expect(t.out, t.why()).toContain("MCP RESULT:");
        const bodies = t.requests.map((q) => JSON.stringify(q.body));
        const answer = `prompt-sha256: ${sha(`${task}\nmock: sleep=1`)}`;
        // The run call's result came at once (an id, no answer yet); the answer arrives with the await call's
        // result, in the last request (Codex may search for the tools first: one request more).
        const withAnswer = bodies.findIndex((b) => b.includes(answer));
        expect(withAnswer, t.why()).toBe(bodies.length - 1);
        expect(withAnswer).toBeGreaterThanOrEqual(2);
        // The await call named the child by the id the run call returned (a wrong id would be an error).
        expect(t.out).toContain(answer);
      });

    if (scope === "user")
      it("a variable named in the install (and an API key) reaches the child's environment", async () => {
        const t = await turn(
          [{ tool: "subagents_run", args: { agent: "envecho", prompt: "print" } }],
          "env check",
        );
        const carried = t.requests.map((q) => JSON.stringify(q.body)).find((b) => b.includes("mark="));
        expect(carried, t.why()).toBeDefined();
        expect(carried).toContain(`mark=${mark}`);
        expect(carried).toContain(`key=${keyMark}`);
      });
  });
}

/** A real `muster mcp --http` on a free port of 127.0.0.1, in the sandbox, once it says where it listens. */
async function serveHttp(sb: Sandbox, tokenFile: string): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(
    process.execPath,
    [BIN, "mcp", "--http", "--listen", "127.0.0.1:0", "--token-file", tokenFile],
    { cwd: sb.cwd, env: sb.env, stdio: ["ignore", "ignore", "pipe"] },
  );
  let err = "";
  proc.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  // The address and the token may come in separate writes: wait for both.
  const port = await until<number | undefined>(
    () =>
      (/^muster mcp: token \S+/m.test(err) && Number(/http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err)?.[1])) ||
      undefined,
    15_000,
  ).catch((e: Error) => {
    proc.kill("SIGTERM");
    throw new Error(`${e.message}; the server said: ${err}`);
  });
  return { proc, port: port as number };
}

function defineHttpParent(client: Client): void {
  describe(
    `${client} as the parent of muster mcp --http, through muster mcp install --url`,
    { timeout: 240_000 },
    () => {
      const sb = useSandbox(`mp-${client}-http`);
      const tokenFile = path.join(sb.home, "mcp-token");
      let ep: Endpoint;
      let server: ChildProcess | undefined;
      let parent: Parent;
      let token: string;

      beforeAll(async () => {
        ep = (await startEndpoint()) as Endpoint;
        const served = await serveHttp(sb, tokenFile);
        server = served.proc;
        token = fs.readFileSync(tokenFile, "utf8").trim();
        const env = parentEnv(client, sb, ep);
        const args = ["mcp", "install", client, "--url", `http://127.0.0.1:${served.port}/mcp`];
        const r = await sb.json(args, { env });
        expect(r.exitCode, r.stderr).toBe(0);
        // Written without the token in the environment: only the variable's name can be in the files.
        for (const f of (r.data as { files: { file: string }[] }).files)
          expect(fs.readFileSync(f.file, "utf8"), f.file).not.toContain(token);
        expect((await sb.run(args, { env })).stdout).toContain("already configured");
        const doc = await sb.run(["mcp", "doctor", ...args.slice(2)], {
          env: { ...env, MUSTER_MCP_TOKEN: token },
        });
        expect(doc.exitCode, doc.stdout).toBe(0);
        expect(doc.stdout).not.toContain("warning:");
        parent = {
          client,
          binDir: cliBinDir(client) as string,
          cwd: sb.cwd,
          env: { ...env, MUSTER_MCP_TOKEN: token },
          ep,
        };
      });
      afterAll(async () => {
        await ep?.close();
        if (server && server.exitCode === null && server.signalCode === null) {
          const exited = new Promise((r) => server!.once("exit", r));
          server.kill("SIGTERM");
          await exited;
        }
      });

      it("calls the run tool over HTTP with the token from its environment; the next model request carries the child's answer", async () => {
        await expectRunAnswered(client, (steps, prompt) => parentTurn(parent, steps, prompt));
      });
    },
  );
}

const only = process.env.MUSTER_MCP_PARENT;
for (const c of ["claude", "codex", "gemini", "opencode"] as Client[])
  if (!only || only === c) {
    defineParent(c, "user");
    defineParent(c, "project");
    defineHttpParent(c);
  }
