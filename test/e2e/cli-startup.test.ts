// A command loads only what it needs: `ls`, `status`, `result` and `send` start from one bundled module
// (dist/cli/bundle/commands.cjs, scripts/bundle.mjs), run from V8's code cache from the second run on
// (src/util/code-cache.ts), and load no package from node_modules — the MCP SDK, ink/react, ajv,
// QuickJS, chokidar, execa, gray-matter and smol-toml load only in the commands that use them. Seen in real
// processes through a module log (test/fixtures/module-log.mjs); how fast that is, bench/run.mjs measures.
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { REPO, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-startup");
const HOOK = pathToFileURL(path.join(REPO, "test", "fixtures", "module-log.mjs")).href;
const BUILTIN_LOG = path.join(REPO, "test", "fixtures", "builtin-log.cjs");
const HEAVY = [
  "@modelcontextprotocol",
  "ink",
  "react",
  "ajv",
  "quickjs",
  "chokidar",
  "execa",
  "gray-matter",
  "smol-toml",
];

let n = 0;
/** Runs the real CLI and returns its exit and every module file it loaded (relative to the repo). */
async function loaded(args: string[]): Promise<{ exitCode: number; stderr: string; files: string[] }> {
  const log = path.join(path.dirname(sb.home), `modules-${n++}.txt`);
  const r = await sb.run(args, {
    env: { NODE_OPTIONS: `--import=${HOOK}`, MUSTER_TEST_MODULE_LOG: log },
  });
  const files = [
    ...new Set(
      fs
        .readFileSync(log, "utf8")
        .split("\n")
        .filter((l) => l && !l.startsWith("node:"))
        .map((l) => path.relative(REPO, l.startsWith("file:") ? new URL(l).pathname : l)),
    ),
  ];
  return { exitCode: r.exitCode, stderr: r.stderr, files };
}

/** Runs the real CLI, stdout into a pipe, and returns the Node built-in modules it loaded. */
async function builtinsLoaded(args: string[]): Promise<string[]> {
  const log = path.join(path.dirname(sb.home), `builtins-${n++}.txt`);
  const r = await sb.run(args, {
    env: { NODE_OPTIONS: `--require=${BUILTIN_LOG}`, MUSTER_TEST_BUILTIN_LOG: log },
  });
  expect(r.exitCode, `${args[0]}: ${r.stderr}`).toBe(0);
  expect(r.stdout.length, args[0]).toBeGreaterThan(0);
  return fs.readFileSync(log, "utf8").split("\n").filter(Boolean);
}

/** The packages (`name` or `@scope/name`) the files belong to. */
function packagesIn(files: string[]): string[] {
  const names = files
    .filter((f) => f.includes("node_modules/"))
    .map((f) => {
      const parts = f.split("node_modules/").pop()!.split("/");
      return parts.slice(0, parts[0]!.startsWith("@") ? 2 : 1).join("/");
    });
  return [...new Set(names)];
}

describe("CLI start-up", () => {
  it("ls, status, result and send load the bundled CLI and no package", async () => {
    const spawned = await sb.json(["spawn", "--wait", "a first turn"]);
    expect(spawned.exitCode, spawned.stderr).toBe(0);
    const id = spawned.data.results[0].id as string;
    for (const args of [["ls"], ["status", id], ["result", id], ["send", id, "a second turn"]]) {
      const r = await loaded(args);
      expect(r.exitCode, `${args[0]}: ${r.stderr}`).toBe(0);
      const packages = packagesIn(r.files);
      expect(
        packages.filter((p) => HEAVY.some((h) => p.startsWith(h))),
        args[0],
      ).toEqual([]);
      expect(packages, args[0]).toEqual([]);
      // Not the module graph tsc emits (dist/cli/main.js and ~160 more), nor main.js and its ~60 chunks: the
      // loader of the one CommonJS bundle (which it compiles itself, so no module log lists it) and nothing else.
      expect(r.files.filter((f) => f.startsWith("dist/")).sort(), args[0]).toEqual([
        "dist/util/code-cache.cjs",
      ]);
    }
    // Nor, writing into a pipe, Node's stream modules (process.stdout loads them: src/cli/stdout.ts), the promises
    // API of node:fs, or node:crypto (~3 ms with its streams) for ids, temporary names or a short answer's hash
    // (src/util/random.ts, sha256.ts).
    for (const args of [["ls"], ["status", id], ["result", id], ["send", id, "a third turn"]]) {
      const builtins = await builtinsLoaded(args);
      expect(
        builtins.filter((m) => /^NativeModule (stream|crypto|internal\/fs\/promises)$/.test(m)),
        args[0],
      ).toEqual([]);
      expect(builtins, args[0]).toContain("NativeModule vm");
    }
    // The first of those runs saved V8's code for the bundle; the next ones started from it (a cache V8 refused
    // would have been written again, as a new file).
    const { build } = JSON.parse(fs.readFileSync(path.join(REPO, "dist/cli/bundle/commands.json"), "utf8"));
    const cacheDir = path.join(sb.env.XDG_CACHE_HOME!, "muster", "code-cache");
    const cache = fs
      .readdirSync(cacheDir)
      .filter((f) => f.startsWith(`commands.cjs-${build}-${process.version}-`));
    expect(cache).toHaveLength(1);
    const inode = fs.statSync(path.join(cacheDir, cache[0]!)).ino;
    const again = await loaded(["status", id]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(fs.statSync(path.join(cacheDir, cache[0]!)).ino).toBe(inode);
    expect((await sb.json(["wait", id])).exitCode).toBe(0);
    expect((await sb.run(["rm", "--force", id])).exitCode).toBe(0);
  });

  it("help, an unknown command and a heavy command run from main.js, with the same words as before", async () => {
    const help = await loaded(["--help"]);
    expect(help.exitCode).toBe(0);
    expect(help.files).toContain("dist/cli/bundle/main.js");
    expect(help.files).not.toContain("dist/util/code-cache.cjs");
    const unknown = await sb.run(["lss"]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'lss'");
    expect(unknown.stderr).toContain("(muster <command> --help for usage)");
    const wf = await loaded(["workflow", "list", "--json"]);
    expect(wf.exitCode, wf.stderr).toBe(0);
    expect(wf.files).toContain("dist/cli/bundle/main.js");
  });

  it("a command that needs a package still loads it (the log sees lazily loaded packages)", async () => {
    const r = await loaded(["agents"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(packagesIn(r.files)).toContain("gray-matter");
  });
});
