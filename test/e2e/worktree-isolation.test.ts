/**
 * Worktree isolation with real git in the sandbox: children spawned with --isolation worktree (or a profile's
 * `isolation: worktree`) run in a worktree of their own on branch muster/<short id>; their results carry
 * branch, commit range and diff stat; `diff`, `merge` and `gc` act on the branch; a write into the
 * parent's checkout is flagged. The agents are test/fixtures/write-files.mjs under the command runner.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { BIN, REPO, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-wt");
const WRITER = path.join(REPO, "test", "fixtures", "write-files.mjs");
const repo = sb.cwd;
const g = (...args: string[]): string => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8" });
const ORIGINAL = "one\ntwo\nthree\n";

g("init", "-q", "-b", "main");
g("config", "user.name", "parent");
g("config", "user.email", "parent@localhost");
fs.writeFileSync(path.join(repo, "a.txt"), ORIGINAL);
g("add", "-A");
g("commit", "-q", "-m", "start");

/** Spawns an isolated command-runner child running write-files.mjs with `writerArgs`, waits, returns its result. */
async function isolatedChild(writerArgs: string[], extra: string[] = []) {
  // --json before `--`: everything after it is the agent's argv.
  const r = await sb.run([
    ...["spawn", "--agent", "command", "--isolation", "worktree", "--wait", "--json", ...extra],
    ...["edit", "--", process.execPath, WRITER, ...writerArgs],
  ]);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout).results[0];
}

const branches = (): string[] =>
  g("branch", "--list", "muster/*", "--format=%(refname:short)").split("\n").filter(Boolean);
const clean = (): boolean => g("status", "--porcelain").trim() === "";

describe("--isolation worktree", () => {
  it("a non-git directory or an unknown mode is a clear error, and nothing is created", async () => {
    const plain = fs.mkdtempSync(path.join(path.dirname(sb.home), "plain-"));
    const bad = await sb.run(["spawn", "--isolation", "worktree", "--cwd", plain, "hello"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--isolation worktree needs a git checkout: .*plain-\w+ is not inside one/);
    const mode = await sb.run(["spawn", "--isolation", "sideways", "hello"]);
    expect(mode.exitCode).toBe(2);
    expect(mode.stderr).toMatch(/isolation must be one of none, worktree, not "sideways"/);
    expect(fs.existsSync(path.join(sb.home, "worktrees"))).toBe(false);
    const ls = await sb.json(["ls"]);
    expect(ls.data.children ?? []).toEqual([]);
    expect(branches()).toEqual([]);
  });

  it("a spawn that fails after its worktree was made (its pane cannot open) leaves no worktree, branch or child", async () => {
    // A zellij that answers --version and refuses everything else: the spawn fails at its pane.
    const broken = path.join(path.dirname(sb.home), "broken-zellij");
    fs.writeFileSync(
      broken,
      '#!/bin/sh\n[ "$1" = --version ] && echo "zellij 0.44.3" && exit 0\necho refused >&2\nexit 1\n',
      {
        mode: 0o755,
      },
    );
    const r = await sb.run(["spawn", "--backend", "zellij", "--isolation", "worktree", "hello"], {
      env: { MUSTER_ZELLIJ_BIN: broken },
    });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/zellij attach failed \(exit 1\): refused/);
    expect(branches()).toEqual([]);
    expect(fs.readdirSync(path.join(sb.home, "worktrees"))).toEqual([]);
    expect(g("worktree", "list", "--porcelain").match(/^worktree /gm)).toHaveLength(1);
    expect((await sb.json(["ls"])).data.children ?? []).toEqual([]);
  });

  it("the child works on its own branch; result, diff, merge (fast-forward) and gc (worktree and merged branch gone)", async () => {
    const res = await isolatedChild([
      "--write",
      "a.txt",
      "one\nTWO\nthree\n",
      "--write",
      "new.txt",
      "hello\n",
    ]);
    const id = res.id as string;
    const branch = `muster/${id.slice(-8)}`;
    const head = g("rev-parse", "HEAD").trim();
    expect(res.isolation).toMatchObject({
      mode: "worktree",
      branch,
      commits: 0,
      uncommitted: true,
      range: `${head.slice(0, 12)}..${head.slice(0, 12)}`,
      parentWrites: [],
    });
    expect(res.isolation.diffStat).toMatch(/a\.txt +\| 2 \+-/);
    expect(res.isolation.diffStat).toMatch(/new\.txt +\| 1 \+/);
    expect(res.isolation.diffStat).toMatch(/2 files changed, 2 insertions\(\+\), 1 deletion\(-\)/);
    // The parent's checkout is untouched; the worktree is git's and lives outside it.
    expect(fs.readFileSync(path.join(repo, "a.txt"), "utf8")).toBe(ORIGINAL);
    expect(clean()).toBe(true);
    const wt = res.isolation.worktree as string;
    expect(wt.startsWith(path.join(sb.home, "worktrees"))).toBe(true);
    expect(g("worktree", "list", "--porcelain")).toContain(`worktree ${fs.realpathSync(wt)}`);
    expect((await sb.json(["status", id])).data.cwd).toBe(wt);

    const diff = await sb.run(["diff", id]);
    expect(diff.exitCode).toBe(0);
    expect(diff.stdout).toContain("+TWO");
    expect(diff.stdout).toContain("+++ b/new.txt");
    expect((await sb.run(["diff", "--stat", id])).stdout).toMatch(/2 files changed/);

    const merged = await sb.json(["merge", id]);
    expect(merged.exitCode).toBe(0);
    expect(merged.data).toMatchObject({
      merged: true,
      how: "fast-forward",
      branch,
      committedLeftovers: true,
    });
    expect(fs.readFileSync(path.join(repo, "a.txt"), "utf8")).toBe("one\nTWO\nthree\n");
    expect(fs.readFileSync(path.join(repo, "new.txt"), "utf8")).toBe("hello\n");
    expect(clean()).toBe(true);
    // The result now shows the commit muster made of the leftovers.
    const after = (await sb.json(["result", id])).data;
    expect(after.isolation).toMatchObject({ commits: 1, uncommitted: false });

    const gc = await sb.json(["gc", "--older-than", "0s", "--idle"]);
    expect(gc.exitCode).toBe(0);
    expect(gc.data.removed.map((r: { id: string }) => r.id)).toContain(id);
    expect(fs.existsSync(wt)).toBe(false);
    expect(g("worktree", "list", "--porcelain")).not.toContain(wt);
    expect(branches()).not.toContain(branch);
  });

  it("two children edit the same line: the first merges (fast-forward), the second conflicts, is aborted and named; gc keeps its unmerged branch", async () => {
    const start = g("rev-parse", "HEAD").trim();
    const first = await isolatedChild(["--write", "a.txt", "one\nFIRST\nthree\n", "--commit", "first"]);
    const second = await isolatedChild(["--write", "a.txt", "one\nSECOND\nthree\n", "--commit", "second"]);
    for (const r of [first, second]) {
      expect(r.isolation).toMatchObject({ commits: 1, uncommitted: false });
      expect(r.isolation.range.startsWith(start.slice(0, 12))).toBe(true);
    }
    const m1 = await sb.json(["merge", first.id]);
    expect(m1.data).toMatchObject({ merged: true, how: "fast-forward", committedLeftovers: false });
    const afterFirst = g("rev-parse", "HEAD").trim();

    const m2 = await sb.run(["merge", second.id]);
    expect(m2.exitCode).toBe(1);
    expect(m2.stdout).toMatch(
      /not merged: muster\/\w{8} of \w{8} conflicts in a\.txt; the merge was aborted/,
    );
    const m2json = await sb.json(["merge", second.id]);
    expect(m2json.data).toMatchObject({ merged: false, conflicts: ["a.txt"] });
    // Aborted: HEAD, files and index as after the first merge; no merge in progress.
    expect(g("rev-parse", "HEAD").trim()).toBe(afterFirst);
    expect(fs.readFileSync(path.join(repo, "a.txt"), "utf8")).toBe("one\nFIRST\nthree\n");
    expect(clean()).toBe(true);
    expect(fs.existsSync(path.join(repo, ".git", "MERGE_HEAD"))).toBe(false);

    const gc = await sb.json(["gc", "--older-than", "0s", "--idle"]);
    const fate = new Map(gc.data.removed.map((r: { id: string; branch?: unknown }) => [r.id, r.branch]));
    expect(fate.get(first.id)).toEqual({ name: first.isolation.branch, kept: false });
    expect(fate.get(second.id)).toEqual({ name: second.isolation.branch, kept: true });
    const left = branches();
    expect(left).not.toContain(first.isolation.branch);
    expect(left).toContain(second.isolation.branch);
    expect(fs.existsSync(second.isolation.worktree)).toBe(false);
    g("branch", "-D", second.isolation.branch);
  });

  it("two children editing different files: the first fast-forwards, the second becomes a merge commit", async () => {
    const c = await isolatedChild(["--write", "c.txt", "c\n", "--commit", "c"]);
    const d = await isolatedChild(["--write", "d.txt", "d\n", "--commit", "d"]);
    expect((await sb.json(["merge", c.id])).data).toMatchObject({ merged: true, how: "fast-forward" });
    const md = await sb.json(["merge", d.id]);
    expect(md.data).toMatchObject({ merged: true, how: "merge-commit" });
    expect(g("rev-list", "--parents", "-n", "1", "HEAD").trim().split(" ")).toHaveLength(3);
    expect(g("log", "-1", "--format=%s")).toMatch(/^muster: merge child \w{8} \(muster\/\w{8}\)/);
    expect(fs.readFileSync(path.join(repo, "c.txt"), "utf8")).toBe("c\n");
    expect(fs.readFileSync(path.join(repo, "d.txt"), "utf8")).toBe("d\n");
  });

  it("a write into the parent's checkout during the run is flagged in the result", async () => {
    const leak = path.join(repo, "leak.txt");
    const res = await isolatedChild(["--write", leak, "oops\n", "--write", "inside.txt", "fine\n"]);
    expect(res.isolation.parentWrites).toEqual(["leak.txt"]);
    expect(res.isolation.diffStat).toMatch(/inside\.txt/);
    // A person reading the result is told too (stderr: stdout stays the answer).
    const human = await sb.run(["result", res.id]);
    expect(human.stdout).toContain("wrote inside.txt");
    expect(human.stderr).toMatch(
      /works on muster\/\w{8} \(\w{12}\.\.\w{12}, 0 commits, uncommitted work\): .*diff/,
    );
    expect(human.stderr).toMatch(/warning: \w{8} changed the parent's checkout during its turn: leak\.txt/);
    fs.rmSync(leak);
  });

  it("a profile's `isolation: worktree` isolates its children", async () => {
    const agents = path.join(repo, ".muster", "agents");
    fs.mkdirSync(agents, { recursive: true });
    fs.writeFileSync(
      path.join(agents, "iso.md"),
      `---\nrunner: command\ncommand: ${JSON.stringify([process.execPath, WRITER, "--write", "p.txt", "p\n"])}\nisolation: worktree\n---\nan isolated writer\n`,
    );
    g("add", "-A");
    g("commit", "-q", "-m", "profile");
    const r = await sb.json(["spawn", "--agent", "iso", "--wait", "go"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.results[0].isolation).toMatchObject({ branch: `muster/${r.data.results[0].id.slice(-8)}` });
    expect(r.data.results[0].isolation.diffStat).toMatch(/p\.txt/);
    expect(fs.existsSync(path.join(repo, "p.txt"))).toBe(false);
    const id = r.data.results[0].id as string;
    const wt = r.data.results[0].isolation.worktree as string;

    // A resumed child goes on in its worktree; it cannot be given another isolation.
    const again = await sb.run(["spawn", "--resume", id, "--isolation", "worktree", "more"]);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toMatch(/no --isolation/);
    const resumed = await sb.json(["spawn", "--resume", id, "--wait", "more"]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.data.results[0].isolation).toMatchObject({
      branch: `muster/${id.slice(-8)}`,
      worktree: wt,
    });

    // --isolation none overrides the profile: the child writes into the checkout it was started in.
    const plain = await sb.json(["spawn", "--agent", "iso", "--isolation", "none", "--wait", "go"]);
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(plain.data.results[0].isolation).toBeUndefined();
    expect(fs.readFileSync(path.join(repo, "p.txt"), "utf8")).toBe("p\n");
    fs.rmSync(path.join(repo, "p.txt"));
  });

  it("merge and diff refuse a child that is not isolated, and merge one whose turn is still running", async () => {
    const plain = await sb.json(["spawn", "--wait", "hello"]);
    const pid = plain.data.results[0].id as string;
    for (const cmd of ["merge", "diff"]) {
      const r = await sb.run([cmd, pid]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(
        /does not run in a worktree of its own \(spawn it with --isolation worktree\)/,
      );
    }
    const hung = await sb.json(["spawn", "--isolation", "worktree", "mock: hang"]);
    expect(hung.exitCode, hung.stderr).toBe(0);
    const before = g("rev-parse", "HEAD");
    const busy = await sb.run(["merge", hung.data.id]);
    expect(busy.exitCode).toBe(2);
    expect(busy.stderr).toMatch(/has a turn (running|starting|queued); merge once it has settled/);
    expect(g("rev-parse", "HEAD")).toBe(before);
    expect((await sb.json(["cancel", hung.data.id])).exitCode).toBe(0);
  });

  it("MCP subagents_run takes isolation: worktree, and its result carries the branch", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp"],
      env: sb.env as Record<string, string>,
      cwd: repo,
      stderr: "ignore",
    });
    const client = new Client({ name: "muster-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const r = await client.callTool(
        { name: "subagents_run", arguments: { prompt: "hello", isolation: "worktree" } },
        undefined,
        { timeout: 50_000 },
      );
      const text = (r.content as { text: string }[])[0]!.text;
      expect(r.isError, text).toBeFalsy();
      const data = JSON.parse(text);
      expect(data.isolation).toMatchObject({
        mode: "worktree",
        branch: `muster/${data.id.slice(-8)}`,
        commits: 0,
      });
      expect(branches()).toContain(data.isolation.branch);
    } finally {
      await client.close();
    }
  });

  it("a state root inside the checkout: muster's own writes there are not taken for the child's", async () => {
    const inner = { MUSTER_HOME: path.join(repo, ".state") };
    const leak = path.join(repo, "leak2.txt");
    const r = await sb.run(
      [
        ...["spawn", "--agent", "command", "--isolation", "worktree", "--wait", "--json", "edit", "--"],
        ...[process.execPath, WRITER, "--write", "inside.txt", "x\n", "--write", leak, "y\n"],
      ],
      { env: inner },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout).results[0];
    expect(res.isolation.worktree.startsWith(path.join(repo, ".state", "worktrees"))).toBe(true);
    expect(res.isolation.parentWrites).toEqual(["leak2.txt"]);
    expect((await sb.run(["cancel", "--all"], { env: inner })).exitCode).toBe(0);
    fs.rmSync(leak);
  });

  it("merge into a checkout whose own uncommitted changes git would overwrite: refused with git's words, nothing changed", async () => {
    const child = await isolatedChild(["--write", "a.txt", "child\n", "--commit", "child edit"]);
    const mine = "parent's own uncommitted edit\n";
    fs.writeFileSync(path.join(repo, "a.txt"), mine);
    const head = g("rev-parse", "HEAD");
    const r = await sb.run(["merge", child.id]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      /git merge of muster\/\w{8} refused: .*local changes .* would be overwritten by merge.*a\.txt/,
    );
    expect(g("rev-parse", "HEAD")).toBe(head);
    expect(fs.readFileSync(path.join(repo, "a.txt"), "utf8")).toBe(mine);
    expect(fs.existsSync(path.join(repo, ".git", "MERGE_HEAD"))).toBe(false);
    g("checkout", "--", "a.txt");
    expect((await sb.json(["merge", child.id])).data).toMatchObject({ merged: true });
  });

  it("a named child works on muster/<name>; a name git refuses as a branch is a clear error, nothing created", async () => {
    const r = await isolatedChild(["--write", "n.txt", "n\n"], ["--name", "feature-x"]);
    expect(r.isolation.branch).toBe("muster/feature-x");
    expect(branches()).toContain("muster/feature-x");
    const before = (await sb.json(["ls"])).data.children.length;
    const bad = await sb.run(["spawn", "--name", "a..b", "--isolation", "worktree", "hello"]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/muster\/a\.\.b is not a valid git branch name/);
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
    expect(branches()).not.toContain("muster/a..b");
  });
});
