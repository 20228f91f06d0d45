/**
 * Where the core gets a child's store: the one place that decides it. Every child's files are on this machine
 * today; a child placed elsewhere will be answered here by the store of its local mirror.
 */
import type { PrimaryPaths } from "../artifacts/layout.js";
import type { ChildStore, ChildStores } from "../artifacts/store.js";
import { localChildStore, localChildStores } from "../artifacts/store-local.js";

/** The stores of a primary's children. */
export const childStores = (paths: PrimaryPaths): ChildStores => localChildStores(paths.artifacts);

/** The store of the child whose artifact dir (or its mirror) is `dir`. */
export const storeAt = (dir: string): ChildStore => localChildStore(dir);
