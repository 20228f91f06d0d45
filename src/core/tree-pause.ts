/**
 * The tree's pause as front ends see it (artifacts/tree-pause.ts holds the record): what it is, lifting it
 * (`resume-tree`), and the parent's one notice of it — a wait that ends while a pause holds carries it once
 * per pause (its receipt, `pause:<pauseId>`, is appended like a delivered completion's).
 */
import { pauseInForce, resumeTree, type TreePause } from "../artifacts/tree-pause.js";
import { appendReceiptsIfWritable, readReceipts } from "../delivery/receipts.js";
import type { CoreContext } from "./context.js";

/** A pause of the tree, JSON-safe: the record without its format version and id (what a front end shows). */
export type TreePauseView = Omit<TreePause, "v" | "pauseId">;

export const pauseView = (p: TreePause): TreePauseView => ({
  kind: p.kind,
  reason: p.reason,
  ...(p.resetAt ? { resetAt: p.resetAt } : {}),
  child: p.child,
  turnId: p.turnId,
  since: p.since,
});

/** The pause in force, or undefined. */
export function treePauseOf(m: CoreContext): TreePauseView | undefined {
  const p = pauseInForce(m.paths.dir);
  return p ? pauseView(p) : undefined;
}

/** Lifts the pause: held turns start (each as a run slot frees). `resumed` is the pause that was in force. */
export function resumeTreeOf(m: CoreContext): { resumed: TreePauseView | null } {
  const p = resumeTree(m.paths.dir);
  return { resumed: p ? pauseView(p) : null };
}

/** The receipt that says the parent was told of this pause (in the primary's receipts, like a delivery's). */
export const pauseReceipt = (p: Pick<TreePause, "pauseId">): string => `pause:${p.pauseId}`;

/** The pause in force that the parent has not been told of yet, with its receipt id. */
export function untoldPause(m: CoreContext): { view: TreePauseView; receipt: string } | undefined {
  const p = pauseInForce(m.paths.dir);
  if (!p || readReceipts(m.paths.receipts).has(pauseReceipt(p))) return undefined;
  return { view: pauseView(p), receipt: pauseReceipt(p) };
}

/**
 * The pause in force if this primary's parent has not been told of it yet; marks it told (`by`: what told it).
 * A state root that cannot be written only means it may be told again.
 */
export function pauseNotice(m: CoreContext, by: string): TreePauseView | undefined {
  const untold = untoldPause(m);
  if (!untold) return undefined;
  appendReceiptsIfWritable(m.paths.receipts, [untold.receipt], by);
  return untold.view;
}
