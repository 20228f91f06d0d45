/**
 * `node dist/place/mirror/relay-hub-main.js [--map <near root> <far root>]`: the far side of a place's one
 * link (channels.ts). Each channel the near side opens names a child's artifact dir (`{dir, session}`) and
 * gets a relay of its own (relay.ts), all in this process. A place whose far state root is another folder
 * than this machine's (an SSH host's `~/.local/state/muster`) runs the hub with `--map`: a channel's dir
 * must then lie under the near root and is served at the same place under the far root, its parent folders
 * made as needed. A channel whose dir cannot be served is answered with the protocol's error frame and
 * ended. Logs only to stderr; exits 0 when the link ends, 2 when the link itself is broken.
 */
import { ChannelMux } from "./channels.js";
import { FrameWriter } from "./protocol.js";
import { relayOf } from "./relay-of.js";
import { mapRoot, type RootMap } from "./root-map.js";

function parseArgs(argv: string[]): RootMap | undefined | string {
  if (argv.length === 0) return undefined;
  if (argv.length === 3 && argv[0] === "--map" && argv[1] && argv[2]) return { near: argv[1], far: argv[2] };
  return "usage: relay-hub-main.js [--map <near root> <far root>] (the link is stdin/stdout)";
}

function main(argv: string[]): void {
  const map = parseArgs(argv);
  if (typeof map === "string") {
    process.stderr.write(`${map}\n`);
    process.exit(2);
  }
  const mux = new ChannelMux(process.stdin, process.stdout);
  mux.on("channel", (info: { dir?: unknown; session?: unknown }, stream) => {
    const at =
      typeof info.dir === "string" && info.dir !== ""
        ? mapRoot(info.dir, map)
        : { error: "mirror relay hub: a channel opened with no dir" };
    const dir = "dir" in at ? at.dir : undefined;
    const relay =
      dir === undefined
        ? (at as { error: string }).error
        : relayOf(dir, info.session === true, { readable: stream, writable: stream });
    if (typeof relay === "string") {
      process.stderr.write(`${relay}\n`);
      const out = new FrameWriter(stream);
      void out.send({ t: "error", message: relay }).then(() => out.end());
      return;
    }
    relay.run().then(
      () => stream.end(),
      (e: Error) => {
        process.stderr.write(`mirror relay of ${dir}: ${e.message}\n`);
        stream.end();
      },
    );
  });
  mux.on("closed", (why: string) => process.exit(why === "the link ended" ? 0 : 2));
}

main(process.argv.slice(2));
