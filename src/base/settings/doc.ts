/**
 * The environment table in docs/state-and-environment.md, made from table.ts (scripts/settings-doc.mjs writes
 * it; a test checks it).
 */
import { serialise } from "./resolve.js";
import { SETTING_KEYS, SETTINGS, type SettingSpec } from "./table.js";

export const SECTION_BEGIN =
  "<!-- settings:begin — generated from src/base/settings/table.ts by `node scripts/settings-doc.mjs`; edit there -->";
export const SECTION_END = "<!-- settings:end -->";

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

/** The document with its generated section replaced by the current table; throws without the markers. */
export function withSettingsSection(doc: string): string {
  const begin = doc.indexOf(SECTION_BEGIN);
  const end = doc.indexOf(SECTION_END);
  if (begin < 0 || end < begin)
    throw new Error(`docs/state-and-environment.md has no ${SECTION_BEGIN} … ${SECTION_END} section`);
  return `${doc.slice(0, begin + SECTION_BEGIN.length)}\n${settingsTable()}\n${doc.slice(end)}`;
}
