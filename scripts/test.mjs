#!/usr/bin/env node
// npm test: build (when stale), run vitest (scripts/vitest-run.mjs), print the closing "N passed, N failed" line CI reads.
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { agentTestFiles, skipNotice } from "./install-lib.mjs";
import { runVitest } from "./vitest-run.mjs";

const root = path.resolve(import.meta.dirname, "..");

// Only when dist/ is not the build of the sources as they are (the stamp's hash): CI's npm ci has just built it.
const build = spawnSync(process.execPath, [path.join(root, "scripts", "build.mjs"), "--if-stale"], {
  cwd: root,
  stdio: "inherit",
});
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
// The other pinned tools the suite runs (the Node LTS and the MCP conformance suite, test/e2e/mcp-http.test.ts),
// fetched here with the CLIs rather than by a test midway, where a network hiccup would fail it.
{
  const { NODE_VERSIONS, pinnedConformance, pinnedNode } = await import("./pinned-tools.mjs");
  for (const [what, r] of [
    [`Node ${NODE_VERSIONS[0].version}`, await pinnedNode(NODE_VERSIONS[0])],
    ["the MCP conformance suite", await pinnedConformance()],
  ])
    if (!r.ok)
      console.error(
        `${what} could not be installed (${r.error}): the tests that run it will fail and say so`,
      );
}

const {
  passed,
  failed,
  skipped,
  failures,
  status: code,
} = runVitest({
  root,
  args: [...skippedFiles.map((f) => `--exclude=${f}`), ...process.argv.slice(2)],
});
if (skipAgents) console.error(skipNotice(skippedFiles));
// Named again at the very end, where a log's tail (all CI keeps of a long run) still shows them.
for (const f of failures) console.log(`FAILED: ${f}`);
console.log(
  `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}${skipAgents ? `, ${skippedFiles.length} agent CLI test files not run (MUSTER_SKIP_AGENT_CLIS=1)` : ""}`,
);
process.exit(code);
