import { describe, expect, it } from "vitest";
import { randomBytes } from "../../src/util/random.js";

describe("randomBytes", () => {
  it("gives as many bytes as asked, across the pool's refills, never the same twice", () => {
    const seen = new Set<string>();
    for (const n of [0, 1, 4, 16, 100, 4095, 4096, 4097, 10_000]) {
      const b = randomBytes(n);
      expect(b.length).toBe(n);
      if (n >= 16) {
        const hex = b.toString("hex");
        expect(seen.has(hex)).toBe(false);
        seen.add(hex);
      }
    }
  });

  it("looks uniform: every byte value turns up in 64 KiB, each near its share", () => {
    const counts = new Array<number>(256).fill(0);
    const b = randomBytes(64 * 1024);
    for (const x of b) counts[x]! += 1;
    // 256 per value expected; a sound source stays far inside these bounds (a stuck or zeroed pool does not).
    expect(Math.min(...counts)).toBeGreaterThan(150);
    expect(Math.max(...counts)).toBeLessThan(370);
  });
});
