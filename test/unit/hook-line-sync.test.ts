// A TUI child's hook lines only carry records to the host on the same machine: they are written without an
// fsync (a CLI waits for its hook before the tool runs; Pi's extension and OpenCode's plugin write them on the
// agent's own event loop).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { REPO } from "../helpers/cli.js";
import { fsyncsOfNode } from "../helpers/strace.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function hookFile(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-hook-sync-"));
  dirs.push(dir);
  return path.join(dir, "tui-hooks.ndjson");
}

const lines = (file: string): unknown[] =>
  fs
    .readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("TUI hook lines", () => {
  it("the hook command appends its line with no fsync", () => {
    const file = hookFile();
    const hook = path.join(REPO, "dist", "runners", "tui", "hook.js");
    const fsyncs = fsyncsOfNode([hook, file, "PreToolUse"], JSON.stringify({ tool_name: "Read" }));
    expect(lines(file)).toEqual([{ event: "PreToolUse", payload: { tool_name: "Read" } }]);
    expect(fsyncs).toBe(0);
  });

  it("the in-process writer (Pi's extension, OpenCode's plugin) appends its lines with no fsync", () => {
    const file = hookFile();
    const module = path.join(REPO, "dist", "runners", "tui", "hook-line.js");
    const script = `const { appendHookLine } = await import(${JSON.stringify(module)});
for (const e of ["tool_call", "tool_result", "agent_end"]) appendHookLine(${JSON.stringify(file)}, e, { n: 1 });`;
    const fsyncs = fsyncsOfNode(["--input-type=module", "-e", script]);
    expect(lines(file)).toEqual(
      ["tool_call", "tool_result", "agent_end"].map((event) => ({ event, payload: { n: 1 } })),
    );
    expect(fsyncs).toBe(0);
  });
});
