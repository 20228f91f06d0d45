/**
 * The worker thread a trusted code workflow runs in (see code-worker.ts): it imports the module and calls its
 * function with a ctx whose agent, phase and log calls go to the main thread as messages. The thread is the
 * function's alone, so a busy loop or `process.exit` in it stops only this thread, never muster.
 */
import { parentPort, workerData } from "node:worker_threads";
import { compileOutput } from "../structured.js";
import { loadCodeWorkflow } from "./code.js";
import { phaseName } from "./code-exec.js";
import type { AgentCall, AgentHandle, AgentResult, WorkflowContext, WorkflowFn } from "./code-types.js";
import type { FromWorker, ToWorker } from "./code-worker.js";
import { awaitHandles, parallel, pipeline } from "./ctx-flow.js";

const port = parentPort!;
const { file } = workerData as { file: string };
const post = (m: FromWorker): void => port.postMessage(m);
const waiting = new Map<string, (r: AgentResult) => void>();
const controller = new AbortController();
let calls = 0;

port.on("message", (m: ToWorker) => {
  if (m.type === "start") void run(m.input);
  else if (m.type === "result") {
    waiting.get(m.id)?.(m.result);
    waiting.delete(m.id);
  } else if (m.type === "abort") controller.abort();
});

const ctx: WorkflowContext = {
  agent(call: AgentCall): AgentHandle {
    // Refused here as in the main thread, before a call is counted: a bad schema throws at the call.
    if (call?.output !== undefined) compileOutput(call.output, `ctx.agent (${String(call.agent)})`);
    calls += 1;
    const id = `agent-${calls}`;
    const p = new Promise<AgentResult>((resolve) => waiting.set(id, resolve));
    post({ type: "agent", id, call: JSON.parse(JSON.stringify(call ?? null)) });
    return { id, await: () => p };
  },
  await: awaitHandles as WorkflowContext["await"],
  parallel,
  pipeline: (items, ...stages) => pipeline(items, stages),
  phase(name) {
    post({ type: "phase", name: phaseName(name) });
  },
  log(text) {
    post({ type: "log", text: String(text) });
  },
  signal: controller.signal,
};

let fn: WorkflowFn | undefined;
try {
  fn = await loadCodeWorkflow(file);
  post({ type: "loaded" });
} catch (e) {
  post({ type: "load_failed", message: (e as Error).message });
}

async function run(input: string): Promise<void> {
  try {
    const value = await fn!(ctx, input);
    try {
      post({ type: "done", value });
    } catch {
      // Not something a message can carry (a function, a class instance): its JSON form, if it has one.
      post({ type: "done", value: JSON.parse(JSON.stringify(value) ?? "null") });
    }
  } catch (e) {
    post({ type: "failed", message: e instanceof Error ? e.message : String(e) });
  }
}
