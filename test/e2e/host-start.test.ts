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
    // while its pane stays alive (a waiter waited 6 min 45 s for such a host).
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

describe("a parent frozen while it holds the run-slot lock", () => {
  it("delays a child's first turn by at most the lock's stale time (5 s), never for as long as the parent lives", async () => {
    // The only lock on a host's way to its first turn is the primary's run-slot admission lock (a mkdir
    // lock, child/slots.ts). A process frozen inside it (SIGSTOP, swapped out, a debugger) never removes it;
    // the lock's age, not its holder's life, frees it.
    const first = await sb.json(["spawn", "creates the primary"]);
    expect(first.exitCode).toBe(0);
    await sb.json(["wait", first.data.id, "--timeout", "30s"]);
    const slots = path.join(first.data.artifactDir, "..", "..", "slots");
    const lock = path.join(slots, "admission.lock");
    fs.mkdirSync(lock);
    const heldAt = Date.now();
    const spawned = await sb.json(["spawn", "behind a frozen lock"]);
    expect(spawned.exitCode).toBe(0);
    const w = await sb.json(["wait", spawned.data.id, "--timeout", "40s"]);
    expect(w.data.results[0], JSON.stringify(w.data)).toMatchObject({ status: "completed" });
    const events = fs
      .readFileSync(path.join(spawned.data.artifactDir, "events.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const startedAt = Date.parse(events.find((e) => e.type === "turn_started").ts);
    // It did wait for the lock (the lock was real), and no longer than its stale time plus scheduling.
    expect(startedAt - heldAt).toBeGreaterThanOrEqual(4_000);
    expect(startedAt - heldAt).toBeLessThan(20_000);
    expect(fs.existsSync(lock)).toBe(false);
  });

  it("a frozen holder of the registry lock delays a spawn by at most that lock's stale time (10 s)", async () => {
    // proper-lockfile's lock on registry.json (a directory beside it, core/registry.ts). Its retries must
    // outlast its stale time, or a spawn behind a frozen parent fails ELOCKED instead of taking the lock over.
    const first = await sb.json(["spawn", "creates the registry"]);
    expect(first.exitCode).toBe(0);
    const registry = path.join(first.data.artifactDir, "..", "..", "registry.json");
    const lock = `${registry}.lock`;
    fs.mkdirSync(lock);
    const heldAt = Date.now();
    const spawned = await sb.json(["spawn", "behind a frozen registry lock"]);
    expect(spawned.exitCode, JSON.stringify(spawned.data)).toBe(0);
    const took = Date.now() - heldAt;
    expect(took).toBeGreaterThanOrEqual(9_000);
    expect(took).toBeLessThan(25_000);
    const w = await sb.json(["wait", spawned.data.id, "--timeout", "30s"]);
    expect(w.data.results[0], JSON.stringify(w.data)).toMatchObject({ status: "completed" });
  });
});
