import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import { PACKAGE_ROOT } from "../util/pkg.js";
import { type DiscoverOptions, discoverProfiles, markdownFiles, profileLayers } from "./discover.js";
import { PROFILE_NAME } from "./fields.js";
import { parseProfile } from "./parse.js";
import type { ResolvedProfile } from "./types.js";

export { parseProfile };
export type { Profile, ProfileFormat, ProfileLayer, ResolvedProfile } from "./types.js";

/** Checks an agent name given by a user before it is used to find a file. */
export function assertProfileName(name: string): string {
  if (!PROFILE_NAME.test(name)) {
    throw new MusterError(
      "invalid_argument",
      `invalid agent name ${JSON.stringify(name)}: use letters, digits, ".", "_" or "-"`,
    );
  }
  return name;
}

/** Profile folders, highest precedence first (compat folders included unless switched off). */
export function profileDirs(cwd: string, env: NodeJS.ProcessEnv = process.env, compat = true): string[] {
  return profileLayers(cwd, env, compat)
    .map((l) => l.dir)
    .reverse();
}

/** Lists names for an error message, bounded so a large agent collection stays one short line. */
export function listNames(names: string[], max = 10): string {
  if (names.length === 0) return "(none)";
  const shown = names.slice(0, max).join(", ");
  return names.length > max ? `${shown}, …and ${names.length - max} more` : shown;
}

/**
 * Finds a profile by resolved name across all layers (project > user > compat > bundled). A file with broken
 * frontmatter whose stem is `name`, in a layer at or above the winner, is an error rather than a silent fallback.
 */
export function loadProfile(
  name: string,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
  opts: Pick<DiscoverOptions, "compat" | "config"> = {},
): ResolvedProfile {
  assertProfileName(name);
  const found = discoverProfiles({ cwd, env, ...opts });
  const winner = found.profiles.find((p) => p.name === name);
  const rank = found.ranks.get(name) ?? -1;
  const broken = found.broken.filter((b) => b.name === name && b.rank >= rank).pop();
  if (broken) throw new MusterError("invalid_config", `agent "${name}": ${broken.message}`);
  if (winner) return winner;
  throw new MusterError(
    "not_found",
    `unknown agent "${name}"; available: ${listNames(found.profiles.map((p) => p.name))}`,
    { next: { action: "agents" } },
  );
}

/** The names of the profiles shipped in the package's `agents/` folder. */
export function bundledProfileNames(): string[] {
  const names = new Set<string>();
  for (const file of markdownFiles(path.join(PACKAGE_ROOT, "agents"), [])) {
    try {
      const p = parseProfile(file, fs.readFileSync(file, "utf8"));
      if (PROFILE_NAME.test(p.name)) names.add(p.name);
    } catch {}
  }
  return [...names].sort();
}
