import { SETTINGS, setting } from "../base/settings/resolve.js";
import { announceHost, POKE_SIGNAL, pokesWork, retireHost } from "../util/poke.js";
import { DirWatch } from "./dir-watch.js";

const listeners = new Set<() => void>();
let listening = false;

/**
 * Called first thing in the host: from here on SIGUSR2 wakes every folder waiting on a poke (its default action
 * would end the process). Then host.json tells writers where to send it; it goes when the host exits.
 */
export function listenForPokes(artifactDir: string): void {
  if (listening || !pokesWork()) return;
  listening = true;
  process.on(POKE_SIGNAL, () => {
    for (const l of [...listeners]) l();
  });
  announceHost(artifactDir);
  process.on("exit", () => retireHost(artifactDir));
}

/** Runs `fn` on each poke until the returned function is called: a short wait a poke may end early. */
export function onPoke(fn: () => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

// A poke that could not be sent (no host.json yet is not such a case: the first read covers it) waits this long.
const SAFETY_POLL_MS = SETTINGS.hostPollMs.default;

/** The safety poll, from the child's environment (a test sets it far out to prove a poke alone wakes the host). */
export function safetyPollMs(env: Record<string, string | undefined>): number {
  return setting(env, "hostPollMs");
}

/**
 * A folder others drop files into (inbox/, control/): `onChange` runs on each poke and on a slow safety poll,
 * holding no inotify instance. Where pokes do not work (no /proc) it is watched instead.
 */
export class PokedDir {
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly fallback: DirWatch | undefined;
  /** Set when the folder is neither poked nor watched, only polled fast (the caller may say so in the pane). */
  readonly polledOnly: boolean;

  constructor(
    dir: string,
    private readonly onChange: () => void,
    pollMs: number = SAFETY_POLL_MS,
  ) {
    if (listening) {
      listeners.add(onChange);
      this.timer = setInterval(onChange, pollMs);
      this.polledOnly = false;
    } else {
      this.fallback = new DirWatch(dir, onChange);
      this.polledOnly = !this.fallback.watching;
    }
  }

  close(): void {
    listeners.delete(this.onChange);
    if (this.timer) clearInterval(this.timer);
    this.fallback?.close();
  }
}
