import * as os from "node:os";
import * as path from "node:path";
import type { Command } from "commander";
import { type AgentInfo, listAgents, type ResolvedProfile, showAgent } from "../../core/catalog.js";
import { workingDir } from "../../util/cwd.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import { agentSessionJson, agentSessionLines } from "../agent-session.js";
import { muster } from "../context.js";
import { clip, table } from "../format.js";
import { printJson, say, warn } from "../output.js";

/** Each warning as one stderr line (never on stdout, so --json output stays one document). */
export function printWarnings(warnings: string[]): void {
  for (const w of warnings) warn(`muster: warning: ${w.replace(/\s*\n\s*/g, " ")}\n`);
}

/** `--no-compat` only when given: otherwise MUSTER_COMPAT_AGENTS and the config decide. */
export function compatFlag(cmd: Command): { compat?: boolean } {
  return cmd.getOptionValueSource("compat") === "cli"
    ? { compat: cmd.getOptionValue("compat") as boolean }
    : {};
}

/** A path as a person would type it: relative to here, under ~, or in muster's own package. */
export function displayPath(file: string, cwd = workingDir()): string {
  const home = process.env.HOME || os.homedir();
  const under = (dir: string) => file === dir || file.startsWith(`${dir}${path.sep}`);
  if (under(path.join(PACKAGE_ROOT, "agents"))) return `<muster>/${path.relative(PACKAGE_ROOT, file)}`;
  if (under(cwd)) return `./${path.relative(cwd, file)}`;
  if (home && under(home)) return `~/${path.relative(home, file)}`;
  return file;
}

/** The JSON shape of a profile in `muster agents` (list rows omit the system prompt). */
function profileJson(p: ResolvedProfile, full: boolean) {
  const { warnings: _w, systemPrompt, ...rest } = p;
  return {
    ...rest,
    format: p.format ?? "muster",
    ...(full ? { systemPrompt } : {}),
  };
}

/** What the newest child of this agent that opened a live session found offered (ACP modes, models). */
async function lastOffer(name: string) {
  try {
    const kids = await muster({}).views();
    const c = kids.filter((k) => k.agent === name && k.agentSession).at(-1);
    return c?.agentSession ? { child: c.id, ...agentSessionJson(c.agentSession) } : undefined;
  } catch {
    // No primary here, or its registry cannot be read: the profile alone is still shown.
    return undefined;
  }
}

function showOne({ profile: p, runs }: AgentInfo, offer?: Awaited<ReturnType<typeof lastOffer>>): void {
  const rows: [string, string][] = [
    ["name", p.name],
    ["description", p.description || "-"],
    ["runner", p.runner],
    ...(runs ? ([["runs", runs]] as [string, string][]) : []),
    ["model", p.model ?? "- (inherits)"],
    ["reasoning", p.reasoning ?? "- (inherits)"],
  ];
  if (p.tools) rows.push(["tools", p.tools.join(", ")]);
  if (p.disallowedTools) rows.push(["disallowed", p.disallowedTools.join(", ")]);
  if (p.mode) rows.push(["mode", p.mode]);
  if (p.cwd) rows.push(["cwd", p.cwd]);
  if (p.env) rows.push(["env", Object.keys(p.env).join(", ") || "-"]);
  if (p.maxTurns) rows.push(["maxTurns", String(p.maxTurns)]);
  if (p.permissions) rows.push(["permissions", p.permissions]);
  if (p.caps)
    rows.push([
      "caps",
      Object.entries(p.caps)
        .map(([k, v]) => `${k}=${v}`)
        .join(" "),
    ]);
  if (p.command) rows.push(["command", JSON.stringify(p.command)]);
  if (p.protocol) rows.push(["protocol", p.protocol]);
  if (p.acpMode) rows.push(["acpMode", p.acpMode]);
  rows.push(["format", p.format ?? "muster"], ["layer", p.layer], ["source", p.source]);
  for (const s of p.shadows) rows.push(["shadows", `${s.layer} ${s.source}`]);
  if (offer) {
    // Known once a child's session opened: the newest child of this agent says what the agent offers.
    rows.push(["offered", `in child ${offer.child}'s session`]);
    for (const line of agentSessionLines({ ...offer, warnings: [] }, (k) => `${k}: `)) rows.push(["", line]);
  }
  say(`${table(rows)}\n\n${p.systemPrompt || "(no system prompt)"}\n`);
}

/** `muster agents [name]`: the discovered profiles, or one in full. */
export function registerAgents(program: Command): void {
  program
    .command("agents")
    .summary("list agent profiles, or show one in full")
    .description(
      "List agent profiles with the file and layer each comes from, or show one in full. Layers, highest first: " +
        "<cwd>/.muster/agents, $XDG_CONFIG_HOME/muster/agents (default ~/.config), other harnesses' folders " +
        "(.opencode/agents, .pi/agents, .claude/agents under the cwd, then ~/.config/opencode/agents, " +
        "~/.pi/agent/agents, ~/.claude/agents), then muster's bundled agents/. A higher layer shadows a lower one.",
    )
    .argument("[name]", "show this profile in full: every field, its system prompt, what it shadows")
    .option("--json", "print one JSON document on stdout, nothing else (warnings go in its warnings array)")
    .option(
      "--no-compat",
      "ignore other harnesses' agent folders (also: MUSTER_COMPAT_AGENTS=0 or config compatAgents: false)",
    )
    .action(async (name: string | undefined, flags: { json?: boolean }, cmd: Command) => {
      const ctx = { cwd: workingDir(), env: process.env, ...compatFlag(cmd) };
      if (name !== undefined) {
        const one = showAgent(name, ctx);
        const p = one.profile;
        printWarnings(p.warnings);
        const offer = await lastOffer(p.name);
        if (flags.json)
          return printJson({
            agent: profileJson(p, true),
            ...(offer ? { offered: offer } : {}),
            warnings: p.warnings,
          });
        return showOne(one, offer);
      }
      const found = listAgents(ctx);
      printWarnings(found.warnings);
      if (flags.json) {
        return printJson({
          agents: found.agents.map((a) => ({ ...profileJson(a.profile, false), ...a.readiness })),
          compat: found.compat,
          searched: found.searched,
          warnings: found.warnings,
        });
      }
      if (found.agents.length === 0) {
        say("no agent profiles found\n");
        return;
      }
      const rows = [["NAME", "RUNNER", "READY", "MODEL", "LAYER", "SHADOWS", "SOURCE", "DESCRIPTION"]];
      for (const { profile: p, readiness: r } of found.agents) {
        rows.push([
          p.name,
          p.runner,
          r.ready ? "yes" : clip(`no: ${r.notReady}`, 28),
          p.model ?? "-",
          p.layer,
          p.shadows.map((s) => s.layer).join(",") || "-",
          displayPath(p.source),
          clip(p.description.replace(/\s+/g, " "), 70),
        ]);
      }
      say(`${table(rows)}\n`);
    });
}
