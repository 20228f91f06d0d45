import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { ENV, rawSetting } from "../base/settings/resolve.js";
import { configDir, loadConfig, type MusterConfig } from "../config/config.js";
import type { ModelInfo } from "../runners/types.js";
import { choices, findModel, type RunnerCatalog, runnerCatalog } from "./catalog.js";
import { isModelSpelling, isReasoningSpelling } from "./fields.js";

/** Where a resolved model or reasoning level came from. */
export type SettingSource = "call" | "profile" | "env" | "config" | "runner" | "last";

/** The model and reasoning for one turn, each with its source, plus warnings about values passed over. */
export interface ResolvedSettings {
  model?: string;
  reasoning?: string;
  warnings: string[];
  sources: { model: SettingSource | null; reasoning: SettingSource | null };
  /** Reasoning levels valid for the resolved model, when the catalog knows it. */
  validReasoning?: string[];
}

/** A new child's inputs: the runner, the call's overrides, the profile, and the primary's env/config. */
export interface ResolveInput {
  runner: string;
  call?: { model?: string; reasoning?: string };
  profile?: { name?: string; source?: string; model?: string; reasoning?: string };
  env?: NodeJS.ProcessEnv;
  /** The user config; read from the usual file when absent. */
  config?: MusterConfig;
}

interface Candidate {
  value: unknown;
  source: SettingSource;
  /** How a message names this value's origin. */
  label: string;
}

function context(input: Pick<ResolveInput, "runner" | "env" | "config">) {
  const env = input.env ?? process.env;
  const warnings: string[] = [];
  let config = input.config;
  if (!config) {
    const loaded = loadConfig(env);
    config = loaded.config;
    warnings.push(...loaded.warnings);
  }
  const cat = runnerCatalog(input.runner, config, warnings);
  const configFile = path.join(configDir(env), "config.json");
  return { env, config, cat, warnings, configFile };
}

// Explicit choices (the call, the profile) must be valid; ambient defaults (env, config, last turn) that do not
// fit this runner or model are passed over with a warning, so a primary-wide default never blocks a spawn.
const strict = (c: Candidate): boolean => c.source === "call" || c.source === "profile";

function pickModel(cat: RunnerCatalog, candidates: Candidate[], warnings: string[]) {
  for (const c of candidates) {
    if (c.value === undefined || c.value === null || c.value === "") continue;
    const v = typeof c.value === "string" ? c.value.trim() : "";
    if (!isModelSpelling(v)) {
      const shown = JSON.stringify(c.value);
      // A bad spelling from a profile inherits the primary's model; from the call it is the caller's error.
      if (c.source === "call")
        throw new MusterError("invalid_argument", `model ${shown} is not a model spelling`);
      warnings.push(`${c.label}: model ${shown} is not a model spelling (use provider:model); ignored`);
      continue;
    }
    const info = findModel(cat, v);
    if (info) return { model: info.id, info, source: c.source };
    if (cat.open) return { model: v, source: c.source };
    const valid = choices(
      cat.models.map((m) => m.id),
      v,
    );
    if (strict(c))
      throw new MusterError(
        "invalid_argument",
        `unknown ${cat.runner} model "${v}"${c.source === "profile" ? ` (${c.label})` : ""}; choose one of: ${valid}`,
      );
    warnings.push(`${c.label}: "${v}" is not a ${cat.runner} model; ignored`);
  }
  if (cat.defaultModel)
    return { model: cat.defaultModel, info: findModel(cat, cat.defaultModel), source: "runner" as const };
  return { model: undefined, source: null };
}

function pickReasoning(
  model: string | undefined,
  info: ModelInfo | undefined,
  candidates: Candidate[],
  warnings: string[],
  /** The levels the CLI takes for models its catalog does not list. */
  anyModel?: string[],
): { reasoning?: string; source: SettingSource | null } {
  const levels = info?.reasoning ?? anyModel;
  for (const c of candidates) {
    if (c.value === undefined || c.value === null || c.value === "") continue;
    const v = typeof c.value === "string" ? c.value.trim().toLowerCase() : "";
    const shown = JSON.stringify(c.value);
    if (!isReasoningSpelling(v)) {
      if (c.source === "call")
        throw new MusterError("invalid_argument", `reasoning ${shown} is not a reasoning level`);
      warnings.push(`${c.label}: reasoning ${shown} is not a reasoning level; ignored`);
      continue;
    }
    if (!levels || levels.includes(v)) return { reasoning: v, source: c.source };
    const valid = levels.length > 0 ? choices(levels) : "(none: it takes no reasoning level)";
    if (strict(c))
      throw new MusterError(
        "invalid_argument",
        `reasoning "${v}"${c.source === "profile" ? ` (${c.label})` : ""} is not valid for model ${model}; choose one of: ${valid}`,
      );
    warnings.push(`${c.label}: reasoning "${v}" is not valid for model ${model}; ignored`);
  }
  if (info?.defaultReasoning) return { reasoning: info.defaultReasoning, source: "runner" };
  return { source: null };
}

function settings(
  picked: { model?: string; info?: ModelInfo; source: SettingSource | null },
  r: { reasoning?: string; source: SettingSource | null },
  warnings: string[],
): ResolvedSettings {
  return {
    ...(picked.model ? { model: picked.model } : {}),
    ...(r.reasoning ? { reasoning: r.reasoning } : {}),
    warnings,
    sources: { model: picked.source, reasoning: r.source },
    ...(picked.info ? { validReasoning: [...picked.info.reasoning] } : {}),
  };
}

/**
 * Model and reasoning for a new child, each resolved independently: call ?? profile ?? primary, where the
 * primary is MUSTER_MODEL / MUSTER_REASONING, else config `model` / `reasoning`, else the runner's defaults
 * (its default model; the resolved model's default reasoning). Invalid explicit values throw MusterError("invalid_argument").
 */
export function resolveSettings(input: ResolveInput): ResolvedSettings {
  const { env, config, cat, warnings, configFile } = context(input);
  const profileLabel = `profile ${input.profile?.source ?? input.profile?.name ?? "(unnamed)"}`;
  const cands = (key: "model" | "reasoning"): Candidate[] => [
    { value: input.call?.[key], source: "call", label: "call" },
    { value: input.profile?.[key], source: "profile", label: profileLabel },
    { value: rawSetting(env, key), source: "env", label: ENV[key] },
    { value: config[key], source: "config", label: `config ${configFile}` },
  ];
  const picked = pickModel(cat, cands("model"), warnings);
  const r = pickReasoning(picked.model, picked.info, cands("reasoning"), warnings, cat.reasoning);
  return settings(picked, r, warnings);
}

/**
 * Model and reasoning for a resumed child's next turn: an omitted override keeps the child's last value; an
 * explicit one is validated and wins (for this turn and, once recorded, later ones). If a new model cannot take
 * the last reasoning level, its default level is used, with a warning.
 */
export function resolveResumeSettings(input: {
  runner: string;
  call?: { model?: string; reasoning?: string };
  last: { model?: string; reasoning?: string };
  env?: NodeJS.ProcessEnv;
  config?: MusterConfig;
}): ResolvedSettings {
  const { cat, warnings } = context(input);
  const changed = input.call?.model !== undefined && input.call.model !== "";
  const picked = changed
    ? pickModel(cat, [{ value: input.call?.model, source: "call", label: "call" }], warnings)
    : {
        model: input.last.model,
        info: input.last.model ? findModel(cat, input.last.model) : undefined,
        source: input.last.model ? ("last" as const) : null,
      };
  const r = pickReasoning(
    picked.model,
    picked.info,
    [
      { value: input.call?.reasoning, source: "call", label: "call" },
      { value: input.last.reasoning, source: "last", label: "the last turn" },
    ],
    warnings,
    cat.reasoning,
  );
  return settings(picked, r, warnings);
}
