import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { REPO } from "../helpers/cli.js";
import { readsOfNode } from "../helpers/strace.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** The pread64 calls a trace shows on `file`. */
const preadsOf = (trace: string, file: string): number =>
  trace.split("\n").filter((l) => l.includes(`pread64(`) && l.includes(`<${file}>`)).length;

describe("a held tail's read after a hint", () => {
  it("is one pread per append: a short read is the end of what is written, not asked for again", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-tail-reads-"));
    dirs.push(dir);
    const log = path.join(dir, "events.ndjson");
    const script = path.join(dir, "tail.mjs");
    const reader = pathToFileURL(path.join(REPO, "dist", "artifacts", "reader.js")).href;
    // What a watcher does: each append is followed by a hint, and the hint by a read to the end.
    fs.writeFileSync(
      script,
      [
        `import * as fs from "node:fs";`,
        `import { NdjsonReader } from ${JSON.stringify(reader)};`,
        `const log = ${JSON.stringify(log)};`,
        `fs.writeFileSync(log, '{"n":0}\\n');`,
        "const r = new NdjsonReader(log).hold();",
        "let n = r.readNew().length;",
        "for (let i = 1; i <= 20; i++) {",
        `  fs.appendFileSync(log, '{"n":' + i + '}\\n');`,
        "  n += r.readNew().length;",
        "}",
        "r.close();",
        "if (n !== 21) throw new Error('read ' + n + ' of 21 records');",
      ].join("\n"),
    );
    const trace = readsOfNode([script], { cwd: dir, env: process.env });
    const preads = preadsOf(trace, log);
    // The first read opens the log by its path; each of the 20 hints after it is one pread (two before).
    expect(preads).toBeGreaterThanOrEqual(20);
    expect(preads).toBeLessThanOrEqual(22);
  });
});
