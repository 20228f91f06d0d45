/** Durations as people write them in profiles and workflow files. */

/** A duration in a profile or flag: a number of seconds, or `250ms`, `30s`, `5m`, `1h`, `2d`. */
export function durationMs(v: unknown): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) && v > 0 ? Math.round(v * 1000) : undefined;
  if (typeof v !== "string") return undefined;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(v.trim());
  if (!m) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? "s"]!;
  const ms = Math.round(Number(m[1]) * unit);
  return ms > 0 ? ms : undefined;
}
