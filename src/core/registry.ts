import { normalizePaneRef, type PaneRef } from "../mux/backend.js";
import { readJsonIfExists, writeJsonAtomic } from "../util/fsx.js";
import { withFileLock } from "../util/lock.js";

/** One child as the primary's registry knows it; live state comes from its events. */
export interface RegistryEntry {
  id: string;
  agent: string;
  /** A person's label for it (`spawn --name`): unique among the primary's children, usable as its id. */
  name?: string;
  runner: string;
  parent: string | null;
  createdAt: string;
  cwd: string;
  /** The backend it was started in (its panes name theirs too); absent in entries older than backends: tmux. */
  backend?: string;
  /** Where its host runs (place/place.ts); absent: this machine (`local`), as in every entry older than places. */
  place?: string;
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
    const doc = readJsonIfExists<RegistryDoc>(this.file) ?? { v: 1, primary: this.primary, children: {} };
    for (const e of Object.values(doc.children)) {
      // Entries written before backends had names hold bare tmux panes.
      e.pane = normalizePaneRef(e.pane);
      if (e.panes) e.panes = e.panes.map(normalizePaneRef).filter((p): p is PaneRef => p !== null);
    }
    return doc;
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
