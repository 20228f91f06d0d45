import { MusterError } from "../base/errors.js";
import { createMuster, type Muster } from "../core/muster.js";
import { listPrimaries } from "../core/primary.js";
import type { PrimaryWatcher } from "../core/watcher.js";
import { shortId } from "../util/ids.js";
import { takeInterrupt } from "./interrupt.js";
import { lsTable } from "./ls-table.js";
import { visible } from "./sanitize.js";

// Events come in bursts (a tool start and end, usage, completion): one redraw per burst.
const REDRAW_AFTER_MS = 100;

const ALT_SCREEN_ON = "\x1b[?1049h\x1b[?25l";
const ALT_SCREEN_OFF = "\x1b[?25h\x1b[?1049l";

/** Cuts a line to the terminal's width (by code point), so nothing wraps and pushes the table around. */
const fitWidth = (line: string, cols: number): string => {
  const chars = [...line];
  return chars.length <= cols ? line : `${chars.slice(0, Math.max(0, cols - 1)).join("")}…`;
};

/**
 * `muster ls --watch [--all]`: the list kept on screen and redrawn when a primary's watcher reports a change
 * (and on its liveness tick, so ages move), until Ctrl-C, which restores the screen and exits 0. Not a terminal: the
 * list is printed again after each change, each copy under a header line, for a log file or a pipe.
 */
export async function watchList(m: Muster, flags: { json?: boolean; all?: boolean }): Promise<void> {
  if (flags.json)
    throw new MusterError(
      "invalid_argument",
      "ls --watch draws for people; for a stream of records use muster logs -f --json, or the library's watch()",
    );
  const out = process.stdout;
  const tty = !!out.isTTY;
  // --all: every primary there is now (one that appears later is not followed: run the watch again).
  const musters = flags.all
    ? listPrimaries(m.root).map((p) =>
        p === m.primary ? m : createMuster({ home: m.root, primary: p, env: m.env }),
      )
    : [m];
  let lastBody = "";
  const draw = async (): Promise<void> => {
    const now = Date.now();
    let count = 0;
    let body: string;
    try {
      // Read from files only: the watchers settle dead hosts themselves, so a redraw never waits on tmux.
      const groups = [];
      for (const x of musters) groups.push({ primary: x.primary, children: await x.views({ probe: false }) });
      count = groups.reduce((n, g) => n + g.children.length, 0);
      body = count === 0 ? "no children yet" : lsTable(groups, m.primary, !!flags.all, now);
    } catch (e) {
      // Drawn from a timer: a registry that cannot be read right now is shown, not a crash with the screen lost.
      body = `cannot read the children now: ${(e as Error).message.split("\n")[0]}`;
    }
    const whose = flags.all
      ? `${musters.length} ${musters.length === 1 ? "primary" : "primaries"}`
      : `primary ${shortId(m.primary)}`;
    const head = `muster ls --watch · ${whose} · ${count} ${count === 1 ? "child" : "children"} · ${new Date(now).toISOString().slice(11, 19)}`;
    if (!tty) {
      if (body === lastBody) return;
      lastBody = body;
      out.write(visible(`${head}\n${body}\n\n`));
      return;
    }
    const cols = out.columns || 80;
    const rows = out.rows || 24;
    let lines = [`${head} · Ctrl-C to quit`, "", ...body.split("\n")];
    if (lines.length > rows - 1) {
      const cut = lines.length - (rows - 2);
      lines = [...lines.slice(0, rows - 2), `… ${cut} more rows (a taller terminal shows them)`];
    }
    // Home, each line then clear to its end, then clear below: no flicker from a full-screen clear.
    out.write(`\x1b[H${lines.map((l) => `${visible(fitWidth(l, cols))}\x1b[K`).join("\n")}\x1b[J`);
  };

  let timer: NodeJS.Timeout | undefined;
  const soon = (): void => {
    timer ??= setTimeout(() => {
      timer = undefined;
      void draw();
    }, REDRAW_AFTER_MS);
  };
  let stop: () => void = () => {};
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const release = takeInterrupt(() => stop());
  // A closed pipe (| head) ends the watch rather than the process with an unhandled EPIPE.
  const onError = (): void => stop();
  out.on("error", onError);
  const watchers: PrimaryWatcher[] = [];
  let entered = false;
  try {
    for (const x of musters)
      watchers.push(await x.watch({ onEvent: soon, onLive: soon, ...(tty ? { onTick: soon } : {}) }));
    if (tty) {
      out.write(ALT_SCREEN_ON);
      entered = true;
    }
    out.on("resize", soon);
    void draw();
    await stopped;
  } finally {
    if (timer) clearTimeout(timer);
    out.off("resize", soon);
    release();
    await Promise.all(watchers.map((w) => w.close()));
    if (entered) out.write(ALT_SCREEN_OFF);
    out.off("error", onError);
  }
}
