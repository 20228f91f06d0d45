/**
 * Real SSH test hosts: each is its own network, mount and UTS namespace pinned to files, with private /tmp,
 * /root, /run and /var/log, running a real sshd bound to 127.0.0.1:22 inside it. Nothing listens in the
 * parent's namespace; the client reaches a host through `ProxyCommand nsenter --net=<pin> nc 127.0.0.1 22`.
 * Key-only auth with keys made per run. Root only. stop() ends every process in the host and drops the pins.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { pidsInNamespace } from "./ns-pids.js";

export interface SshTestHost {
  /** The Host alias in `config`. */
  alias: string;
  /** An ssh_config naming this host (pass as `ssh -F`). */
  config: string;
  /** Runs argv inside the host's namespaces, as root there; returns stdout. */
  inside(argv: string[]): string;
  stop(): void;
}

/** Whether this machine can make test hosts (root, sshd, nc). */
export function sshHostsAvailable(): { ok: true } | { ok: false; why: string } {
  if (process.getuid?.() !== 0) return { ok: false, why: "test hosts need root (unshare, nsenter, mount)" };
  for (const bin of ["/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/nc", "/usr/bin/ssh-keygen"]) {
    if (!fs.existsSync(bin))
      return { ok: false, why: `${bin} is missing (apt-get install openssh-server netcat-openbsd)` };
  }
  return { ok: true };
}

// Runs as `sh -euc SCRIPT` in the new namespaces; the host's folder and name come in as $D and $H.
const SETUP = [
  "ip link set lo up",
  'hostname "$H"',
  'cd "$D"', // a handle on the folder before /tmp is covered
  "mount -t tmpfs -o mode=1777 host-tmp /tmp",
  'mkdir -p "$D" && mount -c --bind . "$D"', // -c: "." as is, not canonicalised into the covered /tmp
  "cd /",
  "for d in /run /root /var/log; do mount -t tmpfs host-x $d; done",
  "mkdir -m 755 /run/sshd", // sshd's privilege-separation folder (there is no init to make it)
].join("\n");

/** Starts host `name` with its files under `base` (a temp folder of the test). */
export function startSshHost(base: string, name: string): SshTestHost {
  if (!/^[a-z][a-z0-9-]{0,15}$/.test(name)) throw new Error(`bad test host name ${name}`);
  const dir = path.join(base, name);
  fs.mkdirSync(dir, { recursive: true });
  const file = (f: string) => path.join(dir, f);
  const pins = { net: file("ns.net"), mnt: file("ns.mnt"), uts: file("ns.uts") };
  for (const p of Object.values(pins)) fs.writeFileSync(p, "");
  const keygen = (out: string) => execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", out]);
  keygen(file("host_key"));
  keygen(file("client_key"));
  fs.copyFileSync(file("client_key.pub"), file("authorized_keys"));
  fs.writeFileSync(
    file("sshd_config"),
    [
      "ListenAddress 127.0.0.1:22",
      `HostKey ${file("host_key")}`,
      `PidFile ${file("sshd.pid")}`,
      `AuthorizedKeysFile ${file("authorized_keys")}`,
      "StrictModes no",
      "UsePAM no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PermitRootLogin prohibit-password",
      "",
    ].join("\n"),
  );
  const hostKey = fs.readFileSync(file("host_key.pub"), "utf8").trim().split(" ").slice(0, 2).join(" ");
  fs.writeFileSync(file("known_hosts"), `test-${name} ${hostKey}\n`);
  const alias = name;
  const config = file("ssh_config");
  fs.writeFileSync(
    config,
    [
      `Host ${alias}`,
      "  HostName 127.0.0.1",
      `  HostKeyAlias test-${name}`,
      `  ProxyCommand nsenter --net=${pins.net} nc 127.0.0.1 22`,
      `  IdentityFile ${file("client_key")}`,
      "  IdentitiesOnly yes",
      `  UserKnownHostsFile ${file("known_hosts")}`,
      "  StrictHostKeyChecking yes",
      "",
    ].join("\n"),
  );
  const nsArgs = [`--net=${pins.net}`, `--mount=${pins.mnt}`, `--uts=${pins.uts}`];
  execFileSync(
    "unshare",
    [
      `--net=${pins.net}`,
      `--mount=${pins.mnt}`,
      `--uts=${pins.uts}`,
      "--propagation",
      "private",
      "sh",
      "-euc",
      SETUP,
    ],
    { env: { ...process.env, D: dir, H: name }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const inside = (argv: string[]): string =>
    execFileSync("nsenter", [...nsArgs, "--", ...argv], { stdio: ["ignore", "pipe", "pipe"] }).toString();
  inside(["/usr/sbin/sshd", "-f", file("sshd_config"), "-E", file("sshd.log")]);
  const netId = `net:[${fs.statSync(pins.net).ino}]`;
  const stop = (): void => {
    for (const pid of pidsInNamespace("net", netId)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
    }
    for (const p of Object.values(pins)) execFileSync("umount", [p], { stdio: "ignore" });
  };
  return { alias, config, inside, stop };
}
