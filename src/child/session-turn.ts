/**
 * Turns on a long-lived agent process (runner mode `session`): the host keeps one LiveSession per child and
 * hands each turn to it; a turn the session cannot take (another model, the process died) gets a new process
 * that reloads the conversation.
 */
import { failureOf } from "../runners/acp/updates.js";
import type { AgentMessage, Runner, SessionSpec, TurnInput } from "../runners/types.js";
import { transcriptPrompt } from "../sessions/store.js";
import { LiveSession, SessionOpenError, specKey } from "./live-session.js";
import { firstLine, turnMessages } from "./messages.js";
import type { PermissionBroker } from "./permissions.js";
import { decide, decideLiveTurn, finalResult, missingDir, type Outcome } from "./run-plan.js";
import type { LiveTurn, LiveTurnRun, TurnEngine } from "./turn-engine.js";

/** What may share a process: everything but the session to reload and the first prompt's preamble. */
const shareKey = (spec: SessionSpec): string => specKey(spec);

/** Runner mode `session`: one live agent process across turns, replaced when a turn's settings differ. */
export class SessionEngine implements TurnEngine {
  private live: LiveSession | undefined;
  private liveKey: string | undefined;

  constructor(private readonly permissions: PermissionBroker) {}

  liveTurn(runner: Runner, input: TurnInput): LiveTurn | undefined {
    // A schema-enforced answer is the one-shot CLI's flag (--json-schema, --output-schema): such a turn runs one-shot.
    if (!runner.session || input.outputSchema) return undefined;
    const spec = runner.session(input);
    if (!spec) return undefined;
    // A conversation this process did not start, on a CLI that cannot reload it over the protocol: one-shot.
    if (spec.resume && spec.reloads === false && !this.live?.alive) return undefined;
    return (run) => this.turn(spec, input, run);
  }

  private async turn(
    spec: SessionSpec,
    { turnId, prompt }: TurnInput,
    { deps, control, state, earlier }: LiveTurnRun,
  ): Promise<Outcome> {
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
    const stoppedOrFailed = () => control.reason !== undefined || control.failure !== undefined;
    // The process gone mid-turn with no answer and no stop: the agent died (a restart policy may run it again).
    const died = (): Outcome => ({
      status: "errored",
      reason: live.endedWith ?? "the agent process ended",
      exitCode: null,
      signal: null,
      died: true,
    });
    let end: Awaited<ReturnType<typeof live.prompt>>;
    try {
      end = await live.prompt(turnId, text, onMessage, control);
    } catch (e) {
      if (live.alive || stoppedOrFailed()) throw e;
      this.live = undefined;
      return died();
    }
    if (end.exited) this.live = undefined;
    if (end.exited && !stoppedOrFailed() && !finalResult(control, state)) return died();
    return decideLiveTurn(control, state, end.stderrTail, spec.argv[0]!);
  }

  /** Ends the process (TERM, then KILL) and waits for it. */
  private async close(): Promise<void> {
    const live = this.live;
    this.live = undefined;
    if (!live) return;
    live.kill();
    await live.whenExited();
  }

  killNow(): void {
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
