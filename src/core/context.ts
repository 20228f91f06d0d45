import type { PrimaryPaths } from "../artifacts/layout.js";
import type { Backend } from "../mux/backend.js";
import type { BackendSet } from "../mux/registry.js";
import type { ListOptions, LoadedChild } from "./children.js";
import type { Limits } from "./limits.js";
import type { Registry, RegistryEntry } from "./registry.js";

/**
 * What the core's operation modules (spawn, wait, cancel, gc, inbox, remove, watcher) need from the core
 * object. They take this narrow context, not the Muster class, so the class can import them without a cycle.
 */
export interface CoreContext {
  readonly root: string;
  /** Every backend this process has used, by name. */
  readonly backends: BackendSet;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  readonly limits: Limits;
  /** An open turn with no event for this long is stalled (default 60 s). */
  readonly stallMs?: number;
  readonly primary: string;
  readonly paths: PrimaryPaths;
  readonly registry: Registry;
  /** Creates this primary's state before its first write. */
  claimPrimary(): void;
  /** The backend a child runs in, by its record. */
  backendOf(entry: Pick<RegistryEntry, "pane" | "backend" | "place">): Backend;
  /** Checks once per backend that the multiplexer runs (throws mux_unavailable). */
  ensureMux(backend?: Backend): Promise<void>;
  /** One child by id or unique prefix/suffix (throws not_found). */
  child(idOrPrefix: string): LoadedChild;
  reload(entry: RegistryEntry): LoadedChild;
  /** Turns a dead host into a recorded `lost`; returns the child's fresh state. */
  reconcile(c: LoadedChild): Promise<LoadedChild>;
  list(opts?: ListOptions): Promise<LoadedChild[]>;
  /** Cancels one child (and closes its pane). */
  cancel(idOrPrefix: string): Promise<unknown>;
  /** Marks delivery records consumed. */
  consume(recordIds: string[], by: string): void;
}
