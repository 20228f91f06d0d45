import { listGroups } from "../delivery/groups.js";
import { readReceipts } from "../delivery/receipts.js";
import {
  buildManifest,
  type DeliveryRecord,
  type Manifest,
  recordIdOf,
  toRecord,
} from "../delivery/records.js";
import { loadChildOrUnreadable } from "./children.js";
import type { CoreContext } from "./context.js";
import { type PendingRequest, pendingRequests } from "./requests.js";
import { type TreePauseView, untoldPause } from "./tree-pause.js";

/** A group whose members are held back from the inbox: not sealed yet, or not every member settled. */
export interface WaitingGroup {
  groupId: string;
  sealed: boolean;
  members: number;
  settled: number;
}

/** How many pending requests one inbox manifest lists; `moreRequests` counts the rest. */
export const MAX_LISTED_REQUESTS = 32;

/** See Muster.inbox: pending records (completions without receipts), groups held back until ready. */
/** The inbox as read: the manifest to hand on, and `consume` to record its receipts once it was. */
export interface InboxRead {
  manifest: Manifest & {
    waitingGroups: WaitingGroup[];
    requests: PendingRequest[];
    moreRequests: number;
    /** The tree is paused (quota, credential) and the parent was not told yet: told once, on consume. */
    treePaused?: TreePauseView;
  };
  consume: () => void;
}

export function buildInbox(m: CoreContext): InboxRead {
  const receipts = readReceipts(m.paths.receipts);
  const settled = new Set<string>();
  const pending: DeliveryRecord[] = [];
  for (const entry of Object.values(m.registry.read().children)) {
    // An unreadable child (hostile files) has nothing to deliver; it must not hide the others' results.
    const c = loadChildOrUnreadable(m.paths, entry);
    for (const completion of c.state.completions.values()) {
      const record = toRecord(c.entry.id, c.entry.agent, c.files.dir, completion, c.entry.name);
      settled.add(record.recordId);
      if (!receipts.has(record.recordId)) pending.push(record);
    }
  }
  // A group's members are withheld until it is sealed and every member has settled; then they go together.
  const withheld = new Set<string>();
  const waitingGroups: WaitingGroup[] = [];
  for (const g of listGroups(m.paths.groups)) {
    const ids = g.members.map((mb) => recordIdOf(mb.id, mb.turnId));
    const done = ids.filter((r) => settled.has(r)).length;
    if (g.sealed && done === ids.length) continue;
    for (const r of ids) withheld.add(r);
    if (ids.some((r) => !receipts.has(r))) {
      waitingGroups.push({ groupId: g.groupId, sealed: g.sealed, members: ids.length, settled: done });
    }
  }
  // Pending requests (questions) wait on an answer, not on delivery: listed every time until answered, the
  // oldest first and bounded like the records (an agent flooding requests cannot make the manifest huge).
  const requests = pendingRequests(m);
  const untold = untoldPause(m);
  const manifest = {
    ...buildManifest(pending.filter((r) => !withheld.has(r.recordId))),
    waitingGroups,
    requests: requests.slice(0, MAX_LISTED_REQUESTS),
    moreRequests: Math.max(0, requests.length - MAX_LISTED_REQUESTS),
    ...(untold ? { treePaused: untold.view } : {}),
  };
  return {
    manifest,
    consume: () =>
      m.consume([...manifest.records.map((r) => r.recordId), ...(untold ? [untold.receipt] : [])], "inbox"),
  };
}
