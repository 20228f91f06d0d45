import * as path from "node:path";
import { PACKAGE_ROOT } from "../util/pkg.js";
import type { Runner, TurnInput, TurnPlan } from "./types.js";

// From the package root, not import.meta.url: this module also runs inside the bundled child host.
const AGENT_SCRIPT = path.join(PACKAGE_ROOT, "dist", "runners", "mock", "agent.js");

/** The built-in deterministic agent used by the demo and the tests. */
export const mockRunner: Runner = {
  name: "mock",
  description: "built-in deterministic agent (no API keys); `mock: sleep=2 tools=3` lines control it",
  // A small closed catalog so model/reasoning validation can be exercised without any real provider.
  catalog: {
    provider: "mock",
    open: false,
    defaultModel: "mock:default",
    models: [
      { id: "mock:default", reasoning: ["none", "low", "medium", "high"], defaultReasoning: "none" },
      { id: "mock:fast", reasoning: ["none"], defaultReasoning: "none" },
      { id: "mock:deep", reasoning: ["low", "medium", "high", "xhigh"], defaultReasoning: "medium" },
    ],
  },
  resumeMode: () => "native",
  plan(input: TurnInput): TurnPlan {
    // The model and reasoning are passed so the answer can show what the turn ran with.
    const settings = [
      ...(input.model ? ["--model", input.model] : []),
      ...(input.reasoning ? ["--reasoning", input.reasoning] : []),
      ...(input.runnerSessionId ? ["--session", input.runnerSessionId] : []),
    ];
    return {
      argv: [process.execPath, AGENT_SCRIPT, ...settings, input.promptFile],
      cwd: input.cwd,
      env: input.env,
      protocol: "muster-jsonl",
      // It writes its session file before its `result` line.
      settleOnResult: true,
    };
  },
};
