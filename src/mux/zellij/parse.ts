/** Pure parsers for what the Zellij CLI prints (0.44: `list-panes --json`, `new-pane`, `--version`). */

export interface ZellijPane {
  id: number;
  exited: boolean;
  /** The command's exit status once it exited, when Zellij reports one. */
  exitStatus: number | null;
  title: string;
}

/**
 * Terminal panes of a `list-panes --json` answer; null when it is not such a list. Plugin panes are left
 * out: their ids are a separate namespace that shares integers with terminal panes.
 */
export function parsePaneList(text: string): ZellijPane[] | null {
  let rows: unknown;
  try {
    rows = JSON.parse(text);
  } catch {
    return null;
  }
  if (!Array.isArray(rows)) return null;
  const out: ZellijPane[] = [];
  for (const row of rows) {
    if (!row || typeof row !== "object") return null;
    const r = row as Record<string, unknown>;
    const id = typeof r.id === "string" && /^\d+$/.test(r.id) ? Number(r.id) : r.id;
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0) return null;
    if (r.is_plugin === true) continue;
    out.push({
      id,
      exited: r.exited === true,
      exitStatus: typeof r.exit_status === "number" ? r.exit_status : null,
      title: typeof r.title === "string" ? r.title : "",
    });
  }
  return out;
}

/** Whether zellij said the session does not exist (then none of its panes do): proven gone, not unknown. */
export function isSessionGone(said: string): boolean {
  return /session '?[^'\n]*'? not found|no active (zellij )?sessions?/i.test(said);
}

/** The id `new-pane` printed (`terminal_5`, or a bare `5`); null for anything else. */
export function parseNewPaneId(stdout: string): number | null {
  const m = /^(?:terminal_)?(\d+)$/.exec(stdout.trim());
  return m ? Number(m[1]) : null;
}

/**
 * The pane a new-pane call made: the terminal pane present after and not before. When other spawns
 * raced in, the one with our (unique) name; the id Zellij printed when it names one of the new panes.
 */
export function newPaneOf(
  before: ZellijPane[],
  after: ZellijPane[],
  name: string,
  printed: number | null,
): number | null {
  const old = new Set(before.map((p) => p.id));
  const fresh = after.filter((p) => !old.has(p.id));
  if (printed !== null && fresh.some((p) => p.id === printed)) return printed;
  if (fresh.length === 1) return fresh[0]!.id;
  const named = fresh.filter((p) => p.title === name);
  return named.length === 1 ? named[0]!.id : null;
}

/** The focused tab's 0-based position from `current-tab-info --json`; null for anything else ("No active tab…"). */
export function parseTabPosition(text: string): number | null {
  try {
    const p = (JSON.parse(text) as { position?: unknown }).position;
    return typeof p === "number" && Number.isInteger(p) && p >= 0 ? p : null;
  } catch {
    return null;
  }
}

/** `zellij 0.44.3` → `0.44.3`. */
export function parseVersion(text: string): string | null {
  return /^zellij\s+(\d+\.\d+\.\d+\S*)/.exec(text.trim())?.[1] ?? null;
}
