import { sealGroup } from "../delivery/groups.js";
import type { CoreContext } from "./context.js";
import { paneNaming } from "./names.js";
import type { RegistryEntry } from "./registry.js";
import type { ChildRecords } from "./spawn-create.js";
import type { SpawnPlan } from "./spawn-plan.js";

/**
 * The launch phase: start the host in a pane through the backend (on its place), record the pane, and seal the
 * group if asked. A failure here is undone by the caller's one rollback, like one in the create phase.
 */
export async function launchChild(
  m: CoreContext,
  plan: SpawnPlan,
  rec: ChildRecords,
): Promise<NonNullable<RegistryEntry["pane"]>> {
  const { opts, profile, backend, id } = plan;
  const { dir, meta } = rec;
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
  return pane;
}
