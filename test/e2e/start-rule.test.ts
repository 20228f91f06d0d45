import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isMusterError } from "../../src/base/errors.js";
import { createMuster } from "../../src/index.js";
import { useSandbox } from "../helpers/cli.js";
import { connectMcp } from "../helpers/mcp.js";

const sb = useSandbox("mt-startrule");

/** One start request, in the core's terms (the library's StartRequest without its prompt). */
interface Req {
  agent?: string;
  resume?: string;
  group?: string;
  seal?: boolean;
  backend?: string;
  place?: string;
  on?: string;
  /** An image: `--in container:<image>`, MCP `container: "<image>"`, the library's `container: { image }`. */
  container?: string;
  name?: string;
  fork?: string;
  cwd?: string;
  isolation?: string;
  tui?: boolean;
  caps?: { maxTurns: number };
}

const SOURCE = "@source"; // stands for the settled child every row resumes or forks

/** Requests every front end must refuse, and the conflict the core names. `mcp: false`: no such parameter there. */
const TABLE: { req: Req; conflict: string; mcp?: false }[] = [
  { req: { resume: SOURCE, agent: "mock" }, conflict: "agent_and_resume" },
  { req: { resume: SOURCE, group: "g1" }, conflict: "group_with_resume" },
  { req: { resume: SOURCE, backend: "tmux" }, conflict: "backend_with_resume" },
  { req: { resume: SOURCE, on: "h1" }, conflict: "backend_with_resume" },
  { req: { resume: SOURCE, container: "img" }, conflict: "backend_with_resume" },
  { req: { agent: "mock", on: "h1", place: "local" }, conflict: "on_with_place" },
  { req: { agent: "mock", container: "img", place: "local" }, conflict: "on_with_place" },
  { req: { agent: "mock", container: "img", on: "h1" }, conflict: "on_with_place" },
  { req: { resume: SOURCE, name: "again" }, conflict: "name_with_resume" },
  { req: { resume: SOURCE, fork: SOURCE }, conflict: "fork_with_resume" },
  { req: { resume: SOURCE, isolation: "worktree" }, conflict: "resume_with_command_or_cwd" },
  { req: { resume: SOURCE, cwd: "." }, conflict: "resume_with_command_or_cwd", mcp: false },
  { req: { resume: SOURCE, tui: true }, conflict: "tui_with_resume" },
  { req: { resume: SOURCE, caps: { maxTurns: 1 } }, conflict: "caps_with_resume" },
  { req: { resume: SOURCE, caps: { maxTurns: 1 }, tui: true }, conflict: "tui_with_resume" },
  { req: { agent: "mock", seal: true }, conflict: "seal_without_group", mcp: false },
];

let source: string;
let client: Client;
const sub = (v: string | undefined): string | undefined => (v === SOURCE ? source : v);

function cliArgs(r: Req): string[] {
  return [
    "spawn",
    ...(r.agent ? ["--agent", r.agent] : []),
    ...(r.resume ? ["--resume", sub(r.resume)!] : []),
    ...(r.group ? ["--group", r.group] : []),
    ...(r.seal ? ["--seal"] : []),
    ...(r.backend ? ["--backend", r.backend] : []),
    ...(r.place ? ["--place", r.place] : []),
    ...(r.on ? ["--on", r.on] : []),
    ...(r.container ? ["--in", `container:${r.container}`] : []),
    ...(r.name ? ["--name", r.name] : []),
    ...(r.fork ? ["--fork", sub(r.fork)!] : []),
    ...(r.cwd ? ["--cwd", r.cwd] : []),
    ...(r.isolation ? ["--isolation", r.isolation] : []),
    ...(r.tui ? ["--tui"] : []),
    ...(r.caps ? ["--max-turns", String(r.caps.maxTurns)] : []),
    "--wait",
    "again",
  ];
}

function mcpArgs(r: Req): Record<string, unknown> {
  return {
    prompt: "again",
    ...(r.agent ? { agent: r.agent } : {}),
    ...(r.resume ? { id: sub(r.resume) } : {}),
    ...(r.group ? { groupId: r.group } : {}),
    ...(r.backend ? { backend: r.backend } : {}),
    ...(r.place ? { place: r.place } : {}),
    ...(r.on ? { on: r.on } : {}),
    ...(r.container ? { container: r.container } : {}),
    ...(r.name ? { name: r.name } : {}),
    ...(r.fork ? { fork: sub(r.fork) } : {}),
    ...(r.isolation ? { isolation: r.isolation } : {}),
    ...(r.tui ? { tui: true } : {}),
    ...(r.caps ? { caps: r.caps } : {}),
  };
}

const libReq = (r: Req) => ({
  ...r,
  ...(r.container ? { container: { image: r.container } } : {}),
  ...(r.resume ? { resume: sub(r.resume) } : {}),
  ...(r.fork ? { fork: sub(r.fork) } : {}),
  prompt: "again",
});

beforeAll(async () => {
  source = (await sb.json(["spawn", "--wait", "the source"])).data.spawned.id;
  client = await connectMcp(sb);
}, 60_000);
afterAll(async () => {
  await client?.close();
});

describe("one rule decides which start options combine: CLI, MCP and the library refuse the same requests", () => {
  it("each request of the table is refused by all three, as invalid_argument naming its conflict, and starts nothing", async () => {
    const m = createMuster({ env: sb.env, cwd: sb.cwd });
    const said = {
      cli: new Map<string, string>(),
      mcp: new Map<string, string>(),
      lib: new Map<string, string>(),
    };
    for (const row of TABLE) {
      const what = JSON.stringify(row.req);
      expect(m.startConflict(libReq(row.req)), what).toBe(row.conflict);

      const lib = await m.start(libReq(row.req)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isMusterError(lib) && lib.code, `library ${what}`).toBe("invalid_argument");
      said.lib.set((lib as Error).message, row.conflict);

      const cli = await sb.json(cliArgs(row.req));
      expect(cli.exitCode, `cli ${what}`).toBe(2);
      expect(cli.data.error.code, `cli ${what}`).toBe("invalid_argument");
      said.cli.set(cli.data.error.message, row.conflict);

      if (row.mcp === false) continue;
      const r = await client.callTool({ name: "subagents_run", arguments: mcpArgs(row.req) });
      const text = (r.content as { text: string }[])[0]!.text;
      expect(r.isError, `mcp ${what} → ${text}`).toBe(true);
      expect(text).toMatch(/^invalid_argument: /);
      said.mcp.set(text, row.conflict);
    }
    // Each front end words each conflict its own one way: one message per conflict, never a generic refusal.
    const conflicts = new Set(TABLE.map((r) => r.conflict)).size;
    expect(new Set(said.lib.values()).size).toBe(conflicts);
    expect(said.lib.size).toBe(conflicts);
    expect(said.cli.size).toBe(conflicts);
    expect(said.mcp.size).toBe(new Set(TABLE.filter((r) => r.mcp !== false).map((r) => r.conflict)).size);
    // Nothing started: the source child alone, with its one turn.
    const ls = await sb.json(["ls"]);
    expect(ls.data.children.map((c: { id: string; turns: number }) => [c.id, c.turns])).toEqual([
      [source, 1],
    ]);
  }, 120_000);
});
