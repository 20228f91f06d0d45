import type { Command } from "commander";
import { shortId } from "../../util/ids.js";
import type { Progress, RunResult } from "../../workflows/run.js";
import type { RunView } from "../../workflows/run-log.js";
import { type CommonOptions, common, muster, readPrompt } from "../context.js";
import { EXIT } from "../exit-codes.js";
import { parsePositiveInt, since, table } from "../format.js";
import { takeInterrupt } from "../interrupt.js";
import { ExitWith, printAnswer, printAnswerBlock, printJson, say, warn } from "../output.js";
import { visibleLine } from "../sanitize.js";
import { displayPath, printWarnings } from "./agents.js";
import { codeExit, resumeCode, runCode } from "./workflow-code.js";

/** Exit code of a finished run: 0 when every step completed, 3 cancelled, 130 interrupted by Ctrl-C, else 1. */
/** The workflow modules (smol-toml among them) load only when a workflow command runs. */
async function engine() {
  const [discover, host, run, log, cancel] = await Promise.all([
    import("../../workflows/discover.js"),
    import("../../workflows/host.js"),
    import("../../workflows/run.js"),
    import("../../workflows/run-log.js"),
    import("../../workflows/cancel.js"),
  ]);
  return { ...discover, ...host, ...run, ...log, ...cancel };
}

/** A code workflow (trusted JS, run in this process) is named by its file. */
const isCodeFile = (ref: string): boolean => /\.(mjs|js|cjs)$/.test(ref);
const CONCURRENCY_HELP =
  "steps in flight at once (starting or running); more ready steps wait queued (default: the run-slot limit, MUSTER_MAX_RUNNING)";
const concurrencyOpt = (v: string | undefined) =>
  v === undefined ? {} : { concurrency: parsePositiveInt(v, "--concurrency", 10_000) };
const KEEP_HELP =
  "leave each step's child open (idle in its pane, to attach to or send follow-ups); by default it is closed once its step settles (still resumable with spawn --resume)";

function runExit(r: RunResult, interrupted: boolean): number {
  if (interrupted) return EXIT.interrupted;
  if (r.status === "completed") return EXIT.ok;
  if (r.status === "cancelled") return EXIT.cancelled;
  return EXIT.errored;
}

function progressLine(p: Progress): string | undefined {
  if (p.type === "run_started") return `workflow run ${shortId(p.runId)} started (${p.dir})`;
  if (p.type === "step_started") return `step ${p.stepId} started: child ${shortId(p.childId)} (${p.agent})`;
  const s = p.step;
  const why = s.reason ? `: ${visibleLine(s.reason)}` : "";
  return `step ${s.id} ${s.status}${s.childId ? ` (child ${shortId(s.childId)})` : ""}${why}`;
}

function printRunView(v: RunView): void {
  say(
    `${table([
      ["run", v.runId],
      ["workflow", `${v.workflow} (${displayPath(v.source)})`],
      ["status", v.status],
      ...(v.phase !== undefined ? [["phase", visibleLine(v.phase)]] : []),
      ["started", `${since(v.startedAt)} ago`],
    ])}\n\n`,
  );
  const rows = [["STEP", "STATUS", "CHILD", "DETAIL"]];
  for (const s of v.steps) {
    const detail = [
      ...(s.structured ? [`structured (${s.structured})`] : []),
      ...(s.reason ? [visibleLine(s.reason)] : []),
      ...(s.errors ? [`schema: ${visibleLine(s.errors.join("; "))}`] : []),
    ].join(" · ");
    rows.push([s.id, s.status, s.childId ? shortId(s.childId) : "-", detail]);
  }
  say(`${table(rows)}\n`);
}

const onProgress = (p: Progress): void => {
  const line = progressLine(p);
  if (line) warn(`muster: ${line}\n`);
};

/** Prints a finished TOML run (terminal results on stdout, a summary on stderr) and ends with its exit code. */
function report(run: RunResult, json: boolean, interrupted: boolean): void {
  if (json) printJson(run);
  else {
    for (const r of run.results) {
      say(`── ${r.id} · ${r.agent} · ${r.status}${r.reason ? ` · ${visibleLine(r.reason)}` : ""}\n`);
      // A structured step's result is its decoded value, not the prose around it.
      if ("output" in r) printAnswer(`${JSON.stringify(r.output, null, 2)}\n`);
      else if (r.text !== undefined) printAnswerBlock(r.text, true);
      for (const e of r.errors ?? []) say(`   ${visibleLine(e)}\n`);
    }
    const counts = new Map<string, number>();
    for (const s of run.steps) counts.set(s.status, (counts.get(s.status) ?? 0) + 1);
    warn(
      `muster: workflow run ${shortId(run.runId)} ${run.status}: ${[...counts].map(([k, n]) => `${n} ${k}`).join(", ")}\n`,
    );
  }
  const code = runExit(run, interrupted);
  if (code !== 0) throw new ExitWith(code);
}

/** Ctrl-C or SIGTERM during a run: say so and cancel the run's children (through the signal); exit 130 follows. */
function cancelOnInterrupt(): {
  controller: AbortController;
  interrupted: () => boolean;
  release: () => void;
} {
  const controller = new AbortController();
  let hit = false;
  const stop = (why: string) => () => {
    hit = true;
    warn(`muster: ${why}; cancelling the run's children\n`);
    controller.abort();
  };
  const releaseInterrupt = takeInterrupt(stop("interrupted"));
  // SIGTERM (a supervisor, `kill`) winds the run down as Ctrl-C does, rather than leaving its children running.
  const onTerm = stop("terminated (SIGTERM)");
  process.on("SIGTERM", onTerm);
  const release = (): void => {
    releaseInterrupt();
    process.off("SIGTERM", onTerm);
  };
  return { controller, interrupted: () => hit, release };
}

export function registerWorkflow(program: Command): void {
  const wf = program
    .command("workflow")
    .summary("run workflows: TOML DAGs of steps or JS code, each step a child")
    .description(
      "Workflows are TOML files (name, description, [[steps]] id, agent, prompt, needs, model, reasoning) or code modules " +
        "(.mjs/.js) found in the bundled workflows/ folder, $XDG_CONFIG_HOME/muster/workflows (default ~/.config) and " +
        "<cwd>/.muster/workflows (later shadows earlier by name). Each step runs as a real child you can watch and attach to.",
    );

  common(wf.command("list").description("list the workflows found, with the file that won each name")).action(
    async (flags: CommonOptions) => {
      const { discoverWorkflows } = await engine();
      const m = muster(flags);
      const d = discoverWorkflows(m.cwd, m.env);
      printWarnings(d.warnings);
      if (flags.json) {
        printJson({
          workflows: d.workflows.map((w) => ({
            name: w.name,
            kind: w.kind,
            description: w.description,
            layer: w.layer,
            source: w.source,
            steps: w.steps.map((s) => ({ id: s.id, agent: s.agent, needs: s.needs })),
            shadows: w.shadows,
          })),
          warnings: d.warnings,
        });
        return;
      }
      if (d.workflows.length === 0) {
        say(`no workflows found; searched: ${d.dirs.map((x) => displayPath(x.dir)).join(", ")}\n`);
        return;
      }
      const rows = [["NAME", "KIND", "STEPS", "LAYER", "SOURCE", "DESCRIPTION"]];
      for (const w of d.workflows)
        rows.push([
          w.name,
          w.kind,
          w.kind === "code" ? "-" : String(w.steps.length),
          w.layer,
          displayPath(w.source),
          visibleLine(w.description),
        ]);
      say(`${table(rows)}\n`);
    },
  );

  common(
    wf
      .command("run")
      .summary("run a workflow by name or file (.toml, or trusted .mjs code)")
      .description(
        "Run a workflow by name or file. Every step gets the input; a step also gets the outputs of the steps it needs. " +
          "Progress goes to stderr, the results of the final steps to stdout. Exit 0 when every step completed, " +
          "1 when one did not, 3 when the run was cancelled, 130 on Ctrl-C (which cancels the run's children).",
      )
      .argument(
        "<workflow>",
        "a workflow name, a path to a .toml file, or a code workflow (.mjs/.js: trusted, runs here)",
      )
      .argument("[input]", "the workflow input (every step receives it)")
      .option("--file <path>", "read the input from a file (- for stdin)")
      .option(
        "--sandbox",
        "run <workflow> as an untrusted program (the body of async (ctx, input) => …) in a QuickJS sandbox",
      )
      .option("--keep", KEEP_HELP)
      .option("--concurrency <n>", CONCURRENCY_HELP),
  ).action(
    async (
      ref: string,
      inputArg: string | undefined,
      flags: CommonOptions & { file?: string; sandbox?: boolean; keep?: boolean; concurrency?: string },
    ) => {
      const { loadWorkflow, runWorkflow, musterHost } = await engine();
      const m = muster(flags);
      const concurrency = concurrencyOpt(flags.concurrency);
      const def = flags.sandbox || isCodeFile(ref) ? undefined : loadWorkflow(ref, m.cwd, m.env);
      const input =
        inputArg === undefined && flags.file === undefined ? "" : readPrompt(inputArg, flags.file);
      const { controller, interrupted, release } = cancelOnInterrupt();
      if (!def || def.kind === "code") {
        let status: "completed" | "failed" | "cancelled";
        try {
          // A code workflow found by name runs from the file that won the name, under that name.
          const [file, name] = def ? [def.source, def.name] : [ref, undefined];
          status = await runCode(m, file, input, {
            signal: controller.signal,
            json: !!flags.json,
            keep: !!flags.keep,
            sandbox: !!flags.sandbox,
            name,
          });
        } finally {
          release();
        }
        const code = codeExit(status, interrupted());
        if (code !== 0) throw new ExitWith(code);
        return;
      }
      try {
        report(
          await runWorkflow(musterHost(m, { keep: !!flags.keep }), def, input, {
            signal: controller.signal,
            onProgress,
            ...concurrency,
          }),
          !!flags.json,
          interrupted(),
        );
      } finally {
        release();
      }
    },
  );

  common(
    wf
      .command("resume")
      .summary("resume a workflow run that was interrupted, cancelled or failed")
      .description(
        "Resume a workflow run that is not running (its runner was killed, or it was cancelled or failed): completed steps keep " +
          "their results, a child still running is waited for, every other step runs again. A code workflow runs again with its " +
          "settled ctx.agent calls answered from the run's log. Output and exit codes as for run.",
      )
      .argument("<run>", "a run id, or a unique prefix or suffix")
      .option("--keep", KEEP_HELP)
      .option("--concurrency <n>", CONCURRENCY_HELP),
  ).action(async (ref: string, flags: CommonOptions & { keep?: boolean; concurrency?: string }) => {
    const { resolveRunId, musterHost } = await engine();
    const concurrency = concurrencyOpt(flags.concurrency);
    const { resumeWorkflow, runKind } = await import("../../workflows/resume.js");
    const m = muster(flags);
    const runId = resolveRunId(m.paths.dir, ref);
    const { controller, interrupted, release } = cancelOnInterrupt();
    try {
      if (runKind(m.paths.dir, runId) !== "toml") {
        const o = { signal: controller.signal, json: !!flags.json, keep: !!flags.keep };
        const code = codeExit(await resumeCode(m, runId, o), interrupted());
        if (code !== 0) throw new ExitWith(code);
        return;
      }
      report(
        await resumeWorkflow(musterHost(m, { keep: !!flags.keep }), runId, {
          signal: controller.signal,
          onProgress,
          ...concurrency,
        }),
        !!flags.json,
        interrupted(),
      );
    } finally {
      release();
    }
  });

  common(wf.command("runs").description("list this primary's workflow runs, oldest first")).action(
    async (flags: CommonOptions) => {
      const { listRuns } = await engine();
      const m = muster(flags);
      const runs = listRuns(m.paths.dir);
      if (flags.json) {
        printJson({ runs });
        return;
      }
      if (runs.length === 0) {
        say("no workflow runs\n");
        return;
      }
      const rows = [["RUN", "WORKFLOW", "STATUS", "STEPS", "STARTED"]];
      for (const r of runs) {
        const done = r.steps.filter((s) => s.status === "completed").length;
        rows.push([
          shortId(r.runId),
          r.workflow,
          r.status,
          `${done}/${r.steps.length} completed`,
          `${since(r.startedAt)} ago`,
        ]);
      }
      say(`${table(rows)}\n`);
    },
  );

  common(
    wf
      .command("status")
      .description("show a workflow run and its steps")
      .argument("<run>", "a run id, or a unique prefix or suffix"),
  ).action(async (ref: string, flags: CommonOptions) => {
    const { readRun, resolveRunId } = await engine();
    const m = muster(flags);
    const view = readRun(m.paths.dir, resolveRunId(m.paths.dir, ref));
    if (flags.json) printJson(view);
    else printRunView(view);
  });

  common(
    wf
      .command("cancel")
      .description("cancel a workflow run: nothing more starts and its running steps' children are cancelled")
      .argument("<run>", "a run id, or a unique prefix or suffix"),
  ).action(async (ref: string, flags: CommonOptions) => {
    const { cancelRun, resolveRunId, musterHost } = await engine();
    const m = muster(flags);
    const view = await cancelRun(musterHost(m), resolveRunId(m.paths.dir, ref));
    if (flags.json) printJson(view);
    else printRunView(view);
  });
  // Usage errors in a subcommand end with exit 2 like everywhere else, not process.exit.
  for (const c of wf.commands) c.exitOverride();
}
