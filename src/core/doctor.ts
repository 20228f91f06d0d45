/** What is available here for muster: the multiplexer, the built-in runners, the agent CLIs. Plain data. */
import { stateRoot } from "../artifacts/layout.js";
import { type SettingInEffect, settingsInEffect } from "../base/settings/report.js";
import { rawSetting, SETTINGS } from "../base/settings/resolve.js";
import { loadSettings } from "../config/settings.js";
import { BackendSet } from "../mux/registry.js";
import { runnerReadiness } from "../runners/availability.js";
import { getRunner, runnerNames } from "../runners/registry.js";
import { helperCwd } from "../util/cwd.js";
import { inotifyUsage } from "../util/proc.js";
import { type OrphanProcess, orphanProcesses } from "./orphans.js";

export interface DoctorReport {
  /** Whether muster can run children here (the backend new children start in answers). */
  ok: boolean;
  node: string;
  tmux: { ok: boolean; version?: string; error?: string };
  /** The backend new children start in (MUSTER_BACKEND, else tmux, or pty without a multiplexer). */
  backend: { name: string; ok: boolean; version?: string; error?: string };
  socket: string | null;
  insideTmux: boolean;
  stateRoot: string;
  runners: { name: string; available: true }[];
  agentClis: AgentCliReport[];
  /** fs.inotify.max_user_instances, the instances this user holds now and what is left; null without /proc. */
  inotify: { limit: number; inUse: number; headroom: number } | null;
  /** muster processes (child hosts, pty holders) whose state dir no longer exists: no command reaches them. */
  orphans: OrphanProcess[];
  /** The MUSTER_* settings that are set, and from where (base/settings); a secret's value is hidden. */
  settings: SettingInEffect[];
  /** One line per bad setting value (ignored) and per config file problem. */
  settingProblems: string[];
}

/** Checks the multiplexer and every agent CLI a runner drives. */
export async function doctor(
  env: NodeJS.ProcessEnv = process.env,
  backends: BackendSet = new BackendSet(env, stateRoot(env)),
): Promise<DoctorReport> {
  let tmux: DoctorReport["tmux"];
  try {
    tmux = { ok: true, version: await backends.get("tmux").version() };
  } catch (e) {
    tmux = { ok: false, error: (e as Error).message };
  }
  const name = backends.defaultName;
  let backend: DoctorReport["backend"] = { name, ...tmux };
  if (name !== "tmux") {
    try {
      backend = { name, ok: true, version: await backends.get(name).version() };
    } catch (e) {
      backend = { name, ok: false, error: (e as Error).message };
    }
  }
  const clis = await agentClis(env);
  const resolved = loadSettings(env);
  return {
    ok: backend.ok,
    node: process.version,
    tmux,
    backend,
    socket: rawSetting(env, "tmuxSocket") ?? null,
    insideTmux: !!env.TMUX,
    stateRoot: stateRoot(env),
    runners: runnerNames().map((name) => ({ name, available: true as const })),
    agentClis: clis,
    inotify: inotifyReport(),
    orphans: orphanProcesses(),
    settings: settingsInEffect(resolved, SETTINGS),
    settingProblems: [...resolved.configWarnings, ...resolved.problems],
  };
}

/** Waiters (wait, watch, muster top) fall back to polling when the user's inotify instances run out. */
function inotifyReport(): DoctorReport["inotify"] {
  const u = inotifyUsage();
  return u ? { ...u, headroom: Math.max(0, u.limit - u.inUse) } : null;
}

/** An agent CLI muster can drive, and whether it is installed here. */
export interface AgentCliReport {
  name: string;
  found: boolean;
  path: string | null;
  version: string | null;
  envVar: string;
  install: string;
  tested: string | null;
}

/** The CLIs of the runners that drive one, each checked (PATH or MUSTER_<CLI>_BIN) and asked its version. */
function agentClis(env: NodeJS.ProcessEnv): Promise<AgentCliReport[]> {
  return Promise.all(
    runnerNames()
      .map((name) => getRunner(name)!)
      .filter((r) => r.binary)
      .map(async (r) => {
        const bin = r.binary!;
        const ready = runnerReadiness(r.name, env);
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
}

async function versionOf(bin: string): Promise<string | undefined> {
  const { execa } = await import("execa"); // ~150 ms to load: only for doctor
  // execa needs a cwd that exists: a deleted one must not break doctor.
  const r = await execa(bin, ["--version"], {
    cwd: helperCwd(),
    reject: false,
    // Generous: a Node-based CLI takes seconds to start on a loaded machine.
    timeout: 15_000,
    stdin: "ignore",
  });
  // Some CLIs (pi) print their version on stderr.
  const text = String(r.stdout).trim() || String(r.stderr).trim();
  return r.exitCode === 0 ? text.split("\n")[0]?.trim() || undefined : undefined;
}
