// The agent CLI versions the e2e tests (test/agents) run against: each runner's `binary.tested`
// (the descriptors of src/runners/registry.ts), read from the build (npm test builds first; so does npm install), and the ACP
// adapters the tests run as `runner: acp` children (no muster runner of their own names them).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const registry = path.join(import.meta.dirname, "..", "dist", "runners", "registry.js");
// Thrown, not exited: this module is also imported inside test workers.
if (!fs.existsSync(registry)) throw new Error("muster is not built yet: run npm run build first");
const { getRunner, runnerNames } = await import(registry);

/** Agent Client Protocol adapters driven through the generic `runner: acp` (test/agents/<name>.test.ts). */
export const ACP_ADAPTERS = [
  {
    name: "claude-agent-acp",
    pkg: "@zed-industries/claude-agent-acp",
    version: "0.23.1",
    bin: "claude-agent-acp",
  },
  { name: "codex-acp", pkg: "@zed-industries/codex-acp", version: "0.16.0", bin: "codex-acp" },
];

export const PINNED_CLIS = [
  ...runnerNames()
    .map((name) => getRunner(name))
    .filter((r) => r.binary?.tested)
    .map((r) => ({
      name: r.name,
      pkg: r.binary.tested.pkg,
      version: r.binary.tested.version,
      bin: r.binary.command,
    })),
  ...ACP_ADAPTERS,
];

/** Where the pinned CLIs are installed: $MUSTER_CLI_CACHE, else ~/.cache/muster/clis (outside the repo: 1.8 GB). */
export function cliCache(env = process.env) {
  if (env.MUSTER_CLI_CACHE) return path.resolve(env.MUSTER_CLI_CACHE);
  const base = env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  return path.join(base, "muster", "clis");
}

/** The bin folder of one pinned CLI inside the cache. */
export function cliBinDir(name, env = process.env) {
  const cli = PINNED_CLIS.find((c) => c.name === name);
  if (!cli) throw new Error(`unknown CLI ${name}`);
  return path.join(cliCache(env), `${cli.name}-${cli.version}`, "node_modules", ".bin");
}
