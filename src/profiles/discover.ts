import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { isMusterError } from "../base/errors.js";
import { resolveSetting } from "../base/settings/resolve.js";
import { loadConfig, type MusterConfig } from "../config/config.js";
import { PACKAGE_ROOT } from "../util/pkg.js";
import { readFileBounded } from "../util/safe-read.js";
import { findFiles } from "../util/tree.js";
import { PROFILE_NAME } from "./fields.js";
import { parseProfile } from "./parse.js";
import type { ProfileFormat, ProfileLayer, ResolvedProfile } from "./types.js";

/** One folder searched for `**\/*.md` profiles. */
export interface LayerDir {
  layer: ProfileLayer;
  format: ProfileFormat;
  dir: string;
}

/** A file skipped because its frontmatter could not be parsed; loading its name must say so. */
export interface BrokenProfile {
  /** The file stem (its `name:` field could not be read). */
  name: string;
  source: string;
  layer: ProfileLayer;
  message: string;
  /** Position of its folder in the search order (higher wins). */
  rank: number;
}

/** What to search: the cwd, the env (HOME, XDG_CONFIG_HOME, MUSTER_COMPAT_AGENTS), compat and config overrides. */
export interface DiscoverOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Read other harnesses' agent folders; default: MUSTER_COMPAT_AGENTS, else config `compatAgents`, else on. */
  compat?: boolean;
  /** The user config; read from `${XDG_CONFIG_HOME:-~/.config}/muster/config.json` when absent. */
  config?: MusterConfig;
}

/** The result of a discovery: winners, every warning, broken files and what was searched. */
export interface Discovery {
  /** Winners, sorted by name. */
  profiles: ResolvedProfile[];
  warnings: string[];
  broken: BrokenProfile[];
  compat: boolean;
  /** Every folder searched, lowest precedence first. */
  dirs: LayerDir[];
  /** Search rank of each winner's folder, by name (for comparing with broken files). */
  ranks: Map<string, number>;
}

const MAX_BYTES = 1024 * 1024;
const MAX_FILES = 2000;
const MAX_DEPTH = 8;

/** Whether the compat layer is on: explicit flag, else MUSTER_COMPAT_AGENTS, else config, else true. */
export function compatEnabled(
  env: NodeJS.ProcessEnv,
  config: MusterConfig,
  explicit?: boolean,
): { on: boolean; warnings: string[] } {
  if (explicit !== undefined) return { on: explicit, warnings: [] };
  const r = resolveSetting(env, "compatAgents", config as Record<string, unknown>);
  return { on: r.value, warnings: r.problem ? [r.problem] : [] };
}

/** The folders searched, lowest precedence first (HOME and XDG_CONFIG_HOME come from `env`). */
export function profileLayers(cwd: string, env: NodeJS.ProcessEnv, compat: boolean): LayerDir[] {
  const home = env.HOME || os.homedir();
  const config = env.XDG_CONFIG_HOME || path.join(home, ".config");
  const dirs: LayerDir[] = [{ layer: "bundled", format: "muster", dir: path.join(PACKAGE_ROOT, "agents") }];
  if (compat) {
    const user = "compat-user" as const;
    const project = "compat-project" as const;
    dirs.push(
      { layer: user, format: "claude", dir: path.join(home, ".claude", "agents") },
      { layer: user, format: "pi", dir: path.join(home, ".pi", "agent", "agents") },
      // OpenCode reads both the older singular folder and the plural one.
      { layer: user, format: "opencode", dir: path.join(config, "opencode", "agent") },
      { layer: user, format: "opencode", dir: path.join(config, "opencode", "agents") },
      { layer: project, format: "claude", dir: path.join(cwd, ".claude", "agents") },
      { layer: project, format: "pi", dir: path.join(cwd, ".pi", "agents") },
      { layer: project, format: "opencode", dir: path.join(cwd, ".opencode", "agent") },
      { layer: project, format: "opencode", dir: path.join(cwd, ".opencode", "agents") },
    );
  }
  dirs.push(
    { layer: "user", format: "muster", dir: path.join(config, "muster", "agents") },
    { layer: "project", format: "muster", dir: path.join(cwd, ".muster", "agents") },
  );
  return dirs;
}

/** `**\/*.md` under `dir` (see findFiles); a FIFO or device named *.md is listed too: reading it is refused with a warning naming it. */
export function markdownFiles(dir: string, warnings: string[]): string[] {
  return findFiles(
    dir,
    { ext: ".md", what: "profiles", special: true, maxDepth: MAX_DEPTH, maxFiles: MAX_FILES },
    warnings,
  );
}

/**
 * A profile's text: a regular file (a symlink to one is fine) of at most 1 MiB, read without blocking, so a
 * FIFO or /dev/zero in an agents folder is refused rather than hanging discovery or filling memory.
 */
export function readProfileText(file: string): { text: string } | { error: string } {
  try {
    return { text: readFileBounded(file, MAX_BYTES, { follow: true }).toString("utf8") };
  } catch (e) {
    const why = (e as Error).message;
    // safe-read's refusals name the file already ("refusing to read f: it is a FIFO").
    return { error: isMusterError(e) ? why : `${file}: cannot read (${why})` };
  }
}

/** Finds every profile in every layer; a higher layer shadows a lower one by resolved name. Never throws on a bad file. */
export function discoverProfiles(opts: DiscoverOptions): Discovery {
  const env = opts.env ?? process.env;
  const cwd = path.resolve(opts.cwd);
  const loaded = opts.config ? { config: opts.config, warnings: [] } : loadConfig(env);
  const compat = compatEnabled(env, loaded.config, opts.compat);
  const warnings = [...loaded.warnings, ...compat.warnings];
  const dirs = profileLayers(cwd, env, compat.on);
  const winners = new Map<string, ResolvedProfile>();
  const ranks = new Map<string, number>();
  const broken: BrokenProfile[] = [];
  const scanned = new Set<string>();
  dirs.forEach(({ layer, format, dir }, rank) => {
    // The same folder reached twice (cwd = HOME, or a symlink) must not shadow itself.
    const real = fs.existsSync(dir) ? fs.realpathSync(dir) : undefined;
    if (!real || scanned.has(real)) return;
    scanned.add(real);
    const here = new Map<string, ResolvedProfile>();
    for (const file of markdownFiles(dir, warnings)) {
      const read = readProfileText(file);
      if ("error" in read) {
        // Named when asked for (`spawn --agent <stem>` says why), like a profile that does not parse.
        broken.push({ name: path.basename(file, ".md"), source: file, layer, message: read.error, rank });
        warnings.push(`${read.error}; skipped`);
        continue;
      }
      let profile: ResolvedProfile;
      try {
        profile = { ...parseProfile(file, read.text, format), layer, shadows: [] };
      } catch (e) {
        if (!isMusterError(e)) throw e;
        broken.push({ name: path.basename(file, ".md"), source: file, layer, message: e.message, rank });
        warnings.push(`${e.message}; skipped`);
        continue;
      }
      // Other harnesses ignore files without a description (README.md and notes live in these folders too).
      if (format !== "muster" && profile.description === "") continue;
      warnings.push(...profile.warnings);
      if (!PROFILE_NAME.test(profile.name)) {
        warnings.push(`${file}: agent name ${JSON.stringify(profile.name)} is not valid; skipped`);
        continue;
      }
      const first = here.get(profile.name);
      if (first) {
        warnings.push(`${file}: agent "${profile.name}" is also defined by ${first.source}, which is used`);
        first.shadows.push({ source: file, layer });
        continue;
      }
      const prev = winners.get(profile.name);
      if (prev) profile.shadows = [{ source: prev.source, layer: prev.layer }, ...prev.shadows];
      here.set(profile.name, profile);
      winners.set(profile.name, profile);
      ranks.set(profile.name, rank);
    }
  });
  const profiles = [...winners.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { profiles, warnings, broken, compat: compat.on, dirs, ranks };
}
