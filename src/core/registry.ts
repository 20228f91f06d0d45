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

  /**
   * Read-modify-write under the lock; fn mutates the document in place. Updates asked for while another of
   * this process is under way are applied together, in order, under one lock and one write: a burst of
   * spawns (a wide workflow) costs a lock hold per burst, not per spawn, and its own spawns never wait out
   * the lock's bound behind each other. A fn that throws rejects its own update only.
   */
  update<T>(fn: (doc: RegistryDoc) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.flushing) this.flushing = this.flush();
    });
  }

  private readonly queued: PendingUpdate[] = [];
  private flushing: Promise<void> | undefined;

  // One function, no await between the last emptiness check and the end: an update asked for by the
  // continuation of one this flush resolved sees no flush running, and starts one.
  private async flush(): Promise<void> {
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0);
      const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
      try {
        await withFileLock(this.file, () => {
          let doc = this.read();
          for (const u of batch) {
            // Each on a copy: one that throws half-way leaves nothing of itself in the others' document.
            const trial = batch.length > 1 ? structuredClone(doc) : doc;
            try {
              outcomes.push({ ok: true, value: u.fn(trial) });
              doc = trial;
            } catch (error) {
              outcomes.push({ ok: false, error });
            }
          }
          if (outcomes.some((o) => o.ok)) writeJsonAtomic(this.file, doc);
        });
      } catch (error) {
        for (const u of batch) u.reject(error);
        continue;
      }
      batch.forEach((u, i) => {
        const o = outcomes[i]!;
        if (o.ok) u.resolve(o.value);
        else u.reject(o.error);
      });
    }
    this.flushing = undefined;
  }
}

interface PendingUpdate {
  fn: (doc: RegistryDoc) => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}
