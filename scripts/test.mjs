#!/usr/bin/env node
// npm test: build, run vitest (console + JSON report), print the closing "N passed, N failed" line CI reads.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { agentTestFiles, skipNotice } from "./install-lib.mjs";

const root = path.resolve(import.meta.dirname, "..");

const build = spawnSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
if (build.status !== 0) {
  console.log("0 passed, 1 failed");
  process.exit(build.status ?? 1);
}
// The real agent CLIs the e2e tests drive (test/agents) live in a cache outside the repo; installed once.
// MUSTER_SKIP_AGENT_CLIS=1 leaves them out (and their tests, said loudly at the start and the end); CI never sets it.
const skipAgents = process.env.MUSTER_SKIP_AGENT_CLIS === "1";
let skippedFiles = [];
if (skipAgents) {
  const { PINNED_CLIS } = await import("./pinned-clis.mjs");
  skippedFiles = agentTestFiles(
    root,
    PINNED_CLIS.map((c) => c.name),
  );
  console.error(skipNotice(skippedFiles));
} else {
  const install = spawnSync(process.execPath, [path.join(root, "scripts", "install-clis.mjs")], {
    cwd: root,
    stdio: "inherit",
  });
  if (install.status !== 0)
    console.error("some agent CLIs could not be installed: their tests will fail and say so");
}

const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "muster-test-")), "report.json");
const vitest = [
  process.execPath,
  path.join(root, "node_modules", "vitest", "vitest.mjs"),
  "run",
  "--reporter=default",
  "--reporter=json",
  `--outputFile.json=${report}`,
  ...skippedFiles.map((f) => `--exclude=${f}`),
  ...process.argv.slice(2),
];
// Inside a private network namespace (loopback only) nothing a test starts can reach the network; where
// unshare is not allowed (not root), the tests still only talk to 127.0.0.1.
const UP = ["-n", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"];
const isolated = spawnSync("unshare", [...UP, "true"], { stdio: "ignore" }).status === 0;
if (!isolated)
  console.error(
    "note: unshare -n (with ip for loopback) is not available here; the tests run on the host network (loopback only)",
  );
const run = isolated
  ? spawnSync("unshare", [...UP, ...vitest], {
      cwd: root,
      stdio: "inherit",
      env: { ...process.env, MUSTER_TEST_NETNS: "1" },
    })
  : spawnSync(vitest[0], vitest.slice(1), { cwd: root, stdio: "inherit" });

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
if (skipAgents) console.error(skipNotice(skippedFiles));
console.log(
  `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}${skipAgents ? `, ${skippedFiles.length} agent CLI test files not run (MUSTER_SKIP_AGENT_CLIS=1)` : ""}`,
);
process.exit(code);
