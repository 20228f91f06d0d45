import { describe, expect, it } from "vitest";
import { visible, visibleLine } from "../../src/cli/sanitize.js";

describe("visible: child text made inert for a terminal", () => {
  it("shows every escape instead of obeying it, and hides nothing", () => {
    expect(visible("a\x1b]52;c;aGk=\x07b")).toBe("a␛]52;c;aGk=␇b");
    expect(visible("\x1b]0;title\x1b\\")).toBe("␛]0;title␛\\");
    expect(visible("\x1b[2J\x1bPq#0\x1b\\")).toBe("␛[2J␛Pq#0␛\\");
    expect(visible("\x00\x08\x7f")).toBe("␀␈␡");
    expect(visible("x\u009b2J\u0090y")).toBe("x<U+009B>2J<U+0090>y");
    expect(visible("abc\u202edcba")).toBe("abc<U+202E>dcba");
  });

  it("keeps LF and TAB in multi-line text, turns CRLF into LF and shows a bare CR", () => {
    expect(visible("one\r\ntwo\tcol\rback")).toBe("one\ntwo\tcol␍back");
    expect(visible("plain ünïcødé → ok 🙂")).toBe("plain ünïcødé → ok 🙂");
  });

  it("visibleLine puts everything on one line", () => {
    expect(visibleLine("a\nb\tc\r\nd\x1b[1m")).toBe("a b c d␛[1m");
  });
});
