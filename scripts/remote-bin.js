#!/usr/bin/env node
// muster on an SSH host (dist/remote, shipped by `muster hosts install`): only the commands an agent runs in
// its pane. Everything else runs on the parent's machine, which reaches this host's children through muster.
const argv = process.argv.slice(2);
let code;
if (argv[0] === "ask") {
  const { runAsk } = await import("../dist/cli/ask.js");
  code = await runAsk(argv.slice(1));
} else if (argv[0] === "done" || argv[0] === "error" || argv[0] === "progress") {
  const { runChildCommand } = await import("../dist/cli/child-commands.js");
  code = runChildCommand(argv);
} else {
  process.stderr.write(
    `muster: on this host only done, error, progress and ask run; run \`muster ${argv[0] ?? "--help"}\` where the parent runs\n`,
  );
  code = 2;
}
process.exitCode = code;
setTimeout(() => process.exit(code), 1500).unref();
