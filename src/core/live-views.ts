/**
 * Views of one primary's children kept current from the events its watcher reports: each event is folded
 * into its child's state as it arrives (applyEvents), so an update reads no file. The list (registry
 * entries, inbox, liveness, names) is read again only when asked, and whenever a child appears or its status
 * moves: then the live state derived here from events alone would be stale.
 */
import type { MusterEvent } from "../artifacts/events.js";
import { type LoadedChild, liveOf } from "./children.js";
import { applyEvents, type ChildState, childStatus, emptyState } from "./state.js";
import { type ChildView, childView } from "./views.js";

/** What LiveViews reads of the core: its reconciled list and the stall limit. */
export interface LiveViewsSource {
  list(): Promise<LoadedChild[]>;
  readonly stallMs: number;
}

export class LiveViews {
  private base = new Map<string, LoadedChild>();
  private readonly states = new Map<string, ChildState>();

  constructor(private readonly core: LiveViewsSource) {}

  /** Folds one event a watcher reported for child `id`. */
  apply(id: string, e: MusterEvent): void {
    const s = this.states.get(id) ?? emptyState();
    this.states.set(id, s);
    applyEvents(s, [e]);
  }

  /** The views with every event folded in since the list was read; undefined when it must be read again. */
  current(): ChildView[] | undefined {
    if ([...this.states.keys()].some((id) => !this.base.has(id))) return undefined;
    const out: ChildView[] = [];
    for (const c of this.base.values()) {
      const now = this.folded(c);
      if (!now) return undefined;
      out.push(childView(now));
    }
    return out;
  }

  /** Reads the core's list again, and folds in the events it does not have yet. */
  async reload(): Promise<ChildView[]> {
    const listed = await this.core.list();
    this.base = new Map(listed.map((c) => [c.entry.id, c]));
    return listed.map((c) => childView(this.folded(c) ?? c));
  }

  /** The child as listed, with the events folded since; undefined when its status moved. */
  private folded(c: LoadedChild): LoadedChild | undefined {
    const s = this.states.get(c.entry.id);
    if (!s || s.lastSeq <= c.state.lastSeq || c.status === "unreadable") return c;
    const pending = c.pending.filter((t) => !s.turns.some((x) => x.turnId === t) && !s.completions.has(t));
    const status = childStatus(s, pending.length);
    // Its status moved (a turn started or settled, the host exited): the listed live state is stale.
    if (status !== c.status) return undefined;
    // The live state again from the folded events (a newer event ends a stall, a question shows at once).
    const live = liveOf(s, pending.length, { createdAt: c.entry.createdAt, stallMs: this.core.stallMs });
    return { ...c, state: s, pending, live };
  }
}
