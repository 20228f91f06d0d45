// The mirror engine with real processes: a relay child (dist/place/mirror/relay-main.js) on its stdio, a
// far-side writer process, a feeder in this process, real temp dirs on both sides.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { NdjsonReader } from "../../src/artifacts/reader.js";
import { MirrorFeeder } from "../../src/place/mirror/feeder.js";
import { FrameDecoder, type Header } from "../../src/place/mirror/protocol.js";
import { connect, difference, killAll, startRelay } from "../helpers/mirror.js";
import { waitFor } from "../helpers/tmux.js";

const WRITER = path.resolve("test/fixtures/mirror-writer.mjs");
const dirs: string[] = [];
const feeders: MirrorFeeder[] = [];

function sides(): { far: string; near: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mt-mirror-"));
  dirs.push(root);
  const far = path.join(root, "far");
  fs.mkdirSync(far, { mode: 0o700 });
  return { far, near: path.join(root, "near") };
}

function runWriter(far: string, lines: number, paceMs = 0): Promise<number | null> {
  const p = spawn(process.execPath, [WRITER, far, String(lines), String(paceMs)], { stdio: "ignore" });
  return new Promise((resolve) => p.on("exit", resolve));
}

const farFiles = (far: string): string[] => [
  "events.ndjson",
  "meta.json",
  "output.md",
  ...fs.readdirSync(path.join(far, "outputs")).map((n) => `outputs/${n}`),
];

const seqs = (file: string): number[] =>
  fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => (JSON.parse(l) as { seq: number }).seq);

afterEach(() => {
  for (const f of feeders.splice(0)) f.close();
  killAll();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("mirror: far to near", () => {
  it("2,000 event lines (torn ones too) and the host's files end byte-identical; only whole lines cross, snapshots before their completion", async () => {
    const { far, near } = sides();
    const { feeder } = await connect(far, near);
    feeders.push(feeder);
    // Every completion the mirror appends must find its snapshot already there (the parent reads it next).
    const reader = new NdjsonReader<{ type: string; output?: { path: string } }>(
      path.join(near, "events.ndjson"),
    );
    const missing: string[] = [];
    let torn = 0;
    feeder.on("events", (size: number) => {
      // Only whole lines cross: the mirror never ends in half a record.
      const fd = fs.openSync(path.join(near, "events.ndjson"), "r");
      const last = Buffer.alloc(1);
      fs.readSync(fd, last, 0, 1, size - 1);
      fs.closeSync(fd);
      if (last[0] !== 0x0a) torn++;
      for (const r of reader.readNew())
        if (r.type === "completion" && !fs.existsSync(path.join(near, r.output!.path)))
          missing.push(r.output!.path);
    });
    expect(await runWriter(far, 2000)).toBe(0);
    await waitFor(() => difference(far, near, farFiles(far)) === undefined, 20_000).catch(() => {
      throw new Error(`mirror differs: ${difference(far, near, farFiles(far))}`);
    });
    expect(seqs(path.join(near, "events.ndjson"))).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
    expect(fs.readdirSync(path.join(near, "outputs")).length).toBe(8);
    expect(missing).toEqual([]);
    expect(torn).toBe(0);
  });

  it("a relay killed mid-stream: a new relay and feeder resume from the mirror's cursor, nothing lost or twice", async () => {
    const { far, near } = sides();
    const first = await connect(far, near);
    feeders.push(first.feeder);
    const writer = runWriter(far, 2000, 5);
    await waitFor(
      () => (fs.statSync(path.join(near, "events.ndjson")).size > 20_000 ? true : undefined),
      20_000,
    );
    first.relay.proc.kill("SIGKILL");
    expect(await first.closed).toBe("the relay ended the stream");
    const cut = fs.statSync(path.join(near, "events.ndjson")).size;
    const second = await connect(far, near, new MirrorFeeder(near, { pollMs: 200 }));
    feeders.push(second.feeder);
    expect(await writer).toBe(0);
    await waitFor(() => difference(far, near, farFiles(far)) === undefined, 20_000).catch(() => {
      throw new Error(`mirror differs: ${difference(far, near, farFiles(far))}`);
    });
    expect(cut).toBeLessThan(fs.statSync(path.join(far, "events.ndjson")).size);
    expect(seqs(path.join(near, "events.ndjson"))).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
  });
});

describe("mirror: a mirror that is not a prefix of the far log", () => {
  for (const [name, far0, near0, why] of [
    ["longer", '{"seq":1}\n', '{"seq":1}\n{"seq":2}\n', /longer than the far side's/],
    ["different", '{"seq":1}\n{"seq":2}\n', '{"seq":9}\n', /differs from the far side's before byte 10/],
  ] as const)
    it(`${name}: refused, the mirror left as it was`, async () => {
      const { far, near } = sides();
      fs.writeFileSync(path.join(far, "events.ndjson"), far0);
      fs.mkdirSync(near);
      fs.writeFileSync(path.join(near, "events.ndjson"), near0);
      const feeder = new MirrorFeeder(near);
      feeders.push(feeder);
      await expect(connect(far, near, feeder)).rejects.toThrow(why);
      expect(fs.readFileSync(path.join(near, "events.ndjson"), "utf8")).toBe(near0);
    });
});

describe("mirror: a far side made anew (its log empty, the mirror's not)", () => {
  const near0 = '{"seq":1}\n{"seq":2}\n';
  const given = (seed: boolean) => {
    const { far, near } = sides();
    fs.writeFileSync(path.join(far, "events.ndjson"), "");
    fs.mkdirSync(path.join(near, "outputs"), { recursive: true });
    fs.writeFileSync(path.join(near, "events.ndjson"), near0);
    fs.writeFileSync(path.join(near, "outputs", "turn-1.md"), "the first turn's answer\n");
    if (seed) fs.writeFileSync(path.join(near, "events-seed.ndjson"), near0);
    return { far, near };
  };

  it("with the mirror's log offered as a seed: the far log becomes it, goes on from its end, and the mirror keeps the earlier turns' files", async () => {
    const { far, near } = given(true);
    const { feeder } = await connect(far, near);
    feeders.push(feeder);
    expect(fs.readFileSync(path.join(far, "events.ndjson"), "utf8")).toBe(near0);
    // The seed is used up on both sides; the mirror's files the far side lacks are not deleted here.
    await waitFor(() => !fs.existsSync(path.join(near, "events-seed.ndjson")) || undefined, 10_000);
    expect(fs.existsSync(path.join(far, "events-seed.ndjson"))).toBe(false);
    expect(fs.readFileSync(path.join(near, "outputs", "turn-1.md"), "utf8")).toBe(
      "the first turn's answer\n",
    );
    fs.appendFileSync(path.join(far, "events.ndjson"), '{"seq":3}\n');
    await waitFor(() => seqs(path.join(near, "events.ndjson")).length === 3 || undefined, 10_000);
    expect(seqs(path.join(near, "events.ndjson"))).toEqual([1, 2, 3]);
  });

  it("with no seed offered: refused as a shorter log, the mirror left as it was", async () => {
    const { far, near } = given(false);
    const feeder = new MirrorFeeder(near);
    feeders.push(feeder);
    await expect(connect(far, near, feeder)).rejects.toThrow(/longer than the far side's \(0\)/);
    expect(fs.readFileSync(path.join(near, "events.ndjson"), "utf8")).toBe(near0);
    expect(fs.existsSync(path.join(near, "outputs", "turn-1.md"))).toBe(true);
  });

  it("a far log that is not empty takes no seed: the seed is dropped and a shorter log still refused", async () => {
    const { far, near } = given(true);
    fs.writeFileSync(path.join(far, "events.ndjson"), '{"seq":1}\n');
    const feeder = new MirrorFeeder(near);
    feeders.push(feeder);
    await expect(connect(far, near, feeder)).rejects.toThrow(/longer than the far side's/);
    expect(fs.readFileSync(path.join(far, "events.ndjson"), "utf8")).toBe('{"seq":1}\n');
  });
});

describe("mirror: near to far", () => {
  it("an inbox item arrives whole; the far side taking it removes it here; env.json goes out 0600 and never comes back", async () => {
    const { far, near } = sides();
    const { feeder } = await connect(far, near);
    feeders.push(feeder);
    const item = `${JSON.stringify({ v: 1, turnId: "t1", prompt: "p".repeat(100_000) })}\n`;
    const drop = (rel: string, data: string): void => {
      const file = path.join(near, rel);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(path.join(path.dirname(file), `.${path.basename(file)}.tmp`), data, { mode: 0o600 });
      fs.renameSync(path.join(path.dirname(file), `.${path.basename(file)}.tmp`), file);
    };
    drop("inbox/000000000000001-t1.json", item);
    drop("env.json", '{"env":{"SECRET":"s1"}}');
    const farItem = path.join(far, "inbox/000000000000001-t1.json");
    await waitFor(() => fs.existsSync(farItem) && fs.existsSync(path.join(far, "env.json")), 10_000);
    expect(fs.readFileSync(farItem, "utf8")).toBe(item);
    expect(fs.statSync(farItem).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(far, "env.json")).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(path.join(far, "inbox"))).toEqual(["000000000000001-t1.json"]);

    // The host takes the turn: the mirror's copy goes too.
    fs.rmSync(farItem);
    await waitFor(() => !fs.existsSync(path.join(near, "inbox/000000000000001-t1.json")), 10_000);

    // A far-side env.json never flows back: a later change there reaches the mirror, env.json does not.
    fs.writeFileSync(path.join(far, "env.json"), '{"env":{"SECRET":"far"}}');
    fs.writeFileSync(path.join(far, "output.md"), "barrier\n");
    await waitFor(() => fs.existsSync(path.join(near, "output.md")), 10_000);
    expect(fs.readFileSync(path.join(near, "env.json"), "utf8")).toBe('{"env":{"SECRET":"s1"}}');
  });

  it("a far dir that is the mirror itself (a place on this very disk) is refused, the log left as it was", async () => {
    const { far } = sides();
    fs.writeFileSync(path.join(far, "events.ndjson"), '{"seq":1}\n');
    const feeder = new MirrorFeeder(far, { pollMs: 200 });
    feeders.push(feeder);
    await expect(connect(far, far, feeder)).rejects.toThrow(/shares the parent's disk/);
    expect(fs.readFileSync(path.join(far, "events.ndjson"), "utf8")).toBe('{"seq":1}\n');
    expect(fs.readdirSync(far).filter((n) => n.startsWith(".mirror-probe-"))).toEqual([]);
  });

  it("caught-up comes once the far side holds what the mirror had for it: a host may start on it then", async () => {
    const { far, near } = sides();
    fs.mkdirSync(path.join(near, "inbox"), { recursive: true });
    fs.writeFileSync(path.join(near, "inbox/000000000000001-t1.json"), '{"v":1,"turnId":"t1","prompt":"p"}');
    fs.writeFileSync(path.join(near, "env.json"), '{"env":{"K":"v"}}');
    // connect resolves on caught-up: nothing may be waited for after it.
    const { feeder } = await connect(far, near);
    feeders.push(feeder);
    expect(fs.readFileSync(path.join(far, "env.json"), "utf8")).toBe('{"env":{"K":"v"}}');
    expect(fs.existsSync(path.join(far, "inbox/000000000000001-t1.json"))).toBe(true);
  });

  it("across a broken link: an item taken meanwhile is not sent again, one written meanwhile is", async () => {
    const { far, near } = sides();
    const first = await connect(far, near);
    feeders.push(first.feeder);
    fs.mkdirSync(path.join(near, "inbox"), { recursive: true });
    fs.writeFileSync(path.join(near, "inbox/000000000000001-a.json"), '{"turn":"a"}');
    await waitFor(() => fs.existsSync(path.join(far, "inbox/000000000000001-a.json")), 10_000);
    first.relay.proc.kill("SIGKILL");
    await first.closed;
    // While nobody relays: the host takes item a, the parent drops item b.
    fs.rmSync(path.join(far, "inbox/000000000000001-a.json"));
    fs.writeFileSync(path.join(near, "inbox/000000000000002-b.json"), '{"turn":"b"}');
    const second = await connect(far, near, new MirrorFeeder(near, { pollMs: 200 }));
    feeders.push(second.feeder);
    expect(fs.existsSync(path.join(near, "inbox/000000000000001-a.json"))).toBe(false);
    await waitFor(() => fs.existsSync(path.join(far, "inbox/000000000000002-b.json")), 10_000);
    expect(fs.readdirSync(path.join(far, "inbox"))).toEqual(["000000000000002-b.json"]);
  });

  it("a relay killed between recording a delivery and renaming it in: the next relay finishes it, drops unrecorded temps", async () => {
    const { far, near } = sides();
    const item = '{"turn":"r"}';
    fs.mkdirSync(path.join(far, "inbox"), { mode: 0o700 });
    fs.mkdirSync(path.join(near, "inbox"), { recursive: true });
    fs.writeFileSync(path.join(near, "inbox/000000000000001-r.json"), item);
    // What a relay leaves when killed right after the ledger's fsync: the whole temp, its record, no rename.
    fs.writeFileSync(path.join(far, "inbox/.000000000000001-r.json.mirror.tmp"), item);
    const sha = createHash("sha256").update(item).digest("hex");
    fs.writeFileSync(
      path.join(far, ".mirror-delivered.ndjson"),
      `${JSON.stringify({ path: "inbox/000000000000001-r.json", sha })}\n`,
    );
    fs.writeFileSync(path.join(far, "inbox/.000000000000002-s.json.mirror.tmp"), "half of s");
    const { feeder } = await connect(far, near);
    feeders.push(feeder);
    expect(fs.readdirSync(path.join(far, "inbox"))).toEqual(["000000000000001-r.json"]);
    expect(fs.readFileSync(path.join(far, "inbox/000000000000001-r.json"), "utf8")).toBe(item);
    expect(
      fs.readFileSync(path.join(far, ".mirror-delivered.ndjson"), "utf8").trim().split("\n"),
    ).toHaveLength(1);
  });
});

describe("mirror: a child that has never run (its log empty)", () => {
  /** A new child's mirror as spawn leaves it: meta.json, an empty log, env.json and the first inbox item. */
  function newChild(near: string, turn: string): void {
    fs.mkdirSync(path.join(near, "inbox"), { recursive: true });
    fs.writeFileSync(path.join(near, "meta.json"), '{"v":1,"id":"c1"}');
    fs.writeFileSync(path.join(near, "events.ndjson"), "");
    fs.writeFileSync(path.join(near, "env.json"), '{"env":{"K":"v"}}');
    fs.writeFileSync(path.join(near, `inbox/000000000000001-${turn}.json`), `{"turn":"${turn}"}`);
  }

  /** A seeded feeder attached to a new relay of `far`, with the relay's frames to it seen as they pass. */
  async function connectSeeded(far: string, near: string) {
    const relay = startRelay(far);
    const seen: Header[] = [];
    const decoder = new FrameDecoder();
    relay.proc.stdout!.on("data", (b: Buffer) => seen.push(...decoder.push(b).map((f) => f.header)));
    const feeder = new MirrorFeeder(near, { pollMs: 200, seed: true });
    feeders.push(feeder);
    const closed = new Promise<string>((resolve) => feeder.once("closed", resolve));
    const caughtUp = new Promise<void>((resolve, reject) => {
      feeder.once("caught-up", resolve);
      closed.then((why) => reject(new Error(`closed before caught up: ${why}; relay: ${relay.stderr()}`)));
    });
    feeder.attach({ readable: relay.proc.stdout!, writable: relay.proc.stdin! });
    await caughtUp;
    return { relay, closed, welcome: seen.find((h) => h.t === "welcome") };
  }

  const ledger = (far: string): string[] =>
    fs
      .readFileSync(path.join(far, ".mirror-delivered.ndjson"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { path: string }).path)
      .sort();

  it("its files go right behind the hello and are taken: caught-up means they are there", async () => {
    const { far, near } = sides();
    newChild(near, "a");
    const { welcome } = await connectSeeded(far, near);
    expect(welcome).toMatchObject({ t: "welcome", took: true });
    expect(fs.readFileSync(path.join(far, "env.json"), "utf8")).toBe('{"env":{"K":"v"}}');
    expect(fs.readFileSync(path.join(far, "inbox/000000000000001-a.json"), "utf8")).toBe('{"turn":"a"}');
    // Each delivered once.
    expect(ledger(far)).toEqual(["env.json", "inbox/000000000000001-a.json"]);
  });

  it("a far side that already had some of them drops the eager files and asks: an item taken there is not sent again", async () => {
    const { far, near } = sides();
    newChild(near, "a");
    const first = await connectSeeded(far, near);
    first.relay.proc.kill("SIGKILL");
    await first.closed;
    // While nobody relays (the log still empty): the far side takes item a, the parent drops item b.
    fs.rmSync(path.join(far, "inbox/000000000000001-a.json"));
    fs.writeFileSync(path.join(near, "inbox/000000000000002-b.json"), '{"turn":"b"}');
    const second = await connectSeeded(far, near);
    expect(second.welcome).toMatchObject({
      t: "welcome",
      took: false,
      want: ["inbox/000000000000002-b.json"],
    });
    expect(fs.readdirSync(path.join(far, "inbox"))).toEqual(["000000000000002-b.json"]);
    expect(fs.existsSync(path.join(near, "inbox/000000000000001-a.json"))).toBe(false);
    expect(ledger(far)).toEqual(["env.json", "inbox/000000000000001-a.json", "inbox/000000000000002-b.json"]);
  });
});
