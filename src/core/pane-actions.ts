/** What the core does with a child's pane: capture it, attach to it, view it, focus it, show it in a popup. */
import { randomBytes } from "node:crypto";
import { MusterError } from "../base/errors.js";
import type { PaneRef, PopupOptions } from "../mux/backend.js";
import type { LoadedChild } from "./children.js";
import type { CoreContext } from "./context.js";

/** The child's pane; not_running before it has one. */
function paneOf(c: LoadedChild): PaneRef {
  if (!c.entry.pane) throw new MusterError("not_running", `child ${c.entry.id} has no pane yet`);
  return c.entry.pane;
}

export async function capturePane(
  m: CoreContext,
  idOrPrefix: string,
  lines: number,
): Promise<{ id: string; text: string }> {
  const c = m.child(idOrPrefix);
  if (!c.entry.pane) throw new MusterError("not_running", `child ${c.entry.id} has no pane`);
  return { id: c.entry.id, text: await m.backendOf(c.entry).capture(c.entry.pane, { lines }) };
}

/** argv that attaches a terminal to a child's pane, from its own backend; null before it has one. */
export function attachCommandOf(m: CoreContext, c: LoadedChild): string[] | null {
  return c.entry.pane ? m.backendOf(c.entry).attachCommand(c.entry.pane) : null;
}

/** Brings a child's pane to the front of the calling client (inside its multiplexer). */
export async function focusPane(m: CoreContext, c: LoadedChild): Promise<void> {
  await m.backendOf(c.entry).focus(paneOf(c));
}

/**
 * A popup over the caller's client showing a child's pane (by id), or running a command (in the default
 * backend). A backend without popups says so.
 */
export async function popupOver(
  m: CoreContext,
  target: { id: string } | { argv: string[]; cwd?: string },
  opts: PopupOptions,
): Promise<void> {
  let backend = m.backends.get();
  let pane: PaneRef | undefined;
  if ("id" in target) {
    const c = m.child(target.id);
    pane = paneOf(c);
    backend = m.backendOf(c.entry);
  }
  if (!backend.popup) throw new MusterError("unsupported", `the ${backend.name} backend has no popups`);
  await backend.popup(pane ? { pane } : (target as { argv: string[]; cwd?: string }), opts);
}

/** A child's pane and the command that attaches a terminal to it (throws not_running without a pane). */
export function attachTo(
  m: CoreContext,
  idOrPrefix: string,
): { id: string; pane: PaneRef; command: string[] } {
  const c = m.child(idOrPrefix);
  const pane = paneOf(c);
  return { id: c.entry.id, pane, command: m.backendOf(c.entry).attachCommand(pane) };
}

/**
 * argv that shows a child's pane to one more viewer (a page's terminal) without moving anyone else's client:
 * read-only unless `input`. Backends with no viewer of their own fall back to their attach command.
 */
export function viewCommandOf(
  m: CoreContext,
  idOrPrefix: string,
  opts: { input: boolean },
): { id: string; command: string[] } {
  const c = m.child(idOrPrefix);
  const pane = paneOf(c);
  const backend = m.backendOf(c.entry);
  const viewer = `muster-view-${randomBytes(4).toString("hex")}`;
  const command = backend.viewCommand?.(pane, { input: opts.input, viewer }) ?? backend.attachCommand(pane);
  return { id: c.entry.id, command };
}
