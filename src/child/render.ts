import type { CompletionEvent, Usage } from "../artifacts/events.js";
import { formatUsd } from "../util/cost.js";
import { shortId } from "../util/ids.js";
import { oneLine as flatten } from "../util/text.js";

// Agent text may carry escape sequences (a prompt with \e[2J must not wipe the pane): strip them.
const ESCAPES = /\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])/g;
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** Makes untrusted text safe for the pane: no escape sequences, no control bytes but LF and TAB. */
export const sanitize = (s: string): string =>
  s.replace(ESCAPES, "").replace(/\r\n?/g, "\n").replace(CONTROLS, "");

// Only the start of a long string is looked at: a one-line view never needs more.
const oneLine = (s: string, max = 160): string => flatten(sanitize(s.slice(0, 4 * max + 256)), max);

const C = {
  dim: "\x1b[2m",
  bold: "\x1b[1m",
  green: "\x1b[32m",
  red: "\x1b[31m",
  yellow: "\x1b[33m",
  cyan: "\x1b[36m",
  off: "\x1b[0m",
};
const STATUS_COLOR: Record<string, string> = {
  completed: C.green,
  errored: C.red,
  lost: C.red,
  cancelled: C.yellow,
};

// Rendering stops after this much answer text per turn; the whole answer is in the artifact dir.
const MAX_RENDERED_TEXT = 8 * 1024;
// Lines of stderr and of non-protocol stdout shown per turn; the rest are counted, not shown.
const MAX_NOISE_LINES = 200;
// A pane that does not keep up (or stdout that is a pipe nobody reads) must not make the host buffer.
const MAX_BACKLOG = 256 * 1024;

/** Whether a tool's end summary says it failed (the runners' spelling: "error: …", "failed (exit 2)", "declined"). */
const failedTool = (summary: string): boolean => /^(error\b|failed\b|declined\b)/.test(summary);

/** Writes a readable live view of the child's turns into the pane. Never throws (the pane may be gone). */
export class PaneRenderer {
  private rendered = 0;
  private noise = 0;
  private atLineStart = true;

  constructor(private readonly out: NodeJS.WriteStream = process.stdout) {
    out.on("error", () => {});
  }

  /** While an agent's own TUI owns the pane (mode tui), the host's lines would garble its screen. */
  private muted = false;

  mute(on: boolean): void {
    this.muted = on;
  }

  private write(s: string): void {
    if (this.muted || this.out.writableLength > MAX_BACKLOG) return;
    try {
      this.out.write(s);
    } catch {
      // EIO after the pane closed: rendering is best-effort, the artifact is the record.
    }
    if (s.length > 0) this.atLineStart = s.endsWith("\n");
  }

  private line(s: string): void {
    this.write(`${this.atLineStart ? "" : "\n"}${s}\n`);
  }

  banner(id: string, agent: string, runner: string, dir: string): void {
    this.line(`${C.bold}muster child${C.off} ${id}  ${C.dim}agent ${agent} · runner ${runner}${C.off}`);
    this.line(`${C.dim}artifacts: ${dir}${C.off}`);
  }

  turnStarted(n: number, prompt: string, source: string): void {
    this.rendered = 0;
    this.noise = 0;
    const lines = prompt.split("\n").length;
    const more =
      lines > 1 ? ` ${C.dim}(+${lines - 1} lines, ${Buffer.byteLength(prompt)} bytes)${C.off}` : "";
    this.line("");
    this.line(`${C.cyan}▶ turn ${n}${C.off} ${C.dim}(${source})${C.off} ${oneLine(prompt, 120)}${more}`);
  }

  text(s: string): void {
    if (this.rendered >= MAX_RENDERED_TEXT) return;
    const room = MAX_RENDERED_TEXT - this.rendered;
    // Only the part that can still be shown is cleaned (a streamed line may be megabytes).
    const cut = s.length > 2 * room + 256;
    const clean = sanitize(cut ? s.slice(0, 2 * room + 256) : s);
    this.rendered = cut ? MAX_RENDERED_TEXT : this.rendered + clean.length;
    this.write(
      cut || clean.length > room ? `${clean.slice(0, room)}\n${C.dim}… (more in output.md)${C.off}\n` : clean,
    );
  }

  tool(phase: "start" | "end", name: string, summary: string): void {
    this.line(
      phase === "start"
        ? `${C.yellow}⚙ ${oneLine(name, 40)}${C.off} ${oneLine(summary)}`
        : failedTool(summary)
          ? `${C.red}  ✗ ${oneLine(name, 40)}${C.off} ${oneLine(summary)}`
          : `${C.dim}  ✓ ${oneLine(name, 40)} ${oneLine(summary)}${C.off}`,
    );
  }

  info(s: string): void {
    this.line(`${C.dim}${oneLine(s, 400)}${C.off}`);
  }

  stderr(s: string): void {
    if (this.noisy()) this.line(`${C.dim}${C.red}${oneLine(s, 400)}${C.off}`);
  }

  /** The one line the host leaves when it has to stop on an error. */
  fatal(s: string): void {
    this.muted = false;
    this.line(`${C.red}${oneLine(s, 400)}${C.off}`);
  }

  /** A stdout line that is not protocol. */
  raw(s: string): void {
    if (this.noisy()) this.info(s);
  }

  /** Whether one more stderr/raw line may be shown this turn; says once when the rest are not. */
  private noisy(): boolean {
    this.noise += 1;
    if (this.noise === MAX_NOISE_LINES + 1)
      this.info("… more stderr and non-protocol lines this turn are not shown");
    return this.noise <= MAX_NOISE_LINES;
  }

  completion(c: CompletionEvent, usage: Usage | undefined): void {
    const color = STATUS_COLOR[c.status] ?? C.yellow;
    const secs = c.durationMs !== undefined ? ` in ${(c.durationMs / 1000).toFixed(1)}s` : "";
    const cost = usage?.cost !== undefined ? ` · ${formatUsd(usage.cost)}` : "";
    const tokens = usage ? ` · tokens ${usage.input} in / ${usage.output} out${cost}` : "";
    const why = c.reason ? ` — ${oneLine(c.reason, 200)}` : "";
    const out = c.output
      ? ` · ${c.output.bytes} bytes → ${c.output.path}`
      : c.outputError
        ? ` · ${c.outputError.code}`
        : "";
    this.line(`${color}■ ${c.status}${C.off}${secs}${tokens}${out}${why}`);
  }

  idle(id: string): void {
    this.line(`${C.dim}idle — type a follow-up and press Enter, or: muster send ${shortId(id)} "…"${C.off}`);
  }

  exited(reason: string): void {
    this.line(`${C.dim}child host exited (${reason}); this pane stays for reading${C.off}`);
  }
}
