/** The settings in effect, for `muster doctor`: the ones set (env or config), a secret's value never shown. */
import { serialise } from "./resolve.js";
import type { SettingSpec } from "./table.js";

export interface SettingInEffect {
  name: string;
  /** As the variable would spell it; "(hidden)" for a setting that can hold a secret. */
  value: string;
  source: "env" | "config";
  secret?: true;
}

/** Every setting not at its default, in table order. */
export function settingsInEffect(
  resolved: { values: Record<string, unknown>; sources: Record<string, string> },
  table: Record<string, SettingSpec>,
): SettingInEffect[] {
  const out: SettingInEffect[] = [];
  for (const [key, spec] of Object.entries(table)) {
    const source = resolved.sources[key];
    const v = resolved.values[key];
    if ((source !== "env" && source !== "config") || v === undefined) continue;
    const value = spec.secret ? "(hidden)" : serialise(v as string | number | boolean);
    out.push({ name: spec.env, value, source, ...(spec.secret ? { secret: true as const } : {}) });
  }
  return out;
}
