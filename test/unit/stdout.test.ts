import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { execa } from "execa";
import { describe, expect, it } from "vitest";

const WRITER = path.join(import.meta.dirname, "..", "fixtures", "stdout-writer.mjs");

/** What the writer printed: `count` blocks of `size` bytes, then "end". */
function expected(count: number, size: number): string {
  let text = "";
  for (let i = 0; i < count; i++) text += `${String(i).padStart(8, "0")}${"x".repeat(size - 9)}\n`;
  return `${text}end\n`;
}

describe("the CLI's stdout writer", () => {
  it("into a pipe: every byte, in order, also past what the pipe holds", async () => {
    const r = await execa(process.execPath, [WRITER, "64", "65536"], { stripFinalNewline: false });
    expect(r.stdout.length).toBe(expected(64, 65536).length);
    expect(r.stdout === expected(64, 65536)).toBe(true);
  });

  it("into a non-blocking pipe that fills (fd 1 shared with a process that set O_NONBLOCK): the stream takes the rest, in order", async () => {
    // perl (part of every Debian and Ubuntu base) sets O_NONBLOCK on the pipe, then runs node on the same fd.
    const script =
      "use Fcntl; my $f = fcntl(STDOUT, F_GETFL, 0) or die; fcntl(STDOUT, F_SETFL, $f | O_NONBLOCK) or die; exec @ARGV or die";
    const r = await execa("perl", ["-e", script, process.execPath, WRITER, "64", "65536"], {
      stripFinalNewline: false,
      reject: false,
    });
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    expect(r.stdout.length).toBe(expected(64, 65536).length);
    expect(r.stdout === expected(64, 65536)).toBe(true);
  });

  it("into a file and into /dev/null", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-stdout-"));
    try {
      const file = path.join(dir, "out.txt");
      const r = await execa(process.execPath, [WRITER, "3", "100"], { stdout: { file }, reject: false });
      expect(r.exitCode).toBe(0);
      expect(fs.readFileSync(file, "utf8")).toBe(expected(3, 100));
      const devNull = await execa(process.execPath, [WRITER, "3", "100"], {
        stdout: "ignore",
        reject: false,
      });
      expect(devNull.exitCode).toBe(0);
      expect(devNull.stderr).toBe("");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
