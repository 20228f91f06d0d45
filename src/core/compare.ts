/**
 * A best-of run's candidates side by side, as plain data: each one's outcome, acceptance check, branch and
 * diff size, usage and duration, and the judge's verdict once one was recorded. Reads only (no receipt).
 */
import type { CompletionStatus, Usage, Verified } from "../artifacts/events.js";
import { runGit } from "../isolation/git.js";
import { type IsolationResult, isolationResult } from "../isolation/result.js";
import { type BestOfChild, type BestOfRecord, readBestOf, type Verdict } from "./best-of-record.js";
import type { CoreContext } from "./context.js";
import { toResult } from "./results.js";

/** The size of a candidate's work against where it started (commits and uncommitted work alike). */
export interface DiffSize {
  files: number;
  insertions: number;
  deletions: number;
  commits: number;
  uncommitted: boolean;
}

export interface CompareRow {
  n: number;
  id: string;
  name?: string;
  agent: string;
  branch: string;
  /** The task's turn as it settled; before that, the child's status; `removed` once `rm` or `gc` took it. */
  status: CompletionStatus | string;
  /** Whether the task's turn has settled (or the child is gone): a judge looks only at settled runs. */
  settled: boolean;
  verified?: Verified;
  diff?: DiffSize;
  diffStat?: string;
  usage?: Usage;
  durationMs?: number;
  /** A removed candidate: whether its branch is still in the checkout (work not merged is kept). */
  branchKept?: boolean;
  problem?: string;
}

export interface CompareView {
  group: string;
  task: string;
  repo: string;
  createdAt: string;
  verify?: string;
  children: CompareRow[];
  /** Every candidate's task turn has settled (or the candidate was removed). */
  settled: boolean;
  verdict?: Verdict;
}

/** The run's candidates side by side (not_found for a group no best-of run made). */
export async function compareGroup(m: CoreContext, group: string): Promise<CompareView> {
  const rec = readBestOf(m.paths.bestOf, group);
  const live = m.registry.read().children;
  const children: CompareRow[] = [];
  for (const cand of rec.children)
    children.push(cand.id in live ? await rowOf(m, cand) : removedRow(rec, cand));
  return {
    group: rec.group,
    task: rec.task,
    repo: rec.repo,
    createdAt: rec.createdAt,
    ...(rec.verify !== undefined ? { verify: rec.verify } : {}),
    children,
    settled: children.every((r) => r.settled),
    ...(rec.verdict ? { verdict: rec.verdict } : {}),
  };
}

const heading = (cand: BestOfChild) => ({
  n: cand.n,
  id: cand.id,
  ...(cand.name !== undefined ? { name: cand.name } : {}),
  agent: cand.agent,
  branch: cand.branch,
});

async function rowOf(m: CoreContext, cand: BestOfChild): Promise<CompareRow> {
  const c = await m.reconcile(m.child(cand.id));
  const done = c.state.completions.get(cand.turnId);
  if (!done) {
    const iso = isolationResult(c.files.dir, cand.turnId).isolation;
    const settled = c.status === "closed" || c.status === "lost";
    return { ...heading(cand), status: c.status, settled, ...workOf(iso) };
  }
  const r = toResult(c, done, false);
  return {
    ...heading(cand),
    status: r.status,
    settled: true,
    ...(r.verified ? { verified: r.verified } : {}),
    ...(r.usage ? { usage: r.usage } : {}),
    ...(r.durationMs !== undefined ? { durationMs: r.durationMs } : {}),
    ...workOf(r.isolation),
  };
}

function removedRow(rec: BestOfRecord, cand: BestOfChild): CompareRow {
  const kept = runGit(rec.repo, ["rev-parse", "--verify", "--quiet", `refs/heads/${cand.branch}`]).ok;
  return { ...heading(cand), status: "removed", settled: true, branchKept: kept };
}

function workOf(iso: IsolationResult | undefined): Pick<CompareRow, "diff" | "diffStat" | "problem"> {
  if (!iso) return { problem: "no worktree record" };
  return {
    ...(iso.diffStat !== undefined
      ? {
          diffStat: iso.diffStat,
          diff: {
            ...statTotals(iso.diffStat),
            commits: iso.commits ?? 0,
            uncommitted: iso.uncommitted ?? false,
          },
        }
      : {}),
    ...(iso.problem ? { problem: iso.problem } : {}),
  };
}

/** The totals of `git diff --stat`'s last line (`3 files changed, 10 insertions(+), 2 deletions(-)`). */
export function statTotals(stat: string): Pick<DiffSize, "files" | "insertions" | "deletions"> {
  const last = stat.trimEnd().split("\n").at(-1) ?? "";
  const num = (re: RegExp) => Number(re.exec(last)?.[1] ?? 0);
  return {
    files: num(/(\d+) files? changed/),
    insertions: num(/(\d+) insertions?\(\+\)/),
    deletions: num(/(\d+) deletions?\(-\)/),
  };
}
