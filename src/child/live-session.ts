/**
 * A long-lived agent process for one child (runner mode `session`): started once, kept across turns, each turn
 * a prompt on the same process through its protocol's driver (ACP, Pi RPC: runners/session-driver.ts). The turn
 * settles on the protocol's end of turn (no process exit in the path); the CLI's own session id is recorded so
 * a new process (after a host or tmux death, or a change of model) continues the same conversation.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { droppedLineNote, LineSplitter } from "../artifacts/lines.js";
import type { EventLog } from "../artifacts/log.js";
import { sessionDriver } from "../runners/session-driver.js";
import type { AgentMessage, SessionDriver, SessionSpec } from "../runners/types.js";
import { groupAlive, signalGroup, terminateGroup } from "../util/process-group.js";
import { firstLine } from "./messages.js";
import type { PermissionBroker } from "./permissions.js";
import type { PaneRenderer } from "./render.js";
import { STOP_STATUS } from "./run-plan.js";
import { TURN_ONLY_STOPS, type TurnControl } from "./turn-control.js";

const MAX_LINE = 16 * 1024 * 1024;
// The agent's last stderr kept: the last line names an exit, all of it goes with a failed start.
const STDERR_KEEP = 4096;
// After an interrupt, the agent has this long to end the turn before its process is killed.
const CANCEL_GRACE_MS = 10_000;

/** Why a turn on a live session ended, before the host's stop reason and failures are weighed. */
export interface SessionTurnEnd {
  /** The process is gone (it died, or was killed to stop the turn). */
  exited: boolean;
  stderrTail: string;
}

export class LiveSession {
  private readonly child: ChildProcess;
  private readonly driver: SessionDriver;
  private sessionId: string | undefined;
  private inTurn = false;
  /** Before the first prompt (initialize, session/new or load). */
  private opening = true;
  /** The turn running now (a permission request belongs to it). */
  private turnId: string;
  private stderrTail = "";
  private exitedWith: string | undefined;
  private cancelTimer: NodeJS.Timeout | undefined;
  private readonly exited: Promise<void>;
  /** The process is gone and its pipes are drained. */
  private readonly closed: Promise<void>;

  private constructor(
    readonly spec: SessionSpec,
    deps: { log: EventLog; render: PaneRenderer },
    turnId: string,
    private readonly permissions: PermissionBroker,
  ) {
    this.turnId = turnId;
    const argv = spec.resume && spec.resumeArgs ? [...spec.argv, ...spec.resumeArgs] : spec.argv;
    const [cmd, ...args] = argv;
    // detached: the agent leads its own process group, so stopping it reaches everything it started.
    this.child = spawn(cmd!, args, {
      cwd: spec.cwd,
      env: { ...spec.env, PWD: spec.cwd },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    this.driver = sessionDriver(spec, {
      write: (line) => this.child.stdin!.write(line),
      info: (text) => deps.render.info(text),
      askPermission: (tool, summary) => this.permissions.ask(this.turnId, tool, summary),
      opened: ({ warnings, ...offer }) => {
        for (const w of warnings) deps.render.info(`warning: ${w}`);
        deps.log.append({
          type: "agent_session",
          turnId: this.turnId,
          ...offer,
          ...(warnings.length ? { warnings } : {}),
        });
      },
    });
    const lines = new LineSplitter(MAX_LINE, (bytes) => {
      deps.render.info(`(dropped a ${bytes}-byte line)`);
      // On the record too, so status, logs and the turn's events say the answer may lack what that line held.
      deps.log.append({ type: "progress", turnId: this.turnId, text: droppedLineNote(bytes, MAX_LINE) });
    });
    this.child.stdout!.on("data", (chunk: Buffer) => {
      for (const l of lines.push(chunk)) {
        const text = l.toString("utf8");
        if (!this.driver.line(text) && text.trim()) deps.render.raw(text);
      }
    });
    this.child.stderr!.on("data", (chunk: Buffer) => {
      const s = chunk.toString("utf8");
      this.stderrTail = (this.stderrTail + s).slice(-STDERR_KEEP);
      // Start-up stderr shows too: it is often all there is to say why a session would not open.
      if (this.inTurn || this.opening) for (const l of s.split("\n")) if (l.trim()) deps.render.stderr(l);
    });
    // A write to a pipe whose reader died: reported through 'exit', never thrown.
    this.child.stdin!.on("error", () => {});
    this.closed = new Promise((resolve) => this.child.once("close", () => resolve()));
    this.exited = new Promise((resolve) => {
      this.child.on("error", (e) => {
        const missing = (e as NodeJS.ErrnoException).code === "ENOENT";
        this.gone(missing ? `command not found: ${cmd}` : e.message);
        resolve();
      });
      this.child.on("exit", (code, signal) => {
        const last = firstLine(
          this.stderrTail
            .split("\n")
            .filter((l) => l.trim())
            .pop() ?? "",
        );
        const how = signal ? `killed by ${signal}` : `exit code ${code}`;
        this.gone(`the agent process ended (${how})${last ? `: ${last}` : ""}`);
        resolve();
      });
    });
    if (this.child.pid !== undefined)
      deps.log.append({ type: "runner_started", turnId, pid: this.child.pid, argv0: cmd! });
  }

  /** Starts the process and opens (or, with `spec.resume`, reloads) its session. */
  static async open(
    spec: SessionSpec,
    deps: { log: EventLog; render: PaneRenderer },
    turnId: string,
    permissions: PermissionBroker,
    control?: TurnControl,
  ): Promise<LiveSession> {
    const s = new LiveSession(spec, deps, turnId, permissions);
    try {
      const failed = s.exited.then(() => {
        throw new Error(s.exitedWith ?? "the agent process ended");
      });
      // A cap or a cancel also ends the handshake: an agent that never answers initialize must not outlast them.
      const stopped = new Promise<never>((_, reject) =>
        control?.onStop(() => reject(new Error("the turn was stopped while the agent was starting"))),
      );
      // A stop after the race is the turn's business, not a rejection anyone waits for.
      stopped.catch(() => {});
      s.sessionId = (await Promise.race([s.driver.open(), failed, stopped])) ?? spec.resume;
    } catch (e) {
      s.kill();
      // What the agent wrote up to its exit belongs with the failure: wait (briefly) for the pipe to drain.
      await Promise.race([s.closed, new Promise((r) => setTimeout(r, 1000).unref())]);
      throw new SessionOpenError(e, s.stderrTail);
    } finally {
      s.opening = false;
    }
    return s;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The CLI's own session id (what a new process continues). */
  get id(): string | undefined {
    return this.sessionId;
  }

  get alive(): boolean {
    return this.exitedWith === undefined;
  }

  /** How the process ended ("the agent process ended (killed by SIGKILL): …"), once it has. */
  get endedWith(): string | undefined {
    return this.exitedWith;
  }

  /**
   * Runs one turn: the prompt, its streamed messages into `onMessage`, and the end of turn. A stop from the
   * host that ends only the turn (interrupt, steering) goes through the protocol; any other (cancel, lost, a
   * failed record) ends the process.
   */
  async prompt(
    turnId: string,
    text: string,
    onMessage: (m: AgentMessage) => void,
    control: TurnControl,
  ): Promise<SessionTurnEnd> {
    this.turnId = turnId;
    this.inTurn = true;
    control.onStop(() => {
      if (control.reason && TURN_ONLY_STOPS.includes(control.reason)) this.interrupt();
      else this.kill();
      // Nobody waits for the answer of a request the stopped turn asked.
      const why = control.reason ? STOP_STATUS[control.reason].reason : control.failure?.message;
      this.permissions.cancelAll(why ?? "the turn was stopped");
    });
    try {
      await this.driver.prompt(text, onMessage);
    } finally {
      this.inTurn = false;
      clearTimeout(this.cancelTimer);
      // A request the agent no longer waits for is closed.
      this.permissions.cancelAll("the turn ended before an answer");
    }
    return { exited: !this.alive, stderrTail: this.stderrTail };
  }

  /** Ends the turn through the protocol; a process that does not end it in time is killed. */
  private interrupt(): void {
    if (!this.inTurn) return;
    this.driver.interrupt();
    this.cancelTimer = setTimeout(() => this.kill(), CANCEL_GRACE_MS);
  }

  /** Stops the process group: TERM, then KILL after a grace period. */
  kill(): void {
    const pid = this.child.pid;
    if (pid === undefined || !groupAlive(pid)) return;
    void terminateGroup(pid);
  }

  /** Kills the group at once (the host is exiting; nothing may outlive it). */
  killNow(): void {
    if (this.child.pid !== undefined) signalGroup(this.child.pid, "SIGKILL");
  }

  /** Resolves once the process is gone. */
  whenExited(): Promise<void> {
    return this.exited;
  }

  private gone(why: string): void {
    if (this.exitedWith !== undefined) return;
    this.exitedWith = why;
    this.driver.close(new Error(why));
    // Whatever the agent started goes with it.
    if (this.child.pid !== undefined) signalGroup(this.child.pid, "SIGKILL");
  }
}

/** The agent's session did not open: the failure (`cause`) and the agent's stderr until then (bounded). */
export class SessionOpenError extends Error {
  constructor(
    cause: unknown,
    readonly stderr: string,
  ) {
    super((cause as Error).message, { cause });
    this.name = "SessionOpenError";
  }
}

/** What makes two turns able to share one process: the same program, arguments, directory and environment. */
export function specKey(spec: SessionSpec): string {
  return JSON.stringify([
    spec.protocol,
    spec.argv,
    spec.cwd,
    spec.env,
    spec.modeId ?? null,
    spec.model ?? null,
    spec.reasoning ?? null,
  ]);
}
