/**
 * The run slot of a host whose parent is on another machine (artifacts/admission.ts): asked of the
 * parent's keeper through the mirror rather than taken from a slots folder this host cannot see. Same
 * shape as RunSlots, so the host's loop does not care which it has.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { ADMISSION_FILE, GRANT_FILE, readGrant, writeAdmission } from "../artifacts/admission.js";
import type { TreePause } from "../artifacts/tree-pause.js";
import { uuidv7 } from "../util/ids.js";
import { onPoke } from "./pokes.js";

// The answer travels a round trip away; the host waits on nothing else meanwhile. The relay that writes the
// answer pokes the host (util/poke.ts), which ends the wait at once; the poll covers a poke that was not sent.
const POLL_MS = 25;

/** Waits `ms`, or less when the host is poked meanwhile. */
const nap = (ms: number): Promise<void> =>
  new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      off();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const off = onPoke(done);
  });

export class FarAdmission {
  private limit: number;
  /** The budget's verdict on the turn last granted (undefined: within budget, or none set). */
  budgetVerdict: string | undefined;
  /** The parent's tree pause the request waits under, as the last answer said (undefined: none). */
  pause: TreePause | undefined;
  /** Hears each pause of the parent's tree a request waits under (once each). */
  onHeld: ((p: TreePause) => void) | undefined;

  constructor(
    private readonly dir: string,
    limit: number,
    /** The safety poll of the answer (a test sets it far out to prove the poke alone ends the wait). */
    private readonly pollMs = POLL_MS,
  ) {
    this.limit = limit;
  }

  /** Waits for the parent's grant of a slot to `turnId`; false if `stopped()` ended the wait. */
  async acquire(onQueued: (running: number) => void, stopped: () => boolean, turnId = ""): Promise<boolean> {
    const request = uuidv7();
    writeAdmission(this.dir, { v: 1, request, turnId });
    let told = false;
    let held: string | undefined;
    for (;;) {
      if (stopped()) {
        this.release();
        return false;
      }
      const g = readGrant(this.dir);
      if (g?.request === request) {
        this.limit = g.limit;
        this.pause = g.paused;
        if (g.state === "granted") {
          this.budgetVerdict = g.budget;
          return true;
        }
        if (g.paused) {
          // The keeper holds the grant while the parent's tree is paused: said once per pause, not as a slot wait.
          if (g.paused.pauseId !== held) this.onHeld?.(g.paused);
          held = g.paused.pauseId;
        } else if (!told) {
          onQueued(g.running ?? g.limit);
          told = true;
        }
      }
      await nap(this.pollMs);
    }
  }

  release(): void {
    fs.rmSync(path.join(this.dir, ADMISSION_FILE), { force: true });
    fs.rmSync(path.join(this.dir, GRANT_FILE), { force: true });
  }

  get max(): number {
    return this.limit;
  }
}
