import type { MusterConfig } from "../config/config.js";
import { getRunner, runnerNames } from "../runners/registry.js";
import type { ModelCatalog, ModelInfo } from "../runners/types.js";
import { isModelSpelling, isReasoningSpelling } from "./fields.js";

/** One runner's models: what it declares plus the user's config entries. */
export interface RunnerCatalog extends ModelCatalog {
  runner: string;
  /** False for a runner named only in config (not built into this muster yet). */
  available: boolean;
}

/** The valid `models` entries of the user config; each bad entry is one warning. */
export function configModels(config: MusterConfig, warnings: string[]): Required<MusterConfig>["models"] {
  const raw: unknown = config.models;
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) {
    warnings.push('config "models" must be a list of {runner, id, reasoning?}; ignored');
    return [];
  }
  const out: Required<MusterConfig>["models"] = [];
  raw.forEach((e: unknown, i) => {
    const m = e as Record<string, unknown> | null;
    const ok =
      m !== null &&
      typeof m === "object" &&
      typeof m.runner === "string" &&
      typeof m.id === "string" &&
      isModelSpelling(m.id) &&
      (m.reasoning === undefined ||
        (Array.isArray(m.reasoning) &&
          m.reasoning.every((r) => typeof r === "string" && isReasoningSpelling(r)))) &&
      (m.defaultReasoning === undefined || typeof m.defaultReasoning === "string");
    if (!ok) warnings.push(`config "models"[${i}] needs runner, id and optional reasoning levels; ignored`);
    else out.push(m as Required<MusterConfig>["models"][number]);
  });
  return out;
}

const withProvider = (provider: string, id: string): string => (id.includes(":") ? id : `${provider}:${id}`);

function addConfigEntries(cat: RunnerCatalog, entries: Required<MusterConfig>["models"]): void {
  for (const e of entries) {
    if (e.runner !== cat.runner) continue;
    const reasoning = (e.reasoning ?? []).map((r) => r.toLowerCase());
    const info: ModelInfo = { id: withProvider(cat.provider, e.id), reasoning };
    const def = e.defaultReasoning?.toLowerCase();
    if (def && reasoning.includes(def)) info.defaultReasoning = def;
    // A config entry for a model the runner already lists replaces it: the user may know newer levels.
    const at = cat.models.findIndex((m) => m.id.toLowerCase() === info.id.toLowerCase());
    if (at >= 0) cat.models[at] = info;
    else cat.models.push(info);
  }
}

/** The catalog of one runner (declared + config); a runner that is not built in gets an open, config-only one. */
export function runnerCatalog(runner: string, config: MusterConfig, warnings: string[] = []): RunnerCatalog {
  const declared = getRunner(runner)?.catalog;
  const cat: RunnerCatalog = declared
    ? { ...declared, models: declared.models.map((m) => ({ ...m })), runner, available: true }
    : { provider: runner, open: true, models: [], runner, available: false };
  addConfigEntries(cat, configModels(config, warnings));
  return cat;
}

/** Catalogs of every built-in runner, then runners named only in config. */
export function allCatalogs(config: MusterConfig, warnings: string[] = []): RunnerCatalog[] {
  const entries = configModels(config, warnings);
  const names = [...runnerNames()];
  for (const e of entries) if (!names.includes(e.runner)) names.push(e.runner);
  return names.map((n) => runnerCatalog(n, { ...config, models: entries }));
}

const bare = (id: string): string => id.slice(id.indexOf(":") + 1);

/** The catalog entry a spelling names: `provider:model`, `provider/model`, or the bare id (case-insensitive). */
export function findModel(cat: ModelCatalog, spelling: string): ModelInfo | undefined {
  const s = spelling.trim().toLowerCase();
  const provider = cat.provider.toLowerCase();
  const asColon = s.startsWith(`${provider}/`) ? `${provider}:${s.slice(provider.length + 1)}` : s;
  return cat.models.find((m) => {
    const id = m.id.toLowerCase();
    return id === s || id === asColon || (!s.includes(":") && bare(id) === s);
  });
}

/** Edit distance, cut off early past `max` (names are short; this stays cheap). */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    if (Math.min(...row) > max) return max + 1;
    prev = row;
  }
  return prev[b.length]!;
}

/** Ids ordered by closeness to `spelling` (containment first, then edit distance); only plausible ones. */
export function closeMatches(ids: string[], spelling: string, limit = 5): string[] {
  const s = spelling.trim().toLowerCase();
  const sb = bare(s);
  const scored: [number, string][] = [];
  for (const id of ids) {
    const l = id.toLowerCase();
    const max = Math.max(2, Math.floor(sb.length / 3));
    const score = l.includes(sb) || (sb.length >= 3 && sb.includes(bare(l))) ? 0 : distance(bare(l), sb, max);
    if (score <= max) scored.push([score, id]);
  }
  return scored
    .sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1))
    .slice(0, limit)
    .map(([, id]) => id);
}

/** "a, b, c, …and N more": the valid choices for an error message, closest to what was asked first. */
export function choices(values: string[], asked?: string, max = 10): string {
  if (values.length === 0) return "(none)";
  const near = asked ? closeMatches(values, asked, max) : [];
  const rest = [...values].sort().filter((v) => !near.includes(v));
  const ordered = [...near, ...rest];
  const shown = ordered.slice(0, max).join(", ");
  return ordered.length > max ? `${shown}, …and ${ordered.length - max} more` : shown;
}
