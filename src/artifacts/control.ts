/**
 * Requests to a running child host through its control/ folder: from the agent inside the pane (`muster
 * progress|done|error`) and from its parent (`muster send --mode now|stop`: interrupt the running turn).
 * Each request is one JSON file, written to a temp name and renamed in (the host never reads half of one).
 */
import * as path from "node:path";
import { dropJsonFile } from "../util/fsx.js";
import { pokeHost } from "../util/poke.js";

export type ControlRequest =
  | { kind: "progress" | "done" | "error"; text: string }
  /** `muster ask`: kind ask when it asks, answered when it got the answer or gave up waiting. */
  | { kind: "ask"; text: string; requestId: string; choices?: string[] }
  | { kind: "answered"; text: string; requestId: string; outcome: "answered" | "timeout" }
  /** Stop turn `turnId` (only that one: a turn started after the request was made is left alone). */
  | { kind: "interrupt"; turnId: string; why: "steered" | "stopped" };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Writes one request into `controlDir` (0600, temp + rename). Throws when it cannot. */
export function writeControl(controlDir: string, req: ControlRequest): void {
  dropJsonFile(controlDir, req);
  pokeHost(path.dirname(controlDir));
}

/** A parsed request, or undefined when the file holds anything else. */
export function controlRequestOf(v: unknown): ControlRequest | undefined {
  if (v === null || typeof v !== "object") return undefined;
  const r = v as Record<string, unknown>;
  if ((r.kind === "progress" || r.kind === "done" || r.kind === "error") && typeof r.text === "string")
    return { kind: r.kind, text: r.text };
  if ((r.kind === "ask" || r.kind === "answered") && typeof r.text === "string") {
    if (typeof r.requestId !== "string" || !UUID.test(r.requestId)) return undefined;
    if (r.kind === "ask") {
      const choices = r.choices;
      const okChoices =
        choices === undefined ||
        (Array.isArray(choices) &&
          choices.length > 0 &&
          choices.every((c) => typeof c === "string" && c !== ""));
      if (r.text.trim() === "" || !okChoices) return undefined;
      return {
        kind: "ask",
        text: r.text,
        requestId: r.requestId,
        ...(choices ? { choices: choices as string[] } : {}),
      };
    }
    if (r.outcome !== "answered" && r.outcome !== "timeout") return undefined;
    return { kind: "answered", text: r.text, requestId: r.requestId, outcome: r.outcome };
  }
  if (r.kind === "interrupt" && typeof r.turnId === "string" && (r.why === "steered" || r.why === "stopped"))
    return { kind: "interrupt", turnId: r.turnId, why: r.why };
  return undefined;
}
