import { describe, expect, it } from "vitest";
import { diskFullCode, diskFullWords } from "../../src/base/storage-errors.js";
import { turnFailure } from "../../src/child/disk-full.js";

const errno = (code: string, message: string) =>
  Object.assign(new Error(message), { code, syscall: "write" });

describe("a full disk in words", () => {
  it("names the disk by the directory it holds, from the error, its causes, or a message that kept the code", () => {
    const raw = errno("ENOSPC", "ENOSPC: no space left on device, write");
    expect(diskFullWords(raw, "/s")).toBe("the disk holding /s is full (ENOSPC)");
    expect(diskFullCode(new Error("cannot write output.md: x", { cause: raw }))).toBe("ENOSPC");
    expect(diskFullCode(new Error("cannot write outputs/a.md: ENOSPC: no space left on device"))).toBe(
      "ENOSPC",
    );
    expect(diskFullWords(errno("EDQUOT", "EDQUOT: disk quota exceeded"), "/s")).toBe(
      "the disk holding /s is over its quota (EDQUOT)",
    );
    expect(diskFullWords(errno("EACCES", "EACCES: permission denied"), "/s")).toBeUndefined();
  });

  it("a turn's failure says it once, in front; other failures stay as they are", () => {
    const wrapped = new Error("cannot write output.md: ENOSPC: no space left on device, write");
    const worded = turnFailure(wrapped, "/state");
    expect(worded.message).toBe(
      "the disk holding /state is full (ENOSPC): cannot write output.md: no space left on device, write",
    );
    expect(turnFailure(worded, "/state")).toBe(worded);
    const other = errno("EIO", "EIO: i/o error, write");
    expect(turnFailure(other, "/state")).toBe(other);
  });
});
