// The SSH transport against real sshd test hosts in their own namespaces (test/helpers/ssh-hosts.ts).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SshHost, SshTransport } from "../../src/place/ssh/transport.js";
import { type SshTestHost, sshHostsAvailable, startSshHost } from "../helpers/ssh-hosts.js";

const available = sshHostsAvailable();
const HOSTILE = ["it's", "$HOME", "a  b", "line\nbreak", "; touch /tmp/pwned", "`id`", "*", "", "-n", "\\"];

describe.skipIf(!available.ok && !process.env.CI)("ssh transport (real sshd test hosts)", () => {
  let base: string;
  let control: string;
  let hosts: SshTestHost[] = [];
  const transports: SshTransport[] = [];
  const hostOf = (h: SshTestHost): SshHost => ({ target: h.alias, sshConfig: h.config });
  const transport = () => {
    const t = new SshTransport(control);
    transports.push(t);
    return t;
  };

  beforeAll(() => {
    if (!available.ok) throw new Error(available.why);
    base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-ssh-"));
    control = fs.mkdtempSync("/tmp/mu-cm-");
    hosts = [startSshHost(base, "h1"), startSshHost(base, "h2")];
  });

  afterAll(async () => {
    for (const t of transports) await t.close(hosts.map(hostOf));
    for (const h of hosts) h.stop();
    fs.rmSync(base, { recursive: true, force: true });
    fs.rmSync(control, { recursive: true, force: true });
  });

  it("runs argv on the host it names, every word intact, each alias through its own master", async () => {
    const t = transport();
    for (const h of hosts) {
      const r = await t.run(hostOf(h), ["sh", "-c", 'hostname; printf "%s\\0" "$@"', "sh", ...HOSTILE]);
      expect(r.exitCode, r.stderr).toBe(0);
      const [name, words] = [
        r.stdout.slice(0, r.stdout.indexOf("\n")),
        r.stdout.slice(r.stdout.indexOf("\n") + 1),
      ];
      // Both hosts are 127.0.0.1:22 to ssh: a master keyed by user@host:port would run h2's command on h1.
      expect(name).toBe(h.alias);
      expect(words.split("\0").slice(0, -1)).toEqual(HOSTILE);
    }
    expect(fs.readdirSync(control).sort()).toEqual(["h1", "h2"]);
    for (const h of hosts) expect(h.inside(["ls", "/tmp"])).not.toContain("pwned");
  });

  it("stdin carries the input; an exit code comes back; each host's /tmp is its own", async () => {
    const t = transport();
    const [h1, h2] = [hostOf(hosts[0]!), hostOf(hosts[1]!)];
    const prompt = "a prompt with 'quotes'\nand $VARS\n";
    expect(
      (await t.run(h1, ["sh", "-c", "cat > /tmp/prompt; cat /tmp/prompt"], { input: prompt })).stdout,
    ).toBe(prompt);
    expect((await t.run(h2, ["test", "-e", "/tmp/prompt"])).exitCode).toBe(1);
    expect(fs.existsSync("/tmp/prompt")).toBe(false);
    expect((await t.run(h1, ["sh", "-c", "exit 7"])).exitCode).toBe(7);
  });

  it("a master that no longer answers is given up, not waited on: the next transport starts a new one", async () => {
    const h = hostOf(hosts[0]!);
    await transport().run(h, ["true"]);
    const check = await new SshTransport(control).run(h, ["true"]); // the master is up and reused
    expect(check.exitCode).toBe(0);
    const { execa } = await import("execa");
    const o = await execa(
      "ssh",
      ["-F", hosts[0]!.config, "-o", `ControlPath=${control}/%n`, "-O", "check", h.target],
      {
        reject: false,
      },
    );
    const pid = Number(/pid=(\d+)/.exec(o.stderr)?.[1]);
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, "SIGSTOP");
    try {
      const r = await transport().run(h, ["hostname"], { timeoutMs: 20_000 });
      expect(r.stdout.trim()).toBe("h1");
    } finally {
      process.kill(pid, "SIGKILL");
    }
  });

  it("the master holds its TCP connection to the host itself, as against a real host (so it has TCP_NODELAY)", async () => {
    // OpenSSH sets TCP_NODELAY on its connection only when it holds the socket; a proxy process in the
    // middle (a plain `nc`) would add a hop, and a socket without it, that users' links do not have.
    const h = hostOf(hosts[1]!);
    expect((await transport().run(h, ["true"])).exitCode).toBe(0);
    const { execa } = await import("execa");
    const o = await execa(
      "ssh",
      ["-F", hosts[1]!.config, "-o", `ControlPath=${control}/%n`, "-O", "check", h.target],
      { reject: false },
    );
    const pid = Number(/pid=(\d+)/.exec(o.stderr)?.[1]);
    expect(pid).toBeGreaterThan(0);
    const held = new Set<string>();
    for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`, "utf8"));
      if (m) held.add(m[1]!);
    }
    // The host's TCP sockets (its own network namespace): the one to port 22 (0016) is the master's.
    const toSshd = hosts[1]!
      .inside(["cat", "/proc/net/tcp"])
      .split("\n")
      .slice(1)
      .map((l) => l.trim().split(/\s+/))
      .filter((f) => f[2]?.endsWith(":0016") && f[3] === "01"); // established, remote port 22
    expect(toSshd.length).toBeGreaterThan(0);
    expect(toSshd.some((f) => held.has(f[9]!))).toBe(true);
  });

  it("refuses a target or option ssh would read as a flag, before running anything", async () => {
    const t = transport();
    await expect(t.run({ target: "-oProxyCommand=touch /tmp/x" }, ["true"])).rejects.toThrow(
      /not an ssh host/,
    );
    await expect(t.run({ target: "h1", options: [["Proxy Command", "x"]] }, ["true"])).rejects.toThrow(
      /not an ssh option/,
    );
  });
});
