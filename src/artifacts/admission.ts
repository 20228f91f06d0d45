/**
 * Admission for a host whose parent is on another machine (its dir a mirror's far side): the run-slot
 * tickets and the tree's budget live in the parent's state root, which that host cannot see. So the host
 * asks instead of deciding: it writes `admission.json` (travels to the parent's mirror), and the keeper
 * there — a process of the parent's machine — takes the ticket in the parent's slots folder on its behalf
 * and answers in `grant.json` (travels back): queued (how many run, the bound) or granted, with the
 * budget's verdict from every child's usage as the parent's disk holds it. Removing `admission.json` gives
 * the slot back.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { writeFileAtomic } from "../util/fsx.js";
import { READ_CAPS, readJsonBoundedIfExists } from "../util/safe-read.js";
import type { TreePause } from "./tree-pause.js";

export const ADMISSION_FILE = "admission.json";
export const GRANT_FILE = "grant.json";
/** Planted by the relay that made a far dir: a host that finds it asks for admission (see above). */
export const FAR_MARK = ".mirror-far";

export interface AdmissionRequest {
  v: 1;
  request: string;
  turnId: string;
}

export interface AdmissionGrant {
  v: 1;
  request: string;
  state: "queued" | "granted";
  /** Turns of the primary running now (queued) and the bound. */
  running?: number;
  limit: number;
  /** Why the tree's budget refuses the turn, when it does (granted turns only). */
  budget?: string;
  /** Queued because the parent's tree is paused (artifacts/tree-pause.ts): the pause, as the parent's disk holds it. */
  paused?: TreePause;
}

export const isFarDir = (dir: string): boolean => fs.existsSync(path.join(dir, FAR_MARK));

/**
 * Written whole, without fsync: a request or grant lost in a crash of the machine is asked for again by
 * the host that starts after it, and a place's keeper writing grants for many children must not wait on
 * the disk for each.
 */
export function writeAdmission(dir: string, value: AdmissionRequest | AdmissionGrant): void {
  const name = "state" in value ? GRANT_FILE : ADMISSION_FILE;
  writeFileAtomic(path.join(dir, name), `${JSON.stringify(value)}\n`, undefined, false);
}

export function readAdmissionRequest(dir: string): AdmissionRequest | undefined {
  const r = readQuiet<AdmissionRequest>(path.join(dir, ADMISSION_FILE));
  return r?.v === 1 && typeof r.request === "string" && typeof r.turnId === "string" ? r : undefined;
}

export function readGrant(dir: string): AdmissionGrant | undefined {
  const g = readQuiet<AdmissionGrant>(path.join(dir, GRANT_FILE));
  return g?.v === 1 && typeof g.request === "string" && (g.state === "queued" || g.state === "granted")
    ? g
    : undefined;
}

function readQuiet<T>(file: string): T | undefined {
  try {
    return readJsonBoundedIfExists<T>(file, READ_CAPS.smallJson);
  } catch {
    return undefined;
  }
}
