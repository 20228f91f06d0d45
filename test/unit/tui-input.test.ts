import { describe, expect, it } from "vitest";
import { type InkKey, pressesOf, typedAhead } from "../../src/tui/input.js";

const NONE: InkKey = {
  upArrow: false,
  downArrow: false,
  leftArrow: false,
  rightArrow: false,
  pageUp: false,
  pageDown: false,
  return: false,
  escape: false,
  backspace: false,
  delete: false,
  tab: false,
  ctrl: false,
  meta: false,
};
/** What ink reports for a read that is not one named key: the read's text, no key flags. */
const read = (s: string) => pressesOf(s, NONE);

describe("top input", () => {
  it("a read of several Backspaces is that many Backspaces, never text", () => {
    expect(read("\x7f\x7f")).toEqual([
      { key: "backspace", batched: true },
      { key: "backspace", batched: true },
    ]);
    expect(read("ab\b")).toEqual([
      { text: "ab", batched: true },
      { key: "backspace", batched: true },
    ]);
  });

  it("keys ink names alone keep their names; one character is one unbatched key", () => {
    expect(pressesOf("", { ...NONE, delete: true })).toEqual([{ key: "backspace", batched: false }]);
    expect(pressesOf("", { ...NONE, return: true })).toEqual([{ key: "return", batched: false }]);
    expect(pressesOf("c", { ...NONE, ctrl: true })).toEqual([{ key: "chord", batched: false }]);
    expect(read("y")).toEqual([{ text: "y", batched: false }]);
    expect(read("\n")).toEqual([{ key: "return", batched: false }]);
  });

  it("a line break ending a read is Enter; one with text after it is pasted, a space", () => {
    expect(read("abc\r")).toEqual([
      { text: "abc", batched: true },
      { key: "return", batched: true },
    ]);
    expect(read("one\r\ntwo\tthree")).toEqual([{ text: "one two three", batched: true }]);
  });

  it("no control character reaches text: other C0 are chords, C1 and bidi controls are dropped", () => {
    const ps = read("a\x01b\x85c\u202ed\x9be");
    expect(ps.filter((p) => p.text !== undefined).map((p) => p.text)).toEqual(["a", "bcde"]);
    expect(ps.filter((p) => p.key === "chord")).toHaveLength(1);
    for (const p of read("x\x00\x1f\x7f\x80\x9f\u2066y"))
      if (p.text !== undefined) expect(p.text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2066]/);
  });

  it("typed-ahead text is a key a character, each marked batched", () => {
    expect(typedAhead(read("Hj\n"))).toEqual([
      { text: "H", batched: true },
      { text: "j", batched: true },
      { key: "return", batched: true },
    ]);
    expect(typedAhead(read("q"))).toEqual([{ text: "q", batched: false }]);
  });
});
