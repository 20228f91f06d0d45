/** diff and merge of a child isolated in a git worktree (the worktree itself: src/isolation). */
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { dropSnapshot, fetchFarWork } from "../isolation/far.js";
import { git, identityArgs, runGit, zsplit } from "../isolation/git.js";
import { escapingSymlinks, missingWorktree, parentWritesOf } from "../isolation/merge-checks.js";
import { commitLeftovers, type IsolationRecord, readIsolation, worktreeDiff } from "../isolation/worktree.js";
import type { LoadedChild } from "./children.js";
import type { CoreContext } from "./context.js";

export interface ChildDiff {
  id: string;
  branch: string;
  base: string;
  /** `git diff <base>` of the child's worktree (commits and uncommitted work), or its `--stat`. */
  diff: string;
  /** Set when the worktree is gone: the diff is then of the branch's commits only. */
  problem?: string;
}

export type MergeOutcome =
  | {
      id: string;
      branch: string;
      merged: true;
      how: "fast-forward" | "merge-commit" | "up-to-date";
      head: string;
      committedLeftovers: boolean;
    }
  | { id: string; branch: string; merged: false; conflicts: string[]; committedLeftovers: boolean };

const fewPaths = (items: string[]): string =>
  items.length <= 5 ? items.join(", ") : `${items.slice(0, 5).join(", ")} and ${items.length - 5} more`;

const running = (c: LoadedChild): boolean =>
  c.status === "running" || c.status === "starting" || c.status === "queued";

function isolated(c: LoadedChild): IsolationRecord {
  const r = readIsolation(c.files.dir);
  if (!r)
    throw new MusterError(
      "invalid_argument",
      `child ${c.entry.id.slice(-8)} does not run in a worktree of its own (spawn it with --isolation worktree)`,
    );
  return r;
}

/** The child's work against the parent's HEAD it started from; a worktree already removed shows its branch. */
export async function diffChild(
  m: CoreContext,
  idOrPrefix: string,
  opts: { stat?: boolean } = {},
): Promise<ChildDiff> {
  const c = m.child(idOrPrefix);
  const r = isolated(c);
  const extra = opts.stat ? ["--stat"] : [];
  if (r.place) {
    // On another machine: a snapshot of its worktree comes here as a bundle, and is diffed here.
    const { ref } = await fetchFarWork(m.backendOf(c.entry).place, r, "snapshot");
    try {
      return {
        id: c.entry.id,
        branch: r.branch,
        base: r.base,
        diff: git(r.repo, ["diff", ...extra, r.base, ref]),
      };
    } finally {
      dropSnapshot(r, ref);
    }
  }
  const problem = missingWorktree(r);
  const diff = problem
    ? git(r.repo, ["diff", ...extra, r.base, `refs/heads/${r.branch}`])
    : worktreeDiff(r, extra);
  return { id: c.entry.id, branch: r.branch, base: r.base, diff, ...(problem ? { problem } : {}) };
}

/**
 * Merges the child's branch into whatever the parent's checkout has checked out now: a fast-forward when
 * possible, else a merge commit. What the child left uncommitted is committed onto its branch first. On a
 * conflict git's merge is aborted, so the checkout is as it was, and the conflicting files are named.
 * Refused: a branch adding symlinks that point outside the tree (always); without `force`, a child whose
 * worktree is gone or that wrote into the parent's checkout during a turn.
 */
export async function mergeChild(
  m: CoreContext,
  idOrPrefix: string,
  opts: { force?: boolean } = {},
): Promise<MergeOutcome> {
  const c = await m.reconcile(m.child(idOrPrefix));
  const r = isolated(c);
  const id = c.entry.id;
  if (running(c))
    throw new MusterError("busy", `child ${id.slice(-8)} has a turn ${c.status}; merge once it has settled`, {
      next: { action: "wait_or_remove", ids: [id] },
    });
  if (!fs.existsSync(path.join(r.repo)))
    throw new MusterError("not_found", `the parent's checkout ${r.repo} is gone`);
  const short = id.slice(-8);
  const gone = missingWorktree(r);
  if (gone && !opts.force)
    throw new MusterError(
      "invalid_argument",
      `not merging child ${short}: ${gone}; look at \`muster diff ${short}\`, then merge with --force`,
    );
  const wrote = parentWritesOf(c.files.dir);
  if (wrote.length > 0 && !opts.force)
    throw new MusterError(
      "invalid_argument",
      `not merging child ${short}: it changed the parent's checkout during a turn (${fewPaths(wrote)}); check those changes, then merge with --force`,
    );
  // On another machine: its leftovers are committed there and its branch fetched here first.
  const committedLeftovers = r.place
    ? (await fetchFarWork(m.backendOf(c.entry).place, r, "commit")).committedLeftovers
    : commitLeftovers(r, id);
  const before = git(r.repo, ["rev-parse", "HEAD"]).trim();
  const tip = git(r.repo, ["rev-parse", `refs/heads/${r.branch}^{commit}`]).trim();
  // Never with --force: a link out of the tree would point the parent's checkout at files elsewhere.
  const links = escapingSymlinks(r, tip);
  if (links.length > 0)
    throw new MusterError(
      "integrity",
      `not merging child ${short}: ${r.branch} adds symlinks that point outside the checkout: ${fewPaths(links)}`,
    );
  const msg = `muster: merge child ${id.slice(-8)} (${r.branch})`;
  const run = runGit(r.repo, [
    ...identityArgs(r.repo),
    "merge",
    "--no-edit",
    "-m",
    msg,
    `refs/heads/${r.branch}`,
  ]);
  if (run.ok) {
    const head = git(r.repo, ["rev-parse", "HEAD"]).trim();
    const how = head === before ? "up-to-date" : head === tip ? "fast-forward" : "merge-commit";
    return { id, branch: r.branch, merged: true, how, head, committedLeftovers };
  }
  const conflicts = zsplit(runGit(r.repo, ["diff", "--name-only", "--diff-filter=U", "-z"]).stdout);
  // Whatever stopped it, the checkout goes back to where it was: no merge left half-done.
  if (runGit(r.repo, ["rev-parse", "--verify", "--quiet", "MERGE_HEAD"]).ok)
    runGit(r.repo, ["merge", "--abort"]);
  if (conflicts.length > 0) return { id, branch: r.branch, merged: false, conflicts, committedLeftovers };
  const said = (run.stderr || run.stdout).replace(/\s+/g, " ").trim().slice(0, 400);
  throw new MusterError("invalid_argument", `git merge of ${r.branch} refused: ${said}`);
}
