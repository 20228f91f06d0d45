import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, REPO, readEvents, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-side");

const AGENT = path.join(REPO, "test", "fixtures", "explicit-agent.mjs");

/** A command-runner child whose agent reports progress, then `muster <kind> <text>`. */
const runExplicitAgent = (progress: string, kind: "done" | "error", text: string) =>
  sb.run([
    "spawn",
    "--agent",
    "command",
    "--json",
    "--wait",
    "task",
    "--",
    process.execPath,
    AGENT,
    BIN,
    progress,
    kind,
    text,
  ]);

describe("inside a child's pane", () => {
  it("muster progress and muster done: a progress event for the turn, the explicit result wins", async () => {
    const r = await runExplicitAgent("halfway there", "done", "the explicit answer");
    expect(r.exitCode, r.stderr).toBe(0);
    const res = JSON.parse(r.stdout).results[0];
    expect(res.text).toBe("the explicit answer");
    const progress = readEvents(res.artifactDir).find((e) => e.type === "progress");
    expect(progress).toMatchObject({ text: "halfway there", turnId: res.turnId });
  });

  it("muster error ends the turn errored with its message", async () => {
    const r = await runExplicitAgent("trying", "error", "could not find the file");
    expect(r.exitCode).toBe(1);
    expect(JSON.parse(r.stdout).results[0]).toMatchObject({
      status: "errored",
      reason: "could not find the file",
    });
  });

  it("outside a pane the child-side commands refuse with exit 2; their help is instant", async () => {
    const r = await sb.run(["done", "x"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("only inside a child's pane");
    const h = await sb.run(["progress", "--help"]);
    expect(h.exitCode).toBe(0);
    expect(h.stdout).toContain("usage: muster progress");
  });

  it("Ctrl-C in the pane cancels only the running turn; the child takes the next one", async () => {
    const s = (await sb.json(["spawn", "mock: hang"])).data;
    await until(async () => (await sb.run(["capture", s.id])).stdout.includes("hanging"), 10_000, 100);
    await execa("tmux", ["-L", sb.socket, "send-keys", "-t", s.paneId, "C-c"]);
    const w = await sb.json(["wait", s.id, "--timeout", "10s"]);
    expect(w.exitCode).toBe(3);
    expect(w.data.results[0].reason).toContain("Ctrl-C");
    const again = await sb.json(["send", s.id, "--wait", "still here?"]);
    expect(again.exitCode).toBe(0);
    expect((await sb.json(["status", s.id])).data.status).toBe("idle");
  });

  it("cancel with a follow-up queued: both turns settle cancelled, nothing is left in the inbox", async () => {
    const s = (await sb.json(["spawn", "mock: hang"])).data;
    const queued = (await sb.json(["send", s.id, "queued behind the hang"])).data;
    expect(queued.queued).toBe(true);
    await sb.run(["cancel", s.id]);
    const w = await sb.json(["wait", s.id]);
    expect(w.data.results[0]).toMatchObject({
      turnId: queued.turnId,
      status: "cancelled",
      reason: expect.stringContaining("never started"),
    });
    expect(fs.readdirSync(path.join(s.artifactDir, "inbox"))).toEqual([]);
  });
});

describe("muster done/progress/error --file reads a bounded regular UTF-8 file", () => {
  // The child-side commands need only an artifact dir with control/: a plain directory stands in for a pane.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-sidefile-"));
  const control = path.join(dir, "control");
  fs.mkdirSync(control);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** bin/muster.js with a hard timeout: a read of /dev/zero or a FIFO is killed (status null), not waited on. */
  const side = (...args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      env: { ...process.env, MUSTER_ARTIFACT_DIR: dir },
      encoding: "utf8",
      timeout: 10_000,
      killSignal: "SIGKILL",
      stdio: ["ignore", "pipe", "pipe"],
    });
    return { status: r.status, stderr: r.stderr };
  };
  const requests = () => fs.readdirSync(control);
  /** Refused: exit 2, one line naming the file and why, no control request written. */
  const refused = (kind: string, file: string, why: string) => {
    const r = side(kind, "--file", file);
    expect(r.status, "killed by the timeout").not.toBeNull();
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(why);
    expect(requests()).toEqual([]);
  };

  it("a FIFO is refused at once, not waited on", () => {
    const fifo = path.join(dir, "answer.fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    for (const kind of ["done", "progress", "error"])
      refused(kind, fifo, `refusing to read ${fifo}: it is a FIFO`);
  });

  it("a symlink to /dev/zero is refused (a device, not a file)", () => {
    const zero = path.join(dir, "zero.md");
    fs.symlinkSync("/dev/zero", zero);
    refused("done", zero, `refusing to read ${zero}: it is a character device`);
  });

  it("more than the 1 MiB answer limit is refused before reading", () => {
    const big = path.join(dir, "big.md");
    fs.writeFileSync(big, Buffer.alloc(1024 * 1024 + 1, 0x61));
    refused("done", big, `it is ${1024 * 1024 + 1} bytes, more than the 1048576-byte limit`);
  });

  it("bytes that are not UTF-8 are refused, not replaced by U+FFFD", () => {
    const latin1 = path.join(dir, "latin1.md");
    fs.writeFileSync(latin1, Buffer.from([0x68, 0x69, 0x20, 0xe9, 0x74, 0xe9]));
    for (const kind of ["done", "error"])
      refused(kind, latin1, `${latin1} is not valid UTF-8 (byte 0xe9 at offset 3)`);
  });

  it("a UTF-8 file of exactly 1 MiB, reached through a symlink, is handed over byte-exact", () => {
    const head = "\ufeffBOM, é, \u{1F600}\n";
    const text = head + "x".repeat(1024 * 1024 - Buffer.byteLength(head));
    expect(Buffer.byteLength(text)).toBe(1024 * 1024);
    const real = path.join(dir, "real.md");
    fs.writeFileSync(real, text);
    const link = path.join(dir, "link.md");
    fs.symlinkSync(real, link);
    const r = side("done", "--file", link);
    expect(r.status, r.stderr).toBe(0);
    const [name] = requests();
    expect(JSON.parse(fs.readFileSync(path.join(control, name!), "utf8"))).toEqual({ kind: "done", text });
    fs.rmSync(path.join(control, name!));
  });
});
