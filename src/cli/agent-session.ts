import type { ChildState } from "../core/state.js";
import { visibleLine } from "./sanitize.js";

type AgentSessionEvent = NonNullable<ChildState["agentSession"]>;

/** What a child's live agent session offers, as status --json and agents --json show it. */
export function agentSessionJson(e: AgentSessionEvent) {
  const { v: _v, eventId: _e, seq: _s, type: _t, ...rest } = e;
  return { ...rest, warnings: e.warnings ?? [] };
}

/** One offered list with the value in force marked: "read-only, auto (in use), full-access". */
function offered(values: string[] | undefined, current: string | undefined): string | undefined {
  if (!values?.length) return undefined;
  return values.map((v) => visibleLine(v === current ? `${v} (in use)` : v)).join(", ");
}

/** `status` lines: the agent's session modes, models and reasoning levels, and what it could not apply. */
export function agentSessionLines(
  e: Pick<
    AgentSessionEvent,
    "modes" | "mode" | "models" | "model" | "reasoningLevels" | "reasoning" | "warnings"
  >,
  label = (s: string) => s.padEnd(11),
): string[] {
  const rows: [string, string | undefined][] = [
    ["modes", offered(e.modes, e.mode)],
    ["models", offered(e.models, e.model)],
    ["reasoning", offered(e.reasoningLevels, e.reasoning)],
  ];
  return [
    ...rows.filter(([, v]) => v !== undefined).map(([k, v]) => `${label(k)}${v}`),
    ...(e.warnings ?? []).map((w) => `${label("warning")}${visibleLine(w)}`),
  ];
}
