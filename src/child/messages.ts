/**
 * What a turn does with each agent message, whichever way the runner delivers them (a headless process's
 * stdout, or a long-lived session's protocol): events, pane lines, the answer, usage, the runner's session id.
 */
import type { Usage } from "../artifacts/events.js";
import type { EventLog } from "../artifacts/log.js";
import type { AgentMessage } from "../runners/types.js";
import type { AnswerSink } from "./answer.js";
import type { PaneRenderer } from "./render.js";
import { boundText } from "./turn-control.js";

export type ResultMessage = Extract<AgentMessage, { type: "result" }>;

/** What a running turn gathers from the runner (the answer itself streams into `sink`). */
export interface TurnState {
  sink: AnswerSink;
  /** The agent's last `result`, its text already handed to `sink`. */
  result: ResultMessage | undefined;
  usage: Usage | undefined;
  runnerSessionId: string | undefined;
}

/** The first non-blank line (bounded): what a one-line reason quotes. */
export const firstLine = (text: string): string =>
  boundText(text.split("\n", 64).find((l) => l.trim()) ?? "");

/** A handler for one turn's messages; `onResult` runs after the agent's `result` is recorded in `state`. */
export function turnMessages(
  deps: { log: EventLog; render: PaneRenderer },
  turnId: string,
  state: TurnState,
  onResult: () => void,
): (m: AgentMessage) => void {
  const { log, render } = deps;
  let streamed = false;
  let answerFixed = false;
  return (m) => {
    switch (m.type) {
      case "text":
        streamed = true;
        // After a `result` with text, that text is the answer; later text is only shown.
        if (!answerFixed) state.sink.write(m.text);
        render.text(m.text);
        break;
      case "tool":
        // The answer so far is on disk before the tool shows: a reader of output.md (cancel --snapshot) sees it.
        state.sink.flush();
        log.append({
          type: "tool_activity",
          turnId,
          phase: m.phase,
          name: boundText(m.name, 200),
          summary: boundText(m.summary),
        });
        render.tool(m.phase, m.name, m.summary);
        break;
      case "usage":
        state.usage = addUsage(state.usage, m.usage);
        log.append({ type: "usage", turnId, usage: m.usage });
        break;
      case "progress":
        log.append({ type: "progress", turnId, text: boundText(m.text) });
        render.info(m.text);
        break;
      case "permission":
        log.append({
          type: "permission",
          turnId,
          state: m.state,
          tool: boundText(m.tool, 200),
          ...(m.summary ? { summary: boundText(m.summary) } : {}),
        });
        render.info(`permission ${m.state}: ${m.tool}${m.summary ? ` ${m.summary}` : ""}`);
        break;
      case "result":
        // The answer was usually streamed already; show it only when the agent said it only here.
        if (m.text && !streamed) render.text(m.text.endsWith("\n") ? m.text : `${m.text}\n`);
        if (m.text !== undefined) {
          state.sink.replace(m.text);
          answerFixed = true;
        }
        // The text now lives in the sink (output.md + a bounded copy); an error's reason needs its first line only.
        state.result = m.text !== undefined ? { ...m, text: firstLine(m.text) } : m;
        onResult();
        break;
      case "session":
        state.runnerSessionId = m.id;
        break;
      case "raw":
        render.raw(m.text);
        break;
    }
  };
}

function addUsage(a: Usage | undefined, b: Usage): Usage {
  if (!a) return { ...b };
  const cost = a.cost !== undefined || b.cost !== undefined ? (a.cost ?? 0) + (b.cost ?? 0) : undefined;
  return { input: a.input + b.input, output: a.output + b.output, ...(cost !== undefined ? { cost } : {}) };
}
