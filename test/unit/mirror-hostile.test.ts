// A peer that breaks the mirror protocol ends the connection with one line, and nothing is written outside
// the artifact dir: a real relay process fed bad bytes, and a real feeder fed by a hostile relay fixture.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MirrorFeeder } from "../../src/place/mirror/feeder.js";
import { encodeFrame, PROTOCOL_VERSION } from "../../src/place/mirror/protocol.js";
import { killAll, startRelay } from "../helpers/mirror.js";

const HOSTILE = path.resolve("test/fixtures/mirror-hostile-relay.mjs");
const EMPTY_SHA = createHash("sha256").update(Buffer.alloc(0)).digest("hex");
const dirs: string[] = [];

function sandbox(): { root: string; dir: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "mt-mirror-bad-"));
  dirs.push(root);
  const dir = path.join(root, "child");
  fs.mkdirSync(dir);
  return { root, dir };
}

/** Every path under root (relative), to prove a bad frame wrote nothing. */
function tree(root: string): string[] {
  return (fs.readdirSync(root, { recursive: true }) as string[]).sort();
}

const rawFrame = (header: string, payload = Buffer.alloc(0)): Buffer => {
  const head = Buffer.from(header);
  const lens = Buffer.alloc(8);
  lens.writeUInt32BE(head.length, 0);
  lens.writeUInt32BE(payload.length, 4);
  return Buffer.concat([lens, head, payload]);
};
const hello = encodeFrame({
  t: "hello",
  v: PROTOCOL_VERSION,
  events: { size: 0, tail: EMPTY_SHA },
  inbound: {},
  outbound: {},
});
const put = (p: string): Buffer => encodeFrame({ t: "put", path: p, size: 3, off: 0 }, Buffer.from("bad"));

afterEach(() => {
  killAll();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("mirror relay: a hostile mirror", () => {
  const cases: [string, () => Buffer, RegExp][] = [
    [
      "an oversized length",
      () => Buffer.from([0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 0]),
      /header length .* out of bounds/,
    ],
    ["a payload over the limit", () => Buffer.from([0, 0, 0, 2, 0x7f, 0, 0, 0]), /payload length .* over/],
    ["a header that is not JSON", () => rawFrame("{nope"), /not valid JSON/],
    ["a put before the hello", () => put("inbox/000000000000001-x.json"), /put frame before hello/],
    ["a path with ..", () => Buffer.concat([hello, put("../escape.json")]), /refusing outbound path/],
    [
      "an absolute path",
      () => Buffer.concat([hello, put(`${os.tmpdir()}/mirror-abs.json`)]),
      /refusing outbound/,
    ],
    [
      "a .. inside a folder",
      () => Buffer.concat([hello, put("inbox/../../x.json")]),
      /refusing outbound path/,
    ],
    [
      "an inbound file pushed out",
      () => Buffer.concat([hello, put("outputs/x.md")]),
      /refusing outbound path/,
    ],
  ];
  for (const [name, bytes, why] of cases)
    it(`${name}: one line on stderr, exit 2, nothing written`, async () => {
      const { root, dir } = sandbox();
      const before = tree(root);
      const relay = startRelay(dir);
      relay.proc.stdin!.write(bytes());
      expect(await relay.exited).toBe(2);
      const lines = relay.stderr().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^mirror relay: /);
      expect(lines[0]).toMatch(why);
      expect(tree(root)).toEqual(before);
      expect(fs.existsSync(`${os.tmpdir()}/mirror-abs.json`)).toBe(false);
    });

  it("an inbox/ that is a symlink out of the dir: refused, nothing written where it points", async () => {
    const { root, dir } = sandbox();
    fs.mkdirSync(path.join(root, "elsewhere"));
    fs.symlinkSync(path.join(root, "elsewhere"), path.join(dir, "inbox"));
    const relay = startRelay(dir);
    relay.proc.stdin!.write(Buffer.concat([hello, put("inbox/000000000000001-x.json")]));
    expect(await relay.exited).toBe(2);
    expect(relay.stderr()).toMatch(/^mirror relay: refusing to write under inbox\/: not a folder\n$/);
    expect(fs.readdirSync(path.join(root, "elsewhere"))).toEqual([]);
  });

  it("a folder whose parent is not there: one line, exit 2", async () => {
    const { root } = sandbox();
    const relay = startRelay(path.join(root, "nope", "child"));
    expect(await relay.exited).toBe(2);
    expect(relay.stderr()).toMatch(/^mirror relay: .*nope is not a folder\n$/);
  });
});

describe("mirror feeder: a hostile relay", () => {
  const cases: [string, RegExp][] = [
    ["early", /events frame before the welcome/],
    ["escape", /refusing inbound path "\.\.\/outside\.md"/],
    ["absolute", /refusing inbound path/],
    ["oversize", /header length .* out of bounds/],
    ["badjson", /not valid JSON/],
    ["offset", /events from byte 12345, but the mirror has 0/],
  ];
  for (const [kind, why] of cases)
    it(`${kind}: closed with the reason, nothing written outside the mirror`, async () => {
      const { root, dir } = sandbox();
      const relay = startRelay(dir, [HOSTILE, kind]);
      const feeder = new MirrorFeeder(dir);
      const closed = new Promise<string>((resolve) => feeder.once("closed", resolve));
      feeder.attach({ readable: relay.proc.stdout!, writable: relay.proc.stdin! });
      const reason = await closed;
      expect(reason).toMatch(why);
      expect(reason).not.toContain("\n");
      expect(await relay.exited).toBe(0);
      expect(fs.readdirSync(root)).toEqual(["child"]);
      expect(fs.existsSync("/tmp/mirror-absolute.md")).toBe(false);
      expect(fs.statSync(path.join(dir, "events.ndjson")).size).toBe(0);
    });
});
