/**
 * `node dist/place/mirror/relay-hub-main.js`: the far side of a place's one link (channels.ts). Each channel
 * the near side opens names a child's artifact dir (`{dir, session}`) and gets a relay of its own (relay.ts),
 * all in this process. A channel whose dir cannot be served is answered with the protocol's error frame and
 * ended. Logs only to stderr; exits 0 when the link ends, 2 when the link itself is broken.
 */
import { ChannelMux } from "./channels.js";
import { FrameWriter } from "./protocol.js";
import { relayOf } from "./relay-of.js";

function main(argv: string[]): void {
  if (argv.length !== 0) {
    process.stderr.write("usage: relay-hub-main.js (the link is stdin/stdout)\n");
    process.exit(2);
  }
  const mux = new ChannelMux(process.stdin, process.stdout);
  mux.on("channel", (info: { dir?: unknown; session?: unknown }, stream) => {
    const relay =
      typeof info.dir === "string" && info.dir !== ""
        ? relayOf(info.dir, info.session === true, { readable: stream, writable: stream })
        : "mirror relay hub: a channel opened with no dir";
    if (typeof relay === "string") {
      process.stderr.write(`${relay}\n`);
      const out = new FrameWriter(stream);
      void out.send({ t: "error", message: relay }).then(() => out.end());
      return;
    }
    relay.run().then(
      () => stream.end(),
      (e: Error) => {
        process.stderr.write(`mirror relay of ${info.dir}: ${e.message}\n`);
        stream.end();
      },
    );
  });
  mux.on("closed", (why: string) => process.exit(why === "the link ended" ? 0 : 2));
}

main(process.argv.slice(2));
