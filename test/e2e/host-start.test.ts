import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { BIN, processesMentioning, until, useSandbox } from "../helpers/cli.js";

// Its own sandbox: the fake env(1) below is on the PATH of this sandbox's tmux server only.
const sb = useSandbox("mt-start");
const fresh = useSandbox("mt-fds");

describe("the tmux server a parent starts", () => {
  it("keeps none of the parent's inherited descriptors (a pipe of whoever started the parent)", async () => {
    // `muster spawn` starts this sandbox's server. Its fd 20 is one end of a socket pair the test holds the
    // other end of, inherited without close-on-exec, as a pipe of a parent's parent would be (node marks
    // only fds up to the first gap after 15 close-on-exec). tmux keeps whatever its first client inherited
    // for the server's whole life: the test would never see EOF.
    const FD = 20;
    const stdio = Array.from({ length: FD + 1 }, (_, i) =>
      i === 1 || i === 2 || i === FD ? "pipe" : "ignore",
    );
    const cli = spawn(process.execPath, [BIN, "spawn", "--json", "fd check"], {
      cwd: fresh.cwd,
      env: fresh.env,
      stdio: stdio as ("pipe" | "ignore")[],
    });
    const extra = cli.stdio[FD] as import("node:stream").Readable;
    let eof = false;
    extra.on("end", () => {
      eof = true;
    });
    extra.resume();
    let out = "";
    cli.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((r) => cli.on("exit", r));
    expect(code, out).toBe(0);
    const { artifactDir } = JSON.parse(out);
    await until(() =>
      fs.readFileSync(path.join(artifactDir, "events.ndjson"), "utf8").includes("completion"),
    );
    // The CLI has exited; only the tmux server (and the child's pane) could still hold its end.
    await until(() => eof, 5_000);
  });
});

describe("a child host that never starts", () => {
  it("settles lost within the start limit, says where its process sleeps, and its pane is closed", async () => {
    // The pane's command is `env -u NODE_EXTRA_CA_CERTS node host.bundle.js <dir>`, found on the pane's
    // PATH. This env blocks opening a FIFO nobody writes: a host held before it can log child_started,
    // while its pane stays alive (issue 9, item 26: a waiter waited 6 min 45 s for such a host).
    const base = path.dirname(sb.home);
    const bin = path.join(base, "bin");
    const fifo = path.join(base, "held.fifo");
    fs.mkdirSync(bin);
    execFileSync("mkfifo", [fifo]);
    fs.writeFileSync(
      path.join(bin, "env"),
      `#!/bin/sh\nread -r _ < ${JSON.stringify(fifo)}\nexec /usr/bin/env "$@"\n`,
      { mode: 0o755 },
    );
    const env = { PATH: `${bin}:${process.env.PATH}` };
    const spawned = await sb.json(["spawn", "never starts"], { env });
    expect(spawned.exitCode).toBe(0);
    const { id, artifactDir } = spawned.data;
    const w = await sb.json(["wait", id, "--timeout", "55s"], { env });
    expect(w.data.results, JSON.stringify(w.data)).toHaveLength(1);
    expect(w.data.results[0]).toMatchObject({ status: "lost" });
    const reason = w.data.results[0].reason as string;
    expect(reason).toMatch(/did not start within 30s although its pane was alive/);
    // The blocked process is named with its kernel state and wait channel, the clue for what held it.
    expect(reason).toMatch(/pid \d+ state S in \w+/);
    expect(reason).toContain("the pane was closed");
    await until(() => processesMentioning(artifactDir).length === 0, 10_000);
  });
});
