/**
 * What a front end shows about this machine rather than about children: the agent profiles, the model
 * catalog, and what is installed (doctor). Plain data; each front end renders it in its own words.
 */
import { MusterError } from "../base/errors.js";
import { discoverProfiles, type LayerDir } from "../profiles/discover.js";
import { loadProfile } from "../profiles/profile.js";
import { type ModelQuery, type ModelsAnswer, queryModels } from "../profiles/query.js";
import type { ResolvedProfile } from "../profiles/types.js";
import { runnerReadiness } from "../runners/availability.js";
import { getRunner, runnerNames } from "../runners/registry.js";

export type { LayerDir } from "../profiles/discover.js";
export { MAX_LIMIT, type ModelQuery, type ModelsAnswer } from "../profiles/query.js";
export type { SettingSource } from "../profiles/settings.js";
export type { ResolvedProfile } from "../profiles/types.js";
/** The runners whose own TUI muster can run in a pane (mode tui), for help text and errors. */
export { TUI_RUNNERS } from "../runners/tui/registry.js";

/** Where catalog questions are asked from: the cwd and env decide the profile layers and the defaults. */
export interface CatalogContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Read other harnesses' agent folders; absent: MUSTER_COMPAT_AGENTS and the config decide. */
  compat?: boolean;
}

/** Whether a child of a runner could start here; `notReady` says why not. */
export type Readiness = { ready: true } | { ready: false; notReady: string };

/** One profile with whether it could start here and what its runner runs. */
export interface AgentInfo {
  profile: ResolvedProfile;
  readiness: Readiness;
  /** The runner's one-line usage ("runs"), when it has one. */
  runs?: string;
}

export interface AgentList {
  agents: AgentInfo[];
  compat: boolean;
  /** Every folder searched, lowest precedence first. */
  searched: LayerDir[];
  warnings: string[];
}

function readiness(runner: string, env: NodeJS.ProcessEnv): Readiness {
  const r = runnerReadiness(runner, env);
  return r.ready ? { ready: true } : { ready: false, notReady: r.why };
}

const info = (p: ResolvedProfile, env: NodeJS.ProcessEnv): AgentInfo => {
  const runs = getRunner(p.runner)?.usage;
  return { profile: p, readiness: readiness(p.runner, env), ...(runs ? { runs } : {}) };
};

/** Every agent profile found (the winners of each layer, sorted by name). */
export function listAgents(ctx: CatalogContext): AgentList {
  const found = discoverProfiles({
    cwd: ctx.cwd,
    env: ctx.env,
    ...(ctx.compat !== undefined ? { compat: ctx.compat } : {}),
  });
  return {
    agents: found.profiles.map((p) => info(p, ctx.env)),
    compat: found.compat,
    searched: found.dirs,
    warnings: found.warnings,
  };
}

/** One agent profile in full (throws not_found, naming close matches). */
export function showAgent(name: string, ctx: CatalogContext): AgentInfo {
  return info(
    loadProfile(name, ctx.cwd, ctx.env, ctx.compat !== undefined ? { compat: ctx.compat } : {}),
    ctx.env,
  );
}

/** One bounded question to the model catalog. */
export function models(q: ModelQuery, ctx: CatalogContext): ModelsAnswer {
  return queryModels(q, ctx);
}

/**
 * The npm package of each named runner's agent CLI at the version its tests run (`name@version` picks
 * another), for `muster image build --agent`; a clear error for a runner with no CLI of its own.
 */
export function agentPackages(
  names: readonly string[],
): { name: string; pkg: string; version: string; bin: string }[] {
  return names.map((spec) => {
    const at = spec.lastIndexOf("@");
    const [name, version] = at > 0 ? [spec.slice(0, at), spec.slice(at + 1)] : [spec, undefined];
    const b = getRunner(name)?.binary;
    if (!b?.tested)
      throw new MusterError(
        "invalid_argument",
        `--agent ${spec}: not an agent CLI muster installs (${runnerNames()
          .filter((n) => getRunner(n)?.binary?.tested)
          .join(", ")})`,
      );
    return { name, pkg: b.tested.pkg, version: version || b.tested.version, bin: b.command };
  });
}

/** The commands of the agent CLIs muster runs (claude, codex, …): what `hosts check` looks for on a host. */
export const AGENT_CLI_COMMANDS = (): string[] =>
  runnerNames().flatMap((n) => {
    const b = getRunner(n)?.binary;
    return b ? [b.command] : [];
  });
