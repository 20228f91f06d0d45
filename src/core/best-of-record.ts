/**
 * A best-of run's record, `<primary>/best-of/<group>.json`: the task, its children in order and, once a judge
 * has picked, the verdict. Written whole (temp + rename), the verdict under the file's lock, so `compare` in
 * a later process reads what the run made.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { assertGroupId } from "../delivery/groups.js";
import { ensureDir, readJsonIfExists, writeJsonAtomic } from "../util/fsx.js";
import { withFileLock } from "../util/lock.js";

/** One candidate: its number in the run (1..N), the child and the branch it works on. */
export interface BestOfChild {
  n: number;
  id: string;
  /** The turn that carries the task. */
  turnId: string;
  agent: string;
  name?: string;
  branch: string;
}

/** What a judge decided: the winner (a candidate's id), why, and which child judged. */
export interface Verdict {
  winner: string;
  n: number;
  reasoning: string;
  /** The judge child's id and agent. */
  judge: string;
  judgeAgent: string;
  at: string;
}

export interface BestOfRecord {
  v: 1;
  group: string;
  task: string;
  /** The checkout the candidates branched from (where `merge` takes the winner). */
  repo: string;
  /** Each candidate's acceptance check, as given (the profile's may add one per agent). */
  verify?: string;
  children: BestOfChild[];
  createdAt: string;
  verdict?: Verdict;
}

const recordFile = (dir: string, group: string): string => path.join(dir, `${assertGroupId(group)}.json`);

export function writeBestOf(dir: string, rec: BestOfRecord): void {
  ensureDir(dir);
  writeJsonAtomic(recordFile(dir, rec.group), rec);
}

export function hasBestOf(dir: string, group: string): boolean {
  return readJsonIfExists<BestOfRecord>(recordFile(dir, group)) !== undefined;
}

/** The record of a best-of group (not_found for a group no best-of run made). */
export function readBestOf(dir: string, group: string): BestOfRecord {
  const rec = readJsonIfExists<BestOfRecord>(recordFile(dir, group));
  if (!rec || rec.v !== 1 || !Array.isArray(rec.children))
    throw new MusterError(
      "not_found",
      `no best-of group "${group}" here (spawn --best-of prints the group id of each run)`,
    );
  return rec;
}

/** Records the judge's verdict (a later judge's replaces it); returns the record as written. */
export function recordVerdict(dir: string, group: string, verdict: Verdict): Promise<BestOfRecord> {
  const file = recordFile(dir, group);
  return withFileLock(file, () => {
    const rec = readBestOf(dir, group);
    const next = { ...rec, verdict };
    writeJsonAtomic(file, next);
    return next;
  });
}

/**
 * Removes the records of runs none of whose children (candidates and judge) is left (`exists`); answers how
 * many went. A record that cannot be read is left for a person to look at.
 */
export async function pruneBestOf(dir: string, exists: (childId: string) => boolean): Promise<number> {
  let removed = 0;
  const names = fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n.endsWith(".json")) : [];
  const anyLeft = (rec: BestOfRecord): boolean =>
    rec.children.some((c) => exists(c.id)) || (rec.verdict !== undefined && exists(rec.verdict.judge));
  for (const name of names) {
    const file = path.join(dir, name);
    await withFileLock(file, () => {
      // Read under the lock: a judge may be recording its verdict.
      const rec = readJsonIfExists<BestOfRecord>(file);
      if (!rec || rec.v !== 1 || !Array.isArray(rec.children) || anyLeft(rec)) return;
      fs.rmSync(file, { force: true });
      removed += 1;
    });
  }
  return removed;
}
