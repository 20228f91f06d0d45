#!/usr/bin/env node
// Entry point. Child-side commands (run by agents inside panes) load one small module; the rest load the CLI.
// CommonJS (bin/package.json): an ES module entry costs every command ~5 ms more to start.
const { readFileSync } = require("node:fs");
const path = require("node:path");

const argv = process.argv.slice(2);
const CHILD_COMMANDS = new Set(["done", "error", "progress"]);
const dist = path.join(__dirname, "..", "dist");
// A reader that went away (`muster --help | head`) ends the command quietly, as SIGPIPE ends other tools;
// Node ignores SIGPIPE, so without this the failed write surfaces as an unhandled EPIPE stack trace. Attached
// when a stream is made, not before: making one loads Node's stream modules, which a command writing to fd 1
// itself (src/cli/stdout.ts) never needs.
for (const name of ["stdout", "stderr"]) {
  const own = Object.getOwnPropertyDescriptor(process, name);
  let stream;
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable: own.enumerable,
    get() {
      if (stream) return stream;
      stream = own.get.call(process);
      stream.on("error", (e) => {
        if (e.code !== "EPIPE") throw e;
        process.exit(0);
      });
      return stream;
    },
  });
}

/** The CLI's exit code for argv. */
async function run() {
  if (argv[0] === "ask") {
    // Blocks until the parent answers: still one small module, no CLI.
    const { runAsk } = require("../dist/cli/ask.cjs");
    return runAsk(argv.slice(1));
  }
  if (CHILD_COMMANDS.has(argv[0])) return require("../dist/cli/child-commands.cjs").runChildCommand(argv);
  // Ctrl-C exits 130 from here on, also before the CLI has loaded; then the CLI's own handler takes over (see
  // src/cli/interrupt.ts).
  const early = () => process.exit(130);
  process.on("SIGINT", early);
  // Bundled (scripts/bundle.mjs): a command that needs no package runs from one CommonJS module, commands.cjs,
  // started from V8's code cache (src/util/code-cache.ts); help, an unknown command and the commands that load
  // more later run from main.js and its chunks.
  const bundleDir = path.join(dist, "cli", "bundle");
  const quick = JSON.parse(readFileSync(path.join(bundleDir, "commands.json"), "utf8"));
  let cli;
  let saveCache;
  if (quick.names.includes(argv[0])) {
    const { loadCommonJsCached } = require("../dist/util/code-cache.cjs");
    const bundle = loadCommonJsCached(path.join(bundleDir, "commands.cjs"), {
      build: quick.build,
      // What util/import-module.ts is in every other build: a vm.Script cannot import by itself.
      provided: { "muster:import-module": { importModule: (specifier) => import(specifier) } },
      lazy: ["node:child_process", "node:crypto", "node:net", "node:stream"],
    });
    cli = bundle.exports;
    saveCache = bundle.save;
  } else {
    cli = await import("../dist/cli/bundle/main.js");
  }
  process.off("SIGINT", early);
  cli.installInterrupt();
  const code = await cli.main(argv);
  await saveCache?.();
  return code;
}

run().then((code) => {
  process.exitCode = code;
  // Output is flushed by returning normally; a stray handle must not keep a finished command alive.
  setTimeout(() => process.exit(code), 1500).unref();
});
