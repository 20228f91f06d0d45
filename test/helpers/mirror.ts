/** Real relay processes (dist/place/mirror/relay-main.js) joined to feeders, for the mirror tests. */
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { MirrorFeeder } from "../../src/place/mirror/feeder.js";

export const RELAY_MAIN = path.resolve("dist/place/mirror/relay-main.js");
const running = new Set<ChildProcess>();

export interface Relay {
  proc: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** A relay of `farDir` on its stdio: `node relay-main.js`, or `command argv` (e.g. the relay under strace). */
export function startRelay(
  farDir: string,
  argv: string[] = [RELAY_MAIN, farDir],
  command = process.execPath,
): Relay {
  if (!fs.existsSync(RELAY_MAIN)) throw new Error(`${RELAY_MAIN} is missing: run npx tsc -p tsconfig.json`);
  const proc = spawn(command, argv, { stdio: ["pipe", "pipe", "pipe"] });
  running.add(proc);
  let err = "";
  proc.stderr!.on("data", (d: Buffer) => {
    err += d.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    proc.on("exit", (code) => {
      running.delete(proc);
      resolve(code);
    }),
  );
  return { proc, stderr: () => err, exited };
}

/** A feeder of `nearDir` attached to a relay of `farDir` (a new one by default); resolves once it is caught up. */
export async function connect(
  farDir: string,
  nearDir: string,
  feeder = new MirrorFeeder(nearDir, { pollMs: 200 }),
  relay = startRelay(farDir),
): Promise<{ feeder: MirrorFeeder; relay: Relay; closed: Promise<string> }> {
  const closed = new Promise<string>((resolve) => feeder.once("closed", resolve));
  const caughtUp = new Promise<void>((resolve, reject) => {
    feeder.once("caught-up", resolve);
    closed.then((why) => reject(new Error(`closed before caught up: ${why}; relay: ${relay.stderr()}`)));
  });
  feeder.attach({ readable: relay.proc.stdout!, writable: relay.proc.stdin! });
  await caughtUp;
  return { feeder, relay, closed };
}

export function killAll(): void {
  for (const p of running) p.kill("SIGKILL");
}

/** The first difference between the two dirs' copies of `rels`, or undefined when all are byte-identical. */
export function difference(a: string, b: string, rels: string[]): string | undefined {
  for (const rel of rels) {
    const x = fs.readFileSync(path.join(a, rel), { flag: "r" });
    const y = fs.existsSync(path.join(b, rel)) ? fs.readFileSync(path.join(b, rel)) : undefined;
    if (!y) return `${rel} is missing`;
    if (!x.equals(y)) return `${rel}: ${x.length} vs ${y.length} bytes`;
  }
  return undefined;
}
