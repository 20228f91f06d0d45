/** The README's environment table, made from table.ts (scripts/settings-doc.mjs writes it; a test checks it). */
import { serialise } from "./resolve.js";
import { SETTING_KEYS, SETTINGS, type SettingSpec } from "./table.js";

export const README_BEGIN =
  "<!-- settings:begin — generated from src/base/settings/table.ts by `node scripts/settings-doc.mjs`; edit there -->";
export const README_END = "<!-- settings:end -->";

const cell = (s: string): string => s.replace(/\|/g, "\\|");

/** A setting's default in words. */
export function defaultText(spec: SettingSpec): string {
  if (spec.defaultDoc) return spec.defaultDoc;
  return spec.default === undefined ? "—" : `\`${serialise(spec.default)}\``;
}

/** The markdown table of every setting a user may set (test and internal knobs left out). */
export function settingsTable(): string {
  const rows = SETTING_KEYS.map((k) => SETTINGS[k] as SettingSpec)
    .filter((s) => !s.internal)
    .map(
      (s) =>
        `| \`${s.env}\` | ${cell(defaultText(s))} | ${s.config ? `\`${s.config}\`` : "—"} | ${cell(s.doc)} |`,
    );
  return ["| variable | default | config key | meaning |", "|---|---|---|---|", ...rows].join("\n");
}

/** The README with its generated section replaced by the current table; throws without the markers. */
export function withSettingsSection(readme: string): string {
  const begin = readme.indexOf(README_BEGIN);
  const end = readme.indexOf(README_END);
  if (begin < 0 || end < begin) throw new Error(`README.md has no ${README_BEGIN} … ${README_END} section`);
  return `${readme.slice(0, begin + README_BEGIN.length)}\n${settingsTable()}\n${readme.slice(end)}`;
}
