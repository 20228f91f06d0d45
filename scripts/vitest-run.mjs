// Runs vitest once (console + JSON report) with a given node binary, inside a private network namespace
// where unshare allows it, and reads the counts back from the report. Shared by npm test and the
// Node-version smoke runs.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

// Inside a private network namespace (loopback only) nothing a test starts can reach the network.
const UP = ["-n", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"];

/** Whether `unshare -n` (with ip to bring loopback up) works here. */
export function canIsolateNetwork() {
  return spawnSync("unshare", [...UP, "true"], { stdio: "ignore" }).status === 0;
}

/** Runs vitest with `node` on `args`; resolves { passed, failed, skipped, failures, status }, where
 * failures names each failed test as "file > test" (or the file alone when it did not load). */
export function runVitest({ root, node = process.execPath, args = [], env = process.env }) {
  const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "muster-test-")), "report.json");
  const vitest = [
    node,
    path.join(root, "node_modules", "vitest", "vitest.mjs"),
    "run",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${report}`,
    ...args,
  ];
  const isolated = canIsolateNetwork();
  if (!isolated)
    console.error(
      "note: unshare -n (with ip for loopback) is not available here; the tests run on the host network (loopback only)",
    );
  const run = isolated
    ? spawnSync("unshare", [...UP, ...vitest], {
        cwd: root,
        stdio: "inherit",
        env: { ...env, MUSTER_TEST_NETNS: "1" },
      })
    : spawnSync(vitest[0], vitest.slice(1), { cwd: root, stdio: "inherit", env });
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failures = [];
  try {
    const r = JSON.parse(fs.readFileSync(report, "utf8"));
    passed = r.numPassedTests;
    failed = r.numFailedTests + (r.numRuntimeErrorTestSuites ?? 0);
    skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
    // A file that failed to load has no tests in the counts: count it as a failure.
    for (const f of r.testResults ?? []) {
      const file = path.relative(root, f.name ?? "");
      const results = f.assertionResults ?? [];
      if (f.status === "failed" && results.length === 0) {
        failed += 1;
        failures.push(`${file} (did not load: ${String(f.message ?? "").split("\n")[0]})`);
      } else if (f.status === "failed" && !results.some((a) => a.status === "failed")) {
        // A beforeAll or afterAll threw (under CI: a test host or engine this machine cannot run; a leftover
        // found after the tests): no test failed, yet the file did. Counted once, named by the file.
        failed += 1;
        failures.push(`${file} (a beforeAll or afterAll failed: see its output above)`);
      }
      for (const a of results) if (a.status === "failed") failures.push(`${file} > ${a.fullName ?? a.title}`);
    }
  } catch {
    failed = Math.max(failed, 1);
    failures.push("(no vitest report was written)");
  }
  fs.rmSync(path.dirname(report), { recursive: true, force: true });
  return {
    passed,
    failed,
    skipped,
    failures,
    status: run.status === 0 && failed === 0 ? 0 : run.status || 1,
  };
}
