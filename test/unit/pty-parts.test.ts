/** The pty backend's pure parts: socket framing, the detach key, and when pty is chosen by default. */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { autoBackendName, onPath } from "../../src/mux/auto.js";
import { detachByte } from "../../src/mux/pty/keys.js";
import { clampSize, encodeFrame, FRAME, FrameReader, MAX_FRAME } from "../../src/mux/pty/protocol.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-ptyparts-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("frames on the holder's socket", () => {
  it("any frames, cut anywhere, come out whole and in order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 255 }), fc.uint8Array({ maxLength: 300 })), {
          maxLength: 8,
        }),
        fc.array(fc.integer({ min: 1, max: 64 }), { minLength: 1, maxLength: 20 }),
        (frames, cuts) => {
          const wire = Buffer.concat(frames.map(([t, p]) => encodeFrame(t, Buffer.from(p))));
          const reader = new FrameReader();
          const got: [number, number[]][] = [];
          let at = 0;
          for (let i = 0; at < wire.length; i++) {
            const n = cuts[i % cuts.length]!;
            for (const f of reader.push(wire.subarray(at, at + n))) got.push([f.type, [...f.payload]]);
            at += n;
          }
          expect(got).toEqual(frames.map(([t, p]) => [t, [...p]]));
        },
      ),
    );
  });

  it("a frame announced over the limit is refused before it is buffered", () => {
    const head = Buffer.alloc(5);
    head.writeUInt8(FRAME.INPUT, 0);
    head.writeUInt32BE(MAX_FRAME + 1, 1);
    expect(() => new FrameReader().push(head)).toThrow(/over the/);
  });

  it("sizes outside what a terminal takes fall back", () => {
    expect(clampSize(100, 80)).toBe(100);
    for (const bad of [0, 1, 1001, 12.5, "90", null, undefined, -3]) expect(clampSize(bad, 80)).toBe(80);
  });
});

describe("the detach key (MUSTER_DETACH_KEY)", () => {
  it("is Ctrl-\\ by default; ^X and C-x name control keys; one character is itself", () => {
    expect(detachByte(undefined)).toBe(0x1c);
    expect(detachByte("")).toBe(0x1c);
    expect(detachByte("^]")).toBe(0x1d);
    expect(detachByte("C-a")).toBe(0x01);
    expect(detachByte("^\\")).toBe(0x1c);
    expect(detachByte("q")).toBe(0x71);
    expect(() => detachByte("ctrl+q")).toThrow(/MUSTER_DETACH_KEY/);
  });
});

describe("the backend new children start in, when MUSTER_BACKEND does not say", () => {
  const bin = (name: string, files: string[]) => {
    const d = path.join(dir, name);
    fs.mkdirSync(d, { recursive: true });
    for (const f of files) fs.writeFileSync(path.join(d, f), "#!/bin/sh\n", { mode: 0o755 });
    return d;
  };
  const has = (names: string[]) => (n: string) => names.includes(n);

  it("tmux where it is on PATH (or MUSTER_TMUX_BIN names it); pty with neither tmux nor Zellij", () => {
    const withTmux = bin("t", ["tmux"]);
    const none = bin("n", ["node"]);
    expect(autoBackendName({ PATH: `${none}:${withTmux}` }, has(["tmux", "pty"]))).toBe("tmux");
    expect(autoBackendName({ PATH: none }, has(["tmux", "pty"]))).toBe("pty");
    expect(autoBackendName({ PATH: none, MUSTER_TMUX_BIN: "/opt/tmux" }, has(["tmux", "pty"]))).toBe("tmux");
    // A file that is not executable is not a tmux.
    fs.writeFileSync(path.join(none, "tmux"), "", { mode: 0o644 });
    expect(onPath("tmux", { PATH: none })).toBe(false);
    // Relative PATH entries are not searched (they depend on the cwd).
    expect(onPath("tmux", { PATH: "t" })).toBe(false);
  });

  it("Zellij only when a backend for it is registered; else pty", () => {
    const z = bin("z", ["zellij"]);
    expect(autoBackendName({ PATH: z }, has(["tmux", "pty", "zellij"]))).toBe("zellij");
    expect(autoBackendName({ PATH: bin("e", []), ZELLIJ: "0" }, has(["tmux", "pty", "zellij"]))).toBe(
      "zellij",
    );
    expect(autoBackendName({ PATH: z }, has(["tmux", "pty"]))).toBe("pty");
    expect(autoBackendName({ PATH: z }, has(["tmux"]))).toBe("tmux");
    // Inside a Zellij session Zellij wins over a tmux on PATH.
    const t = bin("t2", ["tmux"]);
    expect(autoBackendName({ PATH: t, ZELLIJ: "0" }, has(["tmux", "pty", "zellij"]))).toBe("zellij");
    expect(autoBackendName({ PATH: t, ZELLIJ: "0" }, has(["tmux", "pty"]))).toBe("tmux");
  });
});
