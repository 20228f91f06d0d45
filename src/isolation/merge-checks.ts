/**
 * What makes a child's branch unsafe to merge as it is: symlinks it added that point outside the tree (a merge
 * would plant them in the parent's checkout), writes it made into the parent's checkout during a turn, and a
 * worktree that is gone (its branch may then hold only part of the work).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { readJsonIfExists } from "../util/fsx.js";
import { git, zsplit } from "./git.js";
import type { IsolationRecord } from "./worktree.js";

/** Whether a link at `file` (repo-relative) with this target leads outside the tree it is in. */
export function escapes(file: string, target: string): boolean {
  if (target.startsWith("/") || /^[A-Za-z]:[\\/]/.test(target)) return true;
  const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), target));
  return to === ".." || to.startsWith("../");
}

/** Symlinks added or changed on the branch (base..tip) whose target leaves the tree: `path → target`. */
export function escapingSymlinks(r: IsolationRecord, tip: string): string[] {
  // -z --raw: ":<old mode> <new mode> <old sha> <new sha> <status>" then the path, each NUL-ended.
  const fields = zsplit(git(r.repo, ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", r.base, tip]));
  const out: string[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [, newMode, , sha, status] = fields[i]!.split(" ");
    const file = fields[i + 1]!;
    if (newMode !== "120000" || status === "D" || !sha) continue;
    const target = git(r.repo, ["cat-file", "blob", sha]);
    if (escapes(file, target)) out.push(`${file} → ${target}`);
  }
  return out;
}

/** The paths of the parent's checkout any turn of the child was seen to change (see watch.ts), sorted. */
export function parentWritesOf(artifactDir: string): string[] {
  const dir = path.join(artifactDir, "isolation");
  let names: string[] = [];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  const seen = new Set<string>();
  for (const n of names) {
    try {
      const rec = readJsonIfExists<{ parentWrites?: unknown }>(path.join(dir, n));
      if (Array.isArray(rec?.parentWrites)) for (const p of rec.parentWrites) seen.add(String(p));
    } catch {
      // An unreadable record says nothing either way.
    }
  }
  return [...seen].sort();
}

/** Why the child's worktree is not where its record says, or undefined when it is there. */
export function missingWorktree(r: IsolationRecord): string | undefined {
  // On another machine: asked there when its work is fetched.
  if (r.place || fs.existsSync(r.worktree)) return undefined;
  return `its worktree ${r.worktree} is gone (deleted while the child ran?): only the commits on ${r.branch} remain`;
}
