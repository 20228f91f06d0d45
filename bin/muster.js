#!/usr/bin/env node
// Entry point. Child-side commands (run by agents inside panes) load one small module; the rest load the CLI.
import { readFileSync } from "node:fs";

const argv = process.argv.slice(2);
const CHILD_COMMANDS = new Set(["done", "error", "progress"]);
// A reader that went away (`muster --help | head`) ends the command quietly, as SIGPIPE ends other tools;
// Node ignores SIGPIPE, so without this the failed write surfaces as an unhandled EPIPE stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on("error", (e) => {
    if (e.code !== "EPIPE") throw e;
    process.exit(0);
  });
}

let code;
if (argv[0] === "ask") {
  // Blocks until the parent answers: still one small module, no CLI.
  const { runAsk } = await import("../dist/cli/ask.js");
  code = await runAsk(argv.slice(1));
} else if (CHILD_COMMANDS.has(argv[0])) {
  const { runChildCommand } = await import("../dist/cli/child-commands.js");
  code = runChildCommand(argv);
} else {
  // Ctrl-C exits 130 from here on, also before the CLI has loaded (see src/cli/interrupt.ts).
  (await import("../dist/cli/bundle/interrupt.js")).installInterrupt();
  // Bundled (scripts/bundle.mjs): a command that needs no package runs from one module, commands.js; help, an
  // unknown command and the commands that load more later run from main.js and its chunks.
  const quick = JSON.parse(
    readFileSync(new URL("../dist/cli/bundle/commands.json", import.meta.url), "utf8"),
  );
  const entry = quick.includes(argv[0]) ? "../dist/cli/bundle/commands.js" : "../dist/cli/bundle/main.js";
  const { main } = await import(entry);
  code = await main(argv);
}
process.exitCode = code;
// Output is flushed by returning normally; a stray handle must not keep a finished command alive.
setTimeout(() => process.exit(code), 1500).unref();
