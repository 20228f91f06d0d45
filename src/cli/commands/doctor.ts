import type { Command } from "commander";
import { rawSetting } from "../../base/settings/resolve.js";
import { doctor } from "../../core/doctor.js";
import { table } from "../format.js";
import { ExitWith, printJson, say } from "../output.js";

export function registerDoctor(program: Command): void {
  program
    .command("doctor")
    .summary("what is available here: tmux, the backend children start in, runners, agent CLIs")
    .option("--json", "print one JSON document on stdout, nothing else")
    .action(async (flags: { json?: boolean }) => {
      const report = await doctor();
      const { tmux, agentClis: clis } = report;
      // The SSH hosts named here (not reached: `muster hosts check <name>` does that).
      const hosts = (await import("../../place/ssh/admin.js"))
        .listHosts(process.env)
        .map((h) => ({ name: h.name, target: h.target }));
      if (flags.json) printJson({ ...report, hosts });
      else {
        const { backend } = report;
        // tmux is needed only when new children start in it; otherwise it is one option among the backends.
        const tmuxRow = tmux.ok
          ? ["tmux", "ok", `${tmux.version}${report.socket ? ` (private socket ${report.socket})` : ""}`]
          : backend.name === "tmux"
            ? ["tmux", "MISSING", `${tmux.error} — install it: apt-get install tmux / brew install tmux`]
            : [
                "tmux",
                "-",
                `not found; optional: children run on the ${backend.name} backend (apt-get install tmux / brew install tmux for tmux panes)`,
              ];
        const chosen = rawSetting(process.env, "backend") ? "set by MUSTER_BACKEND" : "the default here";
        const backendRow = backend.ok
          ? [
              "backend",
              "ok",
              `${backend.name}${backend.name === "tmux" ? "" : ` (${backend.version})`}: new children start here (${chosen}; spawn --backend <name> for one child)`,
            ]
          : ["backend", "FAILED", `${backend.name}: ${backend.error} (${chosen})`];
        const rows = [
          ["node", "ok", process.version],
          tmuxRow,
          backendRow,
          ["state", "ok", report.stateRoot],
          ...(report.inotify
            ? [
                [
                  "inotify",
                  report.inotify.headroom > 0 ? "ok" : "USED UP",
                  `${report.inotify.inUse} of ${report.inotify.limit} instances in use by this user (fs.inotify.max_user_instances)`,
                ],
              ]
            : []),
          ...hosts.map((h) => [
            `host ${h.name}`,
            "named",
            `${h.target}: muster hosts check ${h.name} reaches it`,
          ]),
          ...report.runners.map((r) => [`runner ${r.name}`, "ok", "built in"]),
          ...clis.map((c) => [
            `cli ${c.name}`,
            c.found ? "found" : "-",
            c.found
              ? `${c.version ?? "?"} (${c.path})${c.tested ? ` · tested with ${c.tested}` : ""}`
              : `not on PATH: ${c.install} (or set ${c.envVar})`,
          ]),
          ...report.settings.map((s) => ["setting", s.source, `${s.name}=${s.value}`]),
          ...report.settingProblems.map((line) => ["setting", "BAD", line]),
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
