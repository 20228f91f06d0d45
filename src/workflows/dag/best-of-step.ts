/**
 * A best-of step: its candidates start together on the step's prompt, each in a worktree of its own, and the
 * step waits for all of them. With a judge, that agent picks the winner and the step hands on the winner's
 * answer; without one, it hands on every completed candidate's answer, labelled, for a later step to weigh.
 * The step completes when at least one candidate completed (and, with a judge, the judge named one). The
 * losers' branches stay, as after `muster spawn --best-of` (`muster compare`, `merge`, `rm`).
 */
import { shortId } from "../../util/ids.js";
import type { Candidate, StepOutcome, StepSpawn, WorkflowHost } from "../host.js";
import type { StepStatus } from "../run-log.js";
import type { StepBestOf } from "./toml.js";

/** How a best-of step ended: its result (the winner, or the first that completed, as its child) and what it hands on. */
export interface BestOfStepOutcome {
  result: { status: StepStatus; childId?: string; reason?: string };
  text?: string;
}

/** The step's candidates, once started: the run records them and can cancel them. */
export type OnCandidates = (group: string, candidates: Candidate[]) => void;

export async function runBestOfStep(
  host: WorkflowHost,
  spec: StepBestOf,
  spawn: StepSpawn,
  onCandidates: OnCandidates,
): Promise<BestOfStepOutcome> {
  if (!host.bestOf || !host.waitCandidates)
    return { result: { status: "errored", reason: "this run's host starts no best-of steps" } };
  let started: { group: string; candidates: Candidate[] };
  try {
    started = await host.bestOf({
      ...spawn,
      ...(spec.n !== undefined ? { n: spec.n } : {}),
      ...(spec.agents ? { agents: spec.agents } : {}),
    });
  } catch (e) {
    return { result: { status: "errored", reason: `could not start: ${(e as Error).message}` } };
  }
  onCandidates(started.group, started.candidates);
  const outcomes = await host.waitCandidates(started.group, started.candidates);
  const done = started.candidates
    .map((c, i) => ({ c, n: i + 1, out: outcomes[i]! }))
    .filter((x) => x.out.status === "completed");
  if (done.length === 0) {
    const why = started.candidates.map((c, i) => `${shortId(c.id)} ${describe(outcomes[i]!)}`).join("; ");
    return {
      result: {
        status: outcomes[0]?.status ?? "errored",
        childId: started.candidates[0]!.id,
        reason: `no candidate completed: ${why}`,
      },
    };
  }
  if (spec.judge && host.judge) {
    const verdict = await host.judge(started.group, spec.judge).catch((e: unknown) => ({
      reason: (e as Error).message,
    }));
    if (!("winner" in verdict))
      return { result: { status: "errored", reason: `the judge picked no winner: ${verdict.reason}` } };
    const won = done.find((x) => x.c.id === verdict.winner);
    if (!won)
      return {
        result: {
          status: "errored",
          reason: `the judge picked ${shortId(verdict.winner)}, not a candidate that completed`,
        },
      };
    return { result: { status: "completed", childId: won.c.id }, text: won.out.text ?? "" };
  }
  const text = done
    .map((x) => `## Candidate ${x.n} (${x.c.agent}, ${shortId(x.c.id)})\n\n${x.out.text ?? ""}`)
    .join("\n\n");
  return { result: { status: "completed", childId: done[0]!.c.id }, text };
}

const describe = (o: StepOutcome): string => (o.reason ? `${o.status} (${o.reason})` : o.status);
