// `muster mcp install|doctor`: merging into real files in a temp HOME/project (no client needed).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctor, install } from "../../src/mcp/install/index.js";
import { DEFAULT_ENV_NAMES } from "../../src/mcp/install/spec.js";
import { useSandbox } from "../helpers/cli.js";

// biome-ignore lint/suspicious/noExplicitAny: parsed config files are read loosely
type Loose = any;

let base: string;
let home: string;
let project: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "mt-install-"));
  home = path.join(base, "home");
  project = path.join(base, "project");
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(project, { recursive: true });
  // Secrets in the environment: an install must name them, never copy their values.
  env = { HOME: home, OPENAI_API_KEY: "sk-secret-value", GEMINI_API_KEY: "gm-secret-value" };
});
afterEach(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

const opts = (more: Parameters<typeof install>[1] = {}) => ({ processEnv: env, cwd: project, ...more });
const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};
/** "${NAME}": a reference Gemini CLI expands, not a value. */
const ref = (name: string) => ["${", name, "}"].join("");
const backups = (file: string) =>
  fs.readdirSync(path.dirname(file)).filter((f) => f.startsWith(`${path.basename(file)}.bak-`));

describe("codex (TOML)", () => {
  const file = () => path.join(home, ".codex", "config.toml");
  const ORIGINAL = [
    "# my codex settings",
    'model = "gpt-5.5" # inline comment',
    "",
    "[model_providers.x]",
    'base_url = "http://127.0.0.1:1/v1"',
    "",
    "[mcp_servers.other]",
    'command = "other"',
    "",
  ].join("\n");

  it("appends [mcp_servers.muster] and keeps every byte that was there, after a backup", () => {
    write(file(), ORIGINAL);
    const r = install("codex", opts());
    expect(r.files).toMatchObject([{ file: file(), status: "updated" }]);
    const text = fs.readFileSync(file(), "utf8");
    expect(text.startsWith(ORIGINAL)).toBe(true);
    const e = (parseToml(text) as Loose).mcp_servers.muster;
    expect(e.command).toBe(process.execPath);
    expect(e.args[1]).toBe("mcp");
    expect(fs.existsSync(e.args[0])).toBe(true);
    expect(e.default_tools_approval_mode).toBe("approve");
    expect(e.required).toBe(true);
    expect(e.tool_timeout_sec).toBeGreaterThanOrEqual(3600);
    expect(e.env_vars).toEqual(
      expect.arrayContaining(["MUSTER_HOME", "MUSTER_PRIMARY", "OPENAI_API_KEY", "TMUX"]),
    );
    expect(text).not.toContain("sk-secret-value");
    expect(backups(file())).toHaveLength(1);
    expect(fs.readFileSync(path.join(path.dirname(file()), backups(file())[0]!), "utf8")).toBe(ORIGINAL);
  });

  it("a second run changes nothing and makes no backup", () => {
    install("codex", opts());
    const before = fs.readFileSync(file(), "utf8");
    const r = install("codex", opts());
    expect(r.files[0]!.status).toBe("unchanged");
    expect(fs.readFileSync(file(), "utf8")).toBe(before);
    expect(backups(file())).toEqual([]);
  });

  it("updates an existing muster table in place, keeping its other keys, sub-tables and the tables after it", () => {
    write(
      file(),
      [
        "[mcp_servers.muster]",
        'command = "npx"',
        'args = ["muster", "mcp"]',
        'env_vars = ["MY_OWN_VAR"]',
        "tool_timeout_sec = 7200",
        "",
        "[mcp_servers.muster.env]",
        'FIXED = "1"',
        "",
        "[tui]",
        "theme = 'dark'",
        "",
      ].join("\n"),
    );
    install("codex", opts());
    const text = fs.readFileSync(file(), "utf8");
    const doc = parseToml(text) as Loose;
    expect(doc.mcp_servers.muster.command).toBe(process.execPath);
    expect(doc.mcp_servers.muster.env_vars[0]).toBe("MY_OWN_VAR");
    expect(doc.mcp_servers.muster.env_vars).toContain("MUSTER_HOME");
    expect(doc.mcp_servers.muster.tool_timeout_sec).toBe(7200);
    expect(doc.mcp_servers.muster.env).toEqual({ FIXED: "1" });
    expect(text).toContain("[tui]\ntheme = 'dark'");
    expect(doctor("codex", opts()).ok).toBe(true);
  });

  it("refuses a muster entry it cannot splice (an inline table) and leaves the file untouched", () => {
    const text = 'mcp_servers = { muster = { command = "npx" } }\n';
    write(file(), text);
    expect(() => install("codex", opts())).toThrow(/cannot place \[mcp_servers.muster\].*by hand/);
    expect(fs.readFileSync(file(), "utf8")).toBe(text);
    expect(backups(file())).toEqual([]);
  });

  it("--project writes the project's .codex/config.toml and says it must be trusted", () => {
    const r = install("codex", opts({ scope: "project" }));
    expect(r.files[0]!.file).toBe(path.join(project, ".codex", "config.toml"));
    expect(r.notes.join(" ")).toMatch(/trusted/);
    expect(fs.existsSync(path.join(home, ".codex"))).toBe(false);
  });
});

describe("codex --project: doctor checks that Codex trusts the project", () => {
  const userConfig = () => path.join(home, ".codex", "config.toml");
  const trust = (key: string, level = "trusted") =>
    write(userConfig(), `model = "gpt-5.5"\n\n[projects.${JSON.stringify(key)}]\ntrust_level = "${level}"\n`);
  const project_ = () => opts({ scope: "project" });
  const trustLine = () => {
    const d = doctor("codex", project_());
    return { d, trustFile: d.files.at(-1)! };
  };

  it("installed but not trusted: not ok, the user config named with the table to add; trusted: ok", () => {
    install("codex", project_());
    let { d, trustFile } = trustLine();
    expect(d.ok).toBe(false);
    expect(d.files[0]).toEqual({ file: path.join(project, ".codex", "config.toml"), missing: [] });
    expect(trustFile.file).toBe(userConfig());
    expect(trustFile.missing).toEqual([
      `Codex does not trust ${project} (${userConfig()} does not exist), so it ignores its .codex/config.toml`,
    ]);
    expect(trustFile.fix).toContain(`add [projects.${JSON.stringify(fs.realpathSync(project))}]`);
    write(userConfig(), 'model = "gpt-5.5"\n');
    expect(trustLine().trustFile.missing[0]).toContain(
      `no [projects.${JSON.stringify(fs.realpathSync(project))}] table`,
    );
    trust(fs.realpathSync(project));
    ({ d, trustFile } = trustLine());
    expect(trustFile).toEqual({ file: userConfig(), missing: [] });
    expect(d.ok).toBe(true);
    // The user scope is about ~/.codex/config.toml alone: no trust question there.
    install("codex", opts());
    expect(doctor("codex", opts()).files).toHaveLength(1);
  });

  it("a FIFO as ~/.codex/config.toml: install and doctor refuse it in one line instead of waiting on it", () => {
    install("codex", project_());
    fs.mkdirSync(path.dirname(userConfig()), { recursive: true });
    expect(spawnSync("mkfifo", [userConfig()]).status).toBe(0);
    const why = `refusing to read ${userConfig()}: it is a FIFO; it is left untouched`;
    expect(trustLine().trustFile.missing).toEqual([why]);
    expect(() => install("codex", opts())).toThrow(why);
  });

  it('trust_level = "untrusted" is named; $CODEX_HOME is where Codex reads trust', () => {
    install("codex", project_());
    trust(fs.realpathSync(project), "untrusted");
    const { d, trustFile } = trustLine();
    expect(d.ok).toBe(false);
    expect(trustFile.missing[0]).toContain('has trust_level = "untrusted"');
    env.CODEX_HOME = path.join(base, "codex-home");
    write(
      path.join(env.CODEX_HOME, "config.toml"),
      `[projects.${JSON.stringify(project)}]\ntrust_level = "trusted"\n`,
    );
    expect(doctor("codex", project_()).ok).toBe(true);
  });

  it("a folder inside a git repository (or a linked worktree of one) is trusted through the main repository's root", () => {
    const repo = path.join(base, "repo");
    const sub = path.join(repo, "packages", "app");
    fs.mkdirSync(sub, { recursive: true });
    const at = (cwd: string) => doctor("codex", { processEnv: env, cwd, scope: "project" });
    // An empty .git (a sandbox's mount point) is no repository: the folder is keyed by itself.
    fs.mkdirSync(path.join(repo, ".git"));
    install("codex", { processEnv: env, cwd: sub, scope: "project" });
    expect(at(sub).files.at(-1)!.fix).toContain(`[projects.${JSON.stringify(sub)}]`);
    write(path.join(repo, ".git", "HEAD"), "ref: refs/heads/main\n");
    install("codex", { processEnv: env, cwd: sub, scope: "project" });
    expect(at(sub).files.at(-1)!.fix).toContain(`[projects.${JSON.stringify(repo)}]`);
    trust(repo);
    expect(at(sub).ok).toBe(true);
    // A linked worktree elsewhere: ".git" is a file naming <main>/.git/worktrees/<name>.
    const wt = path.join(base, "wt");
    fs.mkdirSync(path.join(repo, ".git", "worktrees", "wt"), { recursive: true });
    write(path.join(wt, ".git"), `gitdir: ${path.join(repo, ".git", "worktrees", "wt")}\n`);
    install("codex", { processEnv: env, cwd: wt, scope: "project" });
    expect(at(wt).ok).toBe(true);
    // The folder's own table comes first and decides, even against a trusted repository root.
    fs.appendFileSync(userConfig(), `\n[projects.${JSON.stringify(sub)}]\ntrust_level = "untrusted"\n`);
    expect(at(sub).ok).toBe(false);
    expect(at(wt).ok).toBe(true);
  });
});

describe("JSON clients", () => {
  it("gemini: keeps other settings and servers; secret-looking names go in env by reference, never by value", () => {
    const file = path.join(home, ".gemini", "settings.json");
    write(
      file,
      JSON.stringify({ general: { vimMode: true }, mcpServers: { other: { command: "x" } } }, null, 4),
    );
    install("gemini", opts());
    const text = fs.readFileSync(file, "utf8");
    const doc = JSON.parse(text);
    expect(doc.general).toEqual({ vimMode: true });
    expect(doc.mcpServers.other).toEqual({ command: "x" });
    const e = doc.mcpServers.muster;
    expect(e).toMatchObject({ command: process.execPath, trust: true, timeout: 3_600_000 });
    expect(e.env.GEMINI_API_KEY).toBe(ref("GEMINI_API_KEY"));
    expect(e.env.OPENAI_API_KEY).toBe(ref("OPENAI_API_KEY"));
    // Names Gemini does not strip are not listed (an unset one would become an empty string).
    expect(e.env.MUSTER_HOME).toBeUndefined();
    expect(text).not.toContain("secret-value");
    expect(text).toMatch(/^\{\n {4}"/); // the file's own indentation
  });

  it("claude --user: ~/.claude.json (or $CLAUDE_CONFIG_DIR) gets the server, settings.json the permission rule", () => {
    env.CLAUDE_CONFIG_DIR = path.join(home, "cfg");
    const r = install("claude", opts());
    expect(r.files.map((f) => f.file)).toEqual([
      path.join(home, "cfg", ".claude.json"),
      path.join(home, "cfg", "settings.json"),
    ]);
    const server = JSON.parse(fs.readFileSync(r.files[0]!.file, "utf8")).mcpServers.muster;
    expect(server).toMatchObject({
      type: "stdio",
      command: process.execPath,
      alwaysLoad: true,
      timeout: 3_600_000,
    });
    expect(JSON.parse(fs.readFileSync(r.files[1]!.file, "utf8")).permissions.allow).toEqual(["mcp__muster"]);
  });

  it("claude --project: .mcp.json, and settings.local.json approves the server and its tools", () => {
    write(path.join(project, ".claude", "settings.local.json"), '{"permissions":{"allow":["Bash(ls)"]}}');
    install("claude", opts({ scope: "project" }));
    expect(
      JSON.parse(fs.readFileSync(path.join(project, ".mcp.json"), "utf8")).mcpServers.muster.command,
    ).toBe(process.execPath);
    const s = JSON.parse(fs.readFileSync(path.join(project, ".claude", "settings.local.json"), "utf8"));
    expect(s.permissions.allow).toEqual(["Bash(ls)", "mcp__muster"]);
    expect(s.enabledMcpjsonServers).toEqual(["muster"]);
    expect(doctor("claude", opts({ scope: "project" })).ok).toBe(true);
  });

  it("opencode: a config with comments is read by doctor but not rewritten", () => {
    const file = path.join(home, ".config", "opencode", "opencode.jsonc");
    const text = '{\n  // mine\n  "model": "x/y",\n}\n';
    write(file, text);
    expect(() => install("opencode", opts())).toThrow(/has comments; muster does not rewrite it/);
    expect(install("opencode", opts({ dryRun: true })).files[0]!.entry).toMatchObject({ type: "local" });
    expect(fs.readFileSync(file, "utf8")).toBe(text);
    const d = doctor("opencode", opts());
    expect(d.ok).toBe(false);
    expect(d.files[0]!.missing).toEqual([`no mcp.muster in ${file}`]);
  });

  it("writes through a symlinked config file to its target", () => {
    const real = path.join(base, "dotfiles", "opencode.json");
    write(real, '{"model":"x/y"}');
    fs.mkdirSync(path.join(home, ".config", "opencode"), { recursive: true });
    const link = path.join(home, ".config", "opencode", "opencode.json");
    fs.symlinkSync(real, link);
    install("opencode", opts());
    expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(fs.readFileSync(real, "utf8"))).toMatchObject({
      model: "x/y",
      mcp: { muster: { type: "local" } },
    });
  });
});

describe("every client", () => {
  for (const client of ["claude", "codex", "gemini", "opencode"]) {
    it(`${client}: doctor finds nothing missing after install, and names what a partial entry lacks`, () => {
      const before = doctor(client, opts());
      expect(before.ok).toBe(false);
      expect(before.files.flatMap((f) => f.missing).join("\n")).toMatch(/does not exist/);
      const dry = install(client, opts({ dryRun: true }));
      expect(dry.files.every((f) => f.status === "created" && !fs.existsSync(f.file))).toBe(true);
      install(client, opts());
      expect(doctor(client, opts())).toMatchObject({ ok: true });
      // Take one required piece away and doctor names it.
      const file = install(client, opts()).files[0]!.file;
      const text = fs.readFileSync(file, "utf8");
      const broken = {
        claude: () => text.replace('"alwaysLoad": true', '"alwaysLoad": false'),
        codex: () => text.replace('default_tools_approval_mode = "approve"', ""),
        gemini: () => text.replace('"trust": true', '"trust": false'),
        opencode: () => text.replace('"timeout": 3600000', '"timeout": 5000'),
      }[client]!();
      expect(broken).not.toBe(text);
      fs.writeFileSync(file, broken);
      const d = doctor(client, opts());
      expect(d.ok).toBe(false);
      expect(d.files[0]!.missing.join(" ")).toMatch(/alwaysLoad|default_tools_approval_mode|trust|timeout/);
    });
  }

  it("--env adds names after the defaults; a bad name is refused", () => {
    install("codex", opts({ env: ["MY_TOKEN"] }));
    const e = (parseToml(fs.readFileSync(path.join(home, ".codex", "config.toml"), "utf8")) as Loose)
      .mcp_servers.muster;
    expect(e.env_vars).toEqual([...DEFAULT_ENV_NAMES, "MY_TOKEN"]);
    expect(() => install("codex", opts({ env: ["BAD-NAME"] }))).toThrow(/not a variable name: BAD-NAME/);
    expect(() => install("vim", opts())).toThrow(/unknown client "vim"/);
  });
});

describe("the CLI", () => {
  const sb = useSandbox("mt-install-cli");

  it("a file it cannot parse: one line, exit 2, file untouched; doctor exits 1 listing what is missing", async () => {
    const file = path.join(sb.env.HOME as string, ".gemini", "settings.json");
    write(file, '{"general": {');
    const r = await sb.run(["mcp", "install", "gemini"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(`${file}:1:14: invalid JSON: expected a double-quoted property name`);
    expect(fs.readFileSync(file, "utf8")).toBe('{"general": {');
    fs.writeFileSync(file, "{}");
    const d = await sb.run(["mcp", "doctor", "gemini"]);
    expect(d.exitCode).toBe(1);
    expect(d.stdout).toContain("no mcpServers.muster");
    const ok = await sb.run(["mcp", "install", "gemini"]);
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/settings\.json: updated \(backup .*settings\.json\.bak-\d{8}T\d{6}Z\)/);
    expect((await sb.run(["mcp", "install", "gemini"])).stdout).toContain("already configured");
    const j = await sb.json(["mcp", "doctor", "gemini"]);
    expect(j).toMatchObject({ exitCode: 0, data: { client: "gemini", ok: true } });
  });

  it("mcp doctor codex --project: exit 1 with the trust fix until the project is trusted, then 0", async () => {
    expect((await sb.run(["mcp", "install", "codex", "--project"])).exitCode).toBe(0);
    const userConfig = path.join(sb.env.HOME as string, ".codex", "config.toml");
    const d = await sb.run(["mcp", "doctor", "codex", "--project"]);
    expect(d.exitCode).toBe(1);
    expect(d.stdout).toContain(`${userConfig}: Codex does not trust ${sb.cwd}`);
    expect(d.stdout).toContain(`fix: add [projects.${JSON.stringify(fs.realpathSync(sb.cwd))}]`);
    expect(d.stdout).not.toContain("fix: muster mcp install"); // the install part is fine
    write(userConfig, `[projects.${JSON.stringify(fs.realpathSync(sb.cwd))}]\ntrust_level = "trusted"\n`);
    const ok = await sb.run(["mcp", "doctor", "codex", "--project"]);
    expect(ok.exitCode, ok.stdout).toBe(0);
    expect(ok.stdout).toContain(`${userConfig}: ok`);
  });

  it("--dry-run prints exactly what each file would get, in its own format: a new file's whole text", async () => {
    // A HOME of its own: no other test's config files in it.
    const fresh = fs.mkdtempSync(path.join(sb.env.HOME as string, "fresh-"));
    const env = { HOME: fresh, XDG_CONFIG_HOME: path.join(fresh, ".config") };
    const run = (args: string[]) => sb.run(args, { env });
    for (const client of ["claude", "codex", "gemini", "opencode"]) {
      const dry = await run(["mcp", "install", client, "--dry-run"]);
      expect(dry.exitCode, dry.stderr).toBe(0);
      // "<file>: would create" then that file's text, up to the next such line (notes last).
      const blocks = new Map<string, string>();
      let file: string | undefined;
      for (const line of dry.stdout.split(/(?<=\n)/)) {
        const head = /^(\/\S+): would create\n$/.exec(line);
        if (head) {
          file = head[1]!;
          blocks.set(file, "");
        } else if (line.startsWith("note: ")) file = undefined;
        else if (file) blocks.set(file, blocks.get(file)! + line);
      }
      expect(blocks.size, dry.stdout).toBeGreaterThan(0);
      for (const f of blocks.keys()) expect(fs.existsSync(f)).toBe(false);
      expect((await run(["mcp", "install", client])).exitCode).toBe(0);
      for (const [f, text] of blocks) expect(fs.readFileSync(f, "utf8"), `${client} ${f}`).toBe(text);
    }
    // An existing file: muster's part under its full key path, in the file's format.
    const codex = path.join(fresh, ".codex", "config.toml");
    fs.writeFileSync(codex, 'model = "o3"\n');
    const again = await run(["mcp", "install", "codex", "--dry-run"]);
    const shown = again.stdout.slice(again.stdout.indexOf("would update\n") + "would update\n".length);
    expect(shown).toMatch(/^\[mcp_servers\.muster\]\n/);
    expect(parseToml(shown.split("\nnote: ")[0]!)).toMatchObject({
      mcp_servers: { muster: { required: true } },
    });
  });

  it("every `muster mcp install|doctor` line in docs/mcp.md and the README's MCP section runs (install with --dry-run)", async () => {
    const read = (file: string): string =>
      fs.readFileSync(path.join(import.meta.dirname, "..", "..", file), "utf8");
    const readme = read("README.md");
    const start = readme.indexOf("## Use from a coding agent");
    expect(start).toBeGreaterThan(0);
    const sections = {
      "docs/mcp.md": read("docs/mcp.md"),
      README: readme.slice(start, readme.indexOf("\n## ", start + 1)),
    };
    for (const [file, section] of Object.entries(sections)) {
      const lines = [...section.matchAll(/^muster (mcp (?:install|doctor) [^#\n]*?)\s*(?:#.*)?$/gm)].map(
        (m) => m[1]!,
      );
      expect(lines.length, file).toBeGreaterThanOrEqual(5);
      for (const line of lines) {
        const args = line.split(/\s+/);
        const r = await sb.run(args[1] === "install" ? [...args, "--dry-run"] : args);
        // doctor on a fresh HOME reports what is missing (exit 1); anything else is a usage error (2).
        expect([0, 1], `${file}: ${line}: ${r.stderr}`).toContain(r.exitCode);
      }
    }
  });
});
