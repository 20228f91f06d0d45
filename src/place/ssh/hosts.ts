/**
 * The SSH hosts a user has named (`muster hosts add`), kept under `hosts` in the user's config file
 * (config/config.ts) so every muster process of theirs sees the same ones. An entry is what ssh needs to
 * reach the host (its alias or user@host, an ssh config file, options) and what muster needs there: the
 * folder children work in when they are not isolated, and the names of the variables handed to them.
 */
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { readConfigFile, updateConfig } from "../../config/config.js";
import { checkSshHost, type SshHost } from "./transport.js";

export interface HostEntry {
  /** The alias or user@host handed to ssh. */
  target: string;
  /** Passed as `ssh -F`. */
  sshConfig?: string;
  /** Passed as `-o key=value`, in order. */
  options?: [string, string][];
  /** The folder a child works in there when it has no worktree (absolute). */
  workdir?: string;
  /** Names of variables of the spawning environment handed to children there, besides the profile's. */
  env?: string[];
  /** The node to run there (absolute), when the PATH of a non-interactive ssh session has none (nvm). */
  node?: string;
}

export interface NamedHost extends HostEntry {
  name: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
/** Names with a meaning of their own in `--on`. */
const RESERVED = new Set(["any", "local"]);
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Checks a host's name as muster knows it (`--on <name>`, place `ssh:<name>`). */
export function checkHostName(name: string): string {
  if (!NAME.test(name) || RESERVED.has(name))
    throw new MusterError(
      "invalid_argument",
      `host name ${JSON.stringify(name).slice(0, 70)} must be letters, digits, . _ - (not "any" or "local")`,
    );
  return name;
}

/**
 * The entry for `muster hosts add <name> <dest>`: dest is an ssh alias or user@host[:port] (a port becomes
 * `-o Port=`, as ssh takes no port in a destination).
 */
export function hostEntry(
  dest: string,
  opts: {
    sshConfig?: string;
    options?: [string, string][];
    workdir?: string;
    env?: string[];
    node?: string;
  } = {},
): HostEntry {
  const m = /^(.*?):(\d{1,5})$/.exec(dest);
  const target = m ? m[1]! : dest;
  const options: [string, string][] = [
    ...(m ? [["Port", m[2]!] as [string, string]] : []),
    ...(opts.options ?? []),
  ];
  if (m && (Number(m[2]) < 1 || Number(m[2]) > 65535))
    throw new MusterError("invalid_argument", `port ${m[2]} is not 1-65535`);
  if (opts.node !== undefined && !path.isAbsolute(opts.node))
    throw new MusterError("invalid_argument", `--node must be an absolute path on the host: ${opts.node}`);
  if (opts.workdir !== undefined && !path.isAbsolute(opts.workdir))
    throw new MusterError(
      "invalid_argument",
      `--workdir must be an absolute path on the host: ${opts.workdir}`,
    );
  for (const n of opts.env ?? [])
    if (!ENV_NAME.test(n))
      throw new MusterError("invalid_argument", `--env ${JSON.stringify(n)} is not a variable name`);
  const entry: HostEntry = {
    target,
    ...(opts.sshConfig !== undefined ? { sshConfig: path.resolve(opts.sshConfig) } : {}),
    ...(options.length > 0 ? { options } : {}),
    ...(opts.workdir !== undefined ? { workdir: opts.workdir } : {}),
    ...(opts.env && opts.env.length > 0 ? { env: [...new Set(opts.env)] } : {}),
    ...(opts.node !== undefined ? { node: opts.node } : {}),
  };
  checkSshHost(sshHostOf(entry));
  return entry;
}

/** What the transport needs of an entry. */
export const sshHostOf = (e: HostEntry): SshHost => ({
  target: e.target,
  ...(e.sshConfig !== undefined ? { sshConfig: e.sshConfig } : {}),
  ...(e.options ? { options: e.options } : {}),
});

function hostsIn(config: Record<string, unknown>): Record<string, HostEntry> {
  const h = config.hosts;
  return h !== null && typeof h === "object" && !Array.isArray(h) ? (h as Record<string, HostEntry>) : {};
}

/** Every host the user has named, by name. */
export function listHosts(env: NodeJS.ProcessEnv): NamedHost[] {
  // A broken config file names no hosts (loadConfig warns of it elsewhere).
  return Object.entries(hostsIn(readConfigFile(env).config))
    .filter(([name, e]) => NAME.test(name) && typeof e?.target === "string")
    .map(([name, e]) => ({ name, ...e }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The host called `name`; a clear error naming the hosts there are when none is. */
export function getHost(env: NodeJS.ProcessEnv, name: string): NamedHost {
  const all = listHosts(env);
  const found = all.find((h) => h.name === name);
  if (found) return found;
  const have = all.length > 0 ? `hosts: ${all.map((h) => h.name).join(", ")}` : "no hosts yet";
  throw new MusterError(
    "not_found",
    `no host "${name}" (${have}); add it with: muster hosts add ${name} <user@host|alias>`,
  );
}

/** Adds or replaces a host (under the config file's lock; the file is rewritten whole, atomically). */
export async function saveHost(env: NodeJS.ProcessEnv, name: string, entry: HostEntry): Promise<void> {
  checkHostName(name);
  await changeConfig(env, (hosts) => {
    hosts[name] = entry;
  });
}

/** Removes a host; false when there was none. */
export async function removeHost(env: NodeJS.ProcessEnv, name: string): Promise<boolean> {
  let had = false;
  await changeConfig(env, (hosts) => {
    had = name in hosts;
    delete hosts[name];
  });
  return had;
}

async function changeConfig(
  env: NodeJS.ProcessEnv,
  change: (hosts: Record<string, HostEntry>) => void,
): Promise<void> {
  await updateConfig(env, (config) => {
    const hosts = { ...hostsIn(config) };
    change(hosts);
    return { ...config, hosts };
  });
}
