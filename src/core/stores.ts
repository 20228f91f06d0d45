/**
 * Where the core gets a child's store: the one place that decides it. A child whose host runs here has its
 * artifact dir on this disk; a child placed elsewhere has a local mirror of it (marked so by its place),
 * whose log is appended only on the far side.
 */
import type { PrimaryPaths } from "../artifacts/layout.js";
import type { ChildStore, ChildStores } from "../artifacts/store.js";
import { localChildStore, localChildStores } from "../artifacts/store-local.js";
import { isMirrored, mirroredChildStore } from "../artifacts/store-mirrored.js";

/** The store of the child whose artifact dir (or its mirror) is `dir`. */
export const storeAt = (dir: string): ChildStore =>
  isMirrored(dir) ? mirroredChildStore(dir) : localChildStore(dir);

/** The stores of a primary's children. */
export function childStores(paths: PrimaryPaths): ChildStores {
  const local = localChildStores(paths.artifacts);
  return { ...local, child: (id: string) => storeAt(local.child(id).dir) };
}
