// `muster doctor` as a user reads it: tmux is required only when new children would start in it; the backend
// row names the backend new children start in and why.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-doctor");
const row = (stdout: string, name: string) => stdout.split("\n").find((l) => l.startsWith(`${name} `)) ?? "";

describe("muster doctor", () => {
  it("without tmux or Zellij: tmux is optional, the pty backend is named, exit 0", async () => {
    const bin = fs.mkdtempSync(path.join(path.dirname(sb.home), "bin-"));
    fs.symlinkSync(process.execPath, path.join(bin, "node"));
    const r = await sb.run(["doctor"], { env: { PATH: bin, MUSTER_BACKEND: "" } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/MISSING|install it/);
    expect(row(r.stdout, "tmux")).toMatch(/^tmux\s+-\s+not found; optional: children run on the pty backend/);
    expect(row(r.stdout, "backend")).toMatch(
      /^backend\s+ok\s+pty \(node-pty \d[^)]*\): new children start here \(the default here;/,
    );
  });

  it("with tmux: the backend row says new children start in tmux", async () => {
    const r = await sb.run(["doctor"], { env: { MUSTER_BACKEND: "" } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(row(r.stdout, "tmux")).toMatch(/^tmux\s+ok\s+\S+ \(private socket /);
    expect(row(r.stdout, "backend")).toMatch(
      /^backend\s+ok\s+tmux: new children start here \(the default here;/,
    );
    const pty = await sb.run(["doctor"], { env: { MUSTER_BACKEND: "pty" } });
    expect(row(pty.stdout, "backend")).toMatch(/^backend\s+ok\s+pty .*\(set by MUSTER_BACKEND;/);
  });

  it("when new children would start in a tmux that is missing, it is required: MISSING, exit 1", async () => {
    const r = await sb.run(["doctor"], {
      env: { MUSTER_BACKEND: "tmux", MUSTER_TMUX_BIN: "/nonexistent/tmux" },
    });
    expect(r.exitCode).toBe(1);
    expect(row(r.stdout, "tmux")).toMatch(/^tmux\s+MISSING\s+.* — install it: apt-get install tmux/);
    expect(row(r.stdout, "backend")).toMatch(/^backend\s+FAILED\s+tmux: /);
  });
});
