#!/usr/bin/env node
// npm test: build, run vitest (console + JSON report), print the closing "N passed, N failed" line CI reads.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const npx = (args) => spawnSync("npx", args, { cwd: root, stdio: "inherit" });

const build = spawnSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
if (build.status !== 0) {
  console.log("0 passed, 1 failed");
  process.exit(build.status ?? 1);
}
const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "muster-test-")), "report.json");
const run = npx([
  "vitest",
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${report}`,
  ...process.argv.slice(2),
]);

let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const r = JSON.parse(fs.readFileSync(report, "utf8"));
  passed = r.numPassedTests;
  failed = r.numFailedTests + (r.numRuntimeErrorTestSuites ?? 0);
  skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  // A file that failed to load has no tests in the counts: count it as a failure.
  for (const f of r.testResults ?? [])
    if (f.status === "failed" && (f.assertionResults ?? []).length === 0) failed += 1;
} catch {
  failed = Math.max(failed, 1);
}
const code = run.status === 0 && failed === 0 ? 0 : run.status || 1;
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(code);
