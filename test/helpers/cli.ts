import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execa } from "execa";
import { afterAll, expect } from "vitest";
import { loadValidators } from "./schema.js";
import { killServerAndWait, privateSocket } from "./tmux.js";

export const REPO = path.resolve(import.meta.dirname, "../..");
export const BIN = path.join(REPO, "bin", "muster.js");

export interface Sandbox {
  home: string;
  cwd: string;
  socket: string;
  env: NodeJS.ProcessEnv;
  /** Runs the real CLI; never throws on a non-zero exit. */
  run(
    args: string[],
    opts?: { input?: string; env?: NodeJS.ProcessEnv; timeout?: number },
  ): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  /** Runs the CLI with --json and parses stdout. */
  // biome-ignore lint/suspicious/noExplicitAny: test code reads loosely shaped JSON
  json<T = any>(
    args: string[],
    opts?: { env?: NodeJS.ProcessEnv; timeout?: number },
  ): Promise<{ exitCode: number; data: T; stderr: string }>;
  /**
   * Checks every artifact against the protocol, then kills the private tmux server and every process
   * that mentions this sandbox; returns protocol problems and processes that were still alive.
   */
  cleanup(opts?: { beforeRemove?: () => Promise<void> }): Promise<string[]>;
}

/** A private state root, working dir and tmux server for one test file. */
export function sandbox(prefix = "mt"): Sandbox {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`));
  const home = path.join(base, "home");
  const cwd = path.join(base, "work");
  fs.mkdirSync(cwd, { recursive: true });
  const socket = privateSocket(prefix);
  // A private HOME and config dir too: agent folders on this machine (~/.claude/agents, …) must not leak in.
  const user = path.join(base, "user");
  fs.mkdirSync(user, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    MUSTER_HOME: home,
    MUSTER_TMUX_SOCKET: socket,
    NO_COLOR: "1",
    HOME: user,
    XDG_CONFIG_HOME: path.join(user, ".config"),
    // The CLI's code cache (src/util/code-cache.ts) too.
    XDG_CACHE_HOME: path.join(user, ".cache"),
  };
  for (const k of [
    "TMUX",
    "TMUX_PANE",
    // Inside a Zellij session the zellij backend would be every test's default.
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "MUSTER_PRIMARY",
    "MUSTER_CHILD_ID",
    "MUSTER_DEPTH",
    "MUSTER_ARTIFACT_DIR",
    "MUSTER_AGENT",
    "MUSTER_MODEL",
    "MUSTER_REASONING",
    "XDG_STATE_HOME",
  ])
    delete env[k];
  const sb: Sandbox = {
    home,
    cwd,
    socket,
    env,
    async run(args, opts = {}) {
      const r = await execa(process.execPath, [BIN, ...args], {
        cwd,
        env: { ...env, ...opts.env },
        extendEnv: false,
        reject: false,
        timeout: opts.timeout ?? 60_000,
        ...(opts.input !== undefined ? { input: opts.input } : { stdin: "ignore" }),
        stripFinalNewline: false,
      });
      return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
    },
    async json(args, opts = {}) {
      const r = await sb.run([...args, "--json"], opts);
      // biome-ignore lint/suspicious/noExplicitAny: parsed CLI output
      let data: any;
      try {
        data = JSON.parse(r.stdout);
      } catch {
        throw new Error(
          `not one JSON document (exit ${r.exitCode}): ${r.stdout.slice(0, 500)} / ${r.stderr.slice(0, 500)}`,
        );
      }
      return { exitCode: r.exitCode, data, stderr: r.stderr };
    },
    async cleanup(opts = {}) {
      const problems = checkArtifacts(home).map((p) => `artifact ${p}`);
      await killServerAndWait(socket);
      // A host that lost its server ends its agent's process group on its way out: on a loaded machine that can
      // take a moment (an agent past its final record winds down at the lowest priority). Only what is still
      // there after that is left behind.
      const left = await until(() => processesMentioning(base).length === 0, 10_000, 100)
        .then(() => [])
        .catch(() => processesMentioning(base));
      for (const p of left) {
        try {
          process.kill(p.pid, "SIGKILL");
        } catch {}
      }
      await opts.beforeRemove?.();
      fs.rmSync(base, { recursive: true, force: true });
      return [...problems, ...left.map((p) => `left running: ${p.pid} ${p.cmdline}`)];
    },
  };
  return sb;
}

/** Every other process (Linux /proc) for which `keep` holds, with its command line. */
function listProcesses(keep: (pid: number, cmdline: string) => boolean): { pid: number; cmdline: string }[] {
  const out: { pid: number; cmdline: string }[] = [];
  for (const name of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      if (keep(Number(name), cmdline)) out.push({ pid: Number(name), cmdline });
    } catch {}
  }
  return out;
}

/** Processes whose command line mentions `needle`. */
export function processesMentioning(needle: string): { pid: number; cmdline: string }[] {
  return listProcesses((_pid, cmdline) => cmdline.includes(needle));
}

/** Processes whose environment holds `entry` (NAME=value): they keep it when they rename themselves. */
export function processesWithEnv(entry: string): { pid: number; cmdline: string }[] {
  return listProcesses((pid) => fs.readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(entry));
}

/** A sandbox for one test file; after its tests it is checked (artifact protocol, nothing left running) and removed. */
export function useSandbox(prefix: string): Sandbox {
  const sb = sandbox(prefix);
  afterAll(async () => {
    expect(await sb.cleanup()).toEqual([]);
  });
  return sb;
}

/** argv of a spawn whose child (a command-runner agent) runs `muster <inner…>` in its pane: a delegating agent. */
export function delegating(inner: string[], opts: { wait?: boolean } = { wait: true }): string[] {
  return [
    "spawn",
    "--agent",
    "command",
    "--json",
    ...(opts.wait ? ["--wait"] : []),
    "delegate",
    "--",
    process.execPath,
    BIN,
    ...inner,
  ];
}

/** `muster <args…> --wait --json` with a real agent CLI's time (120 s); the caller checks the outcome. */
export function waitedJson(sb: Sandbox, args: string[], env: NodeJS.ProcessEnv) {
  return sb.json([...args, "--wait", "--timeout", "120"], { env, timeout: 150_000 });
}

/** The parsed records of a child's events.ndjson: its complete lines (a line being written is not one yet). */
// biome-ignore lint/suspicious/noExplicitAny: test code reads records loosely
export function readEvents(artifactDir: string): Record<string, any>[] {
  const text = fs.readFileSync(path.join(artifactDir, "events.ndjson"), "utf8");
  return text
    .slice(0, text.lastIndexOf("\n") + 1)
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls fn until it returns a truthy value or the timeout passes. */
export async function until<T>(fn: () => T | Promise<T>, timeoutMs = 10_000, stepMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(stepMs);
  }
}

/** Whether pid runs; a zombie counts as dead (tmux 3.3a here leaves a dead pane's process unreaped). */
export function pidAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/**
 * Checks every artifact dir under a state root against the protocol: schemas, strictly increasing
 * seq, one completion per started turn, nothing after child_exited, snapshots matching their sha256.
 */
export function checkArtifacts(home: string): string[] {
  const v = loadValidators();
  const problems: string[] = [];
  const primaries = path.join(home, "primaries");
  if (!fs.existsSync(primaries)) return problems;
  for (const p of fs.readdirSync(primaries)) {
    const artifacts = path.join(primaries, p, "artifacts");
    if (!fs.existsSync(artifacts)) continue;
    for (const c of fs.readdirSync(artifacts)) {
      const dir = path.join(artifacts, c);
      const say = (s: string) => problems.push(`${c.slice(0, 8)}: ${s}`);
      for (const e of v.validateMeta(JSON.parse(fs.readFileSync(path.join(dir, "meta.json"), "utf8"))))
        say(`meta ${e}`);
      let lastSeq = 0;
      let exited = false;
      const started = new Set<string>();
      const completed = new Map<string, number>();
      for (const line of fs.readFileSync(path.join(dir, "events.ndjson"), "utf8").split("\n")) {
        // biome-ignore lint/suspicious/noExplicitAny: records are checked by the schema, read loosely here
        let e: Record<string, any>;
        try {
          e = JSON.parse(line);
        } catch {
          continue; // torn or malformed lines are the reader's business (tested on their own)
        }
        for (const err of v.validateEvent(e)) say(`event seq ${e.seq} ${err}`);
        if (e.seq <= lastSeq) say(`seq ${e.seq} after ${lastSeq}`);
        lastSeq = e.seq;
        if (e.type === "child_started" && e.by === "resume") exited = false; // a resumed child's new host
        if (exited) say(`${e.type} after child_exited`);
        if (e.type === "child_exited") exited = true;
        if (e.type === "turn_started") started.add(e.turnId);
        if (e.type === "completion") {
          completed.set(e.turnId, (completed.get(e.turnId) ?? 0) + 1);
          if (e.output) {
            const data = fs.readFileSync(path.join(dir, e.output.path));
            const sha = createHash("sha256").update(data).digest("hex");
            if (sha !== e.output.sha256 || data.length !== e.output.bytes)
              say(`snapshot ${e.output.path} does not match`);
          }
        }
      }
      for (const [t, n] of completed) if (n > 1) say(`turn ${t} has ${n} completions`);
      if (exited) for (const t of started) if (!completed.has(t)) say(`turn ${t} never completed`);
      for (const f of fs.existsSync(path.join(dir, "inbox")) ? fs.readdirSync(path.join(dir, "inbox")) : []) {
        if (f.startsWith(".")) say(`temp file left in inbox: ${f}`);
        else if (exited) say(`inbox item left after exit: ${f}`);
      }
    }
  }
  return problems;
}

/** Writes a project agent profile `<cwd>/.muster/agents/<name>.md`: `lines` of frontmatter (after `name:`), then `body`. */
export function writeProjectAgent(sb: Sandbox, name: string, lines: string[], body = ""): void {
  const agents = path.join(sb.cwd, ".muster", "agents");
  fs.mkdirSync(agents, { recursive: true });
  fs.writeFileSync(
    path.join(agents, `${name}.md`),
    ["---", `name: ${name}`, ...lines, "---", body, ""].join("\n"),
  );
}
