/** A place's keeper (src/place/mirror/place-keeper-main.ts) as a test sees it: its process and its socket. */
import * as net from "node:net";
import { placeSocket } from "../../src/place/mirror/place-socket.js";
import { pidAlive, processesMentioning, until } from "./cli.js";

export interface PlaceKeeperView {
  socket: string;
  /** The keeper's pid, when one runs. */
  pid(): number | undefined;
  /** The hub processes of the keeper's link (the far side's one relay process). */
  hubs(): number[];
  /** The dirs the keeper keeps now (none when no keeper answers). */
  dirs(): Promise<string[]>;
  /** Whether the keeper keeps `dir` now (false when no keeper answers). */
  keeps(dir: string): Promise<boolean>;
  /** Stops the keeper, if one runs, and waits for it and its link to go. */
  stop(): Promise<void>;
}

export function placeKeeperOf(stateRoot: string, place: string): PlaceKeeperView {
  const socket = placeSocket(stateRoot, place);
  const pid = (): number | undefined =>
    processesMentioning(socket).find((p) => p.cmdline.includes("place-keeper-main"))?.pid;
  const hubs = (): number[] =>
    processesMentioning("relay-hub-main")
      .filter((p) => !p.cmdline.includes("place-keeper-main"))
      .map((p) => p.pid);
  const dirs = (): Promise<string[]> =>
    new Promise((resolve) => {
      const c = net.connect(socket);
      let buf = "";
      c.once("connect", () => c.write(`${JSON.stringify({ op: "dirs" })}\n`));
      c.on("data", (b: Buffer) => {
        buf += b.toString("utf8");
        if (!buf.includes("\n")) return;
        c.destroy();
        resolve((JSON.parse(buf) as { dirs: string[] }).dirs);
      });
      c.once("error", () => resolve([]));
    });
  return {
    socket,
    pid,
    hubs,
    dirs,
    keeps: async (dir) => (await dirs()).includes(dir),
    stop: async () => {
      const p = pid();
      if (p === undefined) return;
      process.kill(p, "SIGTERM");
      await until(() => !pidAlive(p), 10_000);
    },
  };
}
