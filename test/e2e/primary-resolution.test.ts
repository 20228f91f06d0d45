import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { beforeAll, describe, expect, it } from "vitest";
import { BIN, REPO, useSandbox } from "../helpers/cli.js";
import { killServerAndWait, privateSocket } from "../helpers/tmux.js";

const sb = useSandbox("mt-prim");
const base = path.dirname(sb.home);
const IN_DELETED_CWD = path.join(REPO, "test", "fixtures", "in-deleted-cwd.mjs");

type Run = { exitCode: number; stdout: string; stderr: string };

/** The real CLI run from `cwd` (the sandbox's own run() always uses its one working dir). */
async function runIn(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const r = await execa(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...sb.env, ...env },
    extendEnv: false,
    reject: false,
    stdin: "ignore",
    timeout: 60_000,
  });
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

/** The real CLI run from a working directory that was deleted before muster started. */
async function runInDeletedDir(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  const dir = fs.mkdtempSync(path.join(base, "gone-"));
  const r = await execa(process.execPath, [IN_DELETED_CWD, dir, ...args], {
    cwd: base,
    env: { ...sb.env, ...env },
    extendEnv: false,
    reject: false,
    stdin: "ignore",
    timeout: 60_000,
  });
  expect(fs.existsSync(dir)).toBe(false);
  return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
}

const json = (r: Run) => JSON.parse(r.stdout);
const short = (id: string) => id.slice(-8);
const git = (args: string[]) =>
  execa("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    env: { ...sb.env, GIT_CONFIG_NOSYSTEM: "1" },
  });

/** Every file and directory under a root, to prove a command created nothing there. */
function tree(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).sort();
}

async function spawnIn(cwd: string, prompt: string, extra: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const r = await runIn(cwd, ["spawn", "--agent", "mock", "--wait", "--json", ...extra, prompt], env);
  expect(r.exitCode, r.stderr).toBe(0);
  return json(r).spawned.id as string;
}

describe("read-only and refused commands create no state", () => {
  it("a fresh state root stays absent through reads and failures; the first good spawn creates it", async () => {
    const fresh = path.join(base, "fresh-home");
    const env = { MUSTER_HOME: fresh };
    const sub = path.join(sb.cwd, "fresh-sub", "deeper");
    fs.mkdirSync(sub, { recursive: true });
    const commands = [
      ["ls"],
      ["ls", "--all"],
      ["ls", "--json"],
      ["status", "abcd1234"],
      ["status", "xyz"],
      ["spawn", "--agent", "nosuch", "x"],
      ["spawn", "--agent", "mock", ""],
      ["agents"],
      ["inbox"],
      ["budget"],
      ["gc", "--dry-run"],
      ["wait", "ffffffff"],
    ];
    for (const cwd of [sb.cwd, sub]) {
      for (const args of commands) {
        await runIn(cwd, args, env);
        expect(fs.existsSync(fresh), `after muster ${args.join(" ")} in ${cwd}`).toBe(false);
      }
    }
    const id = await spawnIn(sb.cwd, "first real work", [], env);
    expect(fs.readdirSync(path.join(fresh, "workspaces"))).toHaveLength(1);
    expect(fs.readdirSync(path.join(fresh, "primaries"))).toHaveLength(1);
    // The host gives its run slot back once its runner is reaped, after the completion `--wait` returned on.
    const slotsDir = path.join(fresh, "primaries", fs.readdirSync(path.join(fresh, "primaries"))[0], "slots");
    for (let i = 0; i < 200 && fs.readdirSync(slotsDir).length > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    expect(fs.readdirSync(slotsDir), "the run slot is given back").toEqual([]);
    // A read from a sub-directory finds the parent directory's primary and creates no other.
    const before = tree(fresh);
    const ls = await runIn(sub, ["ls", "--json"], env);
    expect(json(ls).children.map((c: { id: string }) => c.id)).toEqual([id]);
    expect(tree(fresh)).toEqual(before);
  });
});

describe("one repository = one primary", () => {
  const repo = path.join(base, "repo");
  const deep = path.join(repo, "src", "deep");
  const linked = path.join(base, "linked-worktree");
  let fromSub = "";
  let fromRoot = "";

  beforeAll(async () => {
    fs.mkdirSync(deep, { recursive: true });
    await git(["init", "-q", repo]);
    await git(["-C", repo, "commit", "-q", "--allow-empty", "-m", "init"]);
    await git(["-C", repo, "worktree", "add", "-q", linked]);
  });

  it("a child started in a sub-directory is seen from the repository root, and the other way round", async () => {
    fromSub = await spawnIn(deep, "from a sub-directory");
    fromRoot = await spawnIn(repo, "from the root");
    const atRoot = json(await runIn(repo, ["ls", "--json"]));
    const atSub = json(await runIn(deep, ["ls", "--json"]));
    expect(atRoot.primary).toBe(atSub.primary);
    const ids = (l: { children: { id: string }[] }) => l.children.map((c) => c.id).sort();
    expect(ids(atRoot)).toEqual([fromSub, fromRoot].sort());
    expect(ids(atSub)).toEqual(ids(atRoot));
  });

  it("a linked worktree (.git is a file) is its own work tree, shared by its sub-directories", async () => {
    expect(fs.statSync(path.join(linked, ".git")).isFile()).toBe(true);
    const sub = path.join(linked, "pkg");
    fs.mkdirSync(sub);
    const id = await spawnIn(sub, "in the worktree");
    const atTop = json(await runIn(linked, ["ls", "--json"]));
    expect(atTop.children.map((c: { id: string }) => c.id)).toEqual([id]);
    expect(atTop.primary).not.toBe(json(await runIn(repo, ["ls", "--json"])).primary);
  });

  it("status of a child owned by another primary says whose it is, and the --primary it names works", async () => {
    const st = await runIn(sb.cwd, ["status", short(fromSub)]);
    expect(st.exitCode).toBe(2);
    const m = /belongs to another primary \(([0-9a-f]{8})\).*--primary ([0-9a-f]{8})/.exec(st.stderr);
    expect(m, st.stderr).not.toBeNull();
    expect(m![2]).toBe(m![1]);
    // It says which directory chose this primary: the one to cd out of, or to give --primary in.
    expect(st.stderr).toContain(` for ${fs.realpathSync(sb.cwd)})`);
    expect(st.stderr.trim().split("\n")).toHaveLength(1);
    const there = await runIn(sb.cwd, ["status", short(fromSub), "--primary", m![2]!, "--json"]);
    expect(there.exitCode, there.stderr).toBe(0);
    expect(json(there).id).toBe(fromSub);
  });
});

describe("--primary / MUSTER_PRIMARY take the short id ls --all shows, or a unique prefix", () => {
  const A = "01a22900-0000-7000-8000-00000000aaaa";
  const B = "01a22900-0000-7000-8000-00000000bbbb";
  let childA = "";

  beforeAll(async () => {
    childA = await spawnIn(sb.cwd, "child of A", ["--primary", A]);
    await spawnIn(sb.cwd, "child of B", ["--primary", B]);
  });

  it("the short id from ls --all, a unique prefix and MUSTER_PRIMARY all reach the primary", async () => {
    const all = await runIn(sb.cwd, ["ls", "--all"]);
    const row = all.stdout.split("\n").find((l) => l.startsWith(short(childA)));
    const shown = row?.trim().split(/\s+/).at(-1);
    expect(shown).toBe(short(A));
    for (const given of [shown!, "01a22900-0000-7000-8000-00000000aa", "0aaaa"]) {
      const r = await runIn(sb.cwd, ["ls", "--json", "--primary", given]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(json(r).primary).toBe(A);
      expect(json(r).children.map((c: { id: string }) => c.id)).toEqual([childA]);
    }
    const viaEnv = await runIn(sb.cwd, ["status", short(childA), "--json"], { MUSTER_PRIMARY: short(A) });
    expect(viaEnv.exitCode, viaEnv.stderr).toBe(0);
    expect(json(viaEnv).id).toBe(childA);
  });

  it("an unknown or ambiguous primary is a one-line usage error", async () => {
    const ambiguous = await runIn(sb.cwd, ["ls", "--primary", "01a22900"]);
    expect(ambiguous.exitCode).toBe(2);
    expect(ambiguous.stderr).toMatch(/^muster: primary id "01a22900" is ambiguous: .*0000aaaa.*0000bbbb/);
    const unknown = await runIn(sb.cwd, ["ls"], { MUSTER_PRIMARY: "deadbeef" });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(/^muster: unknown primary "deadbeef"; (npx )?muster ls --all/);
    const bad = await runIn(sb.cwd, ["ls", "--primary", "../x"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("invalid primary id");
  });
});

describe("a parent whose working directory was deleted", () => {
  let id = "";
  let primary = "";

  beforeAll(async () => {
    id = await spawnIn(sb.cwd, "made before the directory went away");
    primary = json(await runIn(sb.cwd, ["ls", "--json"])).primary;
  });

  it("without a primary: one line saying what is wrong and what to pass, exit 2, nothing created", async () => {
    const before = tree(sb.home);
    for (const args of [["ls"], ["status", id], ["spawn", "--agent", "mock", "x"]]) {
      const r = await runInDeletedDir(args);
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(
        /^muster: the current directory \(.*gone-.*\) no longer exists; pass --primary <id> \(see (npx )?muster ls --all\)$/,
      );
    }
    expect(tree(sb.home)).toEqual(before);
  });

  it("with --primary or MUSTER_PRIMARY: ls, status and spawn work", async () => {
    const ls = await runInDeletedDir(["ls", "--primary", short(primary)]);
    expect(ls.exitCode, ls.stderr).toBe(0);
    expect(ls.stdout).toContain(short(id));
    const st = await runInDeletedDir(["status", id, "--json"], { MUSTER_PRIMARY: primary });
    expect(st.exitCode, st.stderr).toBe(0);
    expect(json(st).id).toBe(id);
    // On a tmux server of its own, so the server too is started from the deleted directory.
    const socket = privateSocket("mt-gone");
    const sp = await runInDeletedDir(
      [
        "spawn",
        "--agent",
        "mock",
        "--primary",
        short(primary),
        "--cwd",
        sb.cwd,
        "--wait",
        "--json",
        "started from a deleted directory",
      ],
      { MUSTER_TMUX_SOCKET: socket },
    ).finally(() => killServerAndWait(socket));
    expect(sp.exitCode, sp.stderr).toBe(0);
    expect(json(sp).results[0].status).toBe("completed");
    const after = json(await runIn(sb.cwd, ["ls", "--json"]));
    expect(after.children.map((c: { id: string }) => c.id)).toContain(json(sp).spawned.id);
  });

  it("a spawn that would run in the deleted directory says so; agents still lists profiles", async () => {
    const sp = await runInDeletedDir(["spawn", "--agent", "mock", "--primary", primary, "x"]);
    expect(sp.exitCode).toBe(2);
    expect(sp.stderr).toMatch(/^muster: working directory .*gone-.* does not exist$/);
    const agents = await runInDeletedDir(["agents", "--json"]);
    expect(agents.exitCode, agents.stderr).toBe(0);
    expect(agents.stderr).not.toContain("uv_cwd");
  });

  it("doctor still asks each agent CLI for its version", async () => {
    const fake = path.join(base, "fake-codex");
    fs.writeFileSync(fake, "#!/bin/sh\necho 'codex-cli 9.9.9'\n", { mode: 0o755 });
    const r = await runInDeletedDir(["doctor", "--json"], { MUSTER_CODEX_BIN: fake });
    expect(r.stderr).not.toContain("does not exist");
    const codex = json(r).agentClis.find((c: { name: string }) => c.name === "codex");
    expect(codex).toMatchObject({ found: true, version: "codex-cli 9.9.9" });
  });
});
