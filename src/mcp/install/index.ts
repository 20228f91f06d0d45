// `muster mcp install|doctor <client>`: muster's entry in each coding agent's MCP configuration.
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { claudeEdits } from "./claude.js";
import { codexEdits } from "./codex.js";
import { codexTrust } from "./codex-trust.js";
import { type ConfigEdit, getAt } from "./edit.js";
import { load, preview, render, writeWithBackup } from "./files.js";
import { geminiEdits } from "./gemini.js";
import { httpServer } from "./http-form.js";
import { opencodeEdits } from "./opencode.js";
import {
  CLIENTS,
  type Client,
  type HttpServer,
  type InstallContext,
  isEnvName,
  type Scope,
  serverSpec,
} from "./spec.js";
import { leavesProject, projectTarget, userTarget } from "./write-target.js";

export { CLIENTS, type Client, type Scope } from "./spec.js";

const EDITS: Record<Client, (ctx: InstallContext) => ConfigEdit[]> = {
  claude: claudeEdits,
  codex: codexEdits,
  gemini: geminiEdits,
  opencode: opencodeEdits,
};

export interface InstallOptions {
  scope?: Scope;
  dryRun?: boolean;
  /** Extra variable names to pass through, after the defaults (the stdio form only). */
  env?: string[];
  /** The HTTP form: the URL of a `muster mcp --http` server instead of a command. */
  url?: string;
  /** With `url`: the variable of the client's environment that holds the token (default MUSTER_MCP_TOKEN). */
  tokenEnv?: string;
  /** Defaults: process.env and process.cwd(). */
  processEnv?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface FileReport {
  file: string;
  status: "created" | "updated" | "unchanged";
  backup?: string;
  /** muster's part of the file after the install. */
  entry: unknown;
  /** That part as it would be written, in the file's format under its full key path (what --dry-run prints). */
  preview?: string;
  /** The whole new text (only with dryRun). */
  text?: string;
}

export interface InstallReport {
  client: Client;
  scope: Scope;
  /** stdio: the client starts muster; http: it connects to `url` with the token from `tokenEnv`. */
  transport: "stdio" | "http";
  url?: string;
  tokenEnv?: string;
  dryRun: boolean;
  files: FileReport[];
  notes: string[];
}

/** The server `url` and `tokenEnv` name, checked; none for the stdio form. */
function httpOf(opts: InstallOptions): HttpServer | undefined {
  if (opts.url === undefined) {
    if (opts.tokenEnv !== undefined) throw new MusterError("invalid_argument", "--token-env goes with --url");
    return undefined;
  }
  // The server's environment is the server's own, set where `muster mcp --http` runs.
  if ((opts.env ?? []).length > 0)
    throw new MusterError(
      "invalid_argument",
      "--env goes with the stdio form, not --url: the server's environment is where muster mcp --http runs",
    );
  return httpServer(opts.url, opts.tokenEnv);
}

function context(
  client: string,
  opts: InstallOptions,
): { client: Client; edits: ConfigEdit[]; scope: Scope; ctx: InstallContext } {
  if (!(CLIENTS as readonly string[]).includes(client))
    throw new MusterError("invalid_argument", `unknown client "${client}" (one of ${CLIENTS.join(", ")})`);
  const bad = (opts.env ?? []).filter((n) => !isEnvName(n));
  if (bad.length > 0) throw new MusterError("invalid_argument", `not a variable name: ${bad.join(", ")}`);
  const http = httpOf(opts);
  const scope = opts.scope ?? "user";
  const ctx: InstallContext = {
    scope,
    env: opts.processEnv ?? process.env,
    cwd: opts.cwd ?? process.cwd(),
    server: serverSpec(opts.env),
    ...(http ? { http } : {}),
  };
  return { client: client as Client, edits: EDITS[client as Client](ctx), scope, ctx };
}

/** What the report says of the form: the URL and the variable's name (never its value). */
const formOf = (ctx: InstallContext) =>
  ctx.http
    ? { transport: "http" as const, url: ctx.http.url, tokenEnv: ctx.http.tokenEnv }
    : { transport: "stdio" as const };

/** An HTTP install's notes: where the token must be set, and a path that is not muster's endpoint. */
function httpNotes(ctx: InstallContext, http: HttpServer): string[] {
  const name = http.tokenEnv;
  const unset = ctx.env[name] ? "" : ` (it is not set here)`;
  const notes = [
    `the client sends Authorization: Bearer $${name}: set ${name} to the token muster mcp --http printed (or wrote to --token-file) in the client's environment${unset}`,
  ];
  if (!new URL(http.url).pathname.endsWith("/mcp"))
    notes.push(`muster mcp --http serves /mcp; ${http.url} names another path`);
  return notes;
}

const NOTES: Partial<Record<Client, Partial<Record<Scope, string>>>> = {
  codex: {
    project:
      'Codex reads a project\'s .codex/config.toml only when the project is trusted (trust_level = "trusted" in ~/.codex/config.toml)',
  },
  gemini: {
    project: "Gemini CLI reads .gemini/settings.json and starts stdio servers only in a trusted folder",
  },
};

/** Writes (or with dryRun only computes) every file of the client's configuration; all are parsed first. */
export function install(client: string, opts: InstallOptions = {}): InstallReport {
  const c = context(client, opts);
  // Parse and merge everything before writing anything: a refused file leaves every file untouched.
  const planned = c.edits.map((edit) => {
    // A project's files are written only inside it (checked before reading: a link out names itself).
    const inProject = c.scope === "project" ? projectTarget(edit.file, c.ctx.cwd) : undefined;
    const loaded = load(edit);
    const merged = edit.merge(loaded.doc);
    const changed = JSON.stringify(merged) !== JSON.stringify(loaded.doc);
    if (changed && loaded.commented && !opts.dryRun)
      throw new MusterError(
        "invalid_config",
        `${edit.file} has comments; muster does not rewrite it: add ${edit.entryPath.join(".") || "muster's entries"} by hand (--dry-run prints it)`,
      );
    const text = changed ? render(edit, loaded, merged) : loaded.text;
    // Only ever a regular file is written, also through a user's symlink.
    const target = inProject ?? (changed ? userTarget(edit.file) : edit.file);
    return { edit, loaded, merged, changed, text, target };
  });
  const files = planned.map(({ edit, loaded, merged, changed, text, target }): FileReport => {
    const status = !changed ? "unchanged" : loaded.exists ? "updated" : "created";
    const entry = getAt(merged, edit.entryPath);
    if (opts.dryRun)
      return {
        file: edit.file,
        status,
        entry,
        ...(changed ? { text, preview: preview(edit, loaded, merged, text) } : {}),
      };
    const backup = changed ? writeWithBackup(edit.file, target, loaded.exists, text) : undefined;
    return { file: edit.file, status, entry, ...(backup ? { backup } : {}) };
  });
  const notes = [NOTES[c.client]?.[c.scope]].filter((n): n is string => !!n);
  if (c.ctx.http) notes.push(...httpNotes(c.ctx, c.ctx.http));
  // The entry names this copy of muster by absolute path: one in npx's cache can vanish with the cache.
  const args = serverSpec().args[0]!;
  if (!c.ctx.http && args.includes(`${path.sep}_npx${path.sep}`))
    notes.push(
      `the entry runs ${args} from npx's cache; install muster (npm i -g) and run this again to keep it`,
    );
  return { client: c.client, scope: c.scope, ...formOf(c.ctx), dryRun: !!opts.dryRun, files, notes };
}

export interface DoctorReport {
  client: Client;
  scope: Scope;
  transport: "stdio" | "http";
  url?: string;
  tokenEnv?: string;
  ok: boolean;
  /** What may fail at run time but is not in the files (the token's variable unset here); not counted in ok. */
  warnings: string[];
  /** `fix`: how to fix what `muster mcp install` does not (a project Codex does not trust). */
  files: { file: string; missing: string[]; fix?: string }[];
}

/** What the client's existing configuration lacks; nothing is written. */
export function doctor(client: string, opts: InstallOptions = {}): DoctorReport {
  const c = context(client, opts);
  const files = c.edits.map((edit): DoctorReport["files"][number] => {
    try {
      // What the client would read through a link out of the project, install --project refuses to write.
      const out = c.scope === "project" ? leavesProject(edit.file, c.ctx.cwd) : undefined;
      if (out)
        return {
          file: edit.file,
          missing: [`${out} (muster mcp install --project does not write there)`],
          fix: `replace the symlink with a file or folder inside the project, then muster mcp install ${c.client} --project`,
        };
      const loaded = load(edit);
      if (!loaded.exists) return { file: edit.file, missing: [`${edit.file} does not exist`] };
      return { file: edit.file, missing: edit.check(loaded.doc) };
    } catch (e) {
      return { file: edit.file, missing: [(e as Error).message] };
    }
  });
  // Codex ignores a project's config until the user trusts the project: installed is not enough.
  const all = c.client === "codex" && c.scope === "project" ? [...files, codexTrust(c.ctx)] : files;
  const warnings =
    c.ctx.http && !c.ctx.env[c.ctx.http.tokenEnv]
      ? [
          `${c.ctx.http.tokenEnv} is not set in this environment: the client must have it (the token muster mcp --http printed) when it starts`,
        ]
      : [];
  return {
    client: c.client,
    scope: c.scope,
    ...formOf(c.ctx),
    ok: all.every((f) => f.missing.length === 0),
    warnings,
    files: all,
  };
}
