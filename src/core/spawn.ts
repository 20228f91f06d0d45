import { pauseInForce } from "../artifacts/tree-pause.js";
import { removeGroupMember } from "../delivery/groups.js";
import { branchOf } from "../isolation/worktree.js";
import { paneLabel, placementWarning } from "../mux/backend.js";
import type { Profile } from "../profiles/types.js";
import type { Runner } from "../runners/types.js";
import type { CoreContext } from "./context.js";
import type { RegistryEntry } from "./registry.js";
import { discardChildFiles } from "./remove.js";
import { type ChildRecords, childRecords, createChild, joinGroup } from "./spawn-create.js";
import { launchChild } from "./spawn-launch.js";
import { planSpawn, type SpawnOptions, type SpawnPlan } from "./spawn-plan.js";
import { pauseView, type TreePauseView } from "./tree-pause.js";

export type { SpawnOptions } from "./spawn-plan.js";

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
  /** The tree is paused (a provider refused it: quota, credential): the child exists, its first turn waits. */
  paused?: TreePauseView;
}

/**
 * Starts a child in a new pane with its first turn queued; returns at once. Nothing is left behind on failure:
 * the plan phase writes nothing, and whatever the create and launch phases did is undone by one rollback.
 */
export async function spawnChild(m: CoreContext, opts: SpawnOptions): Promise<SpawnResult> {
  const plan = await planSpawn(m, opts);
  // Every check has passed: from here on this spawn writes, so the primary's state may be created.
  m.claimPrimary();
  const rec = childRecords(m, plan);
  // A refusal to join writes nothing, so it needs no rollback.
  await joinGroup(m, plan);
  try {
    await createChild(m, plan, rec);
    const pane = await launchChild(m, plan, rec);
    const paused = pauseInForce(m.paths.dir);
    return { ...spawnResult(plan, rec, pane), ...(paused ? { paused: pauseView(paused) } : {}) };
  } catch (e) {
    await rollbackSpawn(m, plan, rec);
    throw e;
  }
}

/**
 * The one undo of the create and launch phases, run whole whichever step failed: dropping a registry entry that
 * was never added, or discarding a dir or worktree never made, is harmless, so no record of progress is kept.
 */
async function rollbackSpawn(m: CoreContext, plan: SpawnPlan, rec: ChildRecords): Promise<void> {
  const { opts, backend, id } = plan;
  await m.registry
    .update((doc) => {
      delete doc.children[id];
    })
    .catch(() => {});
  // The child never ran: what its worktree holds (its set-up's files) is nobody's work, and its branch goes.
  await discardChildFiles(m, rec.dir, id, () => backend.place, "drop");
  if (opts.group) await removeGroupMember(m.paths.groups, opts.group, id).catch(() => {});
}

function spawnResult(
  plan: SpawnPlan,
  rec: ChildRecords,
  pane: NonNullable<RegistryEntry["pane"]>,
): SpawnResult {
  const { opts, profile, runner, settings, backend, isolation, id, turnId } = plan;
  const dir = rec.dir;
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
      ...(plan.setup?.include?.warnings ?? []),
    ],
  };
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
