import type { Command } from "commander";
import { MusterError } from "../../base/errors.js";
import { DEFAULT_TOKEN_ENV } from "../../mcp/install/http-form.js";
import type { DoctorReport, InstallReport, Scope } from "../../mcp/install/index.js";
import { CLIENTS } from "../../mcp/install/spec.js";
import { ExitWith, printJson } from "../output.js";

// The tool names are written out here (the tool table would load the workflow engine with every CLI call);
// a unit test holds them to the table.
const HELP = `
Tools: subagents_run, subagents_await, subagents_status, subagents_result, subagents_send,
subagents_cancel, subagents_inbox, subagents_answer, subagents_models, subagents_workflow,
subagents_compare, subagents_agents.

Configure a client (see docs/mcp.md for what is written and why):
  muster mcp install ${CLIENTS.join("|")} [--project] [--dry-run]
  muster mcp doctor ${CLIENTS.join("|")}
  muster mcp install <client> --url http://127.0.0.1:7421/mcp [--token-env NAME]
    (a client of muster mcp --http: it sends the token from $${DEFAULT_TOKEN_ENV}, never written down)

stdout carries only the protocol; logs go to stderr. The server stops when stdin closes;
children keep running (a cancelled subagents_run call cancels the child it started).

Over HTTP (muster mcp --http): the endpoint is /mcp on 127.0.0.1:7421; a random token is
printed on stderr (and written to --token-file): every request sends Authorization: Bearer
<token>. Requests naming another Host or coming from another Origin are refused. Stop it
with Ctrl-C; children keep running. Reach it from another machine through an SSH tunnel
(ssh -L 7421:127.0.0.1:7421 host), not by opening the port.`;

interface ServeFlags {
  primary?: string;
  http?: boolean;
  listen?: string;
  tokenFile?: string;
  allowRemote?: boolean;
}

const kebab = (k: string): string => k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

const CLIENT_WORDS = `${CLIENTS.slice(0, -1).join(", ")} or ${CLIENTS.at(-1)}`;

interface InstallFlags {
  project?: boolean;
  user?: boolean;
  dryRun?: boolean;
  json?: boolean;
  env?: string[];
  url?: string;
  tokenEnv?: string;
}

/** The options install and doctor share. */
const common = (flags: InstallFlags) => ({
  scope: scopeOf(flags),
  ...(flags.env ? { env: flags.env } : {}),
  ...(flags.url !== undefined ? { url: flags.url } : {}),
  ...(flags.tokenEnv !== undefined ? { tokenEnv: flags.tokenEnv } : {}),
});

function scopeOf(flags: InstallFlags): Scope {
  if (flags.project && flags.user)
    throw new MusterError("invalid_argument", "give --project or --user, not both");
  return flags.project ? "project" : "user";
}

const collect = (value: string, prev: string[] = []): string[] => [...prev, value];

function printInstall(r: InstallReport): void {
  for (const f of r.files) {
    if (r.dryRun) {
      const verb =
        f.status === "unchanged"
          ? "already configured"
          : `would ${f.status === "created" ? "create" : "update"}`;
      process.stdout.write(`${f.file}: ${verb}\n`);
      if (f.preview !== undefined) process.stdout.write(f.preview);
    } else if (f.status === "unchanged") process.stdout.write(`${f.file}: already configured\n`);
    else process.stdout.write(`${f.file}: ${f.status}${f.backup ? ` (backup ${f.backup})` : ""}\n`);
  }
  for (const n of r.notes) process.stdout.write(`note: ${n}\n`);
}

/** The install command that writes what doctor checked. */
function installLine(r: DoctorReport): string {
  const words = ["muster mcp install", r.client];
  if (r.url) words.push("--url", r.url);
  if (r.tokenEnv && r.tokenEnv !== DEFAULT_TOKEN_ENV) words.push("--token-env", r.tokenEnv);
  if (r.scope === "project") words.push("--project");
  return words.join(" ");
}

function printDoctor(r: DoctorReport): void {
  for (const f of r.files) {
    if (f.missing.length === 0) process.stdout.write(`${f.file}: ok\n`);
    else for (const m of f.missing) process.stdout.write(`${f.file}: ${m}\n`);
  }
  for (const w of r.warnings) process.stdout.write(`warning: ${w}\n`);
  const broken = r.files.filter((f) => f.missing.length > 0);
  if (broken.some((f) => !f.fix)) process.stdout.write(`fix: ${installLine(r)}\n`);
  for (const f of broken) if (f.fix) process.stdout.write(`fix: ${f.fix}\n`);
}

function scoped(cmd: Command): Command {
  return cmd
    .option("--project", "this project's config file(s), for everyone who works here")
    .option("--user", "your own config file(s) (default)")
    .option("--env <NAME>", "also pass this variable through by name (repeatable; not with --url)", collect)
    .option(
      "--url <url>",
      "the HTTP form: connect to this muster mcp --http endpoint (http://HOST:PORT/mcp) instead of starting muster",
    )
    .option(
      "--token-env <NAME>",
      `with --url: the variable in the client's environment that holds the token (default ${DEFAULT_TOKEN_ENV}); only its name is written`,
    )
    .option("--json", "print one JSON document on stdout, nothing else");
}

/** `muster mcp`: the MCP server on stdio, through which coding agents use muster as their subagent system. */
export function registerMcp(program: Command): void {
  const mcp = program
    .command("mcp")
    .summary("serve muster to a coding agent over MCP (stdio); install|doctor configure a client")
    .description(
      "Run an MCP server on stdin/stdout for coding agents (Claude Code, Codex, OpenCode, Gemini CLI, any MCP client).",
    )
    .option("--primary <id>", "act for this primary (default: MUSTER_PRIMARY, else this directory's)")
    .option("--http", "serve over Streamable HTTP at /mcp instead of stdio (a parent on another machine)")
    .option(
      "--listen <host:port>",
      "with --http: where to listen (default 127.0.0.1:7421; port 0: any free one)",
    )
    .option("--token-file <file>", "with --http: also write the token here (mode 0600) for a client's config")
    .option("--allow-remote", "with --http: allow an address other machines can reach (prints a warning)")
    .addHelpText("after", HELP)
    .action(async (flags: ServeFlags) => {
      const primary = flags.primary ? { primary: flags.primary } : {};
      if (!flags.http) {
        const stray = (["listen", "tokenFile", "allowRemote"] as const).find((k) => flags[k] !== undefined);
        if (stray) throw new MusterError("invalid_argument", `--${kebab(stray)} goes with --http`);
        // The MCP SDK is heavy: load it only for `muster mcp`, not for every CLI call.
        const { serveStdio } = await import("../../mcp/server.js");
        return serveStdio(primary);
      }
      const { serveHttp, DEFAULT_HTTP_LISTEN } = await import("../../mcp/http/serve.js");
      const { stderrLog } = await import("../../mcp/server.js");
      await serveHttp(
        {
          listen: flags.listen ?? DEFAULT_HTTP_LISTEN,
          ...(flags.tokenFile ? { tokenFile: flags.tokenFile } : {}),
          ...(flags.allowRemote ? { allowRemote: true } : {}),
          ...primary,
        },
        stderrLog,
      );
    });

  scoped(
    mcp
      .command("install")
      .argument("<client>", CLIENT_WORDS)
      .summary("write muster's entry into a coding agent's MCP configuration")
      .description(
        "Merge muster's server entry (absolute command, approval, variables passed by name, a long tool timeout) into the client's config; with --url, the HTTP form instead (the URL and an Authorization header naming the token's variable). The old file is kept as <file>.bak-<time>. A second run changes nothing.",
      )
      .option("--dry-run", "print what would be written, write nothing"),
  ).action(async (client: string, flags: InstallFlags) => {
    const { install } = await import("../../mcp/install/index.js");
    const r = install(client, { ...common(flags), ...(flags.dryRun ? { dryRun: true } : {}) });
    if (flags.json) return printJson(r);
    printInstall(r);
  });

  scoped(
    mcp
      .command("doctor")
      .argument("<client>", CLIENT_WORDS)
      .summary("check a coding agent's MCP configuration for muster; exit 1 if anything is missing"),
  ).action(async (client: string, flags: InstallFlags) => {
    const { doctor } = await import("../../mcp/install/index.js");
    const r = doctor(client, common(flags));
    if (flags.json) printJson(r);
    else printDoctor(r);
    if (!r.ok) throw new ExitWith(1);
  });
  for (const c of mcp.commands) c.exitOverride();
}
