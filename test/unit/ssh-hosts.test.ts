// What muster hands ssh and keeps of a host, without a host: the entry `hosts add` makes from its words, and
// the ssh argv of a command there (the user's settings first, then muster's, the command quoted as one word).
import { describe, expect, it } from "vitest";
import { checkHostName, hostEntry } from "../../src/place/ssh/hosts.js";
import { remoteArgv, sshOptions } from "../../src/place/ssh/transport.js";

describe("ssh hosts: entries and argv", () => {
  it("user@host:port becomes the destination and a Port option; bad values are refused in one line", () => {
    expect(hostEntry("me@build1:2222")).toEqual({ target: "me@build1", options: [["Port", "2222"]] });
    expect(hostEntry("build1", { workdir: "/srv/w", env: ["A", "B", "A"], node: "/opt/n/bin/node" })).toEqual(
      {
        target: "build1",
        workdir: "/srv/w",
        env: ["A", "B"],
        node: "/opt/n/bin/node",
      },
    );
    expect(() => hostEntry("me@build1:70000")).toThrow(/port 70000 is not 1-65535/);
    expect(() => hostEntry("-oProxyCommand=x")).toThrow(/not an ssh host/);
    expect(() => hostEntry("build1", { workdir: "rel/dir" })).toThrow(/--workdir must be an absolute path/);
    expect(() => hostEntry("build1", { node: "node" })).toThrow(/--node must be an absolute path/);
    expect(() => hostEntry("build1", { env: ["A-B"] })).toThrow(/is not a variable name/);
    expect(() => hostEntry("build1", { options: [["Proxy Command", "x"]] })).toThrow(/not an ssh option/);
    expect(() => checkHostName("any")).toThrow(/not "any" or "local"/);
    expect(() => checkHostName("../x")).toThrow(/must be letters/);
    expect(checkHostName("build-1.eu")).toBe("build-1.eu");
  });

  it("the user's -o options come before muster's (ssh keeps the first value it reads); the command is one quoted word", () => {
    const host = {
      target: "build1",
      sshConfig: "/home/me/ssh.conf",
      options: [["ConnectTimeout", "3"]] as [string, string][],
    };
    const opts = sshOptions(host, "/tmp/cm");
    expect(opts.slice(0, 4)).toEqual(["-F", "/home/me/ssh.conf", "-o", "ConnectTimeout=3"]);
    expect(opts).toContain("BatchMode=yes");
    expect(opts).toContain("ControlPath=/tmp/cm/%n");
    // Muster's own ConnectTimeout comes after the user's, so the user's wins.
    expect(opts.indexOf("ConnectTimeout=3")).toBeLessThan(
      opts.findIndex((o) => o.startsWith("ConnectTimeout=1")),
    );
    const argv = remoteArgv(host, "/tmp/cm", ["printf", "%s", "it's $HOME; `id`"]);
    expect(argv.slice(-3)).toEqual(["--", "build1", "'printf' '%s' 'it'\\''s $HOME; `id`'"]);
  });
});
