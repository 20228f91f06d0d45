import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { BIN, REPO, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-first");

/** PATH with every folder that holds a `muster` taken out: a fresh clone where nothing was linked. */
const pathWithoutMuster = (p: string | undefined): string =>
  (p ?? "")
    .split(path.delimiter)
    .filter((d) => d && !fs.existsSync(path.join(d, "muster")))
    .join(path.delimiter);
// A user's terminal: no npm_* variables (these tests may themselves run under npx or npm test).
const bare: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries({ ...sb.env, PATH: pathWithoutMuster(sb.env.PATH) }).filter(([k]) => !k.startsWith("npm_")),
);

/** PATH with `muster` linked to this checkout first (what `npm link` gives). */
function linkedEnv(): NodeJS.ProcessEnv {
  const dir = path.join(sb.home, "..", "linked-bin");
  fs.mkdirSync(dir, { recursive: true });
  if (!fs.existsSync(path.join(dir, "muster"))) fs.symlinkSync(BIN, path.join(dir, "muster"));
  return { ...bare, PATH: `${dir}${path.delimiter}${bare.PATH}` };
}

async function muster(args: string[], env: NodeJS.ProcessEnv, cwd = sb.cwd) {
  const r = await execa(process.execPath, [BIN, ...args], {
    cwd,
    env,
    extendEnv: false,
    reject: false,
    timeout: 90_000,
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/**
 * Runs one printed command exactly as a user would paste it into a shell. npx installing this checkout runs its
 * `prepare` (a build into dist/) the first time: that would rewrite dist/ under the other test files running
 * now, so scripts are off for npx here (the command line itself is the user's).
 */
async function asTyped(line: string, env: NodeJS.ProcessEnv, cwd: string) {
  const r = await execa("sh", ["-c", line], {
    cwd,
    env: { ...env, npm_config_ignore_scripts: "true" },
    extendEnv: false,
    reject: false,
    timeout: 120_000,
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

const nextSteps = (stdout: string): string[] => {
  const line = stdout.split("\n").find((l) => l.startsWith("Next: "));
  expect(line, stdout).toBeDefined();
  return line!.slice("Next: ".length).split(" · ");
};

/** Every artifact dir and conversation file under the state root. */
function stateFiles(): string[] {
  const primaries = path.join(sb.home, "primaries");
  if (!fs.existsSync(primaries)) return [];
  return fs.readdirSync(primaries).flatMap((p) =>
    ["artifacts", "subagents"].flatMap((d) => {
      const dir = path.join(primaries, p, d);
      return fs.existsSync(dir) ? fs.readdirSync(dir).map((f) => path.join(dir, f)) : [];
    }),
  );
}

async function windowNames(): Promise<string[]> {
  const r = await execa("tmux", ["-L", sb.socket, "list-windows", "-a", "-F", "#{window_name}"], {
    reject: false,
  });
  return String(r.stdout ?? "")
    .split("\n")
    .filter(Boolean);
}

describe("first run: muster on a child's PATH", () => {
  it("an agent in a child pane can call `muster progress` though muster is not on the user's PATH", async () => {
    const r = await muster(
      [
        "spawn",
        "--agent",
        "command",
        "--json",
        "--wait",
        "report",
        "--",
        "sh",
        "-c",
        "muster progress hello",
      ],
      bare,
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.results[0].status).toBe("completed");
    const progress = readEvents(out.spawned.artifactDir).filter((e) => e.type === "progress");
    expect(progress.map((e) => e.text)).toEqual(["hello"]);
  });
});

describe("first run: the demo cleans up, and its next steps work as printed", () => {
  it("demo --keep keeps its children; each printed next step runs verbatim (muster linked), rm removes them", async () => {
    const env = linkedEnv();
    const d = await muster(["demo", "--keep"], env);
    expect(d.exitCode, d.stderr).toBe(0);
    expect((await windowNames()).filter((n) => n.startsWith("demo-"))).toHaveLength(3);
    const steps = nextSteps(d.stdout);
    expect(steps[0]).toBe("muster ls");
    expect(steps[1]).toMatch(/^muster send [0-9a-f]{8} "a follow-up" --wait$/);
    expect(steps[2]).toMatch(/^muster rm [0-9a-f]{8} [0-9a-f]{8} [0-9a-f]{8}$/);
    const ls = await asTyped(steps[0]!, env, sb.cwd);
    expect(ls.exitCode, ls.stderr).toBe(0);
    expect(ls.stdout.match(/demo-(explore|review|plan)/g)).toHaveLength(3);
    const send = await asTyped(steps[1]!, env, sb.cwd);
    expect(send.exitCode, send.stderr).toBe(0);
    expect(send.stdout).toContain("Task: a follow-up");
    const rm = await asTyped(steps[2]!, env, sb.cwd);
    expect(rm.exitCode, rm.stderr).toBe(0);
    expect(rm.stdout.match(/^removed /gm)).toHaveLength(3);
    expect((await windowNames()).filter((n) => n.startsWith("demo-"))).toEqual([]);
    const after = JSON.parse((await muster(["ls", "--json"], env)).stdout).children;
    expect(after.filter((c: { agent: string }) => c.agent.startsWith("demo-"))).toEqual([]);
  });

  it(
    "demo without --keep leaves no pane or child; from a fresh clone its hints say npx muster and work there",
    { timeout: 240_000 },
    async () => {
      // A fresh clone after `npm install`: muster is not on PATH, the user is in the clone.
      const before = stateFiles();
      const d = await muster(["demo"], bare, REPO);
      expect(d.exitCode, d.stderr).toBe(0);
      expect(d.stdout.match(/prompt-sha256: [0-9a-f]{64}/g)).toHaveLength(3);
      expect(await windowNames()).not.toEqual(expect.arrayContaining([expect.stringMatching(/^demo-/)]));
      const ls = await muster(["ls", "--json"], bare, REPO);
      expect(JSON.parse(ls.stdout).children).toEqual([]);
      // No artifact dir or conversation file of the demo's children is left.
      expect(stateFiles()).toEqual(before);
      const steps = nextSteps(d.stdout);
      expect(steps).toEqual(['npx muster spawn --agent mock --wait "Summarise the repo"', "npx muster ls"]);
      const spawn = await asTyped(steps[0]!, bare, REPO);
      expect(spawn.exitCode, spawn.stderr).toBe(0);
      expect(spawn.stdout).toContain("Task: Summarise the repo");
      const again = await asTyped(steps[1]!, bare, REPO);
      expect(again.exitCode, again.stderr).toBe(0);
      expect(again.stdout).toMatch(/mock\s+waiting-input/);
      // Error hints too name the command as this user can run it.
      const unknown = await muster(["status", "deadbeef"], bare, REPO);
      expect(unknown.exitCode).toBe(2);
      expect(unknown.stderr).toContain("; npx muster ls lists");
    },
  );

  it("Ctrl-C during the demo ends it (exit 130) and still removes its children", async () => {
    const before = stateFiles();
    const demo = execa(process.execPath, [BIN, "demo"], {
      cwd: sb.cwd,
      env: bare,
      extendEnv: false,
      reject: false,
    });
    await until(async () => (await windowNames()).filter((n) => n.startsWith("demo-")).length === 3, 30_000);
    demo.kill("SIGINT");
    const r = await demo;
    expect(r.exitCode, String(r.stderr)).toBe(130);
    expect((await windowNames()).filter((n) => n.startsWith("demo-"))).toEqual([]);
    expect(stateFiles()).toEqual(before);
  });
});
