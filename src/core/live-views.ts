/**
 * Views of one primary's children kept current from the events its watcher reports: each event is folded
 * into its child's state as it arrives (applyEvents), so an update reads no file. A child is read again
 * (its registry entry, inbox, liveness, name) when it appears or its status moves: then the live state
 * derived here from events alone would be stale. The others are kept as they are: with 32 children
 * settling one after another, reading and probing the whole list each time cost ~17 ms of CPU here, and under
 * load 150-250 ms before `muster web` could send the update. All are read again when asked (`all`).
 */
import type { MusterEvent } from "../artifacts/events.js";
import { type ListOptions, type LoadedChild, liveOf } from "./children.js";
import { applyEvents, type ChildState, childStatus, emptyState } from "./state.js";
import { type ChildView, childView } from "./views.js";

/** What LiveViews reads of the core: its reconciled list and the stall limit. */
export interface LiveViewsSource {
  list(opts?: ListOptions): Promise<LoadedChild[]>;
  readonly stallMs: number;
}

export class LiveViews {
  private base = new Map<string, LoadedChild>();
  private readonly states = new Map<string, ChildState>();

  constructor(private readonly core: LiveViewsSource) {}

  /** Folds one event a watcher reported for child `id`; true when that child is new or its status moved. */
  apply(id: string, e: MusterEvent): boolean {
    const s = this.states.get(id) ?? emptyState();
    this.states.set(id, s);
    applyEvents(s, [e]);
    const c = this.base.get(id);
    return !c || this.moved(c);
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

  /**
   * Reads the core's list again, and folds in the events it does not have yet. Unless `all`, a child whose
   * status has not moved since it was read, and whose registry entry has not changed, is kept as it was read
   * (the registry is read again each time: a child removed is gone), and the others are read from their files
   * with no liveness probe: the watcher feeding these views probes its children and records a death as an
   * event.
   */
  async reload(opts: { all?: boolean } = {}): Promise<ChildView[]> {
    const reuse = new Map<string, LoadedChild>();
    // One that could not be read is tried again each time.
    if (!opts.all)
      for (const [id, c] of this.base) if (c.status !== "unreadable" && !this.moved(c)) reuse.set(id, c);
    const listed = await this.core.list(opts.all ? {} : { reuse, probe: false });
    this.base = new Map(listed.map((c) => [c.entry.id, c]));
    return listed.map((c) => childView(this.folded(c) ?? c));
  }

  /** The child as listed, with the events folded since; undefined when its status moved. */
  private folded(c: LoadedChild): LoadedChild | undefined {
    const s = this.states.get(c.entry.id);
    if (c.status === "unreadable") return c;
    if (!s || s.lastSeq <= c.state.lastSeq) return this.aged(c);
    const pending = this.stillQueued(c, s);
    // Its status moved (a turn started or settled, the host exited): the listed live state is stale.
    if (pending === undefined) return undefined;
    // The live state again from the folded events (a newer event ends a stall, a question shows at once).
    const live = liveOf(s, pending.length, { createdAt: c.entry.createdAt, stallMs: this.core.stallMs });
    return { ...c, state: s, pending, live };
  }

  /**
   * A child with no event since it was read, its live state at this moment: time alone moves it (a turn
   * silent for the stall limit is stalled; the watcher's tick says when). An unreachable place stays so.
   */
  private aged(c: LoadedChild): LoadedChild {
    if (c.live.state === "unreachable") return c;
    const live = liveOf(c.state, c.pending.length, {
      createdAt: c.entry.createdAt,
      stallMs: this.core.stallMs,
    });
    return { ...c, live };
  }

  /** Whether the events folded since listed `c` was read move its status (it must be read again). */
  private moved(c: LoadedChild): boolean {
    const s = this.states.get(c.entry.id);
    return s !== undefined && this.stillQueued(c, s) === undefined;
  }

  /** The turns still queued once `s` is folded into listed `c`; undefined when that moves its status. */
  private stillQueued(c: LoadedChild, s: ChildState): string[] | undefined {
    if (s.lastSeq <= c.state.lastSeq || c.status === "unreadable") return c.pending;
    const pending = c.pending.filter((t) => !s.turns.some((x) => x.turnId === t) && !s.completions.has(t));
    return childStatus(s, pending.length) === c.status ? pending : undefined;
  }
}
