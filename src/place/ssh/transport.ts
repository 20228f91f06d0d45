/**
 * Running commands on an SSH host with the system `ssh`, so the user's ~/.ssh/config, agent, ProxyJump and
 * known_hosts apply as they do for them. One ControlMaster per host alias keeps a command to ~50 ms instead of
 * a new handshake each time; its socket is keyed by the alias (`%n`), because `%C` hashes user@host:port and
 * two aliases for one address would share (and run on) one master.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { shellWords } from "../../util/text.js";
import type { FarShell, RemoteRun } from "../far/remote.js";
import { execLocal } from "../local/exec.js";
import { ExecFailure } from "../place.js";

export interface SshHost {
  /** The alias or user@host[:port] handed to ssh. */
  target: string;
  /** Passed as `ssh -F`. */
  sshConfig?: string;
  /** Passed as `-o key=value`, in order. */
  options?: readonly (readonly [string, string])[];
}

/** How long a liveness check of an existing master may take before the master is given up. */
const MASTER_PROBE_MS = 3000;
/** How long ssh may take to connect (a host that is down, or a network that drops packets). */
const CONNECT_TIMEOUT_S = 10;
/** How long an idle master stays up after its last command. */
const MASTER_PERSIST_S = 60;

const TARGET = /^[A-Za-z0-9_][A-Za-z0-9_.@:%+-]*$/;
const OPTION_KEY = /^[A-Za-z][A-Za-z0-9]*$/;

/** Refuses a host target or option that ssh could read as something else (a leading `-` is a flag to ssh). */
export function checkSshHost(host: SshHost): SshHost {
  if (!TARGET.test(host.target)) {
    throw new MusterError(
      "invalid_argument",
      `not an ssh host: ${JSON.stringify(host.target)} (an alias or user@host[:port])`,
    );
  }
  for (const [k, v] of host.options ?? []) {
    if (!OPTION_KEY.test(k) || /[\r\n]/.test(v)) {
      throw new MusterError(
        "invalid_argument",
        `not an ssh option: ${JSON.stringify(`${k}=${v}`)} (key=value on one line)`,
      );
    }
  }
  return host;
}

/**
 * The ssh arguments before the destination: the user's config file and `-o` options first, then what muster
 * needs: no prompts, bounded connects, a heartbeat, and the shared master under `controlDir`. ssh keeps the
 * first value it reads for an option, and reads every `-o` before any config file: a user's `-o` (hosts add
 * --ssh-option) overrides muster's, which override their config file's.
 */
export function sshOptions(host: SshHost, controlDir: string): string[] {
  const out: string[] = [];
  if (host.sshConfig !== undefined) out.push("-F", host.sshConfig);
  for (const [k, v] of host.options ?? []) out.push("-o", `${k}=${v}`);
  out.push(
    "-o",
    "BatchMode=yes",
    // A host that does not answer is told apart from a slow one in seconds, not at the TCP timeout; a
    // connection (a master, the mirror's link) whose far end went away without a word ends in 45 s.
    "-o",
    `ConnectTimeout=${CONNECT_TIMEOUT_S}`,
    "-o",
    "ServerAliveInterval=15",
    "-o",
    "ServerAliveCountMax=3",
    "-o",
    "ControlMaster=auto",
    "-o",
    `ControlPath=${path.join(controlDir, "%n")}`,
    "-o",
    `ControlPersist=${MASTER_PERSIST_S}`,
  );
  return out;
}

/**
 * The argv that runs `argv` on the host. ssh joins its command words with spaces for the remote shell, so
 * the command goes as one string quoted by the one quoting function: every word reaches the far side intact.
 */
export function remoteArgv(host: SshHost, controlDir: string, argv: readonly string[]): string[] {
  if (argv.length === 0) throw new MusterError("invalid_argument", "no remote command given");
  checkSshHost(host);
  return ["ssh", ...sshOptions(host, controlDir), "--", host.target, shellWords([...argv])];
}

/** Commands on hosts through masters kept under one folder (short: a unix socket path holds ~100 bytes). */
export class SshTransport {
  private readonly probed = new Map<string, Promise<void>>();

  constructor(readonly controlDir: string) {
    fs.mkdirSync(controlDir, { recursive: true, mode: 0o700 });
  }

  /** Runs argv on the host; `input` goes to its stdin (prompts travel this way, never in argv). */
  async run(
    host: SshHost,
    argv: readonly string[],
    opts: { input?: string | Buffer; timeoutMs?: number } = {},
  ): Promise<RemoteRun> {
    const argvHere = remoteArgv(host, this.controlDir, argv);
    await this.ensureMaster(host);
    const timeoutMs = opts.timeoutMs ?? 30_000;
    try {
      return await execLocal(argvHere, {
        env: process.env,
        timeoutMs,
        ...(opts.input !== undefined ? { input: opts.input } : {}),
      });
    } catch (e) {
      if (e instanceof ExecFailure && e.kind === "timeout")
        throw new MusterError("unreachable", `ssh ${host.target}: no answer within ${timeoutMs} ms`);
      throw e;
    }
  }

  /**
   * Checks the host's master once per transport before it is reused: a master whose connection died can
   * leave a socket that accepts and never answers, and every command through it would hang. One that does
   * not answer within the bound is told to exit and its socket removed, so the next command starts afresh.
   */
  private ensureMaster(host: SshHost): Promise<void> {
    let p = this.probed.get(host.target);
    if (!p) {
      p = this.probeMaster(host);
      this.probed.set(host.target, p);
    }
    return p;
  }

  private async probeMaster(host: SshHost): Promise<void> {
    // %n is the host as given, less any user@.
    const socket = path.join(this.controlDir, host.target.slice(host.target.lastIndexOf("@") + 1));
    if (!fs.existsSync(socket)) return;
    const check = await this.control(host, "check");
    if (check.exitCode === 0) return;
    await this.exitMaster(host);
    fs.rmSync(socket, { force: true });
  }

  private async exitMaster(host: SshHost): Promise<void> {
    await this.control(host, "exit");
  }

  /** `ssh -O <op>` to the host's master, bounded; a master that does not answer counts as failed. */
  private async control(host: SshHost, op: "check" | "exit"): Promise<{ exitCode: number }> {
    const argv = ["ssh", ...sshOptions(host, this.controlDir), "-O", op, "--", host.target];
    return execLocal(argv, { env: process.env, timeoutMs: MASTER_PROBE_MS }).catch(() => ({ exitCode: 255 }));
  }

  /** Ends every master this transport's folder holds. */
  async close(hosts: readonly SshHost[]): Promise<void> {
    await Promise.all(hosts.map((h) => this.exitMaster(h)));
    this.probed.clear();
  }
}

/** ssh's own failures (exit 255 with its own words: no connection, a refused key, a changed host key). */
export const sshFailed = (r: RemoteRun): boolean =>
  r.exitCode === 255 &&
  /^(ssh|kex_|Connection|Host key|Permission denied|banner)|ssh_exchange/m.test(r.stderr);

/** Host `host` as far/remote.ts runs scripts there, through `t`'s master. */
export function sshShell(t: SshTransport, host: SshHost, name = host.target): FarShell {
  return {
    label: `ssh ${host.target}`,
    where: name,
    run: (argv, opts) => t.run(host, argv, opts),
    lostConnection: sshFailed,
  };
}
