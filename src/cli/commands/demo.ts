import type { Command } from "commander";
import { MusterError } from "../../base/errors.js";
import { rawSetting } from "../../base/settings/resolve.js";
import { createMuster } from "../../core/muster.js";
import { shortId } from "../../util/ids.js";
import { selfCommand } from "../../util/self-bin.js";
import { clip, humanDuration, parseDuration, shellQuote } from "../format.js";
import { takeInterrupt } from "../interrupt.js";
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
    .summary("a live demo: three mock children, each in a pane of its own (no API keys)")
    .option("--json", "print one JSON document on stdout at the end, nothing else")
    .option("--timeout <duration>", "give up after this long", "60s")
    .option("--keep", "keep the three children (panes, artifacts) to attach to and send follow-ups")
    .action(async (flags: { json?: boolean; timeout: string; keep?: boolean }) => {
      const m = createMuster();
      try {
        await m.ensureMux();
      } catch (e) {
        const hint =
          m.backend.name === "tmux"
            ? "needs tmux: install it (Debian/Ubuntu: sudo apt-get install -y tmux; macOS: brew install tmux)"
            : `cannot start children on the ${m.backend.name} backend`;
        throw new MusterError("mux_unavailable", `muster demo ${hint} — ${(e as Error).message}`, {
          cause: e,
        });
      }
      const me = selfCommand();
      const say = (s: string): void => {
        if (!flags.json) process.stdout.write(visible(s));
      };
      const backend = m.backend.name;
      say(`muster demo: starting three mock children on the ${backend} backend${whereOn(backend)}…\n`);
      const rows: Row[] = [];
      const tty = !flags.json && process.stdout.isTTY;
      let ticker: NodeJS.Timeout | undefined;
      // Ctrl-C or a SIGTERM (a timeout, a closed CI job) ends the demo like its end does: the children are
      // removed unless --keep.
      const controller = new AbortController();
      const stop = (): void => controller.abort();
      const releaseInterrupt = takeInterrupt(stop);
      // `on`, not `once`: signal-exit (execa's) re-raises a signal whose only listener left is its own, so a
      // listener that removed itself on the first SIGTERM would let the process die before the clean-up.
      process.on("SIGTERM", stop);
      const release = (): void => {
        releaseInterrupt();
        process.removeListener("SIGTERM", stop);
      };
      let outcome: Awaited<ReturnType<typeof m.wait>>;
      let panes: { id: string; agent: string; attach: string[] | null }[];
      let removed: string[] = [];
      try {
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
        say(`${watchHint(backend, me, rows, m)}\n\n`);
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
        if (tty) ticker = setInterval(draw, 500);
        outcome = await m.wait(
          rows.map((r) => r.id),
          {
            mode: "all",
            withText: true,
            timeoutMs: parseDuration(flags.timeout),
            signal: controller.signal,
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
        );
        if (ticker) clearInterval(ticker);
        if (tty) draw();
        panes = rows.map((r) => ({ id: r.id, agent: r.agent, attach: m.attachCommand(r.id) }));
      } finally {
        if (ticker) clearInterval(ticker);
        release();
        // The demo's children are its own: close and remove them (pane, artifacts, conversation) unless --keep.
        if (!flags.keep && rows.length > 0)
          removed = (
            await m.remove(
              rows.map((r) => r.id),
              { force: true },
            )
          ).map((r) => r.id);
      }
      const ids = rows.map((r) => shortId(r.id));
      if (flags.json)
        printJson({
          primary: m.primary,
          backend,
          results: outcome.results,
          pending: outcome.pending,
          kept: !!flags.keep,
          removed,
          panes: flags.keep ? panes : [],
        });
      else {
        for (const r of outcome.results) {
          say(`\n── ${r.agent} (${shortId(r.id)}) ${r.status}\n${r.text ?? r.reason ?? ""}`);
        }
        if (flags.keep) {
          process.stdout.write("\nThe children stay, idle, for inspection:\n");
          for (const p of panes) {
            process.stdout.write(
              `  ${p.agent.padEnd(13)} ${me} attach ${shortId(p.id)}   (or: ${p.attach ? shellQuote(p.attach) : "-"})\n`,
            );
          }
          process.stdout.write(
            `\nNext: ${me} ls · ${me} send ${ids[0]} "a follow-up" --wait · ${me} rm ${ids.join(" ")}\n`,
          );
        } else {
          process.stdout.write(
            `\nThe three children were closed and removed (panes, artifacts, conversations); ${me} demo --keep keeps them.\n`,
          );
          process.stdout.write(`\nNext: ${me} spawn --agent mock --wait "Summarise the repo" · ${me} ls\n`);
        }
      }
      const code = exitCodeOf(outcome);
      if (code !== 0) throw new ExitWith(code);
    });
}

/** Where the backend puts each child, as the first line says it. */
function whereOn(backend: string): string {
  if (backend === "tmux")
    return process.env.TMUX
      ? ", each in a background window of your tmux session"
      : ', each in a window of its own in the detached tmux session "muster"';
  if (backend === "pty") return ", each under a pseudo-terminal of its own (no tmux pane)";
  if (backend === "zellij") return ", each in a Zellij tab of its own";
  return "";
}

/** How to watch the children while the demo runs: they are removed at its end unless --keep. */
function watchHint(backend: string, me: string, rows: Row[], m: ReturnType<typeof createMuster>): string {
  const first = rows[0];
  if (!first) return "";
  const others = rows.slice(1).map((r) => shortId(r.id));
  const detach =
    backend === "tmux"
      ? "detach with prefix + d"
      : backend === "pty"
        ? `detach with ${rawSetting(process.env, "detachKey") || "Ctrl-\\"}`
        : "detach as your multiplexer does";
  // Outside tmux, the pane's attach command up to its first `;` attaches the whole session: all three at once.
  const pane = backend === "tmux" && !process.env.TMUX ? m.attachCommand(first.id) : null;
  const session = pane?.includes(";") ? pane.slice(0, pane.indexOf(";")) : pane;
  return (
    `Watch while they run (removed at the end unless --keep): ${me} attach ${shortId(first.id)}` +
    `${others.length ? ` (or ${others.join(", ")})` : ""}, ${detach}` +
    `${session ? `; all three: ${shellQuote(session)}` : ""}`
  );
}
