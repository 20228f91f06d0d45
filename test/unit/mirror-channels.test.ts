// Many streams over one link (src/place/mirror/channels.ts): two ChannelMux ends joined by a real pipe pair
// in this process; each channel's bytes arrive whole and in order, ends are per channel, a broken link ends
// every channel, and a hostile frame ends the link instead of being buffered.
import { type Duplex, PassThrough, Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { ChannelMux } from "../../src/place/mirror/channels.js";

function joined() {
  const up = new PassThrough();
  const down = new PassThrough();
  const near = new ChannelMux(down, up);
  const far = new ChannelMux(up, down);
  const opened: { info: Record<string, unknown>; stream: Duplex }[] = [];
  far.on("channel", (info, stream) => opened.push({ info, stream }));
  return { up, down, near, far, opened };
}

const collect = (s: Duplex) =>
  new Promise<Buffer>((resolve) => {
    const parts: Buffer[] = [];
    s.on("data", (b: Buffer) => parts.push(b));
    s.on("end", () => resolve(Buffer.concat(parts)));
  });
const until = async (f: () => boolean) => {
  for (let i = 0; i < 200 && !f(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!f()) throw new Error("condition not met");
};

/** A link that records how many frames each of its writes carried. */
function countingLink(): { writes: number[]; link: Writable } {
  const writes: number[] = [];
  const link = new Writable({
    write(_chunk, _enc, cb) {
      writes.push(1);
      cb();
    },
    writev(chunks, cb) {
      writes.push(chunks.length);
      cb();
    },
  });
  return { writes, link };
}

describe("channels over one link", () => {
  it("two channels carry their own bytes both ways, in order, and end one at a time", async () => {
    const { near, opened } = joined();
    const a = near.openChannel({ dir: "/a" });
    const b = near.openChannel({ dir: "/b" });
    await until(() => opened.length === 2);
    expect(opened.map((o) => o.info)).toEqual([{ dir: "/a" }, { dir: "/b" }]);
    const [fa, fb] = opened.map((o) => o.stream) as [Duplex, Duplex];
    const big = Buffer.alloc(300 * 1024, 7); // more than one piece
    const gotA = collect(fa);
    const gotB = collect(fb);
    a.write(Buffer.from("a1"));
    b.write(big);
    a.write(Buffer.from("a2"));
    a.end();
    expect((await gotA).toString()).toBe("a1a2");
    fa.end();
    // b is still open after a ended, and the far side answers on it.
    const back = collect(b);
    fb.write(Buffer.from("from far"));
    fb.end();
    b.end();
    expect((await gotB).equals(big)).toBe(true);
    expect((await back).toString()).toBe("from far");
    // A channel is forgotten once both sides ended it.
    await until(() => near.open === 0);
  });

  it("a link that ends ends every channel on both sides", async () => {
    const { up, down, near, far, opened } = joined();
    const a = near.openChannel({ dir: "/a" });
    await until(() => opened.length === 1);
    const nearClosed = new Promise((r) => a.once("close", r));
    const farClosed = new Promise((r) => opened[0]!.stream.once("close", r));
    const reasons: string[] = [];
    near.on("closed", (w: string) => reasons.push(w));
    up.end();
    down.end();
    await Promise.all([nearClosed, farClosed]);
    expect(near.closed && far.closed).toBe(true);
    expect(reasons).toEqual(["the link ended"]);
  });

  it("a frame of an unknown kind, an oversized one, or an open from the far side ends the link", async () => {
    for (const frame of [
      Buffer.from([0, 0, 0, 1, 9, 0, 0, 0, 0]),
      Buffer.from([0, 0, 0, 1, 2, 0x7f, 0xff, 0xff, 0xff]),
      Buffer.from([0, 0, 0, 1, 1, 0, 0, 0, 2, 0x7b, 0x7d]),
    ]) {
      const down = new PassThrough();
      const near = new ChannelMux(down, new PassThrough());
      const why = new Promise<string>((r) => near.once("closed", r));
      down.write(frame);
      expect(await why).toMatch(/^link: /);
    }
  });

  it("the frames of one turn of the event loop leave in one write (no small write behind an unacknowledged one)", async () => {
    const { writes, link } = countingLink();
    const near = new ChannelMux(new PassThrough(), link);
    const a = near.openChannel({ dir: "/a" });
    a.write(Buffer.from("hello"));
    await Promise.resolve(); // a frame written after an await of the same turn goes along too
    a.write(Buffer.from("sync"));
    await until(() => writes.length > 0);
    expect(writes).toEqual([3]);
    // The next turn's frames are a write of their own.
    a.write(Buffer.from("later"));
    await until(() => writes.length > 1);
    expect(writes).toEqual([3, 1]);
  });

  it("a turn's frames leave when its promise chains settle, not when the event loop next reaches setImmediate", async () => {
    // A relay hub watching many busy dirs stays in the loop's poll phase while inotify keeps handing it events;
    // frames held for the check phase waited there until the burst was over.
    const { writes, link } = countingLink();
    // Queued before any frame: what has left by the loop's next check phase.
    const atCheck = new Promise<number[]>((resolve) => setImmediate(() => resolve([...writes])));
    const near = new ChannelMux(new PassThrough(), link);
    const a = near.openChannel({ dir: "/a" });
    const send = async (): Promise<void> => {
      for (const part of ["put", "put", "events"]) {
        a.write(Buffer.from(part));
        await new Promise<void>((r) => queueMicrotask(r)); // a pass awaits each frame it sends
      }
    };
    await send();
    expect(await atCheck).toEqual([4]);
  });
});
