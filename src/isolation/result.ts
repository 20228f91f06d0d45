/** What an isolated child's result carries, and its clean-up when the child is removed. */
import * as path from "node:path";
import { readJsonIfExists } from "../util/fsx.js";
import { missingWorktree } from "./merge-checks.js";
import { turnCheckFile } from "./watch.js";
import { commitLeftovers, readIsolation, removeWorktree, summarize, type WorkSummary } from "./worktree.js";

export interface IsolationResult extends Partial<WorkSummary> {
  mode: "worktree";
  branch: string;
  /** Paths of the parent's checkout that changed while this turn ran (`HEAD`: a commit there); empty: none. */
  parentWrites?: string[];
  /** Why the summary or the check could not be made (a repository gone, git failing). */
  problem?: string;
}

/** The isolation part of a turn's result: its branch's state now and the writes seen in the parent's checkout. */
export function isolationResult(artifactDir: string, turnId: string): { isolation?: IsolationResult } {
  const r = readIsolation(artifactDir);
  if (!r) return {};
  const out: IsolationResult = { mode: "worktree", branch: r.branch };
  const check = readJsonIfExists<{ parentWrites?: string[]; parentWritesUnknown?: string }>(
    turnCheckFile(artifactDir, turnId),
  );
  if (check?.parentWrites) out.parentWrites = check.parentWrites;
  const problems = check?.parentWritesUnknown ? [`parent check: ${check.parentWritesUnknown}`] : [];
  const gone = missingWorktree(r);
  if (gone) problems.push(gone);
  try {
    Object.assign(out, summarize(r));
  } catch (e) {
    problems.push((e as Error).message);
  }
  if (problems.length > 0) out.problem = problems.join("; ");
  return { isolation: out };
}

/** What became of a removed child's branch: kept while its work is not merged. */
export interface BranchFate {
  name: string;
  kept: boolean;
}

/**
 * Before a child's artifact dir is removed: its uncommitted work is committed onto its branch, the worktree
 * goes, and the branch too once merged (`drop`: a spawn undone, nothing committed, the branch goes). Null for
 * a child that is not isolated.
 */
export function discardIsolation(
  artifactDir: string,
  childId: string,
  work: "keep" | "drop" = "keep",
): BranchFate | null {
  const r = readIsolation(artifactDir);
  if (!r) return null;
  try {
    if (work === "keep") commitLeftovers(r, childId);
  } catch {
    // A worktree git cannot commit in: its branch still holds every commit the child made.
  }
  try {
    const { branch } = removeWorktree(r, { deleteBranch: work === "keep" ? "if-merged" : "always" });
    return { name: r.branch, kept: branch === "kept" };
  } catch {
    // No git here any more: the branch stays, and `git worktree prune` tidies the rest later.
    return { name: r.branch, kept: true };
  }
}

/** `<state>/worktrees/<child>`: outside every checkout, so the parent's `git status` never shows it. */
export const worktreePath = (stateRoot: string, childId: string): string =>
  path.join(stateRoot, "worktrees", childId);
