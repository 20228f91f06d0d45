/**
 * Spotting a write into the parent's checkout by an isolated child. The child host takes a print of the
 * parent's checkout as a turn starts and again when it ends, and records the paths that changed in between
 * (`isolation/<turnId>.json`), so the turn's result can flag them. What git does not see (ignored files)
 * is not seen here either; a change the parent's own user made meanwhile is reported alike.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { writeJsonAtomic } from "../util/fsx.js";
import { runGit, zsplit } from "./git.js";

/** HEAD and, for each path git reports as changed or untracked, its size/mtime/mode (or "gone"). */
export interface CheckoutPrint {
  head: string;
  files: Record<string, string>;
}

// A checkout with more dirty files than this is printed in part: a bound on the record, not on correctness elsewhere.
const MAX_FILES = 20_000;

/** `skip`: a folder (repo-relative, ending in `/`) left out: muster's state root, when it lies inside the checkout. */
export function fingerprint(repo: string, skip?: string): CheckoutPrint {
  const head = runGit(repo, ["rev-parse", "--verify", "--quiet", "HEAD"]).stdout.trim();
  const st = runGit(repo, ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]);
  const files: Record<string, string> = {};
  for (const entry of zsplit(st.stdout).slice(0, MAX_FILES)) {
    const rel = entry.slice(3);
    // Under the skipped folder, or a folder holding it that git lists whole (a nested worktree).
    if (skip && (rel.startsWith(skip) || (rel.endsWith("/") && skip.startsWith(rel)))) continue;
    const s = fs.lstatSync(path.join(repo, rel), { throwIfNoEntry: false });
    files[rel] = s ? `${s.size}:${s.mtimeMs}:${s.mode}` : "gone";
  }
  return { head, files };
}

/** Paths whose state differs between two prints; a moved HEAD shows as `HEAD`. */
export function changedPaths(before: CheckoutPrint, after: CheckoutPrint): string[] {
  const out = new Set<string>();
  if (before.head !== after.head) out.add("HEAD");
  for (const k of new Set([...Object.keys(before.files), ...Object.keys(after.files)]))
    if (before.files[k] !== after.files[k]) out.add(k);
  return [...out].sort();
}

/**
 * The state root (`<root>/worktrees/<child>` is the worktree) relative to the checkout, as `x/`, when it lies
 * inside it: what muster itself writes there (events, the worktrees) is no write by the child.
 */
function stateRootInside(repo: string, worktree: string): string | undefined {
  try {
    const rel = path.relative(fs.realpathSync(repo), fs.realpathSync(path.dirname(path.dirname(worktree))));
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel) ? `${rel}/` : undefined;
  } catch {
    return undefined;
  }
}

export const turnCheckFile = (artifactDir: string, turnId: string): string =>
  path.join(artifactDir, "isolation", `${turnId}.json`);

/**
 * For the child host: a print of the parent's checkout now, and a function that records what changed in it
 * when the turn ends. Null for a child that is not isolated. Never throws: a failed check is recorded as such.
 */
export function watchParentCheckout(
  artifactDir: string,
  isolation: { repo: string; worktree: string } | null,
  turnId: string,
): (() => void) | null {
  if (!isolation) return null;
  const { repo } = isolation;
  const skip = stateRootInside(repo, isolation.worktree);
  let before: CheckoutPrint | null = null;
  try {
    before = fingerprint(repo, skip);
  } catch {}
  return () => {
    let rec: { parentWrites: string[] } | { parentWritesUnknown: string };
    try {
      rec = before
        ? { parentWrites: changedPaths(before, fingerprint(repo, skip)) }
        : { parentWritesUnknown: "no print of the parent's checkout at the turn's start" };
    } catch (e) {
      rec = { parentWritesUnknown: (e as Error).message };
    }
    try {
      fs.mkdirSync(path.dirname(turnCheckFile(artifactDir, turnId)), { recursive: true, mode: 0o700 });
      writeJsonAtomic(turnCheckFile(artifactDir, turnId), rec);
    } catch {}
  };
}
