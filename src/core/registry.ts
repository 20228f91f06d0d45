import type { PaneRef } from "../mux/backend.js";
import { readJsonIfExists, writeJsonAtomic } from "../util/fsx.js";
import { withFileLock } from "../util/lock.js";

/** One child as the primary's registry knows it; live state comes from its events. */
export interface RegistryEntry {
  id: string;
  agent: string;
  runner: string;
  parent: string | null;
  createdAt: string;
  cwd: string;
  pane: PaneRef | null;
  /** Earlier panes of the child (a resume after its host exited opens a new one), oldest first. */
  panes?: PaneRef[];
}

export interface RegistryDoc {
  v: 1;
  primary: string;
  children: Record<string, RegistryEntry>;
}

/** The per-primary registry: JSON replaced atomically, every change made under a lock. */
export class Registry {
  constructor(
    readonly file: string,
    readonly primary: string,
  ) {}

  read(): RegistryDoc {
    return readJsonIfExists<RegistryDoc>(this.file) ?? { v: 1, primary: this.primary, children: {} };
  }

  /** Read-modify-write under the lock; fn mutates the document in place. */
  async update<T>(fn: (doc: RegistryDoc) => T): Promise<T> {
    return withFileLock(this.file, () => {
      const doc = this.read();
      const out = fn(doc);
      writeJsonAtomic(this.file, doc);
      return out;
    });
  }
}
