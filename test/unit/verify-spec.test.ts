import { describe, expect, it } from "vitest";
import { verifySpecFor } from "../../src/core/verify.js";
import { parseProfile } from "../../src/profiles/parse.js";

describe("an acceptance check, from the call over the profile", () => {
  it("a command line runs under sh -c exactly as written; an argv runs as it is", () => {
    expect(verifySpecFor({ command: "npm test -- --bail" }, undefined)).toEqual({
      argv: ["sh", "-c", "npm test -- --bail"],
      command: "npm test -- --bail",
      retries: 0,
      timeoutMs: 600_000,
    });
    expect(verifySpecFor({ command: ["node", "--test", "a b.js"] }, undefined)?.argv).toEqual([
      "node",
      "--test",
      "a b.js",
    ]);
    expect(verifySpecFor(undefined, undefined)).toBeUndefined();
  });

  it("the call's fields win one by one; retries or a timeout alone need a command somewhere", () => {
    const profile = { command: "make check", retries: 2, timeoutMs: 60_000 };
    expect(verifySpecFor({ retries: 0 }, profile)).toMatchObject({
      command: "make check",
      retries: 0,
      timeoutMs: 60_000,
    });
    expect(verifySpecFor({ command: "true" }, profile)).toMatchObject({ command: "true", retries: 2 });
    expect(() => verifySpecFor({ retries: 1 }, undefined)).toThrow(/give verify a command/);
  });

  it("refuses what cannot run or loops: empty, NUL bytes, retries out of range, a bad bound", () => {
    for (const bad of [
      { command: " " },
      { command: "a\0b" },
      { command: [] as string[] },
      { command: [""] },
      { command: "x", retries: -1 },
      { command: "x", retries: 11 },
      { command: "x", retries: 1.5 },
      { command: "x", timeoutMs: 0 },
      { command: "x", timeoutMs: 1e12 },
    ])
      expect(() => verifySpecFor(bad, undefined), JSON.stringify(bad)).toThrow();
  });

  it("a profile's verify: a line, a list, or a map; a bad field is a warning, not a refusal of the profile", () => {
    const read = (yaml: string) => parseProfile("/p/a.md", `---\nname: a\n${yaml}\n---\n`);
    expect(read("verify: npm test").verify).toEqual({ command: "npm test" });
    expect(read("verify: [make, check]").verify).toEqual({ command: ["make", "check"] });
    expect(read("verify:\n  command: npm test\n  retries: 2\n  timeout: 5m").verify).toEqual({
      command: "npm test",
      retries: 2,
      timeoutMs: 300_000,
    });
    const bad = read("verify:\n  command: npm test\n  retries: lots\n  colour: red");
    expect(bad.verify).toEqual({ command: "npm test" });
    expect(bad.warnings.join("\n")).toMatch(/verify\.retries/);
    expect(bad.warnings.join("\n")).toMatch(/verify\.colour/);
    expect(read("verify:\n  retries: 1").verify).toBeUndefined();
  });
});
