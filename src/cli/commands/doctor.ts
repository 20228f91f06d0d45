import type { Command } from "commander";
import { doctor } from "../../core/doctor.js";
import { table } from "../format.js";
import { ExitWith, printJson, say } from "../output.js";

export function registerDoctor(program: Command): void {
  program
    .command("doctor")
    .summary("what is available here: tmux, runners, agent CLIs")
    .option("--json", "print one JSON document on stdout, nothing else")
    .action(async (flags: { json?: boolean }) => {
      const report = await doctor();
      const { tmux, agentClis: clis } = report;
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
          ...(report.backend.name === "tmux"
            ? []
            : [
                [
                  "backend",
                  report.backend.ok ? "ok" : "FAILED",
                  `${report.backend.name}: ${report.backend.version ?? report.backend.error}`,
                ],
              ]),
          ["state", "ok", report.stateRoot],
          ...report.runners.map((r) => [`runner ${r.name}`, "ok", "built in"]),
          ...clis.map((c) => [
            `cli ${c.name}`,
            c.found ? "found" : "-",
            c.found
              ? `${c.version ?? "?"} (${c.path})${c.tested ? ` · tested with ${c.tested}` : ""}`
              : `not on PATH: ${c.install} (or set ${c.envVar})`,
          ]),
          ...report.orphans.map((o) => [
            `orphan ${o.pid}`,
            "STRAY",
            `${o.kind} of ${o.dir}, which no longer exists: no muster command reaches it (kill ${o.pid})`,
          ]),
        ];
        say(`${table(rows)}\n`);
      }
      if (!report.ok) throw new ExitWith(1);
    });
}
