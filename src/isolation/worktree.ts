/**
 * Worktree isolation: a child runs in a git worktree of its own, on branch `muster/<short id>` from the
 * parent's HEAD. Its record (`isolation.json` in the artifact dir, written once at spawn) says where; the
 * branch is the child's work, which `diff`, `merge` and `gc` act on.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { readJsonIfExists, writeJsonAtomic } from "../util/fsx.js";
import { git, identityArgs, runGit } from "./git.js";

export const ISOLATION_MODES = ["none", "worktree"] as const;
export type IsolationMode = (typeof ISOLATION_MODES)[number];

export interface IsolationRecord {
  v: 1;
  mode: "worktree";
  /** The parent's checkout (its worktree's top level) the child was branched from and merges into. */
  repo: string;
  worktree: string;
  branch: string;
  /** The parent's HEAD when the child started: the start of its commit range. */
  base: string;
  /** A place on another machine: `worktree` is a path there, and the branch here moves when its work is fetched (far.ts). */
  place?: string;
}

export const isolationFile = (artifactDir: string): string => path.join(artifactDir, "isolation.json");
/** The record of a worktree on another machine (far.ts): kept in the mirror only, never carried. */
export const farIsolationFile = (artifactDir: string): string => path.join(artifactDir, "isolation-far.json");

/** A child's isolation record, or null when it runs in its parent's directory. */
export function readIsolation(artifactDir: string): IsolationRecord | null {
  const r =
    readJsonIfExists<IsolationRecord>(isolationFile(artifactDir)) ??
    readJsonIfExists<IsolationRecord>(farIsolationFile(artifactDir));
  return r && r.v === 1 && r.mode === "worktree" ? r : null;
}

export function checkIsolationMode(mode: string | undefined): IsolationMode | undefined {
  if (mode === undefined) return undefined;
  if ((ISOLATION_MODES as readonly string[]).includes(mode)) return mode as IsolationMode;
  throw new MusterError(
    "invalid_argument",
    `isolation must be one of ${ISOLATION_MODES.join(", ")}, not "${mode}"`,
  );
}

/** The branch a child works on: `muster/<its name>`, else `muster/<short id>`. */
export const branchOf = (childId: string, name?: string): string => `muster/${name ?? childId.slice(-8)}`;

/**
 * Checks `cwd` can be isolated (inside a git checkout with a commit) and the branch is free; nothing is
 * created. Returns the checkout's top level, HEAD and where the child's cwd is inside it.
 */
export function planWorktree(
  cwd: string,
  childId: string,
  name?: string,
): { repo: string; base: string; sub: string; branch: string } {
  const top = runGit(cwd, ["rev-parse", "--show-toplevel"]);
  if (!top.ok)
    throw new MusterError(
      "invalid_argument",
      `--isolation worktree needs a git checkout: ${cwd} is not inside one`,
    );
  const repo = top.stdout.trim();
  const head = runGit(repo, ["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
  if (!head.ok)
    throw new MusterError(
      "invalid_argument",
      `--isolation worktree needs a commit to branch from: ${repo} has none`,
    );
  const branch = branchOf(childId, name);
  // A name muster accepts may still be no branch name git accepts (`a..b`, `x.lock`).
  if (!runGit(repo, ["check-ref-format", "--branch", branch]).ok)
    throw new MusterError(
      "invalid_argument",
      `${branch} is not a valid git branch name; give another --name`,
    );
  if (runGit(repo, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`]).ok)
    throw new MusterError("invalid_argument", `branch ${branch} already exists in ${repo}`);
  const sub = path.relative(fs.realpathSync(repo), fs.realpathSync(cwd));
  return { repo, base: head.stdout.trim(), sub, branch };
}

/**
 * Creates the worktree at `dest` on a new branch from the parent's HEAD and writes the record; returns
 * the child's working directory inside it. On failure nothing is left (worktree, branch, record).
 */
export function createWorktree(
  cwd: string,
  childId: string,
  dest: string,
  artifactDir: string,
  name?: string,
): string {
  const plan = planWorktree(cwd, childId, name);
  fs.mkdirSync(path.dirname(dest), { recursive: true, mode: 0o700 });
  git(plan.repo, ["worktree", "add", "--quiet", "-b", plan.branch, dest, plan.base]);
  try {
    const record: IsolationRecord = {
      v: 1,
      mode: "worktree",
      repo: plan.repo,
      worktree: dest,
      branch: plan.branch,
      base: plan.base,
    };
    writeJsonAtomic(isolationFile(artifactDir), record);
    const childCwd = path.join(dest, plan.sub);
    fs.mkdirSync(childCwd, { recursive: true });
    return childCwd;
  } catch (e) {
    removeWorktree({ repo: plan.repo, worktree: dest, branch: plan.branch }, { deleteBranch: "always" });
    throw e;
  }
}

export interface WorkSummary {
  branch: string;
  worktree: string;
  /** `base..head` of the child's commits on its branch. */
  range: string;
  commits: number;
  /** `git diff --stat` of base against the worktree as it is now (commits and uncommitted work alike). */
  diffStat: string;
  /** Whether the worktree holds work not committed yet (`merge` commits it first). */
  uncommitted: boolean;
}

/** What the child has done on its branch, read from git now. */
export function summarize(r: IsolationRecord): WorkSummary {
  const head = branchHead(r);
  const commits = Number(git(r.repo, ["rev-list", "--count", `${r.base}..${head}`]).trim()) || 0;
  // A worktree on another machine: its branch here is as of the last fetch (diff, merge).
  const alive = !r.place && fs.existsSync(r.worktree);
  return {
    branch: r.branch,
    worktree: r.place ? `${r.place}:${r.worktree}` : r.worktree,
    range: `${r.base.slice(0, 12)}..${head.slice(0, 12)}`,
    commits,
    diffStat: alive
      ? worktreeDiff(r, ["--stat"]).trimEnd()
      : git(r.repo, ["diff", "--stat", r.base, head]).trimEnd(),
    uncommitted: alive && git(r.worktree, ["status", "--porcelain", "--untracked-files=all"]).trim() !== "",
  };
}

const branchHead = (r: IsolationRecord): string =>
  git(r.repo, ["rev-parse", `refs/heads/${r.branch}^{commit}`]).trim();

/**
 * `git diff <base>` of the worktree including untracked files, through a temporary index so neither the
 * child's index nor its files change.
 */
export function worktreeDiff(r: IsolationRecord, extra: string[] = []): string {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "muster-idx-"));
  const env = { GIT_INDEX_FILE: path.join(tmp, "index") };
  try {
    git(r.worktree, ["read-tree", "HEAD"], { env });
    git(r.worktree, ["add", "-A"], { env });
    return git(r.worktree, ["diff", "--cached", ...extra, r.base], { env });
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Commits whatever the child left uncommitted in its worktree onto its branch; false when there was nothing. */
export function commitLeftovers(r: IsolationRecord, childId: string): boolean {
  if (r.place || !fs.existsSync(r.worktree)) return false;
  if (git(r.worktree, ["status", "--porcelain", "--untracked-files=all"]).trim() === "") return false;
  git(r.worktree, ["add", "-A"]);
  const msg = `muster: work of child ${childId.slice(-8)} left uncommitted`;
  git(r.worktree, [...identityArgs(r.worktree), "commit", "--quiet", "--no-verify", "-m", msg]);
  return true;
}

/** Whether the branch's work is in the parent's checkout (its tip is an ancestor of the checkout's HEAD). */
export function isMerged(r: Pick<IsolationRecord, "repo" | "branch">): boolean {
  const tip = runGit(r.repo, ["rev-parse", "--verify", "--quiet", `refs/heads/${r.branch}^{commit}`]);
  if (!tip.ok) return true; // no branch left: nothing unmerged
  return runGit(r.repo, ["merge-base", "--is-ancestor", tip.stdout.trim(), "HEAD"]).ok;
}

/**
 * Removes the worktree (its files and git's record of it) and the branch: "if-merged" keeps a branch whose
 * work is not in the parent's checkout yet, so nothing is lost. Returns what happened to the branch.
 */
export function removeWorktree(
  r: Pick<IsolationRecord, "repo" | "worktree" | "branch" | "place">,
  opts: { deleteBranch: "if-merged" | "always" },
): { branch: "deleted" | "kept" } {
  // A worktree on another machine goes with the child's files there (Place.forget); only the branch is here.
  if (!r.place) {
    if (fs.existsSync(r.worktree)) runGit(r.repo, ["worktree", "remove", "--force", r.worktree]);
    fs.rmSync(r.worktree, { recursive: true, force: true });
    runGit(r.repo, ["worktree", "prune"]);
  }
  if (opts.deleteBranch === "if-merged" && !isMerged(r)) return { branch: "kept" };
  runGit(r.repo, ["branch", "-D", r.branch]);
  return { branch: "deleted" };
}
