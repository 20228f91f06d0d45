import type { Command } from "commander";
import { shortId } from "../../util/ids.js";
import { type CommonOptions, common, muster, readPrompt } from "../context.js";
import { parsePositiveInt, since, table } from "../format.js";
import { takeInterrupt } from "../interrupt.js";
import { printJson, say, warn } from "../output.js";
import { visibleLine } from "../sanitize.js";
import { displayPath, printWarnings } from "./agents.js";
import { onProgress, printRunView, report } from "./workflow-print.js";

/** The workflows of this command's Muster; the engine (smol-toml among it) loads only when a workflow command runs. */
async function workflows(flags: CommonOptions) {
  const { createWorkflows } = await import("../../workflows/api.js");
  return createWorkflows(muster(flags));
}

const CONCURRENCY_HELP =
  "steps in flight at once (starting or running); more ready steps wait queued (default: the run-slot limit, MUSTER_MAX_RUNNING)";
const concurrencyOpt = (v: string | undefined) =>
  v === undefined ? {} : { concurrency: parsePositiveInt(v, "--concurrency", 10_000) };
const KEEP_HELP =
  "leave each step's child open (idle in its pane, to attach to or send follow-ups); by default it is closed once its step settles (still resumable with spawn --resume)";

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
      const d = (await workflows(flags)).list();
      printWarnings(d.warnings);
      if (flags.json) {
        printJson({ workflows: d.workflows, warnings: d.warnings });
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
      const wfs = await workflows(flags);
      const concurrency = concurrencyOpt(flags.concurrency);
      const input =
        inputArg === undefined && flags.file === undefined ? "" : readPrompt(inputArg, flags.file);
      const { controller, interrupted, release } = cancelOnInterrupt();
      try {
        const run = await wfs.run(ref, input, {
          signal: controller.signal,
          onProgress,
          keep: !!flags.keep,
          sandbox: !!flags.sandbox,
          ...concurrency,
        });
        report(run, !!flags.json, interrupted());
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
    const concurrency = concurrencyOpt(flags.concurrency);
    const wfs = await workflows(flags);
    const { controller, interrupted, release } = cancelOnInterrupt();
    try {
      const run = await wfs.resume(ref, {
        signal: controller.signal,
        onProgress,
        keep: !!flags.keep,
        ...concurrency,
      });
      report(run, !!flags.json, interrupted());
    } finally {
      release();
    }
  });

  common(wf.command("runs").description("list this primary's workflow runs, oldest first")).action(
    async (flags: CommonOptions) => {
      const runs = (await workflows(flags)).runs();
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
    const view = (await workflows(flags)).status(ref);
    if (flags.json) printJson(view);
    else printRunView(view);
  });

  common(
    wf
      .command("cancel")
      .description("cancel a workflow run: nothing more starts and its running steps' children are cancelled")
      .argument("<run>", "a run id, or a unique prefix or suffix"),
  ).action(async (ref: string, flags: CommonOptions) => {
    const view = await (await workflows(flags)).cancel(ref);
    if (flags.json) printJson(view);
    else printRunView(view);
  });
  // Usage errors in a subcommand end with exit 2 like everywhere else, not process.exit.
  for (const c of wf.commands) c.exitOverride();
}
