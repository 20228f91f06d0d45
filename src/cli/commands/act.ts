import type { Command } from "commander";
import { MusterError } from "../../base/errors.js";
import type { SendMode } from "../../core/send.js";
import { shortId } from "../../util/ids.js";
import { type CommonOptions, common, muster, readPrompt } from "../context.js";
import { EXIT, resultExit } from "../exit-codes.js";
import { parseTimeout } from "../format.js";
import { isolationNote } from "../isolation-note.js";
import { ExitWith, printAnswer, printJson, say, warn } from "../output.js";
import { treePausedLine } from "../pause-line.js";
import { visibleLine } from "../sanitize.js";
import { printResults, waitWithProgress } from "./wait.js";

export function registerAct(program: Command): void {
  common(
    program
      .command("result")
      .summary("the output of a settled turn")
      .description("Print a settled turn's output from its immutable snapshot (checked against its sha256).")
      .argument("<id>", "child id or unique prefix")
      .option(
        "--turn <turn>",
        "a specific turn: its number in muster status, its id, short id or a unique prefix",
      )
      .option("--raw", "on a terminal too, print the answer's exact bytes (escape sequences included)"),
  ).action(async (id: string, flags: CommonOptions & { turn?: string; raw?: boolean }) => {
    const r = muster(flags).result(id, flags.turn);
    if (flags.json) printJson(r);
    else if (r.text !== undefined) printAnswer(r.text, !!flags.raw);
    else if (r.outputError)
      warn(
        `muster: turn ${r.turnId} ${r.status} without a snapshot: ${visibleLine(r.outputError.message)}\n`,
      );
    else
      warn(
        `muster: turn ${r.turnId} ${r.status}${r.reason ? `: ${visibleLine(r.reason)}` : ""} (no output)\n`,
      );
    if (!flags.json) warn(isolationNote(r));
    if (!flags.json && r.receiptError) warn(`muster: warning: ${visibleLine(r.receiptError)}\n`);
    // The same code with or without --json.
    const code = resultExit(r);
    if (code !== EXIT.ok) throw new ExitWith(code);
  });

  common(
    program
      .command("send")
      .summary("give a child its next turn")
      .description(
        "Queue a follow-up for a child; it runs in the same pane when the current turn ends (--mode queue, the default). --mode now interrupts the running turn (it settles interrupted, its answer so far kept) and runs the follow-up at once in the same session; --mode stop interrupts it and runs nothing (no prompt). Prints the new turn id.",
      )
      .argument("<id>", "child id or unique prefix")
      .argument("[prompt]", "the follow-up (or use --file)")
      .option("-f, --file <path>", "read the follow-up from a file (- for stdin)")
      .option(
        "--mode <mode>",
        "queue (after the running turn), now (interrupt it), stop (interrupt, no follow-up)",
        "queue",
      )
      .option("-w, --wait", "wait for this turn and print its result")
      .option("--timeout <duration>", "with --wait: give up after this long")
      .option("--model <model>", "model for this turn and later ones (default: the last turn's)")
      .option(
        "--reasoning <level>",
        "reasoning level for this turn and later ones (default: the last turn's)",
      ),
  ).action(
    async (
      id: string,
      prompt: string | undefined,
      flags: CommonOptions & {
        file?: string;
        wait?: boolean;
        timeout?: string;
        model?: string;
        reasoning?: string;
        mode: string;
      },
    ) => {
      const m = muster(flags);
      const mode = sendMode(flags.mode);
      // Checked before anything is sent: a bad --timeout leaves no turn behind.
      const timeout = flags.timeout ? { timeoutMs: parseTimeout(flags.timeout) } : {};
      if (mode === "stop") {
        if (prompt !== undefined || flags.file !== undefined)
          throw new MusterError(
            "invalid_argument",
            "--mode stop runs nothing after the turn: give no prompt",
          );
        const stopped = m.stopTurn(id);
        if (!flags.wait || !stopped.turnId) {
          if (flags.json) printJson(stopped);
          else
            say(
              stopped.turnId ? `stopping turn ${stopped.turnId}\n` : `no turn of ${stopped.id} is running\n`,
            );
          return;
        }
        const outcome = await waitWithProgress(
          m,
          [stopped.id],
          {
            mode: "all",
            turns: new Map([[stopped.id, stopped.turnId]]),
            ...timeout,
          },
          !!flags.json,
        );
        printResults(outcome, !!flags.json, { stopped });
        return;
      }
      const sent = await m.send(id, readPrompt(prompt, flags.file), {
        mode,
        ...(flags.model ? { model: flags.model } : {}),
        ...(flags.reasoning ? { reasoning: flags.reasoning } : {}),
      });
      for (const w of sent.warnings) warn(`muster: warning: ${visibleLine(w)}\n`);
      if (sent.paused) warn(`muster: ${treePausedLine(sent.paused)}: this turn waits until then\n`);
      if (!flags.wait) {
        if (flags.json) printJson(sent);
        else say(`${sent.turnId}\n`);
        return;
      }
      const outcome = await waitWithProgress(
        m,
        [sent.id],
        // The turn this send queued, never "the newest": another sender's turn may be newer, or look newer.
        {
          mode: "all",
          turns: new Map([[sent.id, sent.turnId]]),
          ...timeout,
        },
        !!flags.json,
      );
      printResults(outcome, !!flags.json, { sent });
    },
  );

  common(
    program
      .command("cancel")
      .summary("cancel a child's turn and close it")
      .description(
        "Cancel the running turn (its whole process group is stopped, TERM then KILL), drop queued turns and close the child and its pane (--keep-pane keeps the pane for reading). --subtree also cancels every descendant, deepest first; --all cancels every child of the primary. Children are cancelled in parallel; queued turns are dropped before any turn is stopped.",
      )
      .argument("[ids...]", "child ids or unique prefixes")
      .option("--subtree", "also cancel each child's descendants, deepest first")
      .option("--all", "cancel every child of this primary, deepest first")
      .option("--keep-pane", "keep each cancelled child's pane open for reading")
      .option(
        "--snapshot",
        "first keep each child's last context (task, answer so far, pane, open tool call) for status and spawn --resume",
      ),
  ).action(
    async (
      ids: string[],
      flags: CommonOptions & { subtree?: boolean; all?: boolean; keepPane?: boolean; snapshot?: boolean },
    ) => {
      const m = muster(flags);
      if (flags.all && ids.length > 0)
        throw new MusterError("invalid_argument", "--all cancels every child: give no ids with it");
      if (!flags.all && ids.length === 0)
        throw new MusterError("invalid_argument", "name the children to cancel, or use --all");
      const opts = {
        ...(flags.keepPane ? { keepPane: true } : {}),
        ...(flags.snapshot ? { snapshot: true } : {}),
      };
      const out = [];
      if (flags.all) out.push(...(await m.cancelTree(undefined, opts)));
      else if (flags.subtree) for (const id of ids) out.push(...(await m.cancelTree(id, opts)));
      else out.push(...(await m.cancelMany(ids, opts)));
      if (flags.json) return printJson({ cancelled: out });
      for (const o of out)
        say(
          `${shortId(o.id)} ${o.by === "none" ? `already ${o.state}` : o.state}${o.pane === "kept" ? ` · pane kept (${o.paneKept})` : ""}${o.snapshot ? ` · snapshot ${o.snapshot}` : ""}${o.snapshotError ? ` · no snapshot: ${o.snapshotError}` : ""}\n`,
        );
    },
  );
}

/** `--mode`, checked before anything is written. */
function sendMode(v: string): SendMode {
  if (v === "queue" || v === "now" || v === "stop") return v;
  throw new MusterError("invalid_argument", `--mode must be queue, now or stop (got ${JSON.stringify(v)})`);
}
