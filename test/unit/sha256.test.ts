import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/util/sha256.js";

const node = (s: string) => createHash("sha256").update(s, "utf8").digest("hex");

describe("sha256Hex", () => {
  it("gives the FIPS 180-4 test vectors", () => {
    expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
  });

  it("agrees with node:crypto at every length around the block and padding edges", () => {
    for (let n = 0; n <= 200; n++) {
      const s = "x".repeat(n);
      expect(sha256Hex(s), `length ${n}`).toBe(node(s));
    }
  });

  it("agrees with node:crypto on random and multi-byte texts (paths as users have them)", () => {
    for (let i = 0; i < 300; i++) {
      const s = randomBytes(1 + (i % 97)).toString("latin1") + "/home/ユーザー/проект/😀".slice(0, i % 23);
      expect(sha256Hex(s)).toBe(node(s));
    }
  });

  it("agrees with node:crypto on bytes, as a snapshot's are read back", () => {
    for (let n = 0; n <= 2100; n += 37) {
      const b = randomBytes(n);
      expect(sha256Hex(b), `length ${n}`).toBe(createHash("sha256").update(b).digest("hex"));
    }
  });

  it("refuses a long text rather than be slow on it", () => {
    expect(() => sha256Hex("x".repeat(64 * 1024 + 1))).toThrow(/short texts/);
  });
});
