/**
 * `node dist/place/mirror/keeper-main.js <mirrorDir> <link argv…>`: keeps one mirrored child's dir current
 * (keeper.ts). Prints `synced` on stdout once the first link caught up (what `carry` waits for); logs one
 * line per event on stderr; exits 0 when it is done, 2 on a bad argument.
 */
import * as path from "node:path";
import { MirrorKeeper } from "./keeper.js";
import { dropKeeperLock, takeKeeperLock } from "./keeper-lock.js";

function main(argv: string[]): void {
  const [dir, ...link] = argv;
  if (!dir || link.length === 0) {
    process.stderr.write("usage: keeper-main.js <mirrorDir> <link argv…>\n");
    process.exit(2);
  }
  const log = (line: string): void => {
    process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  };
  // Whoever waited for `synced` may be gone by the time anything else could be written: nothing else is.
  process.stdout.on("error", () => {});
  const root = path.resolve(dir);
  if (!takeKeeperLock(root)) {
    log("mirror keeper: another keeper runs for this dir; leaving");
    process.exit(0);
  }
  process.on("exit", () => dropKeeperLock(root));
  const keeper = new MirrorKeeper(root, link, {
    env: process.env,
    log,
    onSynced: () => process.stdout.write("synced\n"),
  });
  for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(sig, () => keeper.stop(`${sig}`));
  keeper.run().then((why) => {
    log(`mirror keeper stopped: ${why}`);
    process.exit(0);
  });
}

main(process.argv.slice(2));
