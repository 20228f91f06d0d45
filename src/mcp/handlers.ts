import type { ContainerRequest } from "../base/container-request.js";
import { MusterError } from "../base/errors.js";
import type { VerifyRequest } from "../base/verify-request.js";
import { assertCaps, type Caps } from "../core/caps.js";
import type { ModelQuery } from "../core/catalog.js";
import { DEFAULT_WAIT_MODE } from "../core/defaults.js";
import type { SendMode } from "../core/send.js";
import type { StartConflict } from "../core/start.js";
import type { MusterEvent } from "../core/types.js";
import type { WaitOutcome } from "../core/wait.js";
import { shortId } from "../util/ids.js";
import { asksBestOf, runBestOf } from "./best-of.js";
import type { CallContext } from "./call-context.js";
import { childDetail, childRow, type McpResult, oneLine, shapeResult } from "./shape.js";

/** What a handler gets besides its arguments: the core and this call's abort signal and progress. */
export type { CallContext } from "./call-context.js";

/** Arguments of subagents_run (checked against its schema before the handler runs). */
export interface RunArgs {
  agent?: string;
  id?: string;
  prompt: string;
  model?: string;
  reasoning?: string;
  await?: boolean;
  groupId?: string;
  isolation?: "worktree";
  caps?: Caps;
  name?: string;
  backend?: string;
  place?: string;
  on?: string;
  /** An image's name, or the container's fields (ContainerRequest). */
  container?: string | ContainerRequest;
  tui?: boolean;
  fork?: string;
  /** A check's command line, or {command, retries, timeoutMs} (VerifyRequest). */
  verify?: string | VerifyRequest;
  /** `on-lost[:N]` or `no`: the restart policy (core/restart.ts). */
  restart?: string;
  /** Best-of-N: this many candidates, each in a worktree of its own (mcp/best-of.ts). */
  bestOf?: number;
  /** Best-of-N: the candidates' agents, taken in turn. */
  agents?: string[];
}

const usage = (message: string): MusterError => new MusterError("invalid_argument", message);

/** `container`: an image's name ("" for the default image) or the container's fields. */
function containerOf(c: unknown): ContainerRequest {
  if (typeof c === "string") return c === "" ? {} : { image: c };
  if (c !== null && typeof c === "object" && !Array.isArray(c)) return c as ContainerRequest;
  throw usage("container is an image's name or an object of image, network, mount, cpus, memory, env");
}

/** `verify`: a command line, or the check's fields. */
function verifyOf(v: unknown): VerifyRequest {
  if (typeof v === "string") return { command: v };
  if (v !== null && typeof v === "object" && !Array.isArray(v)) return v as VerifyRequest;
  throw usage("verify is a command line or an object of command, retries, timeoutMs");
}

/** Each refused combination of parameters, in the tools' words (core/start.ts decides which). */
const CONFLICT: Record<StartConflict, string> = {
  agent_and_resume: "give agent (a new child) or id (continue a settled child), not both",
  group_with_resume: "groupId is for new children (agent), not resume (id)",
  backend_with_resume: "id continues a child where it ran",
  on_with_place: "give one of on (an SSH host), place or container",
  fork_with_resume: "fork starts a new child (agent), id continues one",
  resume_with_command_or_cwd: "id continues a child as it was",
  seal_without_group: "seal goes with groupId",
  name_with_resume: "id continues a child under its name",
  tui_with_resume: "id continues a child in the mode it ran in (no tui)",
  caps_with_resume: "caps are set when a child starts (agent), not on resume (id)",
  restart_with_resume: "a restart policy is set when a child starts (agent), not on resume (id)",
  verify_with_resume: "verify is set when a child starts (agent), not on resume (id)",
};

/** Waits for the named children, reporting their events as progress; an already-aborted call does not wait. */
async function waitReporting(
  ctx: CallContext,
  ids: string[],
  opts: { mode: "all" | "first"; timeoutMs?: number; turns?: ReadonlyMap<string, string> },
): Promise<WaitOutcome> {
  if (ctx.signal.aborted) return { results: [], pending: ids, timedOut: false, interrupted: true };
  return ctx.m.wait(ids, { ...opts, ...reporting(ctx) });
}

/** Wait options that report the waited children's events as this call's progress. */
const reporting = (ctx: CallContext) => ({
  withText: true,
  signal: ctx.signal,
  onEvent: (id: string, e: MusterEvent) => ctx.progress.event(id, e),
});

/** subagents_run: a new child (agent) or a resumed one (id); waits for the turn unless `await` is false. */
export async function run(a: RunArgs, ctx: CallContext): Promise<McpResult | Record<string, unknown>> {
  if (asksBestOf(a))
    return runBestOf(
      a,
      {
        prompt: a.prompt,
        ...(a.model !== undefined ? { model: a.model } : {}),
        ...(a.reasoning !== undefined ? { reasoning: a.reasoning } : {}),
        ...(a.caps ? { caps: assertCaps(a.caps) } : {}),
        ...(a.backend !== undefined ? { backend: a.backend } : {}),
        ...(a.place !== undefined ? { place: a.place } : {}),
        ...(a.on !== undefined ? { on: a.on } : {}),
        ...(a.container !== undefined ? { container: containerOf(a.container) } : {}),
        ...(a.verify !== undefined ? { verify: verifyOf(a.verify) } : {}),
        ...(a.restart !== undefined ? { restart: a.restart } : {}),
      },
      ctx,
    );
  const conflict = ctx.m.startConflict({
    ...(a.agent !== undefined ? { agent: a.agent } : {}),
    ...(a.id !== undefined ? { resume: a.id } : {}),
    ...(a.groupId !== undefined ? { group: a.groupId } : {}),
    ...(a.isolation !== undefined ? { isolation: a.isolation } : {}),
    ...(a.name !== undefined ? { name: a.name } : {}),
    ...(a.backend !== undefined ? { backend: a.backend } : {}),
    ...(a.place !== undefined ? { place: a.place } : {}),
    ...(a.on !== undefined ? { on: a.on } : {}),
    ...(a.container !== undefined ? { container: containerOf(a.container) } : {}),
    ...(a.fork !== undefined ? { fork: a.fork } : {}),
    ...(a.tui ? { tui: true } : {}),
    ...(a.caps ? { caps: a.caps } : {}),
    ...(a.verify !== undefined ? { verify: verifyOf(a.verify) } : {}),
    ...(a.restart !== undefined ? { restart: a.restart } : {}),
  });
  if (conflict) throw usage(CONFLICT[conflict]);
  const started = await ctx.m.start({
    prompt: a.prompt,
    ...(a.agent !== undefined ? { agent: a.agent } : {}),
    ...(a.id !== undefined ? { resume: a.id } : {}),
    ...(a.model !== undefined ? { model: a.model } : {}),
    ...(a.reasoning !== undefined ? { reasoning: a.reasoning } : {}),
    ...(a.groupId ? { group: a.groupId } : {}),
    ...(a.isolation !== undefined ? { isolation: a.isolation } : {}),
    ...(a.caps ? { caps: assertCaps(a.caps) } : {}),
    ...(a.name !== undefined ? { name: a.name } : {}),
    ...(a.backend !== undefined ? { backend: a.backend } : {}),
    ...(a.place !== undefined ? { place: a.place } : {}),
    ...(a.on !== undefined ? { on: a.on } : {}),
    ...(a.container !== undefined ? { container: containerOf(a.container) } : {}),
    ...(a.tui ? { tui: true } : {}),
    ...(a.fork !== undefined ? { fork: a.fork } : {}),
    ...(a.verify !== undefined ? { verify: verifyOf(a.verify) } : {}),
    ...(a.restart !== undefined ? { restart: a.restart } : {}),
  });
  const warnings = {
    ...(started.warnings.length > 0 ? { warnings: started.warnings } : {}),
    // The tree is paused (a provider's quota or credential): the child exists, its turn waits for resume-tree.
    ...("paused" in started && started.paused ? { treePaused: started.paused } : {}),
  };
  // The status subagents_status would say now: one derivation (core/state.ts) for every answer.
  const statusNow = async () => (await ctx.m.view(started.id)).status;
  if (a.await === false) return { id: started.id, status: await statusNow(), ...warnings };
  ctx.progress.say(`${shortId(started.id)} started`);
  // Our own turn: one sent to the same child by someone else meanwhile is not this call's answer.
  const outcome = await waitReporting(ctx, [started.id], {
    mode: "all",
    turns: new Map([[started.id, started.turnId]]),
  });
  const settled = outcome.results[0];
  if (settled)
    return {
      ...shapeResult(settled),
      ...warnings,
      ...(outcome.treePaused ? { treePaused: outcome.treePaused } : {}),
    };
  if (!ctx.signal.aborted || (await ctx.abortReason()) === "closed")
    return { id: started.id, status: await statusNow() };
  // The client cancelled this call: cancel exactly the child it started.
  const c = await ctx.m.cancel(started.id);
  return { id: c.id, status: c.turnCancelled ? "cancelled" : c.status };
}

/** subagents_await: results for exactly the ids named; `first` also lists the ones still running. */
export async function awaitChildren(
  a: { ids?: string[]; groupId?: string; mode?: "first" | "all"; timeoutMs?: number },
  ctx: CallContext,
) {
  if ((a.groupId === undefined) === (a.ids === undefined)) throw usage("give ids or groupId");
  if (a.groupId !== undefined && a.mode === "first") throw usage("a group is awaited whole (mode all)");
  const waiting = (ids: string[]): void =>
    ctx.progress.say(`waiting for ${ids.length === 1 ? shortId(ids[0]!) : `${ids.length} children`}`);
  const timeout = a.timeoutMs !== undefined ? { timeoutMs: a.timeoutMs } : {};
  let outcome: WaitOutcome;
  if (a.groupId !== undefined) {
    // Awaiting a group seals it (in the core); an already-cancelled call is interrupted there.
    outcome = await ctx.m.waitGroup(a.groupId, { ...reporting(ctx), ...timeout, onMembers: waiting });
  } else {
    const ids = a.ids!.map((i) => ctx.m.resolve(i));
    waiting(ids);
    outcome = await waitReporting(ctx, ids, { mode: a.mode ?? DEFAULT_WAIT_MODE, ...timeout });
  }
  return {
    results: outcome.results.map(shapeResult),
    pending: outcome.pending,
    ...(outcome.timedOut ? { timedOut: true } : {}),
    // Once per pause: the tree no longer starts turns until resume-tree.
    ...(outcome.treePaused ? { treePaused: outcome.treePaused } : {}),
  };
}

/** Most children the list shows (the newest); the total is always given. */
export const LIST_MAX = 100;

/** subagents_status: one child in detail, or this primary's children. */
export async function status(a: { id?: string; resumeTree?: boolean }, ctx: CallContext) {
  // The tree's pause lifted first (quota or credentials fixed): what follows shows the tree going on.
  const resumed = a.resumeTree ? { resumed: ctx.m.resumeTree().resumed } : {};
  if (a.id !== undefined) return { ...childDetail(await ctx.m.view(a.id)), ...resumed };
  const all = await ctx.m.views();
  const paused = ctx.m.treePause();
  return {
    primary: ctx.m.primary,
    ...resumed,
    ...(paused ? { treePaused: paused } : {}),
    total: all.length,
    children: all.slice(-LIST_MAX).map(childRow),
  };
}

/** subagents_result: a settled turn's output (default the latest). */
export function result(a: { id: string; turnId?: string }, ctx: CallContext): McpResult {
  return shapeResult(ctx.m.result(a.id, a.turnId));
}

/** subagents_send: the next turn of a running child, after its running turn or in its place; or a stop. */
export async function send(a: { id: string; prompt?: string; mode?: SendMode }, ctx: CallContext) {
  if (a.mode === "stop") {
    if (a.prompt !== undefined) throw usage("mode stop runs nothing after the turn: give no prompt");
    return { ...ctx.m.stopTurn(a.id), mode: "stop" };
  }
  if (a.prompt === undefined) throw usage("prompt is required (except with mode stop)");
  const f = await ctx.m.send(a.id, a.prompt, a.mode ? { mode: a.mode } : {});
  return {
    id: f.id,
    turnId: f.turnId,
    queued: f.queued,
    ...(f.interrupts ? { interrupts: f.interrupts } : {}),
    ...(f.warnings.length > 0 ? { warnings: f.warnings } : {}),
    ...(f.paused ? { treePaused: f.paused } : {}),
  };
}

/** subagents_cancel: every id is resolved first (an unknown one cancels nothing), then all are cancelled at once. */
export async function cancel(a: { id?: string; ids?: string[]; snapshot?: boolean }, ctx: CallContext) {
  if ((a.id === undefined) === (a.ids === undefined)) throw usage("give exactly one of id or ids");
  const out = await ctx.m.cancelMany(a.ids ?? [a.id!], a.snapshot ? { snapshot: true } : {});
  return {
    cancelled: out.map((o) => ({
      id: o.id,
      status: o.status,
      turnCancelled: o.turnCancelled,
      ...(o.snapshot ? { snapshot: o.snapshot } : {}),
    })),
  };
}

/**
 * subagents_inbox: completions not yet delivered (by a result, an await or an earlier inbox), then marked
 * delivered unless `peek`; bounded like `muster inbox` (the rest come next time, `more` says how many).
 */
export function inbox(a: { peek?: boolean }, ctx: CallContext) {
  const { manifest, consume } = ctx.m.inbox();
  if (!a.peek) consume();
  return manifest;
}

/** subagents_answer: answers a child's pending question (subagents_inbox lists them under `requests`). */
export function answer(a: { id: string; text: string }, ctx: CallContext) {
  const r = ctx.m.answer(a.id, a.text);
  return { answered: r.id, child: r.child };
}

/** subagents_models: one bounded catalog question. */
export function models(a: ModelQuery, ctx: CallContext) {
  return ctx.m.models(a);
}

/** subagents_agents: the profiles found, one line each. */
export function agents(_a: Record<string, never>, ctx: CallContext) {
  const found = ctx.m.agents();
  return {
    agents: found.agents.map(({ profile: p, readiness: r }) => ({
      name: p.name,
      runner: p.runner,
      ...(p.model ? { model: p.model } : {}),
      description: oneLine(p.description, 120),
      // Only the exception is spelled out: an agent whose CLI is missing here cannot start.
      ...(r.ready ? {} : r),
    })),
    ...(found.warnings.length > 0 ? { warnings: found.warnings } : {}),
  };
}
