import { MusterError } from "../base/errors.js";
import { loadConfig, type MusterConfig } from "../config/config.js";
import { allCatalogs, closeMatches, findModel, type RunnerCatalog } from "./catalog.js";
import { defaultAgent } from "./defaults.js";
import { isModelSpelling } from "./fields.js";
import { listNames, loadProfile } from "./profile.js";
import { resolveSettings, type SettingSource } from "./settings.js";

/** One bounded catalog question; at most one of: a search (provider/query/limit), `model`, `agent`. */
export interface ModelQuery {
  provider?: string;
  query?: string;
  limit?: number;
  model?: string;
  agent?: string;
}

/** Where the question is asked from: the cwd and env decide agent lookups and the primary's defaults. */
export interface QueryContext {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  config?: MusterConfig;
  /** For `agent` lookups: read other harnesses' folders (default as in discovery). */
  compat?: boolean;
}

/** One model as offered by one runner. */
export interface ModelRow {
  id: string;
  provider: string;
  runner: string;
  reasoning: string[];
  defaultReasoning: string | null;
}

/** The answer to one ModelQuery, tagged by `kind`; every variant is bounded in size. */
export type ModelsAnswer =
  | {
      kind: "defaults";
      defaults: {
        agent: string;
        runner: string;
        model: string | null;
        modelSource: SettingSource | null;
        reasoning: string | null;
        reasoningSource: SettingSource | null;
      };
      runners: {
        runner: string;
        provider: string;
        open: boolean;
        available: boolean;
        models: number;
        defaultModel: string | null;
      }[];
      providers: { provider: string; models: number; runners: string[] }[];
      warnings: string[];
    }
  | { kind: "search"; matches: ModelRow[]; total: number; more: boolean; limit: number; warnings: string[] }
  | ({ kind: "model"; runners: string[]; warnings: string[] } & ModelRow)
  | {
      kind: "agent";
      agent: string;
      source: string;
      runner: string;
      runnerAvailable: boolean;
      model: string | null;
      modelSource: SettingSource | null;
      reasoning: string | null;
      reasoningSource: SettingSource | null;
      validReasoning: string[] | null;
      warnings: string[];
    };

/** Search results when no limit is given. */
export const DEFAULT_LIMIT = 10;
/** The most matches one search may return. */
export const MAX_LIMIT = 50;

const providerOf = (id: string, cat: RunnerCatalog): string =>
  id.includes(":") ? id.slice(0, id.indexOf(":")) : cat.provider;

function rows(catalogs: RunnerCatalog[]): ModelRow[] {
  const out: ModelRow[] = [];
  for (const cat of catalogs)
    for (const m of cat.models)
      out.push({
        id: m.id,
        provider: providerOf(m.id, cat),
        runner: cat.runner,
        reasoning: [...m.reasoning],
        defaultReasoning: m.defaultReasoning ?? null,
      });
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.runner < b.runner ? -1 : 1));
}

/** Answers one catalog question without ever returning the whole catalog. */
export function queryModels(q: ModelQuery, ctx: QueryContext): ModelsAnswer {
  const env = ctx.env ?? process.env;
  const warnings: string[] = [];
  let config = ctx.config;
  if (!config) {
    const loaded = loadConfig(env);
    config = loaded.config;
    warnings.push(...loaded.warnings);
  }
  const searching = q.provider !== undefined || q.query !== undefined || q.limit !== undefined;
  if ([searching, q.model !== undefined, q.agent !== undefined].filter(Boolean).length > 1)
    throw new MusterError(
      "invalid_argument",
      "ask one thing at a time: a search (provider/query/limit), a model, or an agent",
    );
  const catalogs = allCatalogs(config, warnings);
  const all = rows(catalogs);

  if (q.agent !== undefined) {
    const p = loadProfile(q.agent, ctx.cwd, env, {
      config,
      ...(ctx.compat !== undefined ? { compat: ctx.compat } : {}),
    });
    const s = resolveSettings({ runner: p.runner, profile: p, env, config });
    return {
      kind: "agent",
      agent: p.name,
      source: p.source,
      runner: p.runner,
      runnerAvailable: catalogs.some((c) => c.runner === p.runner && c.available),
      model: s.model ?? null,
      modelSource: s.sources.model,
      reasoning: s.reasoning ?? null,
      reasoningSource: s.sources.reasoning,
      validReasoning: s.validReasoning ?? null,
      warnings: [...warnings, ...p.warnings, ...s.warnings],
    };
  }

  if (q.model !== undefined) {
    const spelling = q.model.trim();
    if (!isModelSpelling(spelling))
      throw new MusterError("invalid_argument", `"${q.model}" is not a model spelling`);
    const hits = catalogs.flatMap((cat) => {
      const info = findModel(cat, spelling);
      return info ? all.filter((r) => r.runner === cat.runner && r.id === info.id) : [];
    });
    const first = hits[0];
    if (!first) {
      const near = closeMatches([...new Set(all.map((r) => r.id))], spelling);
      const open = catalogs.filter((c) => c.open).map((c) => c.runner);
      throw new MusterError(
        "not_found",
        `unknown model "${spelling}"${near.length ? `; close matches: ${near.join(", ")}` : ""}${open.length ? ` (runners that accept unlisted ids: ${open.join(", ")})` : ""}`,
      );
    }
    return { kind: "model", ...first, runners: [...new Set(hits.map((h) => h.runner))], warnings };
  }

  if (searching) {
    const limit = q.limit ?? DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)
      throw new MusterError(
        "invalid_argument",
        `limit must be a whole number from 1 to ${MAX_LIMIT}, not "${q.limit}"`,
      );
    let matches = all;
    if (q.provider !== undefined) {
      const p = q.provider.trim().toLowerCase();
      const known = [...new Set([...catalogs.map((c) => c.provider), ...all.map((r) => r.provider)])].sort();
      if (!known.some((k) => k.toLowerCase() === p))
        throw new MusterError(
          "invalid_argument",
          `unknown provider "${q.provider}"; known: ${listNames(known)}`,
        );
      matches = matches.filter((r) => r.provider.toLowerCase() === p);
    }
    if (q.query !== undefined) {
      const needle = q.query.trim().toLowerCase();
      matches = matches.filter((r) => r.id.toLowerCase().includes(needle));
    }
    return {
      kind: "search",
      matches: matches.slice(0, limit),
      total: matches.length,
      more: matches.length > limit,
      limit,
      warnings,
    };
  }

  const agent = defaultAgent(env);
  let runner = "mock";
  try {
    runner = loadProfile(agent, ctx.cwd, env, {
      config,
      ...(ctx.compat !== undefined ? { compat: ctx.compat } : {}),
    }).runner;
  } catch (e) {
    warnings.push(`default agent "${agent}": ${(e as Error).message}; showing the mock runner's defaults`);
  }
  const s = resolveSettings({ runner, env, config });
  const providers = new Map<string, { models: number; runners: Set<string> }>();
  for (const cat of catalogs) {
    const entry = providers.get(cat.provider) ?? { models: 0, runners: new Set<string>() };
    entry.runners.add(cat.runner);
    providers.set(cat.provider, entry);
  }
  for (const r of all) {
    const entry = providers.get(r.provider) ?? { models: 0, runners: new Set<string>() };
    entry.models += 1;
    entry.runners.add(r.runner);
    providers.set(r.provider, entry);
  }
  return {
    kind: "defaults",
    defaults: {
      agent,
      runner,
      model: s.model ?? null,
      modelSource: s.sources.model,
      reasoning: s.reasoning ?? null,
      reasoningSource: s.sources.reasoning,
    },
    runners: catalogs.map((c) => ({
      runner: c.runner,
      provider: c.provider,
      open: c.open,
      available: c.available,
      models: c.models.length,
      defaultModel: c.defaultModel ?? null,
    })),
    providers: [...providers.entries()]
      .map(([provider, v]) => ({ provider, models: v.models, runners: [...v.runners].sort() }))
      .sort((a, b) => (a.provider < b.provider ? -1 : 1)),
    warnings: [...warnings, ...s.warnings],
  };
}
