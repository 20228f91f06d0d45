/**
 * Turns on the agent CLI's own TUI (runner mode `tui`): one TUI process under a pty in this host, proxied to
 * the pane, kept across turns. Turn boundaries come from the CLI's hooks (runners/tui/), appended by our hook
 * command to a file in the child's runner folder and read here from a byte cursor — never from the screen.
 * What the TUI is doing is a phase (tui-state.ts) this holder moves with what it hears. A turn muster sends
 * is pasted into the TUI only while it is idle, and its submit is verified by the start hook (tui-submit.ts);
 * a line a person types in the pane starts a turn of its own (the start hook arrives with no send waiting: an
 * inbox item is written for it, the host records it like any other).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { writeInboxItem } from "../artifacts/inbox.js";
import type { EventLog } from "../artifacts/log.js";
import { setting } from "../base/settings/resolve.js";
import { tuiAdapter } from "../runners/tui/registry.js";
import type { TuiAdapter, TuiSignal } from "../runners/tui/types.js";
import type { AgentMessage, Runner, TurnInput } from "../runners/types.js";
import { uuidv7 } from "../util/ids.js";
import { PACKAGE_ROOT } from "../util/pkg.js";
import { DirWatch } from "./dir-watch.js";
import { turnMessages } from "./messages.js";
import type { PaneRenderer } from "./render.js";
import { decideLiveTurn, missingDir, type Outcome } from "./run-plan.js";
import { DialogQuestion } from "./tui-dialog.js";
import { HookFileReader } from "./tui-hooks.js";
import type { TuiPty } from "./tui-pty.js";
import {
  type Heard,
  heardInRun,
  INTERRUPT_CHECK_MS,
  INTERRUPT_KEY_GAP_MS,
  INTERRUPT_REPORT_MS,
  INTERRUPT_SETTLE_MS,
  READY_TIMEOUT_MS,
  SESSION_ID,
  SLOW_START_MS,
  SUBMIT_TIMEOUT_MS,
  type TuiLimits,
  type TuiRun,
  type Waiter,
} from "./tui-run.js";
import { TUI_CLOSED, type TuiEvent, type TuiState, tuiStep } from "./tui-state.js";
import { submitPrompt } from "./tui-submit.js";
import { TURN_ONLY_STOPS, type TurnControl } from "./turn-control.js";
import type { LiveTurn, LiveTurnRun, TurnEngine } from "./turn-engine.js";

/** The turn a TUI runs: the CLI's adapter and the turn's input. */
interface TuiTurnSpec {
  adapter: TuiAdapter;
  input: TurnInput;
}

/** Runner mode `tui`: every turn goes to the agent's own TUI, one process kept across turns. */
export class TuiEngine implements TurnEngine {
  private pty: TuiPty | undefined;
  private watch: DirWatch | undefined;
  /** What the TUI is doing; only `step` moves it. */
  private state: TuiState = TUI_CLOSED;
  private sessionId: string | undefined;
  private transcript: string | undefined;
  private readonly waiters = new Set<Waiter>();
  /** Runs a person started, by the turn id their inbox item got. */
  private readonly typed = new Map<string, TuiRun>();
  /** The run going on now (its stop record completes it). */
  private current: TuiRun | undefined;
  /** The run muster's paste started, once its start record arrived. */
  private submitted: TuiRun | undefined;
  private exitWhy: string | undefined;
  private limits: TuiLimits = {
    slowStartMs: SLOW_START_MS,
    readyMs: READY_TIMEOUT_MS,
    submitMs: SUBMIT_TIMEOUT_MS,
  };

  constructor(
    private readonly deps: { log: EventLog; render: PaneRenderer; inbox: string; runnerDir: string },
  ) {
    this.hooks = new HookFileReader(path.join(deps.runnerDir, "tui-hooks.ndjson"));
    this.dialog = new DialogQuestion(deps.log);
  }

  private readonly hooks: HookFileReader;
  private readonly dialog: DialogQuestion;

  /** Every turn, on the TUI this runner has; a runner without one cannot be in this mode (spawn refuses it first). */
  liveTurn(runner: Runner, input: TurnInput): LiveTurn {
    const adapter = tuiAdapter(runner.name);
    if (!adapter) throw new Error(`runner "${runner.name}" has no TUI mode (mode: tui)`);
    return (run) => this.turn({ adapter, input }, run);
  }

  private async open(spec: TuiTurnSpec, turnId: string): Promise<TuiPty> {
    // node-pty (native) and the terminal model load only in this mode: every other host starts without them.
    const { TuiPty } = await import("./tui-pty.js");
    const env = spec.input.env;
    this.limits = {
      slowStartMs: setting(env, "tuiSlowStartMs"),
      readyMs: setting(env, "tuiReadyTimeoutMs"),
      submitMs: setting(env, "tuiSubmitTimeoutMs"),
    };
    fs.mkdirSync(this.deps.runnerDir, { recursive: true, mode: 0o700 });
    this.hooks.skipToEnd();
    // A new process: nothing of the last one's runs carries over.
    this.step({ type: "opened" });
    this.current = undefined;
    this.exitWhy = undefined;
    // The hook command runs a copy in the child's runner folder, not the one in the package: codex 0.171 dropped
    // every hook record after a sandbox escalation when the script lay inside a git checkout (seen here with a
    // clean clone; a worktree or a plain folder was fine). hook.js imports nothing, so the copy runs alone.
    const hookScript = path.join(this.deps.runnerDir, "muster-hook.js");
    fs.rmSync(hookScript, { force: true }); // a fresh file, never written through whatever lay there
    fs.copyFileSync(
      path.join(PACKAGE_ROOT, "dist", "runners", "tui", "hook.js"),
      hookScript,
      fs.constants.COPYFILE_EXCL,
    );
    const launch = spec.adapter.launch(
      spec.input,
      { file: this.hooks.file, command: (event) => [process.execPath, hookScript, this.hooks.file, event] },
      spec.input.runnerSessionId ?? this.sessionId,
    );
    this.watch ??= new DirWatch(this.deps.runnerDir, () => {
      for (const line of this.hooks.read()) {
        const signal = spec.adapter.signal(line);
        if (signal) this.onSignal(signal);
      }
    });
    // From here on the pane belongs to the TUI: the host's own lines would garble its screen.
    this.deps.render.mute(true);
    const pty = new TuiPty(launch, (why) => {
      this.exitWhy = why;
      this.pty = undefined;
      this.step({ type: "exited" });
      this.deps.render.mute(false);
      this.deps.render.info(why);
      for (const w of [...this.waiters]) w({ kind: "exit", why });
    });
    this.pty = pty;
    this.deps.log.append({ type: "runner_started", turnId, pid: pty.pid, argv0: launch.argv[0]! });
    return pty;
  }

  private onSignal(s: TuiSignal): void {
    // The id goes back to the CLI as an argv word (--resume <id>): only an id's characters, never an option.
    if (s.sessionId && SESSION_ID.test(s.sessionId)) this.sessionId = s.sessionId;
    if ("transcript" in s && s.transcript) this.transcript = s.transcript;
    if (s.kind === "ready") {
      this.step({ type: "ready", at: Date.now(), settleMs: s.settleMs ?? 0 });
    } else if (s.kind === "start") {
      this.step({ type: "start" });
      const run: TuiRun = { start: s, transcriptFrom: this.transcriptSize(), pending: [] };
      this.current = run;
      if (this.state.by === "muster") this.submitted = run;
      else this.adoptTyped(run);
    } else if (s.kind === "stop") {
      this.step({ type: "stop" });
      const run = this.current;
      this.current = undefined;
      if (run) heardInRun(run, s);
    } else if (this.current) heardInRun(this.current, s);
    for (const w of [...this.waiters]) w(s);
  }

  private step(e: TuiEvent): void {
    this.state = tuiStep(this.state, e);
  }

  /** A prompt nobody sent through muster (typed in the pane): it becomes a turn through the inbox. */
  private adoptTyped(run: TuiRun): void {
    const turnId = uuidv7();
    this.typed.set(turnId, run);
    writeInboxItem(this.deps.inbox, {
      v: 1,
      turnId,
      prompt: run.start.prompt ?? "",
      source: "typed",
      createdAt: new Date().toISOString(),
    });
  }

  private transcriptSize(): number {
    try {
      return this.transcript ? fs.statSync(this.transcript).size : 0;
    } catch {
      return 0;
    }
  }

  /** Resolves with the first signal `want` accepts, the TUI's exit, the turn's stop (halt), or undefined after `ms`. */
  private next(want: (s: TuiSignal) => boolean, ms: number): Promise<Heard | undefined> {
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (v: Heard | undefined): void => {
        clearTimeout(timer);
        this.waiters.delete(w);
        resolve(v);
      };
      const w: Waiter = (s) => {
        if (s.kind === "exit" || s.kind === "halt" || want(s)) done(s);
      };
      this.waiters.add(w);
      if (ms < Number.POSITIVE_INFINITY) timer = setTimeout(() => done(undefined), ms);
    });
  }

  private async turn(spec: TuiTurnSpec, { deps, control, state }: LiveTurnRun): Promise<Outcome> {
    const { turnId, prompt } = spec.input;
    const argv0 = spec.adapter.runner;
    const gone = missingDir(spec.input.cwd);
    if (gone) return { status: "errored", reason: gone, exitCode: null, signal: null };
    const record = turnMessages(deps, turnId, state, () => {});
    const onMessage = (m: AgentMessage): void => {
      record(m);
      control.onMessage?.(m);
    };
    const typed = this.typed.get(turnId);
    this.typed.delete(turnId);
    let fail: string | undefined;
    let run: TuiRun | undefined = typed;
    if (typed) {
      if (this.pty) deps.log.append({ type: "runner_started", turnId, pid: this.pty.pid, argv0 });
      this.stopsWith(control, spec.adapter);
    } else {
      let pty = this.pty;
      try {
        if (!pty) pty = await this.open(spec, turnId);
        else deps.log.append({ type: "runner_started", turnId, pid: pty.pid, argv0 });
      } catch (e) {
        return { status: "errored", reason: (e as Error).message, exitCode: null, signal: null };
      }
      this.stopsWith(control, spec.adapter);
      const sent = await this.submit(pty, spec.adapter, turnId, prompt, control);
      if (typeof sent === "string") fail = sent;
      else run = sent;
    }
    if (run) {
      for (const m of run.pending.splice(0)) onMessage(m);
      run.listen = onMessage;
    }
    // The run's stop record may be in already (read together with its start): state first, then wait. The
    // agent's own work has no deadline here, as in every mode: the turn's caps (time, idle) bound it.
    while (run && !run.stop && this.pty && !control.reason && !control.failure) {
      await this.next((s) => s.kind === "stop", INTERRUPT_CHECK_MS);
      if (!run.stop) await this.chooseStop(spec.adapter, run, deps.log, turnId);
      if (!run.stop && this.interruptedInPane(spec.adapter, run)) break;
      if (!run.stop && this.failedInTranscript(spec.adapter, run)) break;
    }
    // A late record of this run (after an interrupt) is no longer this turn's.
    if (run) run.listen = undefined;
    const stop = run?.stop;
    const from = run?.transcriptFrom ?? 0;
    if (run && !control.reason && !control.failure && (run.interrupted || stop?.interrupted))
      return { status: "interrupted", reason: "interrupted in the pane", exitCode: null, signal: null };
    const failure = stop?.failure ?? run?.failure;
    if (run && !stop && !failure && !control.reason && !control.failure)
      fail = this.exitWhy ?? "the agent's TUI ended before the turn did";
    if (this.sessionId) onMessage({ type: "session", id: this.sessionId });
    if (failure) {
      // The provider refused the run (a quota, a rate limit, a refused key): the turn failed, whatever it said.
      const { reason, providerError } = failure;
      onMessage({ type: "result", status: "errored", reason, ...(providerError ? { providerError } : {}) });
    } else if (stop) {
      const file = stop.transcript ?? this.transcript;
      const read =
        !stop.usage && file && spec.adapter.transcript
          ? await this.readTranscript(spec.adapter, file, from)
          : {};
      const usage = stop.usage ?? read.usage;
      if (usage) onMessage({ type: "usage", usage });
      const answer = stop.answer ?? read.answer ?? "";
      onMessage({ type: "result", status: "completed", text: answer });
    }
    return decideLiveTurn(control, state, "", argv0, fail);
  }

  /**
   * A menu mid-run that waits for a person and ends the run either way (Gemini's quota menu): muster picks
   * its stop choice, once a run, so the run ends with the provider's error and the turn settles with it.
   */
  private async chooseStop(adapter: TuiAdapter, run: TuiRun, log: EventLog, turnId: string): Promise<void> {
    const pty = this.pty;
    if (!adapter.stopChoice || !pty || run.stopChosen) return;
    const found = adapter.stopChoice(await pty.screen());
    if (!found) return;
    run.stopChosen = true;
    pty.write(found.keys);
    log.append({
      type: "progress",
      turnId,
      text: `the agent's TUI asked "${found.says}": muster chose "${found.choice}", so the run ends with the provider's error`,
    });
  }

  /** A person interrupted the run in the TUI and the CLI said so only in its transcript: the run is over. */
  private interruptedInPane(adapter: TuiAdapter, run: TuiRun): boolean {
    const file = run.start.transcript ?? this.transcript;
    if (!file || !adapter.interrupted?.(file, run.transcriptFrom)) return false;
    run.interrupted = true;
    if (this.current === run) {
      this.current = undefined;
      this.step({ type: "interrupted-in-pane" });
    }
    return true;
  }

  /** The CLI wrote the API error that ended the run only to its transcript: the run is over, failed. */
  private failedInTranscript(adapter: TuiAdapter, run: TuiRun): boolean {
    const file = run.start.transcript ?? this.transcript;
    const failure = file ? adapter.failure?.(file, run.transcriptFrom) : undefined;
    if (!failure) return false;
    run.failure = failure;
    if (this.current === run) {
      this.current = undefined;
      this.step({ type: "stop" });
    }
    return true;
  }

  /** The transcript may lag the Stop hook by a moment: read it again briefly until the turn's reply is there. */
  private async readTranscript(adapter: TuiAdapter, file: string, from: number) {
    let read = adapter.transcript!(file, from);
    for (let i = 0; i < 10 && !read.usage; i++) {
      await new Promise((r) => setTimeout(r, 100));
      read = adapter.transcript!(file, from);
    }
    return read;
  }

  /** A stop of the whole child ends the TUI's process group; one that ends only the turn is the TUI's Escape. */
  private stopsWith(control: TurnControl, adapter: TuiAdapter): void {
    control.onStop(() => {
      if (control.reason && TURN_ONLY_STOPS.includes(control.reason)) {
        // Escape interrupts the TUI's turn. Pi then reports its end (agent_end), Claude Code reports none: the
        // TUI counts as busy until that record, or a moment without one (see INTERRUPT_SETTLE_MS).
        const [first, ...more] = adapter.interruptKeys ?? ["\x1b"];
        this.pty?.write(first ?? "\x1b");
        // Apart, as a person presses them: two Escapes in one read are Alt+Escape to a TUI.
        for (const [i, key] of more.entries())
          setTimeout(() => this.pty?.write(key), (i + 1) * INTERRUPT_KEY_GAP_MS);
        const settleMs = adapter.interruptReportsEnd ? INTERRUPT_REPORT_MS : INTERRUPT_SETTLE_MS;
        this.step({ type: "interrupt", at: Date.now(), settleMs });
        this.current = undefined;
      } else void this.pty?.kill();
      for (const w of [...this.waiters]) w({ kind: "halt" });
    });
  }

  /** Sends the prompt into the TUI (child/tui-submit.ts): the run it started, why it failed, or undefined (stopped). */
  private submit(
    pty: TuiPty,
    adapter: TuiAdapter,
    turnId: string,
    prompt: string,
    control: TurnControl,
  ): Promise<TuiRun | string | undefined> {
    this.submitted = undefined;
    const { log } = this.deps;
    return submitPrompt(
      {
        pty,
        adapter,
        turnId,
        control,
        log,
        dialog: this.dialog,
        limits: this.limits,
        state: () => this.state,
        step: (e) => this.step(e),
        next: (want, ms) => this.next(want, ms),
        taken: () => this.submitted,
      },
      prompt,
    );
  }

  /** The host is exiting: nothing it started may outlive it. */
  killNow(): void {
    this.watch?.close();
    this.pty?.killNow();
  }
}
