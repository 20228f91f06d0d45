/**
 * What `merge` refuses of an isolated child's branch, with real git and real children (test/fixtures/
 * write-files.mjs under the command runner): symlinks pointing outside the checkout (always), a child that
 * wrote into the parent's checkout or whose worktree is gone (unless --force); diff and result flag the latter.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-wtsafe");
const WRITER = path.join(REPO, "test", "fixtures", "write-files.mjs");
const repo = sb.cwd;
const g = (...args: string[]): string => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8" });

g("init", "-q", "-b", "main");
g("config", "user.name", "parent");
g("config", "user.email", "parent@localhost");
fs.writeFileSync(path.join(repo, "a.txt"), "one\n");
g("add", "-A");
g("commit", "-q", "-m", "start");

async function isolatedChild(writerArgs: string[]) {
  const r = await sb.run([
    ...["spawn", "--agent", "command", "--isolation", "worktree", "--wait", "--json"],
    ...["edit", "--", process.execPath, WRITER, ...writerArgs],
  ]);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout).results[0];
}

// Every test spawns real children on a shared, often loaded machine.
describe("merge safety of isolated children", { timeout: 240_000 }, () => {
  it("symlinks pointing outside the checkout (absolute, or relative escaping it) are refused in one line, even with --force", async () => {
    const head = g("rev-parse", "HEAD");
    for (const target of ["/etc/passwd", "../../../outside", "sub/../../x"]) {
      const child = await isolatedChild(["--symlink", "link", target, "--write", "f.txt", "x\n"]);
      for (const force of [[], ["--force"]]) {
        const r = await sb.run(["merge", child.id, ...force]);
        expect(r.exitCode).toBe(1);
        expect(r.stderr.trim().split("\n")).toHaveLength(1);
        expect(r.stderr).toContain(
          `not merging child ${child.id.slice(-8)}: muster/${child.id.slice(-8)} adds symlinks that point outside the checkout: link → ${target}`,
        );
      }
      expect(g("rev-parse", "HEAD")).toBe(head);
      expect(fs.existsSync(path.join(repo, "link"))).toBe(false);
      expect(g("status", "--porcelain").trim()).toBe("");
    }
    // A link that stays inside the tree merges.
    const fine = await isolatedChild(["--write", "d/t.txt", "t\n", "--symlink", "d/ok", "t.txt"]);
    expect((await sb.json(["merge", fine.id])).data).toMatchObject({ merged: true });
    expect(fs.readlinkSync(path.join(repo, "d", "ok"))).toBe("t.txt");
  });

  it("a child that changed the parent's checkout during its turn: merge refused without --force", async () => {
    const leak = path.join(repo, "leak.txt");
    const child = await isolatedChild(["--write", leak, "oops\n", "--write", "b.txt", "b\n"]);
    expect(child.isolation.parentWrites).toEqual(["leak.txt"]);
    fs.rmSync(leak);
    const head = g("rev-parse", "HEAD");
    const r = await sb.run(["merge", child.id]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(
      /not merging child \w{8}: it changed the parent's checkout during a turn \(leak\.txt\); check those changes, then merge with --force/,
    );
    expect(g("rev-parse", "HEAD")).toBe(head);
    expect((await sb.json(["merge", child.id, "--force"])).data).toMatchObject({ merged: true });
    expect(fs.readFileSync(path.join(repo, "b.txt"), "utf8")).toBe("b\n");
  });

  it("a child that deleted its own worktree is flagged in its result, diff and merge", async () => {
    const child = await isolatedChild(["--write", "c.txt", "c\n", "--remove-cwd"]);
    const id = child.id as string;
    expect(child.isolation.problem).toMatch(/its worktree .* is gone/);
    const human = await sb.run(["result", id]);
    expect(human.stderr).toMatch(/warning: \w{8}: its worktree .* is gone/);
    const diff = await sb.run(["diff", id]);
    expect(diff.exitCode).toBe(0);
    expect(diff.stderr).toMatch(
      /warning: \w{8}: its worktree .* is gone .*only the commits on muster\/\w{8} remain/,
    );
    expect((await sb.json(["diff", id])).data.problem).toMatch(/is gone/);
    const head = g("rev-parse", "HEAD");
    const r = await sb.run(["merge", id]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/not merging child \w{8}: its worktree .* is gone.*merge with --force/);
    expect(g("rev-parse", "HEAD")).toBe(head);
    expect((await sb.json(["merge", id, "--force"])).data).toMatchObject({ merged: true, how: "up-to-date" });
  });
});
