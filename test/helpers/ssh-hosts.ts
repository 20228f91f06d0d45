/**
 * Real SSH test hosts (network, mount and UTS namespaces running a real sshd; root only), typed for the tests.
 * The implementation is test/fixtures/ssh-hosts.mjs, plain JS so the benchmark can start hosts too.
 */
import * as impl from "../fixtures/ssh-hosts.mjs";

export interface SshTestHost {
  /** The Host alias in `config`. */
  alias: string;
  /** An ssh_config naming this host (pass as `ssh -F`). */
  config: string;
  /** Runs argv inside the host's namespaces, as root there; returns stdout. */
  inside(argv: string[]): string;
  /** The same without blocking this process (several hosts at once). */
  insideAsync(argv: string[]): Promise<string>;
  /** The argv prefix that runs a command inside the host's namespaces (a daemon there). */
  enter: string[];
  stop(): void;
}

/** Whether this machine can make test hosts (root, sshd, nc). */
export const sshHostsAvailable: () => { ok: true } | { ok: false; why: string } = impl.sshHostsAvailable;

/** Starts host `name` with its files under `base` (a temp folder of the test). */
export const startSshHost: (base: string, name: string) => SshTestHost = impl.startSshHost;

/** Whether `p` exists on host `h` (its own /root, /tmp…), not on this machine. */
export function existsOn(h: SshTestHost, p: string): boolean {
  try {
    h.inside(["test", "-e", p]);
    return true;
  } catch {
    return false;
  }
}

/** Where a child's artifact dir `dir` (under the state root `home` here) is on a test host: the remote user is root. */
export const farDirOf = (home: string, dir: string): string =>
  `/root/.local/state/muster/${dir.slice(home.length + 1)}`;
