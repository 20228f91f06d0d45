/**
 * The live feed behind `/api/events`: one core watcher for every page open, each event folded into the core's
 * views (LiveViews, as `muster top` does), and the tree with its pending requests and workflow runs sent to
 * every stream as a Server-Sent Event when it reads differently. The page never polls files; this reads the list only when the
 * views say they are stale.
 */
import type http from "node:http";
import { LiveViews } from "../core/live-views.js";
import type { Muster } from "../core/muster.js";
import type { PendingRequest } from "../core/requests.js";
import type { ChildView } from "../core/views.js";
import type { PrimaryWatcher } from "../core/watcher.js";
import type { RunView } from "../workflows/run-log.js";

/** What one update of the page carries: the core's views, requests and workflow runs, nothing of its own. */
export interface TreeUpdate {
  primary: string;
  children: ChildView[];
  requests: PendingRequest[];
  runs: RunView[];
}

// Bursts of events (a busy turn) become at most one update per this many ms; an event after a quiet spell
// goes out at once (in the next tick, with whatever else that tick brought).
const COALESCE_MS = 250;
// A child appearing or its status moving (a turn started or settled) goes out this soon after the last
// update, not 250 ms: a turn's last message and its completion land a few ms apart, and the completion, what
// a watcher of the page waits for, would otherwise wait out the window its message opened.
const STATUS_COALESCE_MS = 40;
// A comment line keeps an idle stream open through proxies and tunnels.
const KEEPALIVE_MS = 25_000;
// The runs are read with the list (a child appeared or its status moved), as `muster top` does; a run's own
// record (a step queued, the run settled) moves with no child event: while one runs, they are read again.
const RUNS_MS = 2000;

export class TreeFeed {
  private watcher: PrimaryWatcher | undefined;
  private readonly views: LiveViews;
  private readonly streams = new Set<http.ServerResponse>();
  private timer: NodeJS.Timeout | undefined;
  private timerDue = 0;
  private keepalive: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private runsTimer: NodeJS.Timeout | undefined;
  private again = false;
  private last = "";
  private lastSentAt = 0;
  private runsNow: RunView[] = [];
  private closed = false;

  constructor(
    private readonly muster: Muster,
    private readonly log: (line: string) => void,
    private readonly runs: () => RunView[] = () => [],
    private readonly windows: { coalesceMs?: number; statusCoalesceMs?: number } = {},
  ) {
    this.views = new LiveViews(muster);
  }

  async start(): Promise<void> {
    this.watcher = await this.muster.watch({
      onEvent: (id, e) => {
        this.schedule(this.views.apply(id, e));
      },
      // Time alone moves a live state (a stall): the watcher says so on its tick.
      onLive: () => this.schedule(),
    });
    this.keepalive = setInterval(() => {
      for (const s of this.streams) s.write(": keepalive\n\n");
    }, KEEPALIVE_MS);
    this.keepalive.unref();
    this.runsTimer = setInterval(() => {
      if (this.streams.size === 0 || !this.runsNow.some((r) => r.status === "running")) return;
      this.runsNow = this.readRuns();
      this.schedule();
    }, RUNS_MS);
    this.runsTimer.unref();
  }

  /** The tree as it is now (the list read again). */
  async snapshot(): Promise<TreeUpdate> {
    return this.read(true);
  }

  /** Opens an event stream on `res` and sends it the tree at once. */
  async subscribe(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    this.streams.add(res);
    req.on("close", () => this.streams.delete(res));
    const now = await this.read(true);
    this.last = JSON.stringify(now);
    res.write(`event: tree\ndata: ${this.last}\n\n`);
  }

  /** Sends the tree soon: coalesces bursts; `statusMoved` (a child appeared or its status moved) sooner. */
  schedule(statusMoved = false): void {
    if (this.closed || this.streams.size === 0) return;
    const now = Date.now();
    const gap = statusMoved
      ? (this.windows.statusCoalesceMs ?? STATUS_COALESCE_MS)
      : (this.windows.coalesceMs ?? COALESCE_MS);
    const wait = Math.max(0, this.lastSentAt + gap - now);
    if (this.timer) {
      if (this.timerDue <= now + wait) return;
      clearTimeout(this.timer);
    }
    this.timerDue = now + wait;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.push();
    }, wait);
  }

  private push(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.send()
      .catch((e: unknown) => this.log(`web: reading the tree failed: ${(e as Error).message}`))
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.closed) {
          this.again = false;
          void this.push();
        }
      });
    return this.running;
  }

  private async send(): Promise<void> {
    const text = JSON.stringify(await this.read(false));
    if (this.closed || text === this.last) return;
    this.last = text;
    this.lastSentAt = Date.now();
    for (const s of this.streams) s.write(`event: tree\ndata: ${text}\n\n`);
  }

  private async read(full: boolean): Promise<TreeUpdate> {
    let children = full ? undefined : this.views.current();
    if (!children) {
      children = await this.views.reload({ all: full });
      this.runsNow = this.readRuns();
    }
    return { primary: this.muster.primary, children, requests: this.muster.requests(), runs: this.runsNow };
  }

  private readRuns(): RunView[] {
    try {
      return this.runs();
    } catch (e) {
      this.log(`web: reading the workflow runs failed: ${(e as Error).message}`);
      return [];
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.keepalive) clearInterval(this.keepalive);
    if (this.runsTimer) clearInterval(this.runsTimer);
    for (const s of this.streams) s.end();
    this.streams.clear();
    await this.running;
    await this.watcher?.close();
  }
}
