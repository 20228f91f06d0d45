import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { readJsonIfExists } from "../../util/fsx.js";
import { shortId } from "../../util/ids.js";
import { readFileBounded } from "../../util/safe-read.js";
import type { CodeRunOptions, CodeRunResult } from "../../workflows/code.js";
import type { CodeDef } from "../../workflows/run-log.js";
import type { muster } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { printAnswer, printJson, say, warn } from "../output.js";
import { visibleLine } from "../sanitize.js";

type Status = CodeRunResult["status"];

/** A code run's progress on stderr: calls started, settled and answered from the log, phases, log lines. */
const onProgress: CodeRunOptions["onProgress"] = (p) => {
  if (p.type === "agent_started") warn(`muster: ${p.id} started: child ${shortId(p.childId)} (${p.agent})\n`);
  else if (p.type === "agent_settled")
    warn(
      `muster: ${p.result.id} ${p.result.status}${p.result.reason ? `: ${visibleLine(p.result.reason)}` : ""}\n`,
    );
  else if (p.type === "agent_replayed")
    warn(
      `muster: ${p.result.id} ${p.result.status} (from the log${p.result.childId ? `: child ${shortId(p.result.childId)}` : ""})\n`,
    );
  else if (p.type === "replay_ended")
    warn(
      `muster: replay ended at ${p.id} after ${p.replayed} call(s): ${p.reason}; children run from here\n`,
    );
  else if (p.type === "phase") warn(`muster: phase ${visibleLine(p.name)}\n`);
  else if (p.type === "log") warn(`muster: ${visibleLine(p.text)}\n`);
};

/** Prints a finished code run: its returned value on stdout (or the whole run with --json), a summary on stderr. */
function report(run: CodeRunResult, json: boolean): Status {
  if (json) printJson(run);
  else {
    if (typeof run.result === "string")
      printAnswer(run.result.endsWith("\n") ? run.result : `${run.result}\n`);
    else if (run.result !== undefined) say(`${JSON.stringify(run.result, null, 2)}\n`);
    warn(
      `muster: workflow run ${shortId(run.runId)} ${run.status}${run.error ? `: ${visibleLine(run.error)}` : ""}\n`,
    );
  }
  return run.status;
}

/** Exit code of a code run: 0 completed, 3 cancelled, 130 interrupted by Ctrl-C, else 1. */
export function codeExit(status: Status, interrupted: boolean): number {
  if (interrupted) return EXIT.interrupted;
  return status === "completed" ? EXIT.ok : status === "cancelled" ? EXIT.cancelled : EXIT.errored;
}

/** What run and resume of a code workflow take from the command line. */
export interface CodeCommandOptions {
  signal: AbortSignal;
  json: boolean;
  /** Leave the steps' children open after they settle (`--keep`). */
  keep: boolean;
}

/**
 * `muster workflow run <file.mjs>` (or a discovered code workflow's file): runs the module's workflow function.
 * With `sandbox`, the file is untrusted program text run in QuickJS (see workflows/sandbox.ts), never imported.
 */
export async function runCode(
  m: ReturnType<typeof muster>,
  file: string,
  input: string,
  o: CodeCommandOptions & { sandbox: boolean; name?: string | undefined },
): Promise<Status> {
  const { runCodeWorkflow } = await import("../../workflows/code.js");
  const { loadInWorker } = await import("../../workflows/code-worker.js");
  const { musterHost } = await import("../../workflows/host.js");
  const { signal, json } = o;
  const host = musterHost(m, { keep: o.keep });
  const abs = path.resolve(m.cwd, file);
  const runName = o.name ?? path.basename(abs).replace(/\.[cm]?js$/, "");
  if (o.sandbox) {
    const { runSandboxed } = await import("../../workflows/sandbox.js");
    return report(
      await runSandboxed(readSource(abs), input, host, { name: runName, signal, onProgress }),
      json,
    );
  }
  // Trusted code runs in a thread of its own: a busy loop or process.exit in it cannot take muster with it.
  const worker = await loadInWorker(abs, signal);
  try {
    return report(
      await runCodeWorkflow(host, runName, worker.fn, input, {
        signal,
        onProgress,
        origin: { kind: "code", file: abs },
      }),
      json,
    );
  } finally {
    await worker.stop();
  }
}

/** `muster workflow resume <run>` of a code or sandboxed run: the function again, settled calls from the log. */
export async function resumeCode(
  m: ReturnType<typeof muster>,
  runId: string,
  o: CodeCommandOptions,
): Promise<Status> {
  const { resumeCodeWorkflow } = await import("../../workflows/code-resume.js");
  const { loadInWorker } = await import("../../workflows/code-worker.js");
  const { musterHost } = await import("../../workflows/host.js");
  const { runFiles } = await import("../../workflows/run-log.js");
  const def = readJsonIfExists<CodeDef>(runFiles(m.paths.dir, runId).workflow);
  // A module's run runs its function in a thread of its own again (see runCode).
  const worker = def?.kind === "code" && def.file ? await loadInWorker(def.source, o.signal) : undefined;
  try {
    return report(
      await resumeCodeWorkflow(musterHost(m, { keep: o.keep }), runId, {
        signal: o.signal,
        onProgress,
        ...(worker ? { fn: worker.fn } : {}),
      }),
      o.json,
    );
  } finally {
    await worker?.stop();
  }
}

/** A sandboxed program's text (at most 1 MiB: it is a short program); a missing file is a clear error. */
function readSource(file: string): string {
  try {
    return readFileBounded(file, 1024 * 1024, { follow: true }).toString("utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT")
      throw new MusterError("invalid_argument", `no such file: ${file}`);
    throw e;
  }
}
