#!/usr/bin/env node
// Bundles the child host into one file: it starts with every spawn, and one module loads ~30 ms faster
// than its module graph (measured here). tsc still type-checks and emits everything else.
// The CLI is bundled too (below): its ~160 modules took most of a command's start-up.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = path.resolve(import.meta.dirname, "..");
const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  // CommonJS dependencies (proper-lockfile, gray-matter) require node builtins: give the ESM bundle a real require.
  banner: {
    js: 'import { createRequire as __musterRequire } from "node:module"; const require = __musterRequire(import.meta.url);',
  },
  logLevel: "warning",
};
await build({
  ...common,
  entryPoints: [path.join(root, "src", "child", "host.ts")],
  outfile: path.join(root, "dist", "child", "host.bundle.js"),
  // Mode tui only (the agent's TUI under a pty, its screen model): tui-pty.js stays a file of its own, imported
  // when a TUI starts; bundled in, esbuild would hoist its node-pty and @xterm/headless imports to the top and
  // every host would load them at start (~40 ms).
  external: ["node-pty", "@xterm/headless", "./tui-pty.js"],
});
// The pty holder starts with every pty pane, before its child host can: one CommonJS file starts ~30 ms
// faster than an ES module graph here. node-pty (native) and the lazily loaded screen model stay outside.
await build({
  ...common,
  format: "cjs",
  banner: {},
  entryPoints: [path.join(root, "src", "mux", "pty", "holder.ts")],
  outfile: path.join(root, "dist", "mux", "pty", "holder.cjs"),
  external: ["node-pty", "./screen.js"],
});
// A CommonJS bundle has require; import.meta.url is the file's own URL, as in an ES build.
const withImportMetaUrl = {
  banner: { js: 'const __musterImportMetaUrl = require("node:url").pathToFileURL(__filename).href;' },
  define: { "import.meta.url": "__musterImportMetaUrl" },
};
// The loader of the CLI's code-cached bundle (src/util/code-cache.ts), which bin/muster.js, CommonJS, requires:
// an ES module entry or import costs every command ~5 ms more.
await build({
  ...common,
  format: "cjs",
  banner: {},
  entryPoints: [path.join(root, "src", "util", "code-cache.ts")],
  outfile: path.join(root, "dist", "util", "code-cache.cjs"),
});
// What an agent runs in its pane (done, error, progress, ask): one CommonJS file each, which bin/muster.js requires
// (an ES module graph of six files took ~5 ms more of a start that should be as fast as bare node).
await build({
  ...common,
  format: "cjs",
  ...withImportMetaUrl,
  entryPoints: {
    "child-commands": path.join(root, "src", "cli", "child-commands.ts"),
    ask: path.join(root, "src", "cli", "ask.ts"),
  },
  outdir: path.join(root, "dist", "cli"),
  outExtension: { ".js": ".cjs" },
});
// The CLI (bin/muster.js loads it for every parent-side command): our sources and commander in one module, each
// lazily imported part (MCP server, TUI, workflows…) a chunk of its own, every other package imported at run time
// from node_modules as before, so nothing heavy loads before a command asks for it. `muster ls` started in ~3× a
// bare `node -e 0` from the module graph, ~2× from this (bench/run.mjs measures it). main.js exports the Ctrl-C
// handler its commands use, for bin/muster.js to install once the CLI has loaded.
const BUNDLED_PACKAGES = new Set(["commander"]);
const onlyOurCode = {
  name: "only-our-code",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.importer.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const parts = args.path.split("/");
      const name = args.path.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
      return BUNDLED_PACKAGES.has(name) ? undefined : { external: true };
    });
  },
};
const cliDir = path.join(root, "dist", "cli", "bundle");
const cli = await build({
  ...common,
  entryPoints: { main: path.join(root, "src", "cli", "main.ts") },
  outdir: cliDir,
  splitting: true,
  metafile: true,
  plugins: [onlyOurCode],
});
// The commands that need no package and no lazily loaded part of muster (each row of src/cli/command-table.ts
// not marked heavy) also run from one module of their own, commands.cjs: split into chunks, the code such a
// command loads was ~60 files, and each module an ES import loads costs about as much as 10 KB more of one
// module (a command started ~20 ms later). It is CommonJS so that bin/muster.js can run it from V8's code cache
// (src/util/code-cache.ts), which an ES module cannot be given; bin/muster.js picks it by the names in
// commands.json, which also names the build. It exports its own Ctrl-C handler, as main.js does.
const { COMMAND_MODULES } = await import(
  pathToFileURL(path.join(root, "dist", "cli", "command-table.js")).href
);
const quick = COMMAND_MODULES.filter((m) => !m.heavy);
const srcCli = path.join(root, "src", "cli");
const quickEntry = [
  `import { runProgram } from "./program.ts";`,
  `export { installInterrupt } from "./interrupt.ts";`,
  ...quick.map((m) => `import { ${m.register} } from "./commands/${m.file}.ts";`),
  `const BY_NAME = { ${quick.flatMap((m) => m.names.map((n) => `${JSON.stringify(n)}: ${m.register}`)).join(", ")} };`,
  "export const main = (argv) => runProgram(argv, async () => [BY_NAME[argv[0]]]);",
].join("\n");
const importModuleSrc = path.join(root, "src", "util", "import-module.js");
const quickFile = path.join(cliDir, "commands.cjs");
const quickBuild = await build({
  ...common,
  format: "cjs",
  ...withImportMetaUrl,
  stdin: { contents: quickEntry, resolveDir: srcCli, sourcefile: "commands-entry.ts", loader: "ts" },
  outfile: quickFile,
  metafile: true,
  write: false,
  plugins: [
    {
      name: "loader-import",
      setup(b) {
        b.onResolve({ filter: /\/import-module\.js$/ }, (args) =>
          path.resolve(args.resolveDir, args.path) === importModuleSrc
            ? { path: "muster:import-module", external: true }
            : undefined,
        );
      },
    },
    onlyOurCode,
  ],
});
const quickImports = Object.values(quickBuild.metafile.outputs).flatMap((o) => o.imports);
const atStart = quickImports.filter(
  (i) => i.external && i.kind === "import-statement" && !/^(node:|muster:import-module$)/.test(i.path),
);
if (atStart.length > 0)
  throw new Error(
    `commands.cjs would import ${[...new Set(atStart.map((i) => i.path))].join(", ")} at start: mark its command heavy in src/cli/command-table.ts`,
  );
// A vm.Script cannot import() by itself: each import() of a package it makes (execa, chokidar… loaded when used)
// goes through bin/muster.js's own, `require("muster:import-module")`, which is util/import-module.ts in every
// other build (the one import() whose name is not written out, a backend module's file, calls that module).
// Any other import() would fail only when reached, so the build refuses one.
const lazyPackages = [
  ...new Set(quickImports.filter((i) => i.kind === "dynamic-import" && i.external).map((i) => i.path)),
];
let quickCode = "";
for (const f of quickBuild.outputFiles) {
  if (!f.path.endsWith(".cjs")) {
    fs.writeFileSync(f.path, f.contents);
    continue;
  }
  quickCode = f.text;
  for (const name of lazyPackages) {
    const call = `import(${JSON.stringify(name)})`;
    if (!quickCode.includes(call))
      throw new Error(`bundle: commands.cjs has no ${call} to route through the loader`);
    quickCode = quickCode.replaceAll(
      call,
      `require("muster:import-module").importModule(${JSON.stringify(name)})`,
    );
  }
  quickCode = asciiOnly(oneNamespacePerModule(quickCode));
  fs.writeFileSync(f.path, quickCode);
}
// Read in the raw text: an import( in a string would fail the build too, to be looked at, never pass it.
if (/\bimport\(/.test(quickCode))
  throw new Error(
    "bundle: commands.cjs has an import() the loader cannot serve: use importModule (src/util/import-module.ts)",
  );
const quickBuildId = createHash("sha256").update(quickCode).digest("hex").slice(0, 16);
fs.writeFileSync(
  path.join(cliDir, "commands.json"),
  `${JSON.stringify({ build: quickBuildId, names: quick.flatMap((m) => m.names) })}\n`,
);
// Chunk names change with their content. A running `muster mcp` or `muster top` may still import its own
// build's chunks lazily, so an old chunk goes only once it is a day old.
const current = new Set(
  [...Object.keys(cli.metafile.outputs), ...Object.keys(quickBuild.metafile.outputs)].map((f) =>
    path.resolve(f),
  ), // relative to the cwd
);
current.add(path.join(cliDir, "commands.json"));
for (const f of fs.readdirSync(cliDir)) {
  const file = path.join(cliDir, f);
  if (!current.has(file) && Date.now() - fs.statSync(file).mtimeMs > 24 * 3600_000)
    fs.rmSync(file, { force: true });
}

// What an SSH host runs (src/place/ssh/install.ts ships it): a small tree laid out as the package is, so the
// same code finds its files from its package root there. Each entry is one self-contained file (no
// node_modules on the host); the TUI mode's pty and screen model are left out (they need a native addon).
// `bin/muster.js` there runs only what an agent calls in its pane (done, error, progress, ask).
const remote = path.join(root, "dist", "remote");
fs.rmSync(remote, { recursive: true, force: true });
const remoteEntries = {
  "dist/child/host.bundle": "src/child/host.ts",
  "dist/place/mirror/relay-hub-main": "src/place/mirror/relay-hub-main.ts",
  "dist/runners/mock/agent": "src/runners/mock/agent.ts",
  "dist/cli/child-commands": "src/cli/child-commands.ts",
  "dist/cli/ask": "src/cli/ask.ts",
  "dist/isolation/setup-main": "src/isolation/setup-main.ts",
};
await build({
  ...common,
  sourcemap: false,
  entryPoints: Object.fromEntries(
    Object.entries(remoteEntries).map(([out, src]) => [out, path.join(root, src)]),
  ),
  outdir: remote,
  external: ["node-pty", "@xterm/headless", "./tui-pty.js"],
});
fs.mkdirSync(path.join(remote, "bin"), { recursive: true });
fs.copyFileSync(path.join(root, "scripts", "remote-bin.js"), path.join(remote, "bin", "muster.js"));
const version = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).version;
fs.writeFileSync(
  path.join(remote, "package.json"),
  `${JSON.stringify({ name: "muster-remote", version, type: "module", private: true }, null, 2)}\n`,
);
// The version stamp: the hash of every file shipped, so a host runs exactly this build or is installed again.
const shipped = [];
const walk = (d) => {
  for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const f = path.join(d, e.name);
    if (e.isDirectory()) walk(f);
    else shipped.push(f);
  }
};
walk(remote);
const stamp = createHash("sha256");
for (const f of shipped) stamp.update(path.relative(remote, f)).update("\0").update(fs.readFileSync(f));
fs.writeFileSync(path.join(remote, "STAMP"), `${version}-${stamp.digest("hex").slice(0, 16)}\n`);

/**
 * In a CommonJS bundle each `import * as fs from "node:fs"` of each source module becomes its own
 * `__toESM(require("node:fs"), 1)`, a fresh object with a getter per export: ~160 of them in commands.cjs took
 * ~13 ms of every start. A module's namespace is the same whichever module asks, so esbuild's helper is made to
 * build it once per module and way of asking.
 */
function oneNamespacePerModule(code) {
  const helper = "var __toESM = (mod, isNodeMode, target) =>";
  if (code.split(helper).length !== 2)
    throw new Error("bundle: esbuild's __toESM helper is not where it was expected");
  if (/__toESM\([^()]*(\([^()]*\))?[^()]*,[^()]*,/.test(code))
    throw new Error("bundle: __toESM called with a target");
  const once = [
    "var __musterNamespaces = new WeakMap();",
    "var __toESM = (mod, isNodeMode) => {",
    '  if (mod === null || (typeof mod !== "object" && typeof mod !== "function")) return __toESMEach(mod, isNodeMode);',
    "  let made = __musterNamespaces.get(mod);",
    "  if (made === undefined) __musterNamespaces.set(mod, (made = []));",
    "  return (made[isNodeMode ? 1 : 0] ??= __toESMEach(mod, isNodeMode));",
    "};",
  ].join("\n");
  return code.replace(helper, `${once}\nvar __toESMEach = (mod, isNodeMode, target) =>`);
}

/**
 * The bundle in ASCII, which the loader reads as Latin-1 (src/util/code-cache.ts): decoding ~840 KB of UTF-8 took
 * 2–6 ms of every start, and V8 scans a one-byte string faster. esbuild escapes every other character in strings
 * and template literals already; what it leaves are in comments and regular expression literals, where `\uXXXX`
 * (a pair of them past U+FFFF) means the same character, unless a backslash escapes the character itself: then
 * the build fails.
 */
function asciiOnly(code) {
  return code.replace(/(\\*)([^\x00-\x7f])/gu, (_, slashes, ch) => {
    if (slashes.length % 2 === 1) throw new Error(`bundle: an escaped character beyond ASCII: \\${ch}`);
    const units = ch.length === 1 ? [ch] : [ch[0], ch[1]];
    return slashes + units.map((u) => `\\u${u.charCodeAt(0).toString(16).padStart(4, "0")}`).join("");
  });
}
