import * as fs from "node:fs";
import * as path from "node:path";
import type { Caps, VerifySpec } from "../artifacts/events.js";
import type { HostEnv } from "../artifacts/host-env.js";
import { parseRestart, RESTART_RULE, type RestartPolicy } from "../artifacts/restart.js";
import type { ContainerRequest } from "../base/container-request.js";
import { MusterError } from "../base/errors.js";
import { ENV, rawSetting, setting } from "../base/settings/resolve.js";
import type { VerifyRequest } from "../base/verify-request.js";
import { loadSettings } from "../config/settings.js";
import { assertGroupId } from "../delivery/groups.js";
import { planSetup, type SetupPlan } from "../isolation/setup.js";
import { checkIsolationMode, planWorktree } from "../isolation/worktree.js";
import type { Placement } from "../mux/backend.js";
import { LOCAL_PLACE, type Place } from "../place/place.js";
import { type ChildPlaceContext, namedChildPlace, placeForChild, placeOn } from "../place/registry.js";
import { loadProfile } from "../profiles/profile.js";
import { type ResolvedSettings, resolveSettings } from "../profiles/settings.js";
import type { Profile } from "../profiles/types.js";
import { runnerReadinessWith } from "../runners/availability.js";
import { getRunner, runnerNames } from "../runners/registry.js";
import { checkTuiRunner } from "../runners/tui/check.js";
import type { Runner } from "../runners/types.js";
import { type LoadedSession, lastSettings, loadSession, sessionFileOf } from "../sessions/store.js";
import { uuidv7 } from "../util/ids.js";
import { capsForSpawn } from "./caps.js";
import { loadChildOrUnreadable } from "./children.js";
import type { CoreContext } from "./context.js";
import { defaultAgent } from "./defaults.js";
import { checkPrompt } from "./host-launch.js";
import { checkLineage } from "./limits.js";
import { assertChildName, assertNameFree } from "./names.js";
import { placeNameOf } from "./panes.js";
import { verifySpecFor } from "./verify.js";

export interface SpawnOptions {
  /** The profile (default: a fork's source's agent, else $MUSTER_AGENT, else the default agent). */
  agent?: string;
  prompt: string;
  cwd?: string;
  /** argv for the command runner. */
  command?: string[];
  model?: string;
  reasoning?: string;
  placement?: Placement;
  /** The backend to start it in, by registered name (default MUSTER_BACKEND, else tmux). */
  backend?: string;
  /** Where its host runs, by place name (default `local`: this machine); see place/registry.ts. */
  place?: string;
  /** Or the SSH host(s) it runs on (see place/registry.ts placeOn); default: the profile's `on`. */
  on?: string | string[];
  /** Or a container of its own, over the profile's `container:` (see place/registry.ts placeForChild). */
  container?: ContainerRequest;
  /** Deliver this child's first result together with the rest of this explicit group. */
  group?: string;
  /** Seal the group once this child has joined it. */
  seal?: boolean;
  /** "worktree": run in a git worktree of its own on branch muster/<short id> (default: the profile's, else none). */
  isolation?: string;
  /** A label unique among the primary's children, usable wherever an id is (see names.ts). */
  name?: string;
  /** A JSON Schema the first turn's answer must match, enforced by the runner's CLI (check `nativeSchema` first). */
  outputSchema?: object;
  /** Caps on this child and everything it spawns (narrowed by its profile's and its parent's). */
  caps?: Caps;
  /** Run the agent CLI's own TUI in the pane (as the profile's `mode: tui`). */
  tui?: boolean;
  /** The acceptance check every turn's answer must pass, over the profile's `verify:` (see core/verify.ts). */
  verify?: VerifyRequest;
  /**
   * `on-lost[:N]`: a turn whose host or agent dies is restarted on the same conversation, at most N times
   * (default 3, at most 20); `no` (the default, over a profile's `restart:`) never.
   */
  restart?: string;
  /**
   * Start from this child's conversation so far (an id, short id or name of this primary's). With no agent
   * of its own, the fork goes on as its source went: same agent, and its last model and reasoning.
   */
  fork?: string;
  /** Told, in a line, of a step of the spawn that takes a while (a worktree's set-up still running after a second). */
  onProgress?: (text: string) => void;
}

/** The child a fork starts from and its conversation. */
export interface ForkSource {
  id: string;
  agent: string;
  cwd: string;
  session: LoadedSession;
}

/** Everything a spawn decided before it writes anything: the create and launch phases only carry it out. */
export interface SpawnPlan {
  opts: SpawnOptions;
  fork: ForkSource | undefined;
  profile: Profile;
  runner: Runner;
  settings: ResolvedSettings;
  command: string[] | undefined;
  cwd: string;
  mode: Profile["mode"] | "tui";
  parent: string | null;
  depth: number;
  caps: Caps | undefined;
  /** Its restart policy (the call's, else its profile's); undefined: none. */
  restart: RestartPolicy | undefined;
  /** The acceptance check the host runs on every answer. */
  verify: VerifySpec | undefined;
  backend: ReturnType<CoreContext["backends"]["get"]>;
  id: string;
  turnId: string;
  isolation: ReturnType<typeof checkIsolationMode>;
  childEnv: Record<string, string>;
  /** What env.json hands the host: the environment, and whether it goes over the host's own (another machine). */
  hostEnv: HostEnv;
  /** What a new worktree gets from its checkout's `.muster/` (isolation/setup.ts); null: nothing. */
  setup: SetupPlan | null;
}

/**
 * The plan phase: every check a spawn makes and every choice (profile, runner, settings, cwd, backend, ids),
 * with nothing of the child created (at most its backend started), so a refusal here leaves no trace.
 */
export async function planSpawn(m: CoreContext, opts: SpawnOptions): Promise<SpawnPlan> {
  checkPrompt(opts.prompt);
  // The conversation to start from is read before anything is created: an unknown child refuses the spawn.
  const fork = opts.fork !== undefined ? forkSource(m, opts.fork) : undefined;
  if (opts.group !== undefined) assertGroupId(opts.group);
  if (opts.name !== undefined) assertNameFree(m.registry.read(), assertChildName(opts.name));
  const { profile, runner, settings, command } = resolveAgent(m, opts, fork);
  // The call's cwd wins; a profile's relative cwd is relative to where muster was called.
  // A fork works where its source works unless told otherwise.
  const cwd = path.resolve(m.cwd, opts.cwd ?? fork?.cwd ?? profile.cwd ?? ".");
  const mode = opts.tui ? "tui" : profile.mode;
  if (mode === "tui") checkTuiRunner(runner.name, profile.name);
  if (!fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory())
    throw new MusterError("invalid_argument", `working directory ${cwd} does not exist`);
  const { parent, depth } = checkedLineage(m);
  const caps = capsForSpawn(m.paths, parent, opts.caps, profile.caps);
  const restart = restartFor(opts.restart, profile.restart);
  const verify = verifySpecFor(opts.verify, profile.verify);
  const id = uuidv7();
  const turnId = uuidv7();
  const isolation = checkIsolationMode(opts.isolation ?? profile.isolation);
  // An unknown backend name refuses the spawn here, before anything is created.
  const backend = m.backends.get(
    opts.backend,
    await placeNameFor(m, opts, profile, {
      id,
      cwd,
      runner: runner.name,
      worktree: isolation === "worktree",
    }),
  );
  try {
    return await planPlaced(m, opts, {
      ...{ profile, runner, settings, command, cwd, mode, fork, backend, id, turnId, isolation },
      ...{ parent, depth, caps, restart },
      ...{ parent, depth, caps, verify },
    });
  } catch (e) {
    // A place made for this child alone (its container) goes with the refused spawn.
    await backend.place.discard?.().catch(() => undefined);
    throw e;
  }
}

/** The place a new child's options name: a container of its own, a host `on` chooses, a place, or the default. */
async function placeNameFor(
  m: CoreContext,
  opts: SpawnOptions,
  profile: Profile,
  child: Omit<ChildPlaceContext, "env" | "primary">,
): Promise<string | undefined> {
  const asked = opts.place !== undefined || opts.on !== undefined;
  const ctx = { ...child, env: m.env, primary: m.primary };
  // A profile's Pod: its children go to the cluster unless the call says where.
  if (!asked && opts.container === undefined && profile.k8s !== undefined)
    return (await placeForChild({ kind: "k8s", on: "k8s", profile: profile.k8s }, ctx)).name;
  if (opts.container !== undefined || (!asked && profile.container !== undefined))
    return (
      await placeForChild({ kind: "container", req: opts.container ?? {}, profile: profile.container }, ctx)
    ).name;
  const on = opts.place === undefined ? (opts.on ?? profile.on) : undefined;
  const placed = async () => (await m.list()).map((c) => ({ place: placeNameOf(c.entry), status: c.status }));
  // "h1,h2" and ["h1", "h2"] alike (a flag, an MCP argument, a TOML string, a profile's list).
  const hosts = [on ?? []].flat().flatMap((h) => h.split(",").map((x) => x.trim()));
  // A Pod of its own in a Kubernetes cluster: `k8s` (the kubeconfig's current context) or `k8s:<context>`.
  if (hosts.length === 1 && /^k8s(:|$)/.test(hosts[0]!))
    return (await placeForChild({ kind: "k8s", on: hosts[0]!, profile: profile.k8s }, ctx)).name;
  // A cluster the user named (`muster hosts add <name> --k8s`): a Pod of its own there.
  const cluster = hosts.length === 1 ? namedChildPlace(hosts[0]!, m.env, profile.k8s) : undefined;
  if (cluster) return (await placeForChild(cluster, ctx)).name;
  const named = on !== undefined ? await placeOn(hosts.filter(Boolean), m.env, placed) : undefined;
  return opts.place ?? named ?? rawSetting(m.env, "place");
}

/** The rest of the plan, once the child's place is known. */
async function planPlaced(
  m: CoreContext,
  opts: SpawnOptions,
  p: Pick<
    SpawnPlan,
    | "profile"
    | "runner"
    | "settings"
    | "command"
    | "cwd"
    | "mode"
    | "fork"
    | "backend"
    | "id"
    | "turnId"
    | "isolation"
    | "parent"
    | "depth"
    | "caps"
    | "restart"
    | "verify"
  >,
): Promise<SpawnPlan> {
  const { profile, runner, cwd, mode, backend, id, isolation } = p;
  if (mode === "tui" && backend.place.tuiUnavailable)
    throw new MusterError(
      "unsupported",
      `mode tui is not available in place ${backend.place.name}: ${backend.place.tuiUnavailable}`,
    );
  // A place on another machine is readied (asked what it has, a container made) while its terminal is
  // checked there: the terminal's commands wait for a container being made, not for the probe.
  // When readying fails, its error (no such image, no node there) is the one said, not the terminal's.
  await Promise.all([backend.place.ready?.(), m.ensureMux(backend)]);
  if (isolation === "worktree" && backend.place.workdir && !backend.place.pathThere)
    throw new MusterError(
      "unsupported",
      `--isolation worktree is not available in place ${backend.place.name}; its children work in its own folder`,
    );
  // A directory that cannot be isolated (not a git checkout) refuses here, before anything is created, and
  // so does a set-up of its checkout that cannot run (a script not executable, a list leading out of it).
  const setup =
    isolation === "worktree"
      ? planSetup(
          planWorktree(cwd, id, opts.name).repo,
          loadSettings(m.env).values.worktreeSetupSeconds * 1000,
        )
      : null;
  // A child on another machine works in a folder there, which its place names; an isolated one in the
  // worktree made for it there.
  const workdir = backend.place.workdir && isolation !== "worktree" ? await backend.place.workdir(cwd) : cwd;
  const childEnv: Record<string, string> = {
    ...Object.fromEntries(
      Object.entries(m.env).filter((e): e is [string, string] => typeof e[1] === "string"),
    ),
    ...profile.env,
  };
  await assertInstalled(runner, profile.name, childEnv, backend.place);
  // A no-spawn agent's children inherit the ban through their environment, like the primary itself; set after
  // the install check, which looks the CLI up with the environment as it was.
  if (profile.spawn === false) childEnv[ENV.noSpawn] = "1";
  const handed = backend.place.handover?.(childEnv, Object.keys(profile.env ?? {}));
  return {
    ...p,
    hostEnv: handed ? { env: handed, inherit: true } : { env: childEnv },
    opts,
    cwd: workdir,
    childEnv,
    setup,
  };
}

/** The call's restart policy (refused when misspelt), else the profile's; `no` turns the profile's off. */
function restartFor(
  asked: string | undefined,
  profile: RestartPolicy | undefined,
): RestartPolicy | undefined {
  if (asked === undefined) return profile;
  const p = parseRestart(asked);
  if (p === undefined)
    throw new MusterError(
      "invalid_argument",
      `restart must be ${RESTART_RULE}, not ${JSON.stringify(asked)}`,
    );
  return p ?? undefined;
}

/** The agent's profile and runner, and the model, reasoning and command its first turn runs with. */
function resolveAgent(
  m: CoreContext,
  opts: SpawnOptions,
  fork: ForkSource | undefined,
): Pick<SpawnPlan, "profile" | "runner" | "settings" | "command"> {
  const inherited = fork && opts.agent === undefined ? lastSettings(fork.session) : {};
  const model = opts.model ?? inherited.model;
  const reasoning = opts.reasoning ?? inherited.reasoning;
  const profile = loadProfile(opts.agent ?? fork?.agent ?? defaultAgent(m.env), m.cwd, m.env);
  const runner = getRunner(profile.runner);
  if (!runner) {
    throw new MusterError(
      "unsupported",
      `agent "${profile.name}" (${profile.source}) uses runner "${profile.runner}", which is not available yet; runners: ${runnerNames().join(", ")}`,
    );
  }
  const settings = resolveSettings({
    runner: runner.name,
    call: {
      ...(model ? { model } : {}),
      ...(reasoning ? { reasoning } : {}),
    },
    profile,
    env: m.env,
  });
  const command = opts.command && opts.command.length > 0 ? opts.command : profile.command;
  if ((runner.name === "command" || runner.name === "acp") && !command) {
    throw new MusterError("invalid_argument", `agent "${profile.name}" runs a command`, {
      next: { action: "give_argv", agent: profile.name },
    });
  }
  return { profile, runner, settings, command };
}

/** The spawning child (none for the primary) and the new child's depth, refused past the lineage limits. */
function checkedLineage(m: CoreContext): { parent: string | null; depth: number } {
  const parent = rawSetting(m.env, "childId") ?? null;
  // MUSTER_DEPTH is the spawning child's own depth (set in its pane); a primary's direct child has depth 0.
  const parentDepth = setting(m.env, "depth") ?? -1;
  const depth = Number.isInteger(parentDepth) && parentDepth >= -1 ? parentDepth + 1 : 0;
  checkLineage(m.limits, depth, m.env, Object.keys(m.registry.read().children).length, () =>
    // An unreadable child counts as live (it may be): it must not stop every spawn.
    Object.values(m.registry.read().children).map((e) => loadChildOrUnreadable(m.paths, e)),
  );
  return { parent, depth };
}

/** Refuses a runner whose agent CLI is not installed where the child will run (its place), before anything starts. */
export async function assertInstalled(
  runner: Runner,
  agent: string,
  env: Record<string, string>,
  place: Place,
): Promise<void> {
  const r = await runnerReadinessWith(runner.name, env, (bin) => place.findCommand(bin, env));
  if (r.ready || !runner.binary) return;
  const where = place.name === LOCAL_PLACE ? "here" : `in place ${place.name}`;
  const fix =
    place.installHint?.(runner.name) ??
    `install it (${runner.binary.install}) or set ${runner.binary.envVar} to its path`;
  throw new MusterError(
    "unsupported",
    `agent "${agent}" runs ${runner.name}, which is not installed ${where} (${r.why}); ${fix}`,
  );
}

/** The child a fork starts from and its conversation; one without a turn yet has nothing to fork. */
function forkSource(m: CoreContext, ref: string): ForkSource {
  const c = m.child(ref);
  const session = loadSession(sessionFileOf(c.files.dir));
  if (!session.messages.some((x) => x.role === "user"))
    throw new MusterError("invalid_argument", `child ${c.entry.id} has no conversation to fork yet`);
  return { id: c.entry.id, agent: c.entry.agent, cwd: c.entry.cwd, session };
}
