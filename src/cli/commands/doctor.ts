import type { Command } from "commander";
import { helperCwd, stateRoot } from "../../core/paths.js";
import { createTmuxBackend } from "../../mux/tmux/backend.js";
import { runnerReadiness } from "../../runners/availability.js";
import { getRunner, runnerNames } from "../../runners/registry.js";
import { table } from "../format.js";
import { ExitWith, printJson, say } from "../output.js";

async function versionOf(bin: string): Promise<string | undefined> {
  const { execa } = await import("execa"); // ~150 ms to load: only for doctor
  // execa needs a cwd that exists: a deleted one must not break doctor.
  const r = await execa(bin, ["--version"], {
    cwd: helperCwd(),
    reject: false,
    timeout: 5000,
    stdin: "ignore",
  });
  // Some CLIs (pi) print their version on stderr.
  const text = String(r.stdout).trim() || String(r.stderr).trim();
  return r.exitCode === 0 ? text.split("\n")[0]?.trim() || undefined : undefined;
}

export function registerDoctor(program: Command): void {
  program
    .command("doctor")
    .summary("what is available here: tmux, runners, agent CLIs")
    .option("--json", "print one JSON document on stdout, nothing else")
    .action(async (flags: { json?: boolean }) => {
      let tmux: { ok: boolean; version?: string; error?: string };
      try {
        tmux = { ok: true, version: await createTmuxBackend().version() };
      } catch (e) {
        tmux = { ok: false, error: (e as Error).message };
      }
      const clis = await Promise.all(
        runnerNames()
          .map((name) => getRunner(name)!)
          .filter((r) => r.binary)
          .map(async (r) => {
            const bin = r.binary!;
            const ready = runnerReadiness(r.name, process.env);
            const p = ready.ready ? ready.path : undefined;
            return {
              name: r.name,
              found: !!p,
              path: p ?? null,
              version: p ? ((await versionOf(p)) ?? null) : null,
              envVar: bin.envVar,
              install: bin.install,
              tested: bin.tested?.version ?? null,
            };
          }),
      );
      const report = {
        ok: tmux.ok,
        node: process.version,
        tmux,
        socket: process.env.MUSTER_TMUX_SOCKET ?? null,
        insideTmux: !!process.env.TMUX,
        stateRoot: stateRoot(),
        runners: runnerNames().map((name) => ({ name, available: true })),
        agentClis: clis,
      };
      if (flags.json) printJson(report);
      else {
        const rows = [
          ["node", "ok", process.version],
          [
            "tmux",
            tmux.ok ? "ok" : "MISSING",
            tmux.ok
              ? `${tmux.version}${report.socket ? ` (private socket ${report.socket})` : ""}`
              : `${tmux.error} — install it: apt-get install tmux / brew install tmux`,
          ],
          ["state", "ok", report.stateRoot],
          ...report.runners.map((r) => [`runner ${r.name}`, "ok", "built in"]),
          ...clis.map((c) => [
            `cli ${c.name}`,
            c.found ? "found" : "-",
            c.found
              ? `${c.version ?? "?"} (${c.path})${c.tested ? ` · tested with ${c.tested}` : ""}`
              : `not on PATH: ${c.install} (or set ${c.envVar})`,
          ]),
        ];
        say(`${table(rows)}\n`);
      }
      if (!tmux.ok) throw new ExitWith(1);
    });
}
