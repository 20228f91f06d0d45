import type { ChildMeta } from "../artifacts/events.js";
import { writeHostEnv } from "../artifacts/host-env.js";
import { writeInboxItem } from "../artifacts/inbox.js";
import { type ChildFiles, childFiles } from "../artifacts/layout.js";
import { ENV } from "../base/settings/resolve.js";
import { addGroupMember } from "../delivery/groups.js";
import { createFarWorktree } from "../isolation/far.js";
import { worktreePath } from "../isolation/result.js";
import { type SetupDone, setUpFarWorktree, setUpWorktree } from "../isolation/setup.js";
import { createWorktree } from "../isolation/worktree.js";
import { LOCAL_PLACE } from "../place/place.js";
import { appendFork } from "../sessions/fork.js";
import { seedSession } from "../sessions/seed.js";
import { sessionFileOf } from "../sessions/store.js";
import { ensureDir, writeFileAtomic, writeJsonAtomic } from "../util/fsx.js";
import type { CoreContext } from "./context.js";
import { assertNameFree } from "./names.js";
import type { RegistryEntry } from "./registry.js";
import type { SpawnPlan } from "./spawn-plan.js";
import { storeAt } from "./stores.js";

/** What the create phase writes for a child: its artifact dir, its meta file and its registry entry. */
export interface ChildRecords {
  dir: string;
  files: ChildFiles;
  meta: ChildMeta;
  entry: RegistryEntry;
}

/** The child's meta and registry entry, built in memory; called once the primary's state exists (meta names it). */
export function childRecords(m: CoreContext, plan: SpawnPlan): ChildRecords {
  const {
    opts,
    profile,
    runner,
    command,
    cwd,
    mode,
    parent,
    depth,
    caps,
    restart,
    verify,
    backend,
    fork,
    id,
    childEnv,
  } = plan;
  const dir = m.paths.artifactDir(id);
  const files = childFiles(dir);
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
    ...(restart ? { restart } : {}),
    ...(verify ? { verify } : {}),
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
  return { dir, files, meta, entry };
}

/** Joining the group is the last check that can refuse: a sealed or full group creates nothing. */
export async function joinGroup(m: CoreContext, plan: SpawnPlan): Promise<void> {
  const { opts, id, turnId } = plan;
  if (opts.group) {
    const children = m.registry.read().children;
    await addGroupMember(m.paths.groups, opts.group, { id, turnId }, (c) => c === id || c in children);
  }
}

/**
 * The create phase: the artifact dir, the worktree of an isolated child, the start files the host reads, and
 * the registry entry (with no pane yet). A failure part-way is undone by the caller's one rollback.
 */
export async function createChild(m: CoreContext, plan: SpawnPlan, rec: ChildRecords): Promise<void> {
  const { opts, profile, runner, cwd, parent, settings, fork, backend, isolation, id, turnId, hostEnv } =
    plan;
  const { dir, files, meta, entry } = rec;
  for (const d of [files.dir, files.inbox, files.outputs, files.prompts, files.control, files.runner])
    ensureDir(d);
  const there = backend.place.pathThere?.bind(backend.place);
  let setUp: SetupDone | undefined;
  if (isolation === "worktree") {
    const top = there ? there(worktreePath(m.root, id)) : worktreePath(m.root, id);
    meta.cwd = entry.cwd = there
      ? await createFarWorktree(backend.place, cwd, id, top, dir, opts.name)
      : createWorktree(cwd, id, top, dir, opts.name);
    if (plan.setup) {
      setUp = await setUpChildWorktree(m, plan, top);
      // The child's clock starts now: a host not started soon after createdAt counts as stuck.
      meta.createdAt = entry.createdAt = new Date().toISOString();
    }
  }
  writeJsonAtomic(files.meta, meta);
  writeFileAtomic(files.events, "");
  writeHostEnv(files.envFile, hostEnv);
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
  // The set-up's record goes first in the log, before the host's (on another machine, through the mirror).
  const record = setUp;
  if (record)
    await storeAt(dir).appendAsParent((_, log) => log.append({ type: "worktree_setup", ...record }));
  await m.registry.update((doc) => {
    // Under the lock: two spawns with the same name at once cannot both get it.
    if (opts.name !== undefined) assertNameFree(doc, opts.name);
    doc.children[id] = entry;
  });
}

/** Runs the checkout's worktree set-up in the new worktree `top` (here or on the child's place). */
function setUpChildWorktree(m: CoreContext, plan: SpawnPlan, top: string): Promise<SetupDone> {
  const { backend, id, depth, hostEnv, setup, opts } = plan;
  // The spawning child's own artifact dir is not this one's: nothing of the set-up may act as that child.
  const { [ENV.artifactDir]: _, ...handed } = hostEnv.env;
  const env = {
    env: {
      ...handed,
      [ENV.childId]: id,
      [ENV.primary]: m.primary,
      [ENV.depth]: String(depth),
      [ENV.worktree]: top,
    },
    inherit: hostEnv.inherit === true,
  };
  return backend.place.pathThere
    ? setUpFarWorktree(backend.place, setup!, top, env, opts.onProgress)
    : setUpWorktree(setup!, top, env, opts.onProgress);
}
