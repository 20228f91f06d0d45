/**
 * `node dist/place/mirror/relay-main.js <artifactDir> [--session]`: the far side of one mirror (with
 * --session, of the child's conversation next to it too), speaking the protocol on stdin/stdout
 * (protocol.ts) and logging only to stderr: a link per child. Places run relay-hub-main.js instead, one
 * link for all their children. Exits 0 when the mirror closes the stream, 2 on a bad argument or a broken
 * protocol (one line on stderr saying why).
 */
import { relayOf } from "./relay-of.js";

function main(argv: string[]): void {
  const dir = argv[0];
  const carrySession = argv[1] === "--session";
  if (!dir || argv.length !== (carrySession ? 2 : 1)) die("usage: relay-main.js <artifactDir> [--session]");
  const relay = relayOf(dir!, carrySession, { readable: process.stdin, writable: process.stdout });
  if (typeof relay === "string") die(relay);
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
