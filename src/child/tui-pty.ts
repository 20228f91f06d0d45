/**
 * The agent's own TUI under a pseudo-terminal inside the child host (`mode: tui`), proxied raw to the host's
 * terminal (the pane): the pane's keys go to the pty, the pty's output to the pane, and the pane's size follows
 * (SIGWINCH → resize). A headless terminal model of the same output lets the host read the screen (a start-up
 * dialog, a draft still in the input box) without a multiplexer.
 */
import xterm from "@xterm/headless";
import * as pty from "node-pty";
import { signalGroup, terminateGroup } from "../util/process-group.js";
import { interactiveEnv } from "../util/terminal-env.js";

export interface PtyLaunch {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

const size = (): { cols: number; rows: number } => ({
  cols: process.stdout.columns > 0 ? process.stdout.columns : 120,
  rows: process.stdout.rows > 0 ? process.stdout.rows : 40,
});

export class TuiPty {
  private readonly child: pty.IPty;
  private readonly term: InstanceType<typeof xterm.Terminal>;
  private exitedWith: string | undefined;
  private readonly exited: Promise<void>;
  private readonly detach: () => void;

  constructor(launch: PtyLaunch, onExit: (why: string) => void) {
    const { cols, rows } = size();
    const [cmd, ...args] = launch.argv;
    // node-pty makes the program a session (and process group) leader: its pid is the group a cancel stops.
    this.child = pty.spawn(cmd!, args, {
      name: "xterm-256color",
      cols,
      rows,
      cwd: launch.cwd,
      // The pane is a terminal a person watches: a TUI that believes it runs under CI draws nothing (ink).
      env: { ...interactiveEnv(launch.env), PWD: launch.cwd, TERM: "xterm-256color" },
      encoding: null,
    });
    this.term = new xterm.Terminal({ cols, rows, scrollback: 1000, allowProposedApi: true });
    const out = (d: Buffer | string): void => {
      const data = typeof d === "string" ? Buffer.from(d) : d;
      this.term.write(data);
      try {
        process.stdout.write(data);
      } catch {
        // The pane is gone: the host's SIGHUP handling settles the child.
      }
    };
    this.child.onData(out as (d: string) => void);
    const stdin = process.stdin;
    const input = (chunk: Buffer): void => this.write(chunk);
    const resize = (): void => {
      const s = size();
      try {
        this.child.resize(s.cols, s.rows);
        this.term.resize(s.cols, s.rows);
      } catch {
        // The program is exiting.
      }
    };
    if (stdin.isTTY) stdin.setRawMode(true);
    stdin.on("data", input);
    stdin.resume();
    process.stdout.on("resize", resize);
    this.detach = () => {
      stdin.off("data", input);
      process.stdout.off("resize", resize);
      if (stdin.isTTY) stdin.setRawMode(false);
      stdin.pause();
    };
    this.exited = new Promise((resolve) => {
      this.child.onExit(({ exitCode, signal }) => {
        this.detach();
        this.exitedWith = signal
          ? `the agent's TUI ended (signal ${signal})`
          : `the agent's TUI ended (exit code ${exitCode})`;
        // Whatever it started goes with it.
        signalGroup(this.child.pid, "SIGKILL");
        onExit(this.exitedWith);
        resolve();
      });
    });
  }

  get pid(): number {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exitedWith === undefined;
  }

  write(data: string | Buffer): void {
    if (!this.alive) return;
    try {
      this.child.write(typeof data === "string" ? Buffer.from(data, "utf8") : data);
    } catch {
      // The program is exiting.
    }
  }

  /** The screen as text (what a person at the pane sees), once everything written so far is parsed. */
  async screen(): Promise<string> {
    await new Promise<void>((r) => this.term.write("", r));
    const buf = this.term.buffer.active;
    const rows: string[] = [];
    for (let i = buf.viewportY; i < buf.viewportY + this.term.rows; i++)
      rows.push(buf.getLine(i)?.translateToString(true) ?? "");
    return rows.join("\n");
  }

  /** Stops the program's process group: TERM, then KILL after a grace period. */
  kill(): Promise<void> {
    if (!this.alive) return this.exited;
    void terminateGroup(this.child.pid);
    return this.exited;
  }

  killNow(): void {
    signalGroup(this.child.pid, "SIGKILL");
  }

  whenExited(): Promise<void> {
    return this.exited;
  }
}
