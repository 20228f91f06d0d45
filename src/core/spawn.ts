import * as fs from "node:fs";
import * as path from "node:path";
import type { Caps, ChildMeta } from "../artifacts/events.js";
import { writeInboxItem } from "../artifacts/inbox.js";
import { childFiles } from "../artifacts/layout.js";
import { MusterError } from "../base/errors.js";
import { ENV, rawSetting, setting } from "../base/settings/resolve.js";
import { addGroupMember, assertGroupId, removeGroupMember, sealGroup } from "../delivery/groups.js";
import { worktreePath } from "../isolation/result.js";
import { branchOf, checkIsolationMode, createWorktree, planWorktree } from "../isolation/worktree.js";
import { type Placement, paneLabel, placementWarning } from "../mux/backend.js";
import { LOCAL_PLACE, type Place } from "../place/place.js";
import { loadProfile } from "../profiles/profile.js";
import { resolveSettings } from "../profiles/settings.js";
import type { Profile } from "../profiles/types.js";
import { runnerReadinessWith } from "../runners/availability.js";
import { getRunner, runnerNames } from "../runners/registry.js";
import { checkTuiRunner } from "../runners/tui/check.js";
import type { Runner } from "../runners/types.js";
import { appendFork } from "../sessions/fork.js";
import { seedSession } from "../sessions/seed.js";
import { type LoadedSession, lastSettings, loadSession, sessionFileOf } from "../sessions/store.js";
import { ensureDir, writeFileAtomic, writeJsonAtomic } from "../util/fsx.js";
import { uuidv7 } from "../util/ids.js";
import { capsForSpawn } from "./caps.js";
import { loadChildOrUnreadable } from "./children.js";
import type { CoreContext } from "./context.js";
import { defaultAgent } from "./defaults.js";
import { checkPrompt } from "./host-launch.js";
import { checkLineage } from "./limits.js";
import { assertChildName, assertNameFree, paneNaming } from "./names.js";
import type { RegistryEntry } from "./registry.js";
import { discardChildFiles } from "./remove.js";

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
  /**
   * Start from this child's conversation so far (an id, short id or name of this primary's). With no agent
   * of its own, the fork goes on as its source went: same agent, and its last model and reasoning.
   */
  fork?: string;
}

export interface SpawnResult {
  id: string;
  turnId: string;
  agent: string;
  artifactDir: string;
  /** The backend it runs in and its pane's id there. */
  backend: string;
  paneId: string;
  /** The model and reasoning the first turn runs with (call ?? profile ?? primary). */
  model?: string;
  reasoning?: string;
  /** Profile and settings warnings (a bad field, a model spelling passed over). */
  warnings: string[];
  group?: string;
  /** The branch of a child isolated in a worktree. */
  branch?: string;
  name?: string;
}

/** Starts a child in a new pane with its first turn queued; returns at once. Nothing is left behind on failure. */
export async function spawnChild(m: CoreContext, opts: SpawnOptions): Promise<SpawnResult> {
  checkPrompt(opts.prompt);
  // The conversation to start from is read before anything is created: an unknown child refuses the spawn.
  const fork = opts.fork !== undefined ? forkSource(m, opts.fork) : undefined;
  if (opts.group !== undefined) assertGroupId(opts.group);
  if (opts.name !== undefined) assertNameFree(m.registry.read(), assertChildName(opts.name));
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
  // The call's cwd wins; a profile's relative cwd is relative to where muster was called.
  // A fork works where its source works unless told otherwise.
  const cwd = path.resolve(m.cwd, opts.cwd ?? fork?.cwd ?? profile.cwd ?? ".");
  const mode = opts.tui ? "tui" : profile.mode;
  if (mode === "tui") checkTuiRunner(runner.name, profile.name);
  if (!fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory())
    throw new MusterError("invalid_argument", `working directory ${cwd} does not exist`);
  const parent = rawSetting(m.env, "childId") ?? null;
  // MUSTER_DEPTH is the spawning child's own depth (set in its pane); a primary's direct child has depth 0.
  const parentDepth = setting(m.env, "depth") ?? -1;
  const depth = Number.isInteger(parentDepth) && parentDepth >= -1 ? parentDepth + 1 : 0;
  checkLineage(m.limits, depth, m.env, Object.keys(m.registry.read().children).length, () =>
    // An unreadable child counts as live (it may be): it must not stop every spawn.
    Object.values(m.registry.read().children).map((e) => loadChildOrUnreadable(m.paths, e)),
  );
  const caps = capsForSpawn(m.paths, parent, opts.caps, profile.caps);
  // An unknown backend name refuses the spawn here, before anything is created.
  const backend = m.backends.get(opts.backend, opts.place ?? rawSetting(m.env, "place"));
  await m.ensureMux(backend);

  const id = uuidv7();
  const turnId = uuidv7();
  const isolation = checkIsolationMode(opts.isolation ?? profile.isolation);
  // A directory that cannot be isolated (not a git checkout) refuses here, before anything is created.
  if (isolation === "worktree") planWorktree(cwd, id, opts.name);
  const childEnv: Record<string, string> = {
    ...Object.fromEntries(
      Object.entries(m.env).filter((e): e is [string, string] => typeof e[1] === "string"),
    ),
    ...profile.env,
  };
  await assertInstalled(runner, profile.name, childEnv, backend.place);
  // Every check has passed: from here on this spawn writes, so the primary's state may be created.
  m.claimPrimary();
  const dir = m.paths.artifactDir(id);
  const files = childFiles(dir);
  // A no-spawn agent's children inherit the ban through their environment, like the primary itself.
  if (profile.spawn === false) childEnv[ENV.noSpawn] = "1";
  const meta: ChildMeta = {
    v: 1,
    id,
    primary: m.primary,
    parent,
    depth,
    agent: profile.name,
    runner: runner.name,
    cwd,
    createdAt: new Date().toISOString(),
    profile: {
      name: profile.name,
      source: profile.source,
      ...(profile.model ? { model: profile.model } : {}),
      ...(profile.reasoning ? { reasoning: profile.reasoning } : {}),
      ...(command ? { command } : {}),
      ...(profile.protocol ? { protocol: profile.protocol } : {}),
      ...(profile.systemPrompt ? { systemPrompt: profile.systemPrompt } : {}),
      ...(profile.tools ? { tools: profile.tools } : {}),
      ...(profile.disallowedTools ? { disallowedTools: profile.disallowedTools } : {}),
      ...(profile.maxTurns !== undefined ? { maxTurns: profile.maxTurns } : {}),
      ...(profile.permissions === "ask" ? { permissions: "ask" as const } : {}),
      ...(mode === "session" || mode === "oneshot" || mode === "tui" ? { runnerMode: mode } : {}),
      ...(profile.acpMode && runner.acpModes ? { acpMode: profile.acpMode } : {}),
    },
    envNames: Object.keys(childEnv).sort(),
    ...(caps ? { caps } : {}),
    ...(fork ? { forkedFrom: fork.id } : {}),
  };
  const entry: RegistryEntry = {
    id,
    agent: profile.name,
    ...(opts.name !== undefined ? { name: opts.name } : {}),
    runner: runner.name,
    parent,
    createdAt: meta.createdAt,
    cwd,
    backend: backend.name,
    ...(backend.place.name !== LOCAL_PLACE ? { place: backend.place.name } : {}),
    pane: null,
  };
  // Joining the group is the last check that can refuse: a sealed or full group creates nothing.
  if (opts.group) {
    const children = m.registry.read().children;
    await addGroupMember(m.paths.groups, opts.group, { id, turnId }, (c) => c === id || c in children);
  }
  try {
    for (const d of [files.dir, files.inbox, files.outputs, files.prompts, files.control, files.runner])
      ensureDir(d);
    if (isolation === "worktree")
      meta.cwd = entry.cwd = createWorktree(cwd, id, worktreePath(m.root, id), dir, opts.name);
    writeJsonAtomic(files.meta, meta);
    writeFileAtomic(files.events, "");
    writeJsonAtomic(files.envFile, { env: childEnv });
    seedSession(sessionFileOf(dir), {
      id,
      primary: m.primary,
      parent,
      agent: profile.name,
      runner: runner.name,
      cwd: meta.cwd,
      createdAt: meta.createdAt,
      systemPrompt: profile.systemPrompt,
    });
    if (fork) appendFork(sessionFileOf(dir), fork.session, fork.id, meta.createdAt);
    writeInboxItem(files.inbox, {
      v: 1,
      turnId,
      prompt: opts.prompt,
      source: "inbox",
      ...(settings.model ? { model: settings.model } : {}),
      ...(settings.reasoning ? { reasoning: settings.reasoning } : {}),
      ...(opts.outputSchema ? { outputSchema: opts.outputSchema } : {}),
      createdAt: meta.createdAt,
    });
    // A place whose hosts see another disk has the start files carried there before the host looks.
    await backend.place.carry?.(dir, m.env);
    await m.registry.update((doc) => {
      // Under the lock: two spawns with the same name at once cannot both get it.
      if (opts.name !== undefined) assertNameFree(doc, opts.name);
      doc.children[id] = entry;
    });
    const pane = await backend.spawn({
      argv: backend.place.hostArgv(dir),
      start: "immediate",
      cwd: meta.cwd,
      ...paneNaming({ id, agent: profile.name, ...(opts.name !== undefined ? { name: opts.name } : {}) }),
      ...(opts.placement ? { placement: opts.placement } : {}),
    });
    await m.registry.update((doc) => {
      const e = doc.children[id];
      if (e) e.pane = pane;
    });
    if (opts.group && opts.seal) await sealGroup(m.paths.groups, opts.group);
    return {
      id,
      turnId,
      ...(opts.group ? { group: opts.group } : {}),
      ...(opts.name !== undefined ? { name: opts.name } : {}),
      agent: profile.name,
      artifactDir: dir,
      backend: backend.name,
      paneId: paneLabel(pane),
      ...(isolation === "worktree" ? { branch: branchOf(id, opts.name) } : {}),
      ...(settings.model ? { model: settings.model } : {}),
      ...(settings.reasoning ? { reasoning: settings.reasoning } : {}),
      warnings: [
        ...profile.warnings,
        ...settings.warnings,
        ...ignoredFields(runner, profile),
        ...placementWarning(backend, opts.placement),
      ],
    };
  } catch (e) {
    await m.registry
      .update((doc) => {
        delete doc.children[id];
      })
      .catch(() => {});
    await discardChildFiles(m, dir, id, () => backend.place);
    if (opts.group) await removeGroupMember(m.paths.groups, opts.group, id).catch(() => {});
    throw e;
  }
}

/** A runner that drives an agent CLI needs that CLI where the child will look for it: say so before anything starts. */
/** Refuses a runner whose agent CLI is not installed where the child will run (its place). */
export async function assertInstalled(
  runner: Runner,
  agent: string,
  env: Record<string, string>,
  place: Place,
): Promise<void> {
  const r = await runnerReadinessWith(runner.name, env, (bin) => place.findCommand(bin, env));
  if (r.ready || !runner.binary) return;
  const where = place.name === LOCAL_PLACE ? "here" : `in place ${place.name}`;
  throw new MusterError(
    "unsupported",
    `agent "${agent}" runs ${runner.name}, which is not installed ${where} (${r.why}); install it (${runner.binary.install}) or set ${runner.binary.envVar} to its path`,
  );
}

function ignoredFields(runner: Runner, profile: Profile): string[] {
  const asks = profile.permissions === "ask" && !runner.routesPermissions;
  return (runner.ignores ?? [])
    .filter((f) => profile[f] !== undefined)
    .map((f) => `agent "${profile.name}": ${runner.name} has no way to apply ${f}; it is ignored`)
    .concat(
      asks
        ? [
            `agent "${profile.name}": ${runner.name} has no permission prompts to route; permissions: ask is ignored`,
          ]
        : [],
    )
    .concat(
      profile.acpMode !== undefined && !runner.acpModes
        ? [
            `agent "${profile.name}": ${runner.name} opens no ACP session of its own choosing; acpMode is ignored`,
          ]
        : [],
    );
}

/** The child a fork starts from and its conversation; one without a turn yet has nothing to fork. */
function forkSource(
  m: CoreContext,
  ref: string,
): { id: string; agent: string; cwd: string; session: LoadedSession } {
  const c = m.child(ref);
  const session = loadSession(sessionFileOf(c.files.dir));
  if (!session.messages.some((x) => x.role === "user"))
    throw new MusterError("invalid_argument", `child ${c.entry.id} has no conversation to fork yet`);
  return { id: c.entry.id, agent: c.entry.agent, cwd: c.entry.cwd, session };
}
