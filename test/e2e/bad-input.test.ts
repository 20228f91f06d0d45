import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-bad");
let known = "";
beforeAll(async () => {
  const r = (await sb.json(["spawn", "--wait", "one real child"])).data;
  known = r.spawned.id;
  // The turn settles before its host has reaped the runner and given back its run slot:
  // the tree is compared only once the host is idle, so the ticket's removal is not taken for a change.
  const ticket = path.join(r.results[0].artifactDir, "..", "..", "slots", `${known}.json`);
  await until(() => !fs.existsSync(ticket));
});

/** Everything under the state root, to prove a rejected command created nothing. */
function snapshotTree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(`${path.relative(dir, p)}:${fs.statSync(p).size}`);
    }
  };
  walk(dir);
  return out.sort();
}

describe("bad input: one-line error, exit 2, nothing created", () => {
  const cases: [string, () => string[]][] = [
    ["unknown child id", () => ["status", "0123abcd-0000-7000-8000-000000000000"]],
    ["unknown id prefix for wait", () => ["wait", "ffffffff"]],
    ["id with ../", () => ["result", "../../etc/passwd"]],
    ["id with / for send", () => ["send", "abcd/../x", "hi"]],
    ["unknown agent", () => ["spawn", "--agent", "no-such-agent", "task"]],
    ["agent name with a path", () => ["spawn", "--agent", "../mock", "task"]],
    ["empty prompt", () => ["spawn", ""]],
    ["blank prompt", () => ["spawn", "  \n\t "]],
    ["empty follow-up", () => ["send", known, ""]],
    ["bad duration", () => ["wait", known, "--timeout", "soon"]],
    ["unknown option", () => ["ls", "--frobnicate"]],
    ["unknown command", () => ["frobnicate"]],
    ["bad --lines", () => ["capture", known, "--lines", "0"]],
  ];
  for (const [name, args] of cases) {
    it(name, async () => {
      const before = snapshotTree(sb.home);
      const r = await sb.run(args());
      expect(r.exitCode).toBe(2);
      expect(r.stdout).toBe("");
      const errLines = r.stderr.trim().split("\n");
      expect(errLines[0]).toMatch(/^(muster: |error: )/);
      expect(errLines.filter((l) => !l.startsWith("(")).length).toBeLessThanOrEqual(2);
      expect(snapshotTree(sb.home)).toEqual(before);
    });
  }
  it("with --json the error is one JSON document on stdout", async () => {
    const r = await sb.run(["status", "../x", "--json"]);
    expect(r.exitCode).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({
      error: { code: "invalid_id", message: expect.stringContaining("invalid child id") },
    });
  });
});
