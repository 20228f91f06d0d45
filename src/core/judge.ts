/**
 * A judge for a best-of run: one more child (no worktree; it works in the checkout the candidates branched
 * from) is shown every candidate and answers which one wins, as JSON; one corrective turn if the answer
 * cannot be read. A verdict naming a candidate is recorded with the run; anything else records nothing.
 */
import { MusterError } from "../base/errors.js";
import { loadProfile } from "../profiles/profile.js";
import { getRunner } from "../runners/registry.js";
import { recordVerdict, type Verdict } from "./best-of-record.js";
import type { CancelOptions, CancelResult } from "./cancel.js";
import { type CompareView, compareGroup } from "./compare.js";
import type { CoreContext } from "./context.js";
import type { ChildDiff } from "./isolation.js";
import { judgeCorrection, judgePrompt, readVerdict, VERDICT_SCHEMA } from "./judge-prompt.js";
import type { TurnResult } from "./results.js";
import type { FollowUp } from "./send.js";
import type { SpawnOptions, SpawnResult } from "./spawn.js";
import type { WaitOptions, WaitOutcome } from "./wait.js";

/** What a judge asks of the core besides its context (the Muster class gives it). */
export interface JudgeCore extends CoreContext {
  spawn(opts: SpawnOptions): Promise<SpawnResult>;
  send(id: string, prompt: string): Promise<FollowUp>;
  wait(ids: string[], opts: WaitOptions): Promise<WaitOutcome>;
  diff(id: string): Promise<ChildDiff>;
  cancelMany(ids: string[], opts: CancelOptions): Promise<CancelResult[]>;
}

export interface JudgeOptions {
  /** Bounds each of the judge's turns; past it the judge is stopped and nothing is recorded. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Told the judge's id once it runs (a front end shows it, so a person can watch it). */
  onJudge?: (id: string) => void;
}

/** The judge's decision recorded, or why there is none (the judge failed, or named no candidate). */
export type JudgeOutcome =
  | { recorded: true; verdict: Verdict; view: CompareView }
  | { recorded: false; judge: string; judgeAgent: string; reason: string; text?: string };

const JUDGE_CLOSED = "closed: it judged its best-of run";

/**
 * Asks `agent` to pick the winner of a best-of run whose candidates have all settled. Refused before a judge
 * starts (nothing made): an unknown group, candidates still running, none left to pick.
 */
export async function judgeGroup(
  m: JudgeCore,
  group: string,
  agent: string,
  opts: JudgeOptions = {},
): Promise<JudgeOutcome> {
  const view = await compareGroup(m, group);
  const busy = view.children.filter((r) => !r.settled);
  if (busy.length > 0)
    throw new MusterError(
      "busy",
      `candidates ${busy.map((r) => r.n).join(", ")} of ${group} have not settled yet: a judge looks at finished work only`,
      { next: { action: "wait", ids: busy.map((r) => r.id) } },
    );
  if (view.children.every((r) => r.status === "removed"))
    throw new MusterError("invalid_argument", `every candidate of ${group} was removed: nothing to judge`);
  const diffs = new Map<string, string>();
  for (const r of view.children)
    if (r.status !== "removed")
      diffs.set(
        r.id,
        await m.diff(r.id).then(
          (d) => d.diff,
          () => "",
        ),
      );
  const native = nativeSchema(m, agent);
  const judge = await m.spawn({
    agent,
    prompt: judgePrompt(view, diffs),
    cwd: view.repo,
    isolation: "none",
    ...(native ? { outputSchema: VERDICT_SCHEMA } : {}),
  });
  opts.onJudge?.(judge.id);
  const failed = (reason: string, text?: string): JudgeOutcome => ({
    recorded: false,
    judge: judge.id,
    judgeAgent: judge.agent,
    reason,
    ...(text !== undefined ? { text } : {}),
  });
  try {
    let turn = await turnOf(m, judge.id, judge.turnId, opts);
    if (typeof turn === "string") return failed(turn);
    let read = readVerdict(turn.text ?? "", view);
    if (!read.ok) {
      const again = await m.send(judge.id, judgeCorrection(read.error));
      turn = await turnOf(m, judge.id, again.turnId, opts);
      if (typeof turn === "string") return failed(turn);
      read = readVerdict(turn.text ?? "", view);
      if (!read.ok)
        return failed(`the judge named no candidate, also after one correction: ${read.error}`, turn.text);
    }
    const verdict: Verdict = {
      winner: read.row.id,
      n: read.row.n,
      reasoning: read.reasoning,
      judge: judge.id,
      judgeAgent: judge.agent,
      at: new Date().toISOString(),
    };
    await recordVerdict(m.paths.bestOf, group, verdict);
    return { recorded: true, verdict, view: { ...view, verdict } };
  } finally {
    // The judge is done either way: its host and pane go; its answer stays readable (muster result).
    await m.cancelMany([judge.id], { closeReason: JUDGE_CLOSED }).catch(() => undefined);
  }
}

/** The judge's settled turn, or why it has none to read. */
async function turnOf(
  m: JudgeCore,
  id: string,
  turnId: string,
  opts: JudgeOptions,
): Promise<TurnResult | string> {
  const out = await m.wait([id], {
    turns: new Map([[id, turnId]]),
    withText: true,
    ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const r = out.results[0];
  if (!r)
    return out.interrupted ? "the wait for the judge was interrupted" : "the judge did not answer in time";
  if (r.status !== "completed") return `the judge's turn ended ${r.status}${r.reason ? `: ${r.reason}` : ""}`;
  return r;
}

/** Whether the judge's agent has its CLI enforce the verdict's schema; else the prompt alone asks for it. */
function nativeSchema(m: CoreContext, agent: string): boolean {
  try {
    const runner = getRunner(loadProfile(agent, m.cwd, m.env).runner);
    return !!runner?.nativeSchema?.(VERDICT_SCHEMA);
  } catch {
    // An agent that cannot be loaded: the spawn says why.
    return false;
  }
}
