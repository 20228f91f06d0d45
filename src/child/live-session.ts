/**
 * A long-lived agent process for one child (runner mode `session`): started once, kept across turns, each turn
 * a prompt on the same process over the Agent Client Protocol. The turn settles on the protocol's end of turn
 * (no process exit in the path); the CLI's own session id is recorded so a new process (after a host or tmux
 * death, or a change of model) continues the same conversation with `session/load`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { LineSplitter } from "../artifacts/lines.js";
import type { EventLog } from "../artifacts/log.js";
import { RpcError, RpcPeer } from "../runners/acp/rpc.js";
import { type AcpTurnReader, acpTurnReader, errorMessage } from "../runners/acp/updates.js";
import type { AgentMessage, SessionSpec } from "../runners/types.js";
import { groupAlive, signalGroup, terminateGroup } from "../util/process-group.js";
import { firstLine } from "./messages.js";
import type { PaneRenderer } from "./render.js";
import { TURN_ONLY_STOPS, type TurnControl } from "./turn-control.js";

const MAX_LINE = 16 * 1024 * 1024;
const STDERR_KEEP = 2048;
// After `session/cancel`, the agent has this long to end the turn before its process is killed.
const CANCEL_GRACE_MS = 3000;

/** Why a turn on a live session ended, before the host's stop reason and failures are weighed. */
export interface SessionTurnEnd {
  /** The process is gone (it died, or was killed to stop the turn). */
  exited: boolean;
  stderrTail: string;
}

interface OpenTurn {
  reader: AcpTurnReader;
  onMessage: (m: AgentMessage) => void;
}

export class LiveSession {
  private readonly child: ChildProcess;
  private readonly peer: RpcPeer;
  private sessionId: string | undefined;
  private turn: OpenTurn | undefined;
  private stderrTail = "";
  private exitedWith: string | undefined;
  private cancelTimer: NodeJS.Timeout | undefined;
  private readonly exited: Promise<void>;
  /** The spec it was started from: a turn whose spec differs gets a new process. */
  readonly key: string;

  private constructor(
    readonly spec: SessionSpec,
    private readonly deps: { log: EventLog; render: PaneRenderer },
    turnId: string,
  ) {
    this.key = specKey(spec);
    const [cmd, ...args] = spec.argv;
    // detached: the agent leads its own process group, so stopping it reaches everything it started.
    this.child = spawn(cmd!, args, {
      cwd: spec.cwd,
      env: { ...spec.env, PWD: spec.cwd },
      stdio: ["pipe", "pipe", "pipe"],
      detached: true,
    });
    this.peer = new RpcPeer((line) => this.child.stdin!.write(line), {
      request: (method, params) => this.onRequest(method, params),
      notification: (method, params) => this.onNotification(method, params),
    });
    const lines = new LineSplitter(MAX_LINE, (bytes) => deps.render.info(`(dropped a ${bytes}-byte line)`));
    this.child.stdout!.on("data", (chunk: Buffer) => {
      for (const l of lines.push(chunk)) {
        const text = l.toString("utf8");
        if (!this.peer.line(text) && text.trim()) deps.render.raw(text);
      }
    });
    this.child.stderr!.on("data", (chunk: Buffer) => {
      const s = chunk.toString("utf8");
      this.stderrTail = (this.stderrTail + s).slice(-STDERR_KEEP);
      if (this.turn) for (const l of s.split("\n")) if (l.trim()) deps.render.stderr(l);
    });
    // A write to a pipe whose reader died: reported through 'exit', never thrown.
    this.child.stdin!.on("error", () => {});
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
  ): Promise<LiveSession> {
    const s = new LiveSession(spec, deps, turnId);
    try {
      await s.handshake();
    } catch (e) {
      s.kill();
      throw e;
    }
    return s;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The CLI's own session id (what a new process reloads). */
  get id(): string | undefined {
    return this.sessionId;
  }

  get alive(): boolean {
    return this.exitedWith === undefined;
  }

  /**
   * Runs one turn: the prompt, its streamed updates into `onMessage`, and the end of turn. A stop from the host
   * cancels the turn through the protocol (`interrupted`) or ends the process (cancel, lost, a failed record).
   */
  async prompt(
    text: string,
    onMessage: (m: AgentMessage) => void,
    control: TurnControl,
  ): Promise<SessionTurnEnd> {
    const reader = acpTurnReader();
    this.turn = { reader, onMessage };
    control.onStop(() => {
      if (control.reason && TURN_ONLY_STOPS.includes(control.reason)) this.interrupt();
      else this.kill();
    });
    try {
      const response = await this.peer.request("session/prompt", {
        sessionId: this.sessionId,
        prompt: [{ type: "text", text }],
      });
      for (const m of reader.end(response)) onMessage(m);
    } catch (e) {
      if (!control.reason && !control.failure) {
        const why = e instanceof RpcError ? errorMessage(e.message, e.data) : (e as Error).message;
        for (const m of reader.failed(why)) onMessage(m);
      }
    } finally {
      this.turn = undefined;
      clearTimeout(this.cancelTimer);
    }
    return { exited: !this.alive, stderrTail: this.stderrTail };
  }

  /** Ends the turn through the protocol; a process that does not end it in time is killed. */
  private interrupt(): void {
    if (!this.turn) return;
    this.peer.notify("session/cancel", { sessionId: this.sessionId });
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
    this.peer.close(new Error(why));
    // Whatever the agent started goes with it.
    if (this.child.pid !== undefined) signalGroup(this.child.pid, "SIGKILL");
  }

  private async handshake(): Promise<void> {
    const failed = this.exited.then(() => {
      throw new Error(this.exitedWith ?? "the agent process ended");
    });
    const race = <T>(p: Promise<T>): Promise<T> => Promise.race([p, failed]);
    const init = obj(
      await race(
        this.peer.request("initialize", {
          protocolVersion: 1,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        }),
      ),
    );
    const canLoad = obj(init.agentCapabilities).loadSession === true;
    const params = { cwd: this.spec.cwd, mcpServers: [] };
    if (this.spec.resume && canLoad) {
      // The agent replays the conversation as updates first: no turn is open, so they are not this turn's.
      await race(this.peer.request("session/load", { ...params, sessionId: this.spec.resume }));
      this.sessionId = this.spec.resume;
    } else {
      if (this.spec.resume)
        this.deps.render.info("this agent cannot reload a session: the conversation starts again");
      const created = obj(await race(this.peer.request("session/new", params)));
      if (typeof created.sessionId !== "string") throw new Error("the agent opened no session");
      this.sessionId = created.sessionId;
    }
    if (this.spec.modeId) {
      await race(
        this.peer.request("session/set_mode", { sessionId: this.sessionId, modeId: this.spec.modeId }),
      );
    }
  }

  private onNotification(method: string, params: unknown): void {
    if (method !== "session/update") return;
    const p = obj(params);
    if (!this.turn || p.sessionId !== this.sessionId) return;
    for (const m of this.turn.reader.update(p.update)) this.turn.onMessage(m);
  }

  /** Requests from the agent: permissions are answered as the profile pre-approves (see runner docs). */
  private async onRequest(method: string, params: unknown): Promise<unknown> {
    if (method === "session/request_permission") {
      const p = obj(params);
      const options = Array.isArray(p.options) ? p.options.map(obj) : [];
      const allow =
        options.find((o) => o.kind === "allow_once") ?? options.find((o) => o.kind === "allow_always");
      const title = typeof obj(p.toolCall).title === "string" ? (obj(p.toolCall).title as string) : "a tool";
      this.deps.render.info(`permission for ${title}: ${allow ? "allowed" : "refused"} (no one to ask yet)`);
      return allow
        ? { outcome: { outcome: "selected", optionId: allow.optionId } }
        : { outcome: { outcome: "cancelled" } };
    }
    throw new RpcError(-32601, `muster does not offer ${method}`);
  }
}

const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** What makes two turns able to share one process: the same program, arguments, directory and environment. */
function specKey(spec: SessionSpec): string {
  return JSON.stringify([spec.protocol, spec.argv, spec.cwd, spec.env, spec.modeId ?? null]);
}

export { specKey };
