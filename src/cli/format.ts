import { MusterError } from "../base/errors.js";
import { timerProblem } from "../util/timer-limit.js";

/** Parses "30s", "5m", "1h", "7d", "250ms" or plain seconds into milliseconds. */
export function parseDuration(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(s.trim());
  if (!m)
    throw new MusterError("invalid_argument", `invalid duration "${s}": use e.g. 30s, 5m, 1h, 7d, 250ms`);
  const n = Number(m[1]);
  const unit = m[2] ?? "s";
  return Math.round(n * { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[unit]!);
}

/** parseDuration for a duration that becomes a timer (`--timeout`): at most MAX_TIMER_TEXT. */
export function parseTimeout(s: string, flag = "--timeout"): number {
  const ms = parseDuration(s);
  const tooLong = timerProblem(ms, flag);
  if (tooLong) throw new MusterError("invalid_argument", `${tooLong}, not "${s}"`);
  return ms;
}

export function parsePositiveInt(s: string, what: string, max: number): number {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw new MusterError("invalid_argument", `${what} must be a whole number from 1 to ${max}, not "${s}"`);
  return n;
}

/** "4s", "3m12s", "2h5m", "3d". */
export function humanDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  return `${Math.floor(s / 86400)}d`;
}

export const since = (iso: string | undefined, now = Date.now()): string =>
  iso ? humanDuration(now - Date.parse(iso)) : "-";

/** Left-aligned columns; the last column is not padded. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) {
    r.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, [...cell].length);
    });
  }
  return rows
    .map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  "))
    .join("\n");
}

export const clip = (s: string, n: number): string => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

export { shellQuote } from "../util/text.js";
