/**
 * Reading the settings of table.ts: one lookup per setting (env, else the config file, else the default),
 * the whole set resolved once into a typed object, and the forwarded subsets as env records or names.
 */
import { MusterError } from "../errors.js";
import { SETTING_KEYS, SETTINGS, type SettingKey, type SettingSpec, type SettingType } from "./table.js";

export { ENV, SETTING_KEYS, SETTINGS, type SettingKey, type SettingSpec } from "./table.js";

type ValueOf<T extends SettingType> = T extends { kind: "number" }
  ? number
  : T extends { kind: "boolean" }
    ? boolean
    : string;
type Spec<K extends SettingKey> = (typeof SETTINGS)[K];
/** A setting's typed value; undefined where it has no default and is not set. */
export type SettingValue<K extends SettingKey> =
  | ValueOf<Spec<K>["type"]>
  | (Spec<K> extends { default: unknown } ? never : undefined);
export type Settings = { [K in SettingKey]: SettingValue<K> };
export type SettingSource = "env" | "config" | "default";

type Env = Record<string, string | undefined>;
type Parsed = { ok: true; value: string | number | boolean } | { ok: false; why: string };

const TRUE = ["1", "true", "yes", "on"];
const FALSE = ["0", "false", "no", "off"];

function describe(t: SettingType): string {
  switch (t.kind) {
    case "number": {
      const what = t.integer ? "a whole number" : "a number";
      return `${what} ${t.minExclusive ? ">" : "≥"} ${t.min}`;
    }
    case "boolean":
      return "0 or 1";
    case "enum":
      return `one of ${t.values.join(", ")}`;
    case "path":
      return "a path";
    case "string":
      return t.expected ?? "a non-empty text";
  }
}

/** Parses one value: a string from the environment, or a JSON value of the type from the config file. */
export function parseValue(t: SettingType, raw: unknown, from: "env" | "config" = "env"): Parsed {
  const bad: Parsed = {
    ok: false,
    why: `not ${from === "config" && t.kind === "boolean" ? "true or false" : describe(t)}`,
  };
  if (from === "config" && (t.kind === "number" || t.kind === "boolean") && typeof raw !== t.kind) return bad;
  switch (t.kind) {
    case "number": {
      const n =
        typeof raw === "number"
          ? raw
          : typeof raw === "string" && raw.trim() !== ""
            ? Number(raw)
            : Number.NaN;
      if (!Number.isFinite(n) || (t.integer && !Number.isInteger(n))) return bad;
      return (t.minExclusive ? n > t.min : n >= t.min) ? { ok: true, value: n } : bad;
    }
    case "boolean": {
      if (typeof raw === "boolean") return { ok: true, value: raw };
      const v = typeof raw === "string" ? raw.trim().toLowerCase() : "";
      return TRUE.includes(v)
        ? { ok: true, value: true }
        : FALSE.includes(v)
          ? { ok: true, value: false }
          : bad;
    }
    case "enum":
      return typeof raw === "string" && t.values.includes(raw) ? { ok: true, value: raw } : bad;
    case "path":
      return typeof raw === "string" && raw !== "" ? { ok: true, value: raw } : bad;
    case "string":
      if (typeof raw !== "string" || raw === "" || (t.pattern && !t.pattern.test(raw))) return bad;
      return { ok: true, value: raw };
  }
}

/** The variable's value as set (an empty variable counts as unset, as everywhere in muster). */
export function rawSetting(env: Env, key: SettingKey): string | undefined {
  const v = env[SETTINGS[key].env];
  return v === undefined || v === "" ? undefined : v;
}

export interface Resolved<K extends SettingKey> {
  value: SettingValue<K>;
  source: SettingSource;
  /** One line naming a bad value that was ignored. */
  problem?: string;
}

/** One setting: env, else the config file (where it has a key), else the default; a bad value is skipped. */
export function resolveSetting<K extends SettingKey>(
  env: Env,
  key: K,
  config: Record<string, unknown> = {},
): Resolved<K> {
  const spec: SettingSpec = SETTINGS[key];
  const problems: string[] = [];
  const raw = rawSetting(env, key);
  if (raw !== undefined) {
    const p = parseValue(spec.type, raw);
    if (p.ok) return { value: p.value as SettingValue<K>, source: "env" };
    problems.push(`${spec.env}=${JSON.stringify(raw)}: ${p.why}`);
  }
  if (spec.config !== undefined && config[spec.config] !== undefined) {
    const p = parseValue(spec.type, config[spec.config], "config");
    if (p.ok) return { value: p.value as SettingValue<K>, ...withProblem(problems, "config") };
    problems.push(`config ${spec.config}=${JSON.stringify(config[spec.config])}: ${p.why}`);
  }
  return { value: spec.default as SettingValue<K>, ...withProblem(problems, "default", spec.onBad) };
}

function withProblem(
  problems: string[],
  source: SettingSource,
  onBad = "ignored",
): { source: SettingSource; problem?: string } {
  if (problems.length === 0) return { source };
  const fallback = source === "config" ? "the config's value is used" : onBad;
  return { source, problem: `${problems.join("; ")}; ${fallback}` };
}

/** A setting's typed value from the environment alone: a bad value counts as unset (its default). */
export const setting = <K extends SettingKey>(
  env: Env,
  key: K,
  config?: Record<string, unknown>,
): SettingValue<K> => resolveSetting(env, key, config).value;

/** The variable alone (no config file), a bad value a one-line error: for a setting its reader refuses. */
export function requireSetting<K extends SettingKey>(env: Env, key: K): SettingValue<K> {
  const spec: SettingSpec = SETTINGS[key];
  const raw = rawSetting(env, key);
  if (raw === undefined) return spec.default as SettingValue<K>;
  const p = parseValue(spec.type, raw);
  if (!p.ok) throw new MusterError("invalid_argument", `${spec.env}=${JSON.stringify(raw)}: ${p.why}`);
  return p.value as SettingValue<K>;
}

export interface ResolvedSettings {
  values: Settings;
  sources: Record<SettingKey, SettingSource>;
  /** One line per bad value (ignored, the next source used). */
  problems: string[];
}

/** Every setting at once, from one read of the environment and the config file. */
export function resolveSettings(env: Env, config: Record<string, unknown> = {}): ResolvedSettings {
  const values = {} as Record<SettingKey, unknown>;
  const sources = {} as Record<SettingKey, SettingSource>;
  const problems: string[] = [];
  for (const key of SETTING_KEYS) {
    const r = resolveSetting(env, key, config);
    values[key] = r.value;
    sources[key] = r.source;
    if (r.problem) problems.push(r.problem);
  }
  return { values: values as Settings, sources, problems };
}

export type ForwardTarget = "child" | "mcp" | "popup";

/** The variables handed on to one target, in table order. */
export const forwardedNames = (target: ForwardTarget): string[] =>
  SETTING_KEYS.filter((k) => (SETTINGS[k] as SettingSpec).forward[target]).map((k) => SETTINGS[k].env);

/** The value as its variable spells it. */
export const serialise = (v: string | number | boolean): string =>
  typeof v === "boolean" ? (v ? "1" : "0") : String(v);

/**
 * What a child needs of the settings, as an env record: every child-forwarded setting not at its default
 * (from the environment or the config file, which a child on another machine does not have). Lineage is
 * left out: the child's host sets it for that child.
 */
export function handoverEnv(s: ResolvedSettings): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of SETTING_KEYS) {
    const v = s.values[k];
    if (!(SETTINGS[k] as SettingSpec).forward.child || s.sources[k] === "default" || v === undefined)
      continue;
    out[SETTINGS[k].env] = serialise(v);
  }
  return out;
}

/** The forwarded settings of `env` as they are set there (raw), for a command run elsewhere (a popup). */
export function forwardedEnv(env: Env, target: ForwardTarget): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of SETTING_KEYS) {
    const v = rawSetting(env, k);
    if ((SETTINGS[k] as SettingSpec).forward[target] && v !== undefined) out[SETTINGS[k].env] = v;
  }
  return out;
}
