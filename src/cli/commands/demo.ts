import type { Command } from "commander";
import { MusterError } from "../../core/errors.js";
import { createMuster } from "../../core/muster.js";
import { shortId } from "../../util/ids.js";
import { clip, humanDuration, parseDuration, shellQuote } from "../format.js";
import { ExitWith, printJson } from "../output.js";
import { visible, visibleLine } from "../sanitize.js";
import { exitCodeOf } from "./wait.js";

const TASKS = [
  {
    agent: "demo-explore",
    prompt: "Explore the repository and list the main modules\nmock: sleep=3 tools=4",
  },
  { agent: "demo-review", prompt: "Review the latest change for bugs\nmock: sleep=5 tools=6" },
  { agent: "demo-plan", prompt: "Plan the next release in five steps\nmock: sleep=2 tools=2" },
];

interface Row {
  id: string;
  agent: string;
  status: string;
  activity: string;
  started: number;
  ended?: number;
}

export function registerDemo(program: Command): void {
  program
    .command("demo")
    .summary("a live demo: three mock children in tmux panes (no API keys)")
    .option("--json", "print one JSON document on stdout at the end, nothing else")
    .option("--timeout <duration>", "give up after this long", "60s")
    .action(async (flags: { json?: boolean; timeout: string }) => {
      const m = createMuster();
      try {
        await m.backend.version();
      } catch (e) {
        throw new MusterError(
          "mux_unavailable",
          `muster demo needs tmux: install it (Debian/Ubuntu: sudo apt-get install -y tmux; macOS: brew install tmux) — ${(e as Error).message}`,
        );
      }
      const say = (s: string): void => {
        if (!flags.json) process.stdout.write(visible(s));
      };
      say("muster demo: starting three mock children, each in its own tmux pane…\n\n");
      const rows: Row[] = [];
      for (const t of TASKS) {
        const s = await m.spawn({ agent: t.agent, prompt: t.prompt });
        rows.push({
          id: s.id,
          agent: t.agent,
          status: "starting",
          activity: "pane opened",
          started: Date.now(),
        });
      }
      const tty = !flags.json && process.stdout.isTTY;
      let drawn = false;
      const draw = (): void => {
        if (flags.json) return;
        if (tty && drawn) process.stdout.write(`\x1b[${rows.length}A`);
        for (const r of rows) {
          const el = humanDuration((r.ended ?? Date.now()) - r.started);
          process.stdout.write(
            `${tty ? "\x1b[2K" : ""}  ${shortId(r.id)}  ${r.agent.padEnd(13)} ${r.status.padEnd(10)} ${el.padStart(4)}  ${clip(visibleLine(r.activity), 60)}\n`,
          );
        }
        drawn = true;
      };
      draw();
      const ticker = tty ? setInterval(draw, 500) : undefined;
      const outcome = await m
        .wait(
          rows.map((r) => r.id),
          {
            mode: "all",
            withText: true,
            timeoutMs: parseDuration(flags.timeout),
            onEvent: (id, e) => {
              const r = rows.find((x) => x.id === id);
              if (!r) return;
              if (e.type === "turn_started") r.status = "running";
              if (e.type === "tool_activity")
                r.activity = `${e.phase === "start" ? "⚙" : "✓"} ${e.name} ${e.summary}`;
              if (e.type === "progress") r.activity = e.text;
              if (e.type === "completion") {
                r.status = e.status;
                r.ended = Date.now();
                r.activity = e.output ? `${e.output.bytes} bytes of output` : (e.reason ?? "");
              }
              if (!tty && (e.type === "turn_started" || e.type === "completion")) draw();
            },
          },
        )
        .finally(() => {
          if (ticker) clearInterval(ticker);
        });
      if (tty) draw();
      const panes = rows.map((r) => {
        const c = m.child(r.id);
        return {
          id: r.id,
          agent: r.agent,
          attach: c.entry.pane ? m.backend.attachCommand(c.entry.pane) : null,
        };
      });
      if (flags.json)
        printJson({ primary: m.primary, results: outcome.results, pending: outcome.pending, panes });
      else {
        for (const r of outcome.results) {
          say(`\n── ${r.agent} (${shortId(r.id)}) ${r.status}\n${r.text ?? r.reason ?? ""}`);
        }
        process.stdout.write("\nThe panes stay open for inspection:\n");
        for (const p of panes) {
          process.stdout.write(
            `  ${p.agent.padEnd(13)} muster attach ${shortId(p.id)}   (or: ${p.attach ? shellQuote(p.attach) : "-"})\n`,
          );
        }
        process.stdout.write(
          `\nNext: muster ls · muster send ${shortId(rows[0]!.id)} "a follow-up" · muster cancel <id>\n`,
        );
      }
      const code = exitCodeOf(outcome);
      if (code !== 0) throw new ExitWith(code);
    });
}
