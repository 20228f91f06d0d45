// The settings table (src/base/settings): every MUSTER_* name in src is in it, the lists made from it (MCP
// install, popup, docs/state-and-environment.md, doctor) are right, and a bad value is one clear line.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isMusterError } from "../../src/base/errors.js";
import { withSettingsSection } from "../../src/base/settings/doc.js";
import { settingsInEffect } from "../../src/base/settings/report.js";
import {
  forwardedNames,
  handoverEnv,
  requireSetting,
  resolveSetting,
  resolveSettings,
  SETTING_KEYS,
  SETTINGS,
  type SettingSpec,
  setting,
} from "../../src/base/settings/resolve.js";
import { install } from "../../src/mcp/install/index.js";
import { topArgv } from "../../src/tui/keys.js";
import { REPO, useSandbox } from "../helpers/cli.js";

const NAMES = new Set(SETTING_KEYS.map((k) => SETTINGS[k].env as string));
/** Where the generated environment table lives (scripts/settings-doc.mjs rewrites it there). */
const ENV_DOC = path.join("docs", "state-and-environment.md");

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = path.join(dir, d.name);
    return d.isDirectory() ? sourceFiles(p) : /\.(ts|tsx|mjs|js)$/.test(d.name) ? [p] : [];
  });
}

describe("the table", () => {
  it("names every MUSTER_* variable that appears anywhere in src (code, messages, comments)", () => {
    const missing: string[] = [];
    for (const file of sourceFiles(path.join(REPO, "src"))) {
      const text = fs.readFileSync(file, "utf8");
      for (const m of text.matchAll(/MUSTER_[A-Z0-9_]*[A-Z0-9]/g)) {
        if (!NAMES.has(m[0])) missing.push(`${path.relative(REPO, file)}: ${m[0]}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("has one entry per variable, a doc line and a forwarding reason for each", () => {
    expect(NAMES.size).toBe(SETTING_KEYS.length);
    for (const k of SETTING_KEYS) {
      const s: SettingSpec = SETTINGS[k];
      expect(s.doc, k).not.toMatch(/\n/);
      expect(s.forward.why.length, k).toBeGreaterThan(10);
      if (s.default !== undefined) expect(resolveSetting({}, k).value, k).toBe(s.default);
    }
  });

  it("marks the lineage muster sets per child as not handed to a child", () => {
    for (const k of ["primary", "childId", "depth", "artifactDir", "tuiHookFile"] as const)
      expect(SETTINGS[k].forward.child, k).toBe(false);
    expect(forwardedNames("child")).not.toContain("MUSTER_CHILD_ID");
  });
});

describe("values", () => {
  it("parses each type; env beats config beats the default", () => {
    expect(setting({ MUSTER_MAX_RUNNING: "7" }, "maxRunning", { maxRunning: 3 })).toBe(7);
    expect(setting({}, "maxRunning", { maxRunning: 3 })).toBe(3);
    expect(setting({}, "maxRunning")).toBe(4);
    expect(setting({ MUSTER_COMPAT_AGENTS: "off" }, "compatAgents")).toBe(false);
    expect(setting({}, "compatAgents", { compatAgents: false })).toBe(false);
    expect(setting({ MUSTER_RUNNER_MODE: "oneshot" }, "runnerMode")).toBe("oneshot");
    expect(setting({ MUSTER_STALL_SECONDS: "2.5" }, "stallSeconds")).toBe(2.5);
    expect(setting({ MUSTER_AGENT: "" }, "agent")).toBe("mock");
    expect(setting({}, "childId")).toBeUndefined();
  });

  it("a bad value is ignored with one clear line naming the variable, the value and what it must be", () => {
    const r = resolveSetting({ MUSTER_MAX_RUNNING: "lots" }, "maxRunning", { maxRunning: 2 });
    expect(r).toEqual({
      value: 2,
      source: "config",
      problem: 'MUSTER_MAX_RUNNING="lots": not a whole number ≥ 1; the config\'s value is used',
    });
    expect(resolveSetting({ MUSTER_RUNNER_MODE: "turbo" }, "runnerMode").problem).toBe(
      'MUSTER_RUNNER_MODE="turbo": not one of session, oneshot; ignored',
    );
    expect(resolveSetting({}, "compatAgents", { compatAgents: "no" }).problem).toBe(
      'config compatAgents="no": not true or false; ignored',
    );
    let err: unknown;
    try {
      requireSetting({ MUSTER_DETACH_KEY: "ctrl+x" }, "detachKey");
    } catch (e) {
      err = e;
    }
    expect(isMusterError(err) && err.code).toBe("invalid_argument");
    expect((err as Error).message).toBe('MUSTER_DETACH_KEY="ctrl+x": not a key like ^\\ or C-]');
    expect(resolveSetting({ MUSTER_DETACH_KEY: "ctrl+x" }, "detachKey").problem).toBe(
      'MUSTER_DETACH_KEY="ctrl+x": not a key like ^\\ or C-]; `muster attach` refuses to start',
    );
    expect(requireSetting({ MUSTER_DETACH_KEY: "^]" }, "detachKey")).toBe("^]");
  });

  it("hands a child the settings not at their default, config ones included, lineage left out", () => {
    const env = {
      MUSTER_HOME: "/s",
      MUSTER_CHILD_ID: "c1",
      MUSTER_DEPTH: "2",
      MUSTER_DEBUG: "yes",
      PATH: "/bin",
    };
    const s = resolveSettings(env, { maxDepth: 3, compatAgents: false });
    expect(handoverEnv(s)).toEqual({
      MUSTER_HOME: "/s",
      MUSTER_MAX_DEPTH: "3",
      MUSTER_COMPAT_AGENTS: "0",
      MUSTER_DEBUG: "1",
    });
  });

  it("never shows a secret's value in what is in effect", () => {
    const table: Record<string, SettingSpec> = {
      home: SETTINGS.home,
      token: { ...SETTINGS.agent, env: "MUSTER_TEST_TOKEN", secret: true },
    };
    const shown = settingsInEffect(
      { values: { home: "/s", token: "tok-123" }, sources: { home: "env", token: "config" } },
      table,
    );
    expect(shown).toEqual([
      { name: "MUSTER_HOME", value: "/s", source: "env" },
      { name: "MUSTER_TEST_TOKEN", value: "(hidden)", source: "config", secret: true },
    ]);
    expect(JSON.stringify(shown)).not.toContain("tok-123");
    // The real table's one secret is the HTTP token's variable (provider keys are not muster's settings).
    expect(SETTING_KEYS.filter((k) => (SETTINGS[k] as SettingSpec).secret)).toEqual(["mcpToken"]);
  });
});

describe("lists made from the table", () => {
  let base: string;
  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), "mt-settings-"));
  });
  afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

  it("mcp install forwards MUSTER_BACKEND, MUSTER_AGENT and MUSTER_RUNNER_MODE by name into the client's config", () => {
    const home = path.join(base, "home");
    fs.mkdirSync(home);
    const env = { HOME: home, MUSTER_AGENT: "secret-agent-value" };
    install("codex", { processEnv: env, cwd: base });
    const text = fs.readFileSync(path.join(home, ".codex", "config.toml"), "utf8");
    // biome-ignore lint/suspicious/noExplicitAny: a parsed TOML document
    const names: string[] = (parseToml(text) as any).mcp_servers.muster.env_vars;
    for (const n of [
      "MUSTER_BACKEND",
      "MUSTER_BACKEND_MODULE",
      "MUSTER_AGENT",
      "MUSTER_RUNNER_MODE",
      "MUSTER_HOME",
    ])
      expect(names, n).toContain(n);
    // Lineage goes by name (a client inside a child's pane passes its own); a per-child hook file never.
    expect(names).toEqual(expect.arrayContaining(["MUSTER_PRIMARY", "MUSTER_CHILD_ID", "MUSTER_DEPTH"]));
    expect(names).not.toContain("MUSTER_TUI_HOOK_FILE");
    expect(names).not.toContain("MUSTER_ARTIFACT_DIR");
    expect(text).not.toContain("secret-agent-value");
  });

  it("the popup's command carries MUSTER_PRIMARY (and not a child's own lineage)", () => {
    const argv = topArgv({ MUSTER_PRIMARY: "p-1", MUSTER_CHILD_ID: "c-1", MUSTER_HOME: "/s", PATH: "/bin" });
    expect(argv.slice(0, argv.indexOf(process.execPath))).toEqual([
      "env",
      "MUSTER_HOME=/s",
      "MUSTER_PRIMARY=p-1",
    ]);
  });

  it("the environment table in docs/state-and-environment.md is the one the table makes", () => {
    const doc = fs.readFileSync(path.join(REPO, ENV_DOC), "utf8");
    expect(withSettingsSection(doc), "run: node scripts/settings-doc.mjs").toBe(doc);
    const r = spawnSync(process.execPath, [path.join(REPO, "scripts", "settings-doc.mjs"), "--check"], {
      encoding: "utf8",
    });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("settings-doc.mjs --check fails on a stale docs/state-and-environment.md without writing it", () => {
    const copy = path.join(base, "repo");
    fs.mkdirSync(path.join(copy, "scripts"), { recursive: true });
    fs.mkdirSync(path.join(copy, "docs"), { recursive: true });
    fs.cpSync(path.join(REPO, "src", "base"), path.join(copy, "src", "base"), { recursive: true });
    fs.copyFileSync(
      path.join(REPO, "scripts", "settings-doc.mjs"),
      path.join(copy, "scripts", "settings-doc.mjs"),
    );
    fs.symlinkSync(path.join(REPO, "node_modules"), path.join(copy, "node_modules"));
    const stale = fs
      .readFileSync(path.join(REPO, ENV_DOC), "utf8")
      .replace("| `MUSTER_AGENT` | `mock` |", "| `MUSTER_AGENT` | `pi` |");
    fs.writeFileSync(path.join(copy, ENV_DOC), stale);
    const script = path.join(copy, "scripts", "settings-doc.mjs");
    const check = spawnSync(process.execPath, [script, "--check"], { encoding: "utf8" });
    expect(check.status).toBe(1);
    expect(check.stderr).toBe(
      "docs/state-and-environment.md: the environment table is stale; run node scripts/settings-doc.mjs\n",
    );
    expect(fs.readFileSync(path.join(copy, ENV_DOC), "utf8")).toBe(stale);
    expect(spawnSync(process.execPath, [script], { encoding: "utf8" }).status).toBe(0);
    expect(fs.readFileSync(path.join(copy, ENV_DOC), "utf8")).toContain("| `MUSTER_AGENT` | `mock` |");
  });
});

describe("a setting its reader refuses", () => {
  it("the pty attach client exits 2 naming a bad MUSTER_DETACH_KEY in one line", () => {
    const r = spawnSync(
      process.execPath,
      [path.join(REPO, "dist", "mux", "pty", "attach.js"), "/nonexistent"],
      {
        encoding: "utf8",
        env: { ...process.env, MUSTER_DETACH_KEY: "ctrl+x" },
      },
    );
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('muster attach: MUSTER_DETACH_KEY="ctrl+x": not a key like ^\\ or C-]\n');
  });
});

describe("the real CLI", () => {
  const sb = useSandbox("mt-settings-cli");

  it("muster tmux-keys binds a popup that carries the settings but not the shell's MUSTER_PRIMARY", async () => {
    // One binding serves every pane of the server: the pane's directory decides the primary, not the shell's.
    const { data } = await sb.json(["tmux-keys"], { env: { ...sb.env, MUSTER_PRIMARY: "p-1" } });
    expect(data.argv).toContain(`MUSTER_HOME=${sb.home}`);
    expect(data.line).not.toContain("MUSTER_PRIMARY");
    expect(data.argv.join(" ")).not.toContain("MUSTER_PRIMARY");
  });

  it("lists the settings that are set with their source, and a bad value in one line", async () => {
    const config = path.join(sb.env.XDG_CONFIG_HOME as string, "muster");
    fs.mkdirSync(config, { recursive: true });
    fs.writeFileSync(path.join(config, "config.json"), JSON.stringify({ maxDepth: 3 }));
    const env = { ...sb.env, MUSTER_MAX_RUNNING: "lots", MUSTER_AGENT: "pi" };
    const { data } = await sb.json(["doctor"], { env });
    expect(data.settings).toEqual(
      expect.arrayContaining([
        { name: "MUSTER_HOME", value: sb.home, source: "env" },
        { name: "MUSTER_AGENT", value: "pi", source: "env" },
        { name: "MUSTER_MAX_DEPTH", value: "3", source: "config" },
      ]),
    );
    expect(data.settings.map((s: { name: string }) => s.name)).not.toContain("MUSTER_MAX_RUNNING");
    expect(data.settingProblems).toEqual(['MUSTER_MAX_RUNNING="lots": not a whole number ≥ 1; ignored']);
    const text = await sb.run(["doctor"], { env });
    const bad = text.stdout.split("\n").filter((l) => l.includes("MUSTER_MAX_RUNNING"));
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatch(/^setting\s+BAD\s+MUSTER_MAX_RUNNING="lots": not a whole number ≥ 1; ignored$/);
    expect(text.stdout).toMatch(/^setting\s+config\s+MUSTER_MAX_DEPTH=3$/m);
    expect(text.stdout).toMatch(/^setting\s+env\s+MUSTER_AGENT=pi$/m);
  });
});
