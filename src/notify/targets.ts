/**
 * Where a person is told of what their children do (`muster notify add`): an ntfy topic, a webhook, or a local
 * command, kept under `notify` in the user's config file. Checked when added; read once by each child host (and
 * by a place's keeper for each far child it mirrors, and by a parent that records a child lost).
 */
import { randomBytes } from "node:crypto";
import { MusterError } from "../base/errors.js";
import { readConfigFile, updateConfig } from "../config/config.js";

/** What a notification is about. */
export type NotifyEvent = "waiting" | "finished" | "failed" | "paused" | "lost";
export const NOTIFY_EVENTS: readonly NotifyEvent[] = ["waiting", "finished", "failed", "paused", "lost"];

export type NotifyTarget = { id: string; events?: NotifyEvent[] } & (
  | { kind: "ntfy"; url: string }
  | { kind: "webhook"; url: string }
  | { kind: "command"; argv: string[] }
);

/** Whether a target wants notices of `event` (one that names none wants every kind). */
export const wants = (t: NotifyTarget, event: NotifyEvent): boolean => !t.events || t.events.includes(event);

export type NotifyKind = NotifyTarget["kind"];
export const NOTIFY_KINDS: readonly NotifyKind[] = ["ntfy", "webhook", "command"];

/** A URL a notification may go to: http or https, no credentials in it (they would land in the config). */
function checkUrl(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new MusterError("invalid_argument", `not a URL: ${JSON.stringify(text)}`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    throw new MusterError("invalid_argument", `a notification URL is http or https, not ${u.protocol}`);
  if (u.username || u.password)
    throw new MusterError(
      "invalid_argument",
      "a notification URL may not carry a user or password (they would be kept in the config file)",
    );
  return u.toString();
}

/** The events a target is for: a comma list of NOTIFY_EVENTS (undefined: all of them). */
export function parseEvents(text: string | undefined): NotifyEvent[] | undefined {
  if (text === undefined) return undefined;
  const list = text
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean);
  const bad = list.find((e) => !NOTIFY_EVENTS.includes(e as NotifyEvent));
  if (bad !== undefined || list.length === 0)
    throw new MusterError(
      "invalid_argument",
      `--events takes a comma list of ${NOTIFY_EVENTS.join(", ")}${bad !== undefined ? `, not "${bad}"` : ""}`,
    );
  return [...new Set(list)] as NotifyEvent[];
}

/** A new target from what `notify add` was given, checked. */
export function newTarget(kind: string, args: string[], events?: NotifyEvent[]): NotifyTarget {
  const id = randomBytes(3).toString("hex");
  const base = { id, ...(events ? { events } : {}) };
  if (kind === "ntfy" || kind === "webhook") {
    if (args.length !== 1)
      throw new MusterError(
        "invalid_argument",
        `notify add ${kind} takes one URL (got ${args.length} arguments)`,
      );
    return { ...base, kind, url: checkUrl(args[0]!) };
  }
  if (kind === "command") {
    if (args.length === 0 || args[0] === "")
      throw new MusterError("invalid_argument", "notify add command takes the command's argv (after --)");
    return { ...base, kind, argv: args };
  }
  throw new MusterError(
    "invalid_argument",
    `unknown notification kind "${kind}" (${NOTIFY_KINDS.join(", ")})`,
  );
}

/** The targets in the config file; entries that do not read as one are left out. */
export function listTargets(env: NodeJS.ProcessEnv): NotifyTarget[] {
  const raw = readConfigFile(env).config.notify;
  if (!Array.isArray(raw)) return [];
  return raw.filter(isTarget);
}

export async function addTarget(env: NodeJS.ProcessEnv, target: NotifyTarget): Promise<void> {
  await updateConfig(env, (config) => ({ ...config, notify: [...targetsIn(config), target] }));
}

/** Removes a target by id; false when there was none. */
export async function removeTarget(env: NodeJS.ProcessEnv, id: string): Promise<boolean> {
  let had = false;
  await updateConfig(env, (config) => {
    const all = targetsIn(config);
    had = all.some((t) => t.id === id);
    return { ...config, notify: all.filter((t) => t.id !== id) };
  });
  return had;
}

const targetsIn = (config: Record<string, unknown>): NotifyTarget[] =>
  Array.isArray(config.notify) ? config.notify.filter(isTarget) : [];

function isTarget(v: unknown): v is NotifyTarget {
  if (v === null || typeof v !== "object") return false;
  const t = v as Record<string, unknown>;
  if (typeof t.id !== "string") return false;
  if (
    t.events !== undefined &&
    !(Array.isArray(t.events) && t.events.every((e) => NOTIFY_EVENTS.includes(e)))
  )
    return false;
  if (t.kind === "ntfy" || t.kind === "webhook") return typeof t.url === "string";
  return (
    t.kind === "command" &&
    Array.isArray(t.argv) &&
    t.argv.length > 0 &&
    t.argv.every((w) => typeof w === "string")
  );
}
