// The order in which a feeder (src/place/mirror/feeder.ts) writes what its relay sends: two feeders on two
// channels of one link (a real ChannelMux pair joined by pipes in this process), the far ends played by the
// test with real protocol frames. A mirror's frames are written as they arrive, in order, and not behind the
// other mirrors' frames of the same read; a file taken in chunks, or a removal, still lands before the
// records after it; a copy in one piece keeps the far side's mtime.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { type Duplex, PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { ChannelMux } from "../../src/place/mirror/channels.js";
import { MirrorFeeder } from "../../src/place/mirror/feeder.js";
import {
  CHUNK,
  encodeFrame,
  FrameDecoder,
  type Header,
  PROTOCOL_VERSION,
} from "../../src/place/mirror/protocol.js";

const dirs: string[] = [];
const feeders: MirrorFeeder[] = [];

afterEach(() => {
  for (const f of feeders.splice(0)) f.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const until = async (f: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !f(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!f()) throw new Error("condition not met");
};

/** A far end of one channel: what the feeder sent (decoded), and a way to answer it. */
interface FarEnd {
  stream: Duplex;
  got: Header[];
}

/** `n` feeders, each on a channel of one link; the far ends answer each hello with a welcome. */
async function linked(n: number): Promise<{ near: string[]; feeders: MirrorFeeder[]; far: FarEnd[] }> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mt-mirror-order-"));
  dirs.push(root);
  const up = new PassThrough();
  const down = new PassThrough();
  const nearMux = new ChannelMux(down, up);
  const farMux = new ChannelMux(up, down);
  const far: FarEnd[] = [];
  farMux.on("channel", (_info, stream: Duplex) => {
    const end: FarEnd = { stream, got: [] };
    const decoder = new FrameDecoder();
    stream.on("data", (b: Buffer) => {
      for (const f of decoder.push(b)) {
        end.got.push(f.header);
        if (f.header.t === "hello")
          stream.write(encodeFrame({ t: "welcome", v: PROTOCOL_VERSION, want: [] }));
      }
    });
    far.push(end);
  });
  const near: string[] = [];
  const made: MirrorFeeder[] = [];
  for (let i = 0; i < n; i++) {
    const dir = path.join(root, `child-${i}`);
    const feeder = new MirrorFeeder(dir);
    const channel = nearMux.openChannel({ dir });
    feeder.attach({ readable: channel, writable: channel });
    near.push(dir);
    made.push(feeder);
    feeders.push(feeder);
  }
  // Connected: each welcome handled, and the feeder's own sync sent behind it.
  await until(() => far.length === n && far.every((e) => e.got.some((h) => h.t === "sync")));
  return { near, feeders: made, far };
}

const completion = (rel: string): Buffer =>
  Buffer.from(`${JSON.stringify({ type: "completion", output: { path: rel } })}\n`);
const put = (rel: string, data: Buffer, mtimeMs?: number): Buffer =>
  encodeFrame({ t: "put", path: rel, size: data.length, off: 0, ...(mtimeMs ? { mtimeMs } : {}) }, data);

describe("mirror feeder: the order of its writes", () => {
  it("each mirror's snapshot, then its completion, before the next mirror's frames of the same read", async () => {
    const {
      near,
      feeders: [a, b],
      far,
    } = await linked(2);
    const seen: string[] = [];
    for (const [i, f] of [a!, b!].entries())
      f.on("events", () => {
        // What is on disk when this mirror's completion is written.
        const other = near[1 - i]!;
        seen.push(
          `${i}: own ${fs.existsSync(path.join(near[i]!, "outputs/t.md"))}, other ${fs.existsSync(path.join(other, "outputs/t.md"))}`,
        );
      });
    // Both mirrors' turns end at once: their frames leave the far side in one write, A's first.
    for (const end of far) {
      end.stream.cork();
      end.stream.write(put("outputs/t.md", Buffer.from("answer")));
      end.stream.write(encodeFrame({ t: "events", at: 0 }, completion("outputs/t.md")));
    }
    process.nextTick(() => {
      for (const end of far) end.stream.uncork();
    });
    await until(() => seen.length === 2);
    expect(seen).toEqual(["0: own true, other false", "1: own true, other true"]);
  });

  it("a file taken in chunks, and a removal, land before the records that follow them", async () => {
    const {
      near,
      feeders: [a],
      far,
    } = await linked(1);
    const dir = near[0]!;
    const big = Buffer.alloc(CHUNK + 10, 0x61);
    const log: string[] = [];
    a!.on("events", () => {
      const st = fs.statSync(path.join(dir, "outputs/big.md"), { throwIfNoEntry: false });
      log.push(`big ${st?.size ?? "absent"}, old ${fs.existsSync(path.join(dir, "outputs/old.md"))}`);
    });
    const stream = far[0]!.stream;
    stream.write(put("outputs/old.md", Buffer.from("old")));
    await until(() => fs.existsSync(path.join(dir, "outputs/old.md")));
    // One read: the big file in two chunks, the old one gone, then the completion naming the big one.
    const frames = Buffer.concat([
      encodeFrame({ t: "put", path: "outputs/big.md", size: big.length, off: 0 }, big.subarray(0, CHUNK)),
      encodeFrame({ t: "put", path: "outputs/big.md", size: big.length, off: CHUNK }, big.subarray(CHUNK)),
      encodeFrame({ t: "del", path: "outputs/old.md" }),
      encodeFrame({ t: "events", at: 0 }, completion("outputs/big.md")),
    ]);
    stream.write(frames);
    await until(() => log.length === 1);
    expect(log).toEqual([`big ${big.length}, old false`]);
    // Once that work is done, a record on its own is written as before, after it.
    stream.write(encodeFrame({ t: "events", at: completion("outputs/big.md").length }, completion("x")));
    await until(() => log.length === 2);
    expect(fs.readFileSync(path.join(dir, "events.ndjson"), "utf8").split("\n").length).toBe(3);
  });

  it("a copy in one piece keeps the far mtime, replaces a stale temp file and follows no symlink there", async () => {
    const {
      near,
      feeders: [a],
      far,
    } = await linked(1);
    const dir = near[0]!;
    const outside = path.join(path.dirname(dir), "outside.md");
    fs.writeFileSync(outside, "untouched");
    // What a crash between write and rename leaves, and a link planted where the temp file goes.
    fs.writeFileSync(path.join(dir, ".output.md.mirror.tmp"), "stale");
    fs.mkdirSync(path.join(dir, "outputs"), { recursive: true });
    fs.symlinkSync(outside, path.join(dir, "outputs", ".t.md.mirror.tmp"));
    const arrived: string[] = [];
    a!.on("inbound", (rel: string) => arrived.push(rel));
    const mtimeMs = Date.parse("2026-01-02T03:04:05.678Z");
    far[0]!.stream.write(
      Buffer.concat([put("output.md", Buffer.from("whole"), mtimeMs), put("outputs/t.md", Buffer.from("t"))]),
    );
    await until(() => arrived.length === 2);
    expect(arrived).toEqual(["output.md", "outputs/t.md"]);
    expect(fs.readFileSync(path.join(dir, "output.md"), "utf8")).toBe("whole");
    expect(Math.round(fs.statSync(path.join(dir, "output.md")).mtimeMs)).toBe(mtimeMs);
    expect(fs.readFileSync(path.join(dir, "outputs/t.md"), "utf8")).toBe("t");
    expect(fs.readFileSync(outside, "utf8")).toBe("untouched");
    expect(fs.readdirSync(dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    expect(fs.readdirSync(path.join(dir, "outputs"))).toEqual(["t.md"]);
  });
});
