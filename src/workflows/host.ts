import type { ProviderError } from "../artifacts/events.js";
import type { ContainerRequest } from "../base/container-request.js";
import type { VerifyRequest } from "../base/verify-request.js";
import type { Muster } from "../core/muster.js";
import type { TurnResult } from "../core/results.js";
import type { CompletionStatus } from "../core/types.js";
import { getRunner } from "../runners/registry.js";

/** How one step's child ended. `text` is its answer when it completed with one. */
export interface StepOutcome {
  status: CompletionStatus;
  reason?: string;
  text?: string;
  /** The provider error its turn failed on (a quota or a refused credential pauses the run). */
  providerError?: ProviderError;
}

/** The tree's pause as a run sees it: why, and when it lifts by itself (if known). */
export interface HostPause {
  kind: string;
  reason: string;
  resetAt?: string;
}

export interface StepSpawn {
  agent: string;
  prompt: string;
  model?: string;
  reasoning?: string;
  /** The SSH host its child runs on (`muster hosts add`), or `any` (default: this machine). */
  on?: string;
  /** Or a container of its own: an image's name, or the container's fields (a step's `container`). */
  container?: ContainerRequest;
  /** The child's working directory (default: the primary's). */
  cwd?: string;
  /** The acceptance check every answer of its child must pass (a step's `verify`). */
  verify?: VerifyRequest;
  /** A JSON Schema the runner's CLI enforces on the answer (only when `nativeOutput` said yes). */
  outputSchema?: object;
  /** `on-lost[:N]`: its turn is restarted when its host or agent dies. */
  restart?: string;
}

/**
 * What the workflow engine needs from muster, and nothing more: the engine is written against this seam so a
 * change inside the core touches only the adapter below. Every step is a real child (pane, artifact dir,
 * session), so the primary's run-slot bound, lineage limits and budget apply to it as to any other.
 */
export interface WorkflowHost {
  /** Names of the agent profiles a spawn here can use. */
  agents(): Set<string>;
  /** Whether this agent's runner enforces this JSON Schema natively (absent: never; the prompt asks instead). */
  nativeOutput?(agent: string, schema: object): boolean;
  /** How many steps a run keeps in flight by default: the primary's run slots (more would only queue in hosts). */
  concurrency?(): number;
  /** The primary's state directory (created if needed); workflow runs live under `<dir>/workflows/`. */
  stateDir(): string;
  /** Starts a child with its first turn queued; returns at once. Throws (nothing created) when refused. */
  spawn(opts: StepSpawn): Promise<{ id: string; turnId: string }>;
  /**
   * Starts a best-of run of a step: `n` candidates (or one per agent of `agents`) on the prompt, each in a
   * worktree of its own; returns at once. Throws (nothing created) when refused. Absent: no best-of steps.
   */
  bestOf?(
    opts: StepSpawn & { n?: number; agents?: string[] },
  ): Promise<{ group: string; candidates: Candidate[] }>;
  /** Waits for every candidate of a best-of run to settle; each one's outcome, in run order. */
  waitCandidates?(group: string, candidates: Candidate[]): Promise<StepOutcome[]>;
  /** Has `agent` pick the winner of a settled best-of run: the winner's id and why, or why there is none. */
  judge?(group: string, agent: string): Promise<{ winner: string; reasoning: string } | { reason: string }>;
  /** Queues the next turn of a child still open (a structured worker's corrective retry). Throws when refused. */
  send(id: string, prompt: string): Promise<{ turnId: string }>;
  /** Waits for that turn to settle; never throws for a failed child (its failure is the outcome). */
  wait(id: string, turnId: string): Promise<StepOutcome>;
  /** The tree's pause in force (a provider refused a turn: quota, credential), if any. Absent: never paused. */
  treePause?(): HostPause | undefined;
  /**
   * Cancels these children (and their panes); unknown ids are ignored. `closeReason`: an idle one is closed
   * for this reason (its step is done), which its end record gives instead of "closed by muster cancel".
   */
  cancel(ids: string[], closeReason?: string): Promise<void>;
  /**
   * A step's child has given its answer and the run needs nothing more from it: its pane and host end (its
   * artifacts and conversation stay, so `spawn --resume` continues it), unless the run keeps its children.
   * Never throws. Without it (a host of one's own) children stay open.
   */
  release?(id: string): Promise<void>;
}

/** One candidate of a best-of step: its child, the turn that carries the task, its agent. */
export interface Candidate {
  id: string;
  turnId: string;
  agent: string;
}

/** What a step's child and a best-of step's candidates are started with alike: the task and where it runs. */
function shared(o: StepSpawn) {
  return {
    prompt: o.prompt,
    ...(o.model ? { model: o.model } : {}),
    ...(o.reasoning ? { reasoning: o.reasoning } : {}),
    ...(o.cwd ? { cwd: o.cwd } : {}),
    ...(o.on ? { on: o.on } : {}),
    ...(o.container ? { container: o.container } : {}),
    ...(o.verify ? { verify: o.verify } : {}),
    ...(o.restart !== undefined ? { restart: o.restart } : {}),
  };
}

/** Why a step's child is closed once the run needs nothing more from it. */
export const STEP_SETTLED = "closed: its workflow step settled";

/** How the run treats its steps' children. */
export interface HostOptions {
  /** Leave each step's child open (idle in its pane) after its step settles, to attach to or send follow-ups. */
  keep?: boolean;
}

/**
 * The WorkflowHost over the public library API (`createMuster()`). A step's child is closed once its step has
 * settled (unless `keep`): a run of many steps would otherwise leave as many idle hosts and panes, each
 * counting toward the live-children limit.
 */
export function musterHost(m: Muster, opts: HostOptions = {}): WorkflowHost {
  const cancel = async (ids: string[], closeReason?: string): Promise<void> => {
    const known = new Set(Object.keys(m.registry.read().children));
    const mine = ids.filter((i) => known.has(i));
    if (mine.length > 0) await m.cancelMany(mine, closeReason ? { closeReason } : {});
  };
  const outcomeOf = (r: TurnResult | undefined): StepOutcome =>
    r
      ? {
          status: r.status,
          ...(r.reason ? { reason: r.reason } : {}),
          ...(r.text !== undefined ? { text: r.text } : {}),
          ...(r.providerError ? { providerError: r.providerError } : {}),
        }
      : { status: "lost", reason: "the wait ended without a result" };
  return {
    agents: () => new Set(m.agents().agents.map((a) => a.profile.name)),
    nativeOutput: (agent, schema) => {
      try {
        const profile = m.agents().agents.find((a) => a.profile.name === agent)?.profile;
        const runner = profile ? getRunner(profile.runner) : undefined;
        return !!runner?.nativeSchema?.(schema);
      } catch {
        // Profiles that cannot be read now: the instructed way works with any runner (the spawn will say why it fails).
        return false;
      }
    },
    concurrency: () => m.limits.maxRunning,
    stateDir: () => {
      m.claimPrimary();
      return m.paths.dir;
    },
    spawn: async (o) => {
      const spec = {
        agent: o.agent,
        ...shared(o),
        ...(o.outputSchema ? { outputSchema: o.outputSchema } : {}),
      };
      // A multiplexer that fails one call (a loaded machine, a server coming up) fails a spawn that made
      // nothing (a failed spawn removes what it made): the step tries once more before it errors.
      const r = await m.spawn(spec).catch((e: unknown) => {
        if ((e as { code?: string }).code !== "mux_unavailable") throw e;
        return m.spawn(spec);
      });
      return { id: r.id, turnId: r.turnId };
    },
    bestOf: async (o) => {
      const started = await m.bestOf({
        ...shared(o),
        ...(o.n !== undefined ? { n: o.n } : {}),
        ...(o.agents ? { agents: o.agents } : { agent: o.agent }),
      });
      return {
        group: started.group,
        candidates: started.children.map((c) => ({ id: c.id, turnId: c.turnId, agent: c.agent })),
      };
    },
    waitCandidates: async (group, candidates) => {
      try {
        const out = await m.waitBestOf(group, { withText: true });
        return candidates.map((c) => outcomeOf(out.results.find((r) => r.id === c.id)));
      } catch (e) {
        return candidates.map(() => ({ status: "errored", reason: (e as Error).message }));
      }
    },
    judge: async (group, agent) => {
      const j = await m.judge(group, agent);
      return j.recorded ? { winner: j.verdict.winner, reasoning: j.verdict.reasoning } : { reason: j.reason };
    },
    send: async (id, prompt) => ({ turnId: (await m.send(id, prompt)).turnId }),
    wait: async (id, turnId) => {
      try {
        const out = await m.wait([id], { turns: new Map([[id, turnId]]), withText: true });
        return outcomeOf(out.results[0]);
      } catch (e) {
        // An unreadable or tampered snapshot is this step's failure, not the run's.
        return { status: "errored", reason: (e as Error).message };
      }
    },
    treePause: () => m.treePause(),
    cancel,
    release: async (id) => {
      if (opts.keep) return;
      try {
        // Only an idle child: a follow-up someone sent it meanwhile is theirs, not the run's to cancel.
        if ((await m.view(id)).status === "idle") await cancel([id], STEP_SETTLED);
      } catch {
        // Gone or unreadable: nothing to close.
      }
    },
  };
}
