/** A place's keeper (src/place/mirror/place-keeper-main.ts) as a test sees it: its process and its socket. */
import * as fs from "node:fs";
import * as net from "node:net";
import { placeSocket } from "../../src/place/mirror/place-socket.js";
import { pidAlive, processesMentioning, type Sandbox, until } from "./cli.js";

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
  // The keeper's own link only: other places' links (an SSH host's, another test's) run relay hubs too.
  const hubs = (): number[] => {
    const keeper = pid();
    return processesMentioning("relay-hub-main")
      .filter(
        (p) => !p.cmdline.includes("place-keeper-main") && keeper !== undefined && parentOf(p.pid) === keeper,
      )
      .map((p) => p.pid);
  };
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

/** A process's parent pid (Linux /proc), or undefined once it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // After the command name, which is in parentheses and may hold spaces: "<state> <ppid> …".
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** Cancels every child of the sandbox and stops the keepers of the places they ran at (a test file's end). */
export async function stopPlacedChildren(sb: Sandbox): Promise<void> {
  const ls = await sb.json(["ls"]).catch(() => undefined);
  const places = new Set<string>();
  for (const c of (ls?.data.children ?? []) as { place: string }[])
    if (c.place !== "local") places.add(c.place);
  await sb.run(["cancel", "--all"]);
  for (const place of places) await placeKeeperOf(sb.home, place).stop();
}

/** Cancels every child of the sandbox and stops the keeper of `place` once it keeps nothing (a test file's end). */
export async function cancelAndStopKeeper(sb: Sandbox, place: string): Promise<void> {
  await sb.run(["cancel", "--all"]);
  const k = placeKeeperOf(sb.home, place);
  await until(async () => (await k.dirs()).length === 0, 15_000).catch(() => undefined);
  await k.stop();
}
