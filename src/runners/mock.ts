import { fileURLToPath } from "node:url";
import type { Runner, TurnInput, TurnPlan } from "./types.js";

const AGENT_SCRIPT = fileURLToPath(new URL("./mock/agent.js", import.meta.url));

/** The built-in deterministic agent used by the demo and the tests. */
export const mockRunner: Runner = {
  name: "mock",
  description: "built-in deterministic agent (no API keys); `mock: sleep=2 tools=3` lines control it",
  plan(input: TurnInput): TurnPlan {
    return {
      argv: [process.execPath, AGENT_SCRIPT, input.promptFile],
      cwd: input.cwd,
      env: input.env,
      protocol: "muster-jsonl",
    };
  },
};
