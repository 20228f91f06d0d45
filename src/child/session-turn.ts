/**
 * Turns on a long-lived agent process (runner mode `session`): the host keeps one LiveSession per child and
 * hands each turn to it; a turn the session cannot take (another model, the process died) gets a new process
 * that reloads the conversation.
 */
import type { EventLog } from "../artifacts/log.js";
import { setting } from "../base/settings/resolve.js";
import { failureOf } from "../runners/acp/updates.js";
import type { AgentMessage, Runner, SessionSpec, TurnInput } from "../runners/types.js";
import { transcriptPrompt } from "../sessions/store.js";
import { LiveSession, SessionOpenError, specKey } from "./live-session.js";
import { firstLine, type TurnState, turnMessages } from "./messages.js";
import type { PermissionBroker } from "./permissions.js";
import type { PaneRenderer } from "./render.js";
import { decide, decideLiveTurn, missingDir, type Outcome } from "./run-plan.js";
import type { TuiHolder, TuiTurnSpec } from "./tui-turn.js";
import type { TurnControl } from "./turn-control.js";

export type RunnerMode = "session" | "oneshot" | "tui";

/** The child's runner mode: the profile's, else MUSTER_RUNNER_MODE, else session. */
export function runnerModeOf(profileMode: RunnerMode | undefined, env: Record<string, string>): RunnerMode {
  if (profileMode) return profileMode;
  return setting(env, "runnerMode") === "oneshot" ? "oneshot" : "session";
}

/** What may share a process: everything but the session to reload and the first prompt's preamble. */
const shareKey = (spec: SessionSpec): string => specKey(spec);

export class SessionHolder {
  private live: LiveSession | undefined;
  private liveKey: string | undefined;

  constructor(
    private readonly mode: RunnerMode,
    private readonly permissions: PermissionBroker,
    /** The agent's own TUI in the pane (mode tui): every turn goes to it. */
    private readonly tui?: TuiHolder,
  ) {}

  /** The session this turn runs on, or undefined: one-shot (the mode, or a CLI or input without one). */
  specFor(runner: Runner, input: TurnInput): SessionSpec | TuiTurnSpec | undefined {
    if (this.mode === "tui" && this.tui) return this.tui.specFor(runner, input);
    // A schema-enforced answer is the one-shot CLI's flag (--json-schema, --output-schema): such a turn runs one-shot.
    if (this.mode === "oneshot" || !runner.session || input.outputSchema) return undefined;
    const spec = runner.session(input);
    // A conversation this process did not start, on a CLI that cannot reload it over the protocol: one-shot.
    if (spec?.resume && spec.reloads === false && !this.live?.alive) return undefined;
    return spec;
  }

  async turn(
    deps: { log: EventLog; render: PaneRenderer },
    turnId: string,
    spec: SessionSpec | TuiTurnSpec,
    prompt: string,
    control: TurnControl,
    state: TurnState,
    /** The conversation so far as text, for a new process whose agent did not reload it. */
    earlier: () => string = () => "",
  ): Promise<Outcome> {
    // The child's mode picks the kind of spec, as in specFor: in mode tui every spec is the TUI's.
    if (this.mode === "tui" && this.tui)
      return this.tui.turn(deps, turnId, spec as TuiTurnSpec, prompt, control, state);
    spec = spec as SessionSpec;
    const gone = missingDir(spec.cwd);
    if (gone) return { status: "errored", reason: gone, exitCode: null, signal: null };
    const key = shareKey(spec);
    if (this.live && (!this.live.alive || this.liveKey !== key)) {
      // Another model or settings: this process ends, the next one reloads the conversation.
      if (this.live.alive)
        deps.render.info("the agent's settings changed: a new process continues the session");
      await this.close();
    }
    const record = turnMessages(deps, turnId, state, () => {});
    // The host's caps see every message once it is recorded.
    const onMessage = (m: AgentMessage): void => {
      record(m);
      control.onMessage?.(m);
    };
    let fresh = false;
    let lostHistory = false;
    // A process started for this turn records its own runner_started.
    let opened = false;
    if (!this.live) {
      try {
        this.live = await LiveSession.open(spec, deps, turnId, this.permissions, control);
        this.liveKey = key;
        opened = true;
        // A session other than the one to continue: the agent could not reload it (or never could).
        lostHistory = spec.resume !== undefined && this.live.id !== spec.resume;
        fresh = !spec.resume || lostHistory;
      } catch (e) {
        // Stopped while it started (a cap, a cancel): the turn ends for that reason, not as a broken start.
        if (control.reason) return decide(control, undefined, undefined, null, null, "", spec.argv[0]!);
        return openFailure(e);
      }
    }
    const live = this.live;
    // Every turn says which process runs it (the same pid across a session's turns): a turn that ran counts
    // for the budget and caps, and its process group is what a cancel stops.
    if (!opened && live.pid !== undefined)
      deps.log.append({ type: "runner_started", turnId, pid: live.pid, argv0: spec.argv[0]! });
    if (live.id) onMessage({ type: "session", id: live.id });
    const request = lostHistory ? transcriptPrompt(earlier(), prompt) : prompt;
    const text = fresh && spec.preamble ? `${spec.preamble}\n\n---\n\n${request}` : request;
    const end = await live.prompt(turnId, text, onMessage, control);
    if (end.exited) this.live = undefined;
    return decideLiveTurn(control, state, end.stderrTail, spec.argv[0]!);
  }

  /** Ends the process (TERM, then KILL) and waits for it. */
  async close(): Promise<void> {
    await this.tui?.close();
    const live = this.live;
    this.live = undefined;
    if (!live) return;
    live.kill();
    await live.whenExited();
  }

  /** The host is exiting: nothing it started may outlive it. */
  killNow(): void {
    this.tui?.killNow();
    this.live?.killNow();
  }
}

/**
 * A session that did not open: the agent's error with its detail (an RPC error's data), its last stderr line
 * when the error does not already end with it, and its stderr until then (kept in the completion).
 */
function openFailure(e: unknown): Outcome {
  const opened = e instanceof SessionOpenError ? e : undefined;
  const why = failureOf(opened ? opened.cause : e);
  const stderr = opened?.stderr.trim() ?? "";
  const last = firstLine(
    stderr
      .split("\n")
      .filter((l) => l.trim())
      .pop() ?? "",
  );
  const reason = last && !why.includes(last) ? `${why} (stderr: ${last})` : why;
  return { status: "errored", reason, exitCode: null, signal: null, ...(stderr ? { stderr } : {}) };
}
