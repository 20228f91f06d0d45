/**
 * `node dist/place/mirror/relay-main.js <artifactDir> [--session]`: the far side of a mirror (with
 * --session, of the child's conversation next to it too), speaking the protocol on
 * stdin/stdout (protocol.ts) and logging only to stderr. Exits 0 when the mirror closes the stream, 2 on a
 * bad argument or a broken protocol (one line on stderr saying why).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { sessionFileOf } from "../../sessions/store.js";
import { MirrorRelay } from "./relay.js";

function main(argv: string[]): void {
  const dir = argv[0];
  const carrySession = argv[1] === "--session";
  if (!dir || argv.length !== (carrySession ? 2 : 1)) die("usage: relay-main.js <artifactDir> [--session]");
  const root = path.resolve(dir!);
  // A child's first link makes its dir (the hello carries its seed), so only the folder above must be there.
  if (!fs.lstatSync(path.dirname(root), { throwIfNoEntry: false })?.isDirectory())
    die(`mirror relay: ${path.dirname(root)} is not a folder`);
  // The conversation lives next to the artifact dir: <primary>/subagents/<child>.jsonl.
  const session = carrySession ? { sessionFile: sessionFileOf(root) } : {};
  const relay = new MirrorRelay(root, { readable: process.stdin, writable: process.stdout }, session);
  relay.run().then(
    () => process.exit(0),
    () => process.exit(2),
  );
}

function die(line: string): never {
  process.stderr.write(`${line}\n`);
  process.exit(2);
}

main(process.argv.slice(2));
