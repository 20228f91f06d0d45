/**
 * The keeper's side of admission for a far host (artifacts/admission.ts): when the host's `admission.json`
 * arrives in the mirror, the place's keeper — a live process of the parent's machine, named by the ticket,
 * whose command line names the holder mark the ticket records — takes a run slot in the parent's slots folder exactly as a local host
 * does, so local and far turns share one bound; it answers `grant.json`, queued until a slot frees. The
 * budget's verdict is taken from the parent's disk, where every child's usage is (mirrors included). The
 * request's removal, or the keeper's end, gives the slot back (a ticket of a dead process never counts).
 */
import { type AdmissionGrant, readAdmissionRequest, writeAdmission } from "../../artifacts/admission.js";
import { treeBudgetSpent } from "../../artifacts/budget.js";
import type { ChildMeta } from "../../artifacts/events.js";
import { childFiles, pathsOfArtifactDir } from "../../artifacts/layout.js";
import { pauseInForce } from "../../artifacts/tree-pause.js";
import { RunSlots } from "../../child/slots.js";
import { READ_CAPS, readJsonBoundedIfExists } from "../../util/safe-read.js";

const RETRY_MS = 250;

export class AdmissionDesk {
  private slots: RunSlots | undefined;
  /** The request being served (queued or granted). */
  private serving: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  constructor(
    private readonly dir: string,
    private readonly limit: number,
    private readonly holder: string,
    private readonly log: (line: string) => void,
  ) {}

  /** The host's request arrived, changed or went. */
  changed(): void {
    const req = readAdmissionRequest(this.dir);
    if (!req) {
      if (this.serving !== undefined) this.release();
      return;
    }
    if (req.request === this.serving) return;
    this.release();
    this.serving = req.request;
    this.try(req.request);
  }

  release(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.slots?.release();
    this.serving = undefined;
  }

  private try(request: string): void {
    if (this.serving !== request) return;
    const slots = this.slotsOf();
    if (!slots) return;
    // A paused tree grants no turn (a local host waits the same way): the host hears the pause, and waits.
    const paused = pauseInForce(pathsOfArtifactDir(this.dir).primary.dir);
    if (paused) {
      writeAdmission(this.dir, { v: 1, request, state: "queued", running: 0, limit: this.limit, paused });
      this.timer = setTimeout(() => this.try(request), RETRY_MS);
      return;
    }
    slots
      .tryAcquire()
      .then((running) => {
        if (this.serving !== request) {
          if (running === undefined) slots.release();
          return;
        }
        const grant: AdmissionGrant =
          running === undefined
            ? { v: 1, request, state: "granted", limit: this.limit, ...this.budget() }
            : { v: 1, request, state: "queued", running, limit: this.limit };
        writeAdmission(this.dir, grant);
        if (running !== undefined) this.timer = setTimeout(() => this.try(request), RETRY_MS);
      })
      .catch((e: Error) => {
        this.log(`admission: ${e.message}`);
        this.timer = setTimeout(() => this.try(request), RETRY_MS * 4);
      });
  }

  private slotsOf(): RunSlots | undefined {
    if (this.slots) return this.slots;
    const meta = readJsonBoundedIfExists<ChildMeta>(childFiles(this.dir).meta, READ_CAPS.smallJson);
    if (!meta) {
      this.log("admission: the mirror has no meta.json yet");
      return undefined;
    }
    const { primary } = pathsOfArtifactDir(this.dir);
    this.slots = new RunSlots(primary.slots, this.limit, meta.id, this.dir, meta.parent, this.holder);
    return this.slots;
  }

  /** The budget's verdict now, from the parent's disk (the turn has not started yet). */
  private budget(): { budget?: string } {
    const spent = treeBudgetSpent(pathsOfArtifactDir(this.dir).primary.dir, false);
    return spent ? { budget: spent } : {};
  }
}
