/**
 * How a child's turns run, chosen once by the host from the child's runner mode: `oneshot` (a process per turn,
 * the runner's plan), `session` (one long-lived agent process driven over its protocol, session-turn.ts) or
 * `tui` (the CLI's own TUI under a pty, tui-turn.ts). A turn asks its engine only whether it takes this turn.
 */
import type { EventLog } from "../artifacts/log.js";
import { setting } from "../base/settings/resolve.js";
import type { Runner, TurnInput } from "../runners/types.js";
import type { TurnState } from "./messages.js";
import type { PaneRenderer } from "./render.js";
import type { Outcome } from "./run-plan.js";
import type { TurnControl } from "./turn-control.js";

export type RunnerMode = "session" | "oneshot" | "tui";

/** The child's runner mode: the profile's, else MUSTER_RUNNER_MODE, else session. */
export function runnerModeOf(profileMode: RunnerMode | undefined, env: Record<string, string>): RunnerMode {
  if (profileMode) return profileMode;
  return setting(env, "runnerMode") === "oneshot" ? "oneshot" : "session";
}

/** What a turn on the engine's process is handed besides its input (whose prompt and turnId it runs). */
export interface LiveTurnRun {
  deps: { log: EventLog; render: PaneRenderer };
  control: TurnControl;
  state: TurnState;
  /** The conversation so far as text, for a new process whose agent did not reload it. */
  earlier: () => string;
}

/** A turn on a process the engine keeps across turns: it settles with nothing left to reap. */
export type LiveTurn = (run: LiveTurnRun) => Promise<Outcome>;

export interface TurnEngine {
  /** This turn on the engine's own agent process, or undefined: the runner's one-shot plan runs it. */
  liveTurn(runner: Runner, input: TurnInput): LiveTurn | undefined;
  /** The host is exiting: nothing the engine started may outlive it. */
  killNow(): void;
}

/** Runner mode `oneshot`: every turn is the runner's one-shot plan, nothing lives between turns. */
export const ONE_SHOT_ENGINE: TurnEngine = {
  liveTurn: () => undefined,
  killNow: () => {},
};
