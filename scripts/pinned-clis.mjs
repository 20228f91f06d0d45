// The agent CLI versions the e2e tests (test/agents) are proven against; README "Real agent CLIs" lists them.
import * as os from "node:os";
import * as path from "node:path";

export const PINNED_CLIS = [
  { name: "claude", pkg: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" },
  { name: "codex", pkg: "@openai/codex", version: "0.171.0", bin: "codex" },
  { name: "pi", pkg: "@mariozechner/pi-coding-agent", version: "0.73.1", bin: "pi" },
  { name: "opencode", pkg: "opencode-ai", version: "1.18.33", bin: "opencode" },
  { name: "gemini", pkg: "@google/gemini-cli", version: "0.61.0", bin: "gemini" },
];

/** Where the pinned CLIs are installed: $MUSTER_CLI_CACHE, else ~/.cache/muster/clis (outside the repo: 1.4 GB). */
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
