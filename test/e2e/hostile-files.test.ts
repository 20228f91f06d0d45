import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { BIN, until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-hostile");

/**
 * The CLI as a plain process with a hard timeout and output cap: a command that reads /dev/zero or blocks
 * on a FIFO is killed (status null) instead of hanging the suite or eating the machine's memory.
 */
function runBounded(args: string[], timeout = 20_000) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: sb.cwd,
    env: sb.env,
    encoding: "utf8",
    timeout,
    // SIGKILL: a process blocked in open() of a FIFO or busy reading /dev/zero never runs a SIGTERM handler.
    killSignal: "SIGKILL",
    maxBuffer: 1024 * 1024,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** A settled child with one completed turn: its id, artifact dir and snapshot path. */
async function completedChild(prompt = "quick") {
  const r = await sb.json(["spawn", "--wait", prompt]);
  expect(r.exitCode, r.stderr).toBe(0);
  const res = r.data.results[0];
  return {
    id: res.id as string,
    dir: res.artifactDir as string,
    snapshot: path.join(res.artifactDir, res.output.path),
  };
}

/** Replaces file by something hostile for the duration of fn, then puts the original back (cleanup reads it). */
async function replaced(file: string, plant: (f: string) => void, fn: () => Promise<void>) {
  const keep = `${file}.keep`;
  fs.renameSync(file, keep);
  try {
    plant(file);
    await fn();
  } finally {
    fs.rmSync(file, { force: true });
    fs.renameSync(keep, file);
  }
}

const mkfifo = (f: string) => expect(spawnSync("mkfifo", [f]).status).toBe(0);

/** Records of an NDJSON file, skipping lines that are not JSON (the junk these tests plant). */
// biome-ignore lint/suspicious/noExplicitAny: test code reads records loosely
function recordsOf(file: string): Record<string, any>[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .flatMap((l) => {
      try {
        return [JSON.parse(l)];
      } catch {
        return [];
      }
    });
}

describe("hostile artifact files are refused, never read to their end", () => {
  it("result: a snapshot replaced by a symlink to /dev/zero fails fast with one line", async () => {
    const c = await completedChild();
    await replaced(
      c.snapshot,
      (f) => fs.symlinkSync("/dev/zero", f),
      async () => {
        const r = runBounded(["result", c.id]);
        expect(r.signal, "killed by the timeout: it read /dev/zero").toBeNull();
        expect(r.status).toBe(1);
        expect(r.stderr.trim().split("\n")).toHaveLength(1);
        expect(r.stderr).toContain(`refusing to read ${c.snapshot}: it is a symbolic link`);
        expect(r.stdout).toBe("");
      },
    );
    expect(runBounded(["result", c.id]).status).toBe(0);
  });

  it("result: a snapshot replaced by a FIFO fails fast instead of waiting for a writer", async () => {
    const c = await completedChild();
    await replaced(c.snapshot, mkfifo, async () => {
      const r = runBounded(["result", c.id]);
      expect(r.signal, "killed by the timeout: it blocked on the FIFO").toBeNull();
      expect(r.status).toBe(1);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(`refusing to read ${c.snapshot}: it is a FIFO`);
    });
  });

  it("status and result: meta.json as a symlink is refused with one line naming it", async () => {
    const c = await completedChild();
    const meta = path.join(c.dir, "meta.json");
    await replaced(
      meta,
      (f) => fs.symlinkSync(`${meta}.keep`, f),
      async () => {
        for (const cmd of ["status", "result"]) {
          const r = runBounded([cmd, c.id]);
          expect(r.signal).toBeNull();
          expect(r.status, r.stderr).toBe(1);
          expect(r.stderr.trim().split("\n")).toHaveLength(1);
          expect(r.stderr).toContain(`refusing to read ${meta}: it is a symbolic link`);
        }
      },
    );
  });

  it("events.ndjson replaced by a symlink to /dev/zero: status fails fast", async () => {
    const c = await completedChild();
    const events = path.join(c.dir, "events.ndjson");
    await replaced(
      events,
      (f) => fs.symlinkSync("/dev/zero", f),
      async () => {
        const r = runBounded(["status", c.id]);
        expect(r.signal).toBeNull();
        expect(r.status).toBe(1);
        expect(r.stderr).toContain(`refusing to read ${events}: it is a symbolic link`);
      },
    );
  });

  it("an oversized events line is skipped and reported (offset, length) by status and status --json", async () => {
    const c = await completedChild();
    const events = path.join(c.dir, "events.ndjson");
    const offset = fs.statSync(events).size;
    const length = 5 * 1024 * 1024 + 3;
    fs.appendFileSync(events, `${"z".repeat(length)}\n`);
    const j = await sb.json(["status", c.id]);
    expect(j.exitCode, j.stderr).toBe(0);
    expect(j.data.malformed).toEqual({
      count: 1,
      spans: [{ offset, length, reason: "record exceeds 1048576 bytes" }],
    });
    expect(j.data.lastOutcome).toBe("completed");
    const human = await sb.run(["status", c.id]);
    expect(human.stdout).toContain(
      `events     1 malformed line at offset ${offset} (${length} B: record exceeds`,
    );
    // The answer is still there.
    expect((await sb.run(["result", c.id])).exitCode).toBe(0);
  });
});

/** subagents_status (no id) from a real `muster mcp` process: its parsed answer, or the error text. */
async function mcpStatusList(): Promise<{ isError: boolean; text: string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, "mcp"],
    env: sb.env as Record<string, string>,
    cwd: sb.cwd,
    stderr: "pipe",
  });
  const client = new Client({ name: "muster-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    const r = await client.callTool({ name: "subagents_status", arguments: {} }, undefined, {
      timeout: 20_000,
    });
    return { isError: !!r.isError, text: (r.content as { text: string }[])[0]?.text ?? "" };
  } finally {
    await client.close();
  }
}

describe("a child with hostile files does not hide the others", () => {
  it("ls, ls --json, subagents_status and gc list every other child and show the broken ones as unreadable", async () => {
    const good = await completedChild("good");
    const zero = await completedChild("events to /dev/zero");
    const fifo = await completedChild("meta as a FIFO");
    expect((await sb.run(["cancel", good.id])).exitCode).toBe(0);
    const zeroEvents = path.join(zero.dir, "events.ndjson");
    const fifoMeta = path.join(fifo.dir, "meta.json");
    const reasons = {
      [zero.id]: `refusing to read ${zeroEvents}: it is a symbolic link`,
      [fifo.id]: `refusing to read ${fifoMeta}: it is a FIFO`,
    };
    const plantBoth = (fn: () => Promise<void>) =>
      replaced(
        zeroEvents,
        (f) => fs.symlinkSync("/dev/zero", f),
        () => replaced(fifoMeta, mkfifo, fn),
      );
    await plantBoth(async () => {
      const j = runBounded(["ls", "--json"]);
      expect(j.signal).toBeNull();
      expect(j.status, j.stderr).toBe(0);
      // biome-ignore lint/suspicious/noExplicitAny: test code reads JSON loosely
      const byId = new Map<string, any>(JSON.parse(j.stdout).children.map((c: any) => [c.id, c]));
      expect(byId.get(good.id)).toMatchObject({ status: "closed", lastOutcome: "completed" });
      for (const id of [zero.id, fifo.id])
        expect(byId.get(id)).toEqual({ id, status: "unreadable", error: reasons[id] });

      const human = runBounded(["ls"]);
      expect(human.status, human.stderr).toBe(0);
      const rowOf = (id: string) => human.stdout.split("\n").find((l) => l.startsWith(id.slice(-8)));
      expect(rowOf(good.id)).toContain("completed");
      for (const id of [zero.id, fifo.id]) {
        expect(rowOf(id)).toContain("unreadable");
        expect(rowOf(id)).toContain(reasons[id]);
      }

      const mcp = await mcpStatusList();
      expect(mcp.isError, mcp.text).toBe(false);
      // biome-ignore lint/suspicious/noExplicitAny: test code reads JSON loosely
      const rows = new Map<string, any>(JSON.parse(mcp.text).children.map((c: any) => [c.id, c]));
      expect(rows.get(good.id)).toMatchObject({ status: "closed" });
      for (const id of [zero.id, fifo.id])
        expect(rows.get(id)).toEqual({ id, status: "unreadable", error: reasons[id] });

      const gc = runBounded(["gc", "--older-than", "0s", "--json"]);
      expect(gc.status, gc.stderr).toBe(0);
      const report = JSON.parse(gc.stdout);
      expect(report.removed.map((r: { id: string }) => r.id)).toEqual([good.id]);
      for (const id of [zero.id, fifo.id])
        expect(report.skipped).toContainEqual({ id, why: `unreadable: ${reasons[id]}` });
      expect(fs.existsSync(zero.dir) && fs.existsSync(fifo.dir)).toBe(true);
    });
    // Put back, both are whole children again; the human gc says why it kept one.
    const after = await sb.json(["ls"]);
    const statuses = after.data.children.map((c: { id: string; status: string }) => [c.id, c.status]);
    expect(statuses).toEqual(
      expect.arrayContaining([
        [zero.id, "idle"],
        [fifo.id, "idle"],
      ]),
    );
    await plantBoth(async () => {
      const gc = runBounded(["gc", "--older-than", "0s"]);
      expect(gc.status, gc.stderr).toBe(0);
      expect(gc.stdout).toContain(`kept ${zero.id.slice(-8)}: unreadable: ${reasons[zero.id]}`);
    });
  });
});

describe("the child host does not write through a symlink planted in its artifact dir", () => {
  it("output.md and .reserve as symlinks to files outside: the next turn completes, the outside files keep their bytes", async () => {
    const c = await completedChild("first turn");
    const victims = ["output.md", ".reserve"].map((name) => {
      const victim = path.join(sb.cwd, `victim-${name.replace(".", "")}.txt`);
      fs.writeFileSync(victim, `precious ${name}\n`);
      const at = path.join(c.dir, name);
      fs.rmSync(at, { force: true });
      fs.symlinkSync(victim, at);
      return { victim, at, bytes: `precious ${name}\n` };
    });
    const r = await sb.json(["send", c.id, "--wait", "second turn"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const res = r.data.results[0];
    expect(res.status).toBe("completed");
    expect(res.text).toContain("second turn");
    for (const v of victims) {
      expect(fs.readFileSync(v.victim, "utf8")).toBe(v.bytes);
      expect(fs.lstatSync(v.at).isSymbolicLink(), v.at).toBe(false);
    }
    // The staging file holds this turn's answer, as after any turn.
    expect(fs.readFileSync(path.join(c.dir, "output.md"), "utf8")).toBe(res.text);
  });
});

describe("user files that are FIFOs or devices: a warning naming them, never a hang", () => {
  it("a FIFO profile and a /dev/zero profile in the project's .muster/agents: muster agents finishes and names both", async () => {
    const agents = path.join(sb.cwd, ".muster", "agents");
    fs.mkdirSync(agents, { recursive: true });
    const fifo = path.join(agents, "stuck.md");
    const zero = path.join(agents, "endless.md");
    mkfifo(fifo);
    fs.symlinkSync("/dev/zero", zero);
    try {
      const r = runBounded(["agents"]);
      expect(r.signal, "killed by the timeout: it blocked on the FIFO").toBeNull();
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain(`warning: refusing to read ${fifo}: it is a FIFO; skipped`);
      expect(r.stderr).toContain(`warning: refusing to read ${zero}: it is a character device; skipped`);
      expect(r.stdout).toContain("mock"); // the other agents are all there
      // Asked for by name, the refusal is the answer: exit 2, one line, nothing created.
      const s = runBounded(["spawn", "--agent", "stuck", "hello"]);
      expect(s.status, s.stderr).toBe(2);
      expect(s.stderr).toContain(`agent "stuck": refusing to read ${fifo}: it is a FIFO`);
    } finally {
      fs.rmSync(agents, { recursive: true, force: true });
    }
  });

  it("a FIFO as the user config: a warning naming it, the command goes on", async () => {
    const dir = path.join(sb.env.XDG_CONFIG_HOME!, "muster");
    fs.mkdirSync(dir, { recursive: true });
    const config = path.join(dir, "config.json");
    mkfifo(config);
    try {
      const r = runBounded(["agents"]);
      expect(r.signal, "killed by the timeout: it blocked on the FIFO").toBeNull();
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain(`warning: refusing to read ${config}: it is a FIFO; ignored`);
    } finally {
      fs.rmSync(config, { force: true });
    }
  });
});

describe("junk appended to events.ndjson does not swallow the next record", () => {
  it("an idle child's follow-up after junk without LF: every record of the turn is read back, the junk reported", async () => {
    const c = await completedChild();
    const events = path.join(c.dir, "events.ndjson");
    const offset = fs.statSync(events).size;
    const junk = "JUNK{not a record";
    fs.appendFileSync(events, junk); // a broken writer, no newline
    const r = await sb.json(["send", c.id, "--wait", "mock: tools=2"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const turnId = r.data.results[0].turnId as string;
    const mine = recordsOf(events).filter((e) => e.turnId === turnId);
    expect(mine.map((e) => e.type)).toEqual(
      expect.arrayContaining(["turn_started", "runner_started", "tool_activity", "completion"]),
    );
    expect(mine.filter((e) => e.type === "tool_activity")).toHaveLength(4);
    const st = await sb.json(["status", c.id]);
    expect(st.data.turns).toBe(2);
    expect(st.data.turnList[1]).toMatchObject({ turnId, status: "completed" });
    expect(st.data.malformed).toEqual({
      count: 1,
      spans: [{ offset, length: junk.length, reason: "invalid JSON" }],
    });
    expect((await sb.run(["status", c.id])).stdout).toContain(
      `events     1 malformed line at offset ${offset} (${junk.length} B: invalid JSON)`,
    );
  });
});

describe("prompts that are not UTF-8 are refused, not replaced", () => {
  const childCount = async () => (await sb.json(["ls"])).data.children.length as number;

  it("--file with bytes 0x80-0xFF: exit 2, one line naming UTF-8, nothing created", async () => {
    const before = await childCount();
    const file = path.join(sb.cwd, "latin1.txt");
    fs.writeFileSync(
      file,
      Buffer.from([0x68, 0x69, 0x20, ...Array.from({ length: 128 }, (_, i) => 0x80 + i)]),
    );
    const r = await sb.run(["spawn", "--file", file]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain(`the prompt in ${file} is not valid UTF-8 (byte 0x80 at offset 3)`);
    expect(await childCount()).toBe(before);
  });

  it("valid UTF-8 from --file still arrives byte-exact, a leading BOM included", async () => {
    const file = path.join(sb.cwd, "bom.txt");
    const bytes = Buffer.from("\ufeffstarts with a BOM, then \u00e9 and \u{1F600}\n", "utf8");
    fs.writeFileSync(file, bytes);
    const r = await sb.json(["spawn", "--wait", "--file", file]);
    expect(r.exitCode, r.stderr).toBe(0);
    const sha = createHash("sha256").update(bytes).digest("hex");
    expect(r.data.results[0].text).toContain(`prompt-sha256: ${sha}`);
  });

  it("argv with bytes 0x80-0xFF (spawn and send): exit 2, nothing created; a typed U+FFFD still passes", async () => {
    const c = await completedChild();
    const before = await childCount();
    // Node's child_process would re-encode a Buffer argument as UTF-8 (U+FFFD); printf puts the raw bytes in argv.
    const raw = (cmd: string) =>
      spawnSync("bash", ["-c", `exec "$0" "$1" ${cmd} "$(printf 'a\\200\\377b')"`, process.execPath, BIN], {
        cwd: sb.cwd,
        env: sb.env,
        encoding: "utf8",
        timeout: 20_000,
      });
    for (const cmd of ["spawn", `send ${c.id}`]) {
      const r = raw(cmd);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain("the prompt argument is not valid UTF-8 (byte 0x80 at offset 1)");
    }
    expect(await childCount()).toBe(before);
    expect((await sb.json(["status", c.id])).data.turns).toBe(1);
    const ok = await sb.json(["send", c.id, "--wait", "a \ufffd typed on purpose"]);
    expect(ok.exitCode, ok.stderr).toBe(0);
  });

  it("a line typed into the pane that is not UTF-8 is refused in the pane; the next line still runs", async () => {
    const s = await sb.json(["spawn", "--wait", "before typing"]);
    const { id, paneId } = s.data.spawned as { id: string; paneId: string };
    const tmux = (...args: string[]) => expect(spawnSync("tmux", ["-L", sb.socket, ...args]).status).toBe(0);
    tmux("send-keys", "-t", paneId, "-H", "61", "80", "ff", "62", "0d"); // raw bytes a 0x80 0xff b, Enter
    tmux("send-keys", "-t", paneId, "typed after", "Enter");
    await until(async () => {
      const st = (await sb.json(["status", id])).data;
      return st.turnList.length >= 2 && st.status === "idle";
    }, 15_000);
    const st = (await sb.json(["status", id])).data;
    expect(st.turnList).toHaveLength(2);
    expect(st.turnList[1]).toMatchObject({ source: "typed", promptBytes: Buffer.byteLength("typed after") });
    expect((await sb.run(["capture", id])).stdout).toContain("typed line ignored: it is not valid UTF-8");
  });
});
