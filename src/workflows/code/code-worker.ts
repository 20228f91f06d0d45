/**
 * A trusted code workflow run in a worker thread of its own (code-worker-entry.ts), so muster stays in charge
 * of its process: Ctrl-C and SIGTERM are heard even while the function computes, a cancelled run's function
 * that does not return is stopped, and `process.exit` in it ends only its thread. Every ctx call comes over
 * as a message and runs here, through the ordinary engine (code-exec.ts): children, records and caps as ever.
 */
import * as path from "node:path";
import { Worker } from "node:worker_threads";
import { MusterError } from "../../base/errors.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import type { AgentCall, AgentResult, WorkflowFn } from "./code-types.js";

// From the package root, not import.meta.url: this module also runs inside the bundled CLI's chunks.
const WORKER_ENTRY = path.join(PACKAGE_ROOT, "dist", "workflows", "code", "code-worker-entry.js");

export type ToWorker =
  | { type: "start"; input: string }
  | { type: "result"; id: string; result: AgentResult }
  | { type: "abort" };

export type FromWorker =
  | { type: "loaded" }
  | { type: "load_failed"; message: string }
  | { type: "agent"; id: string; call: AgentCall }
  | { type: "phase"; name: string }
  | { type: "log"; text: string }
  | { type: "done"; value: unknown }
  | { type: "failed"; message: string };

/** How long a cancelled run's function has to return on its own before its thread is stopped. */
const STOP_GRACE_MS = 2000;

export interface CodeWorker {
  /** The workflow function: runs the module's function in the thread (once). */
  fn: WorkflowFn;
  /** Ends the thread (idempotent). */
  stop(): Promise<void>;
}

/**
 * Starts a thread that imports the module; resolves once its workflow function is loaded. A module that
 * cannot load is the same one-line invalid_config error as an import here; aborting `signal` while it loads
 * (a module busy at its top level) stops the thread.
 */
export function loadInWorker(file: string, signal?: AbortSignal): Promise<CodeWorker> {
  const worker = new Worker(WORKER_ENTRY, { workerData: { file } });
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await worker.terminate();
  };
  return new Promise<CodeWorker>((resolve, reject) => {
    const fail = (e: Error): void => {
      signal?.removeEventListener("abort", onAbort);
      void stop();
      reject(e);
    };
    const onAbort = (): void =>
      fail(new MusterError("invalid_config", `workflow ${file}: interrupted while its module loaded`));
    if (signal?.aborted) return onAbort();
    signal?.addEventListener("abort", onAbort, { once: true });
    const onLoad = (m: FromWorker): void => {
      if (m.type !== "loaded" && m.type !== "load_failed") return;
      worker.off("message", onLoad);
      worker.off("exit", onEarlyExit);
      signal?.removeEventListener("abort", onAbort);
      if (m.type === "load_failed") fail(new MusterError("invalid_config", m.message));
      else resolve({ fn: bridge(worker, stop), stop });
    };
    const onEarlyExit = (code: number): void =>
      fail(new MusterError("invalid_config", `workflow ${file}: its module ended its thread (exit ${code})`));
    worker.on("message", onLoad);
    worker.once("exit", onEarlyExit);
    worker.once("error", (e) => fail(new MusterError("invalid_config", `workflow ${file}: ${e.message}`)));
  });
}

/** The WorkflowFn that runs the thread's function: its ctx calls answered here, its end awaited. */
function bridge(worker: Worker, stop: () => Promise<void>): WorkflowFn {
  return (ctx, input) =>
    new Promise<unknown>((resolve, reject) => {
      let settled = false;
      let grace: NodeJS.Timeout | undefined;
      const end = (f: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(grace);
        ctx.signal.removeEventListener("abort", onAbort);
        void stop();
        f();
      };
      const send = (m: ToWorker): void => {
        if (!settled) worker.postMessage(m);
      };
      worker.on("message", (m: FromWorker) => {
        try {
          if (m.type === "agent") {
            const h = ctx.agent(m.call);
            void h.await().then((result) => send({ type: "result", id: m.id, result }));
          } else if (m.type === "phase") ctx.phase(m.name);
          else if (m.type === "log") ctx.log(m.text);
          else if (m.type === "done") end(() => resolve(m.value));
          else if (m.type === "failed") end(() => reject(new Error(m.message)));
        } catch (e) {
          // A call the main thread refused after the thread's own checks passed: the function's failure.
          end(() => reject(e));
        }
      });
      worker.once("error", (e) => end(() => reject(e)));
      worker.once("exit", (code) =>
        end(() =>
          reject(new Error(`the workflow function ended its thread (exit code ${code}) before returning`)),
        ),
      );
      const onAbort = (): void => {
        send({ type: "abort" });
        grace = setTimeout(
          () =>
            end(() =>
              reject(
                new Error("the workflow function did not return after the run was cancelled; it was stopped"),
              ),
            ),
          STOP_GRACE_MS,
        );
      };
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      if (ctx.signal.aborted) onAbort();
      worker.postMessage({ type: "start", input } satisfies ToWorker);
    });
}
