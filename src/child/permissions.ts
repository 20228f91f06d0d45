/**
 * Permission requests from a live session's agent (ACP `session/request_permission`), routed to the parent
 * through the one pending-request mechanism (core/requests.ts): a `permission` event with a requestId is the
 * request; the parent's answer is answers/<requestId>.json (`muster allow|deny`, MCP `subagents_answer`); no
 * answer within the timeout is a denial, and the event that closes the request says so. A request whose turn
 * is stopped first (a cancel, `send --mode now`) is closed `cancelled`: nobody waits for its answer any more.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { EventLog } from "../artifacts/log.js";
import { setting } from "../base/settings/resolve.js";
import { uuidv7 } from "../util/ids.js";
import { readJsonBounded } from "../util/safe-read.js";
import { timerDelay } from "../util/timer-limit.js";
import type { PaneRenderer } from "./render.js";
import { boundText } from "./turn-control.js";

export type PermissionAnswer = "allow" | "allow_always" | "deny";

/** What a parent may answer to a permission request (the request's `choices`). */
export const PERMISSION_CHOICES: readonly PermissionAnswer[] = ["allow", "allow_always", "deny"];

const POLL_MS = 500;

/** MUSTER_PERMISSION_TIMEOUT (seconds, > 0), else 10 minutes. */
export function permissionTimeoutMs(env: Record<string, string | undefined>): number {
  return timerDelay(setting(env, "permissionTimeout") * 1000);
}

/** How a request ended: the parent's answer, no answer in time, or its turn stopped first (why). */
type Closing = { answer: PermissionAnswer } | { timedOut: true } | { cancelled: string };

export class PermissionBroker {
  private readonly open = new Set<(why: string) => void>();

  constructor(
    private readonly deps: { log: EventLog; render: PaneRenderer },
    private readonly answersDir: string,
    private readonly timeoutMs: number,
  ) {}

  /** Asks the parent; resolves with its answer, or "deny" after the timeout or once the turn is over. */
  async ask(turnId: string, tool: string, summary: string | undefined): Promise<PermissionAnswer> {
    const requestId = uuidv7();
    const what = { tool: boundText(tool, 200), ...(summary ? { summary: boundText(summary) } : {}) };
    this.deps.log.append({ type: "permission", turnId, state: "pending", requestId, ...what });
    this.deps.render.info(
      `permission for ${tool}${summary ? ` ${summary}` : ""}: asking the parent (muster allow|deny ${requestId.slice(-8)})`,
    );
    const got = await this.answerOf(requestId);
    if ("cancelled" in got) {
      this.deps.log.append({
        type: "permission",
        turnId,
        state: "cancelled",
        requestId,
        ...what,
        summary: boundText(`${summary ? `${summary}; ` : ""}${got.cancelled}`),
      });
      this.deps.render.info(`permission for ${tool}: cancelled (${got.cancelled})`);
      return "deny";
    }
    const answer: PermissionAnswer = "answer" in got ? got.answer : "deny";
    const why = "timedOut" in got ? `no answer in ${Math.round(this.timeoutMs / 1000)} s` : undefined;
    this.deps.log.append({
      type: "permission",
      turnId,
      state: answer === "deny" ? "denied" : "granted",
      requestId,
      ...what,
      ...(why ? { summary: boundText(`${summary ? `${summary}; ` : ""}${why}`) } : {}),
      ...(answer === "allow_always" ? { always: true } : {}),
    });
    this.deps.render.info(
      `permission for ${tool}: ${answer === "deny" ? `denied${why ? ` (${why})` : ""}` : "allowed"}`,
    );
    return answer;
  }

  /** The turn is being stopped or is over: requests still open are closed as cancelled (`why`), denied to the agent. */
  cancelAll(why: string): void {
    for (const stop of [...this.open]) stop(why);
  }

  private answerOf(requestId: string): Promise<Closing> {
    const file = path.join(this.answersDir, `${requestId}.json`);
    return new Promise((resolve) => {
      let watcher: fs.FSWatcher | undefined;
      const finish = (c: Closing): void => {
        clearInterval(poll);
        clearTimeout(timer);
        watcher?.close();
        this.open.delete(stop);
        resolve(c);
      };
      const stop = (why: string): void => finish({ cancelled: why });
      const check = (): void => {
        const a = readAnswer(file);
        if (a !== null) finish({ answer: a });
      };
      this.open.add(stop);
      const poll = setInterval(check, POLL_MS);
      const timer = setTimeout(() => finish({ timedOut: true }), this.timeoutMs);
      try {
        fs.mkdirSync(this.answersDir, { recursive: true, mode: 0o700 });
        watcher = fs.watch(this.answersDir, check);
        watcher.on("error", () => {});
      } catch {
        // The poll still finds the answer.
      }
      check();
    });
  }
}

/** The answer in `file`: null while there is none; anything but a known answer is a denial. */
function readAnswer(file: string): PermissionAnswer | null {
  let text: unknown;
  try {
    text = readJsonBounded<{ text?: unknown }>(file, 64 * 1024).text;
  } catch {
    return null;
  }
  return text === "allow" || text === "allow_always" ? text : "deny";
}
