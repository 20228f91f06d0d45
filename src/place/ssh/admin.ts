/**
 * What `muster hosts` does with the SSH hosts a user named, as plain data for the front ends: add, list and
 * remove entries (hosts.ts), check a host (reachability, round trip, node, tmux, muster's far side there,
 * agent CLIs, free disk, the variables children get) and install muster's far side (remote.ts). The one
 * module of a concrete place that front ends import (scripts/import-rules.cjs).
 */
import { stateRoot } from "../../artifacts/layout.js";
import { MusterError } from "../../base/errors.js";
import { checkNode, installOn, localStamp, probeHost } from "../far/remote.js";
import type { HostChooser, PlacedChild } from "../registry.js";
import { checkHostName, getHost, listHosts, type NamedHost, sshHostOf } from "./hosts.js";
import { controlDirFor, SSH_NODE_FIX, SshPlace, sshPlaceName } from "./place.js";
import { SshTransport, sshShell } from "./transport.js";

export type { HostEntry, NamedHost } from "./hosts.js";
// What `muster hosts` edits, as hosts.ts has it.
export { checkHostName, hostEntry, listHosts, removeHost, saveHost } from "./hosts.js";
export { sshPlaceName };

export interface HostCheck {
  name: string;
  target: string;
  reachable: boolean;
  /** Why it is not reachable, or what is wrong there (one line each). */
  problems: string[];
  /** One command's round trip over the host's master connection. */
  rttMs?: number;
  node?: { path: string; version: string; ok: boolean };
  tmux?: string;
  /** muster's far side there: the build installed (empty: none) and whether it is this one. */
  muster?: { installed: string; current: boolean; wanted: string };
  /** Agent CLIs found there, by command. */
  clis?: Record<string, string>;
  freeKiB?: number;
  workdir?: string;
  /** The variables handed to children there besides muster's settings and a profile's `env`. */
  env: string[];
}

function shellFor(env: NodeJS.ProcessEnv, h: NamedHost) {
  return sshShell(new SshTransport(controlDirFor(stateRoot(env))), sshHostOf(h), h.name);
}

/** Everything `hosts check` says of host `name`; never throws for a host that cannot be reached. */
export async function checkHost(
  env: NodeJS.ProcessEnv,
  name: string,
  clis: readonly string[],
): Promise<HostCheck> {
  const h = getHost(env, name);
  const out: HostCheck = {
    name,
    target: h.target,
    reachable: false,
    problems: [],
    ...(h.workdir ? { workdir: h.workdir } : {}),
    env: h.env ?? [],
  };
  const sh = shellFor(env, h);
  let info: Awaited<ReturnType<typeof probeHost>>;
  try {
    info = await probeHost(sh, clis, h.workdir ? [h.workdir] : [], h.node);
  } catch (e) {
    out.problems.push((e as Error).message);
    return out;
  }
  out.reachable = true;
  const t0 = performance.now();
  await sh.run(["true"], { timeoutMs: 10_000 }).catch(() => undefined);
  out.rttMs = Math.round((performance.now() - t0) * 10) / 10;
  let nodeOk = true;
  try {
    checkNode(`host ${name}`, info, SSH_NODE_FIX);
  } catch (e) {
    nodeOk = false;
    out.problems.push((e as Error).message);
  }
  out.node = { path: info.node, version: info.nodeVersion, ok: nodeOk };
  out.tmux = info.tmux;
  if (!info.tmux) out.problems.push(`host ${name} has no tmux on its PATH (children there run in tmux)`);
  const wanted = localStamp();
  out.muster = { installed: info.installed, current: info.installed === wanted, wanted };
  out.clis = info.clis;
  out.freeKiB = info.freeKiB;
  if (h.workdir && !info.dirs.includes(h.workdir))
    out.problems.push(`its --workdir ${h.workdir} is not a folder there`);
  return out;
}

/** Installs this build's far side on host `name` (nothing to do when it is there). */
export async function installHost(
  env: NodeJS.ProcessEnv,
  name: string,
): Promise<{ name: string; stamp: string; dir: string; already: boolean }> {
  const h = getHost(env, name);
  const sh = shellFor(env, h);
  const info = await probeHost(sh, [], [], h.node);
  checkNode(`host ${name}`, info, SSH_NODE_FIX);
  const stamp = localStamp();
  const already = info.installed === stamp;
  const dir = await installOn(sh, info);
  return { name, stamp, dir, already };
}

/** Ends the master connection muster keeps to host `name`, if any (its entry removed, or on request). */
export async function disconnectHost(env: NodeJS.ProcessEnv, name: string): Promise<void> {
  const h = listHosts(env).find((x) => x.name === name);
  if (h) await new SshPlace(h, env).close();
}

/**
 * The place of a child `on` names (`--on`, MCP `on`, a workflow step's or a profile's `on`): one host is
 * `ssh:<host>`; `any`, or a list of hosts, the one pickHost chooses from the children as they are now.
 */
export const sshHostChooser: HostChooser = async (on, env, children) => {
  if (on.length === 1 && on[0] !== "any") return sshPlaceName(checkHostName(on[0]!));
  return sshPlaceName(pickHost(env, await children(), on.includes("any") ? undefined : on));
};

const BUSY = new Set(["starting", "queued", "running"]);
const SETTLED = new Set(["closed", "lost", "unreadable"]);

/**
 * The host `--on any` starts the next child on: the one with the fewest busy children (a turn starting,
 * queued or running), then the fewest live ones, then by name. The run-slot bound itself holds across every
 * host (a far host's turn takes its ticket on this machine), so this only spreads the work.
 */
export function pickHost(
  env: NodeJS.ProcessEnv,
  children: readonly PlacedChild[],
  among?: readonly string[],
): string {
  const known = listHosts(env);
  for (const n of among ?? []) if (!known.some((h) => h.name === n)) getHost(env, n);
  const all = among ? known.filter((h) => among.includes(h.name)) : known;
  if (all.length === 0)
    throw new MusterError(
      "not_found",
      "on any: no hosts yet; add one with: muster hosts add <name> <user@host|alias>",
    );
  const load = (h: NamedHost): [number, number] => {
    const mine = children.filter((c) => c.place === sshPlaceName(h.name));
    return [mine.filter((c) => BUSY.has(c.status)).length, mine.filter((c) => !SETTLED.has(c.status)).length];
  };
  const ranked = all
    .map((h) => ({ name: h.name, load: load(h) }))
    .sort((a, b) => a.load[0] - b.load[0] || a.load[1] - b.load[1] || a.name.localeCompare(b.name));
  return ranked[0]!.name;
}
