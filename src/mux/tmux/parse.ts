/** Pure parsers for tmux output, `$TMUX` and tmux error text. */

/** Version from `tmux -V` ("tmux 3.3a" → "3.3a", "tmux next-3.4" → "next-3.4"), or null. */
export function parseVersion(out: string): string | null {
  const m = /^tmux\s+(\S+)/.exec(out.trim());
  return m ? m[1]! : null;
}

export interface TmuxEnv {
  socketPath: string;
  serverPid: number;
  sessionIndex: number;
}

/** `$TMUX` is "socket_path,server_pid,session_index"; split from the right since the path may hold commas. */
export function parseTmuxEnv(value: string | undefined): TmuxEnv | null {
  if (!value) return null;
  const m = /^(.+),(\d+),(-?\d+)$/.exec(value);
  if (!m) return null;
  return { socketPath: m[1]!, serverPid: Number(m[2]), sessionIndex: Number(m[3]) };
}

/** Format of one pane row; session_name goes last because it is the only free-text field. */
export const PANE_FORMAT = [
  "#{pane_id}",
  "#{window_id}",
  "#{pane_pid}",
  "#{pane_dead}",
  "#{pane_dead_status}",
  "#{pane_dead_signal}",
  "#{session_name}",
].join("\t");

export interface PaneRow {
  paneId: string;
  windowId: string;
  pid: number | null;
  dead: boolean;
  /** Exit status of a dead pane; null while alive or when killed by a signal. */
  deadStatus: number | null;
  deadSignal: number | null;
  session: string;
}

const intOrNull = (s: string | undefined): number | null => (s && /^\d+$/.test(s) ? Number(s) : null);

/** Parses one line printed with PANE_FORMAT, or null when it is not such a line. */
export function parsePaneRow(line: string): PaneRow | null {
  const f = line.split("\t");
  if (f.length < 7 || !/^%\d+$/.test(f[0]!)) return null;
  return {
    paneId: f[0]!,
    windowId: f[1]!,
    pid: intOrNull(f[2]),
    dead: f[3] === "1",
    deadStatus: intOrNull(f[4]),
    deadSignal: intOrNull(f[5]),
    session: f.slice(6).join("\t"),
  };
}

/** `list-panes -a -F PANE_FORMAT` output → rows by pane id. */
export function parsePaneList(out: string): Map<string, PaneRow> {
  const rows = new Map<string, PaneRow>();
  for (const line of out.split("\n")) {
    const row = parsePaneRow(line);
    if (row) rows.set(row.paneId, row);
  }
  return rows;
}

/**
 * What a failed tmux call says about a pane: "dead" only when the server or pane is provably gone
 * (no socket, refused connection, no server, unknown pane); anything else is "unknown".
 */
export function classifyTmuxError(stderr: string): "dead" | "unknown" {
  const s = stderr.toLowerCase();
  if (s.includes("no server running") || s.includes("can't find pane")) return "dead";
  // "error connecting to <path> (Permission denied)" says nothing about the pane's life.
  if (s.includes("error connecting to") && /no such file|connection refused/.test(s)) return "dead";
  return "unknown";
}

/** True when a failed call means the session (or its whole server) does not exist yet. */
export function isMissingSession(stderr: string): boolean {
  // "no current target": a server with no session yet (one started by a concurrent new-session a moment ago).
  return /can't find session|no server running|error connecting to|no current target/i.test(stderr);
}

export const CAPTURE_DEFAULT_LINES = 200;
export const CAPTURE_MAX_LINES = 10_000;
export const CAPTURE_MAX_BYTES = 256 * 1024;

/** Capture line count: default 200, clamped to 1..10000. */
export function clampCaptureLines(lines: number | undefined): number {
  if (lines === undefined || !Number.isFinite(lines)) return CAPTURE_DEFAULT_LINES;
  return Math.min(CAPTURE_MAX_LINES, Math.max(1, Math.floor(lines)));
}

/** capture-pane output → its last `lines` lines without the blank screen rows below, capped in bytes. */
export function captureTail(out: string, lines: number, maxBytes = CAPTURE_MAX_BYTES): string {
  const rows = out.split("\n");
  while (rows.length > 0 && rows[rows.length - 1]!.trim() === "") rows.pop();
  const text = rows.slice(-lines).join("\n");
  const b = Buffer.from(text);
  if (b.length <= maxBytes) return text;
  // Keep the newest output; drop a UTF-8 sequence cut in half at the start.
  return b
    .subarray(b.length - maxBytes)
    .toString()
    .replace(/^\uFFFD+/, "");
}
