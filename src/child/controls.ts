import * as fs from "node:fs";
import * as path from "node:path";
import { type ControlRequest, controlRequestOf } from "../artifacts/control.js";
import { readJsonBounded } from "../util/safe-read.js";
import { PokedDir } from "./pokes.js";

export type { ControlRequest } from "../artifacts/control.js";

// `muster done --file` carries an answer (a snapshot is at most 1 MiB): JSON-escaped at most 6 MiB, plus slack.
const MAX_CONTROL_BYTES = 6 * 1024 * 1024 + 64 * 1024;

/** Watches control/ and hands each request over once (the file is removed after reading). */
export class ControlWatcher {
  private readonly watch: PokedDir;

  constructor(
    private readonly dir: string,
    private readonly onRequest: (r: ControlRequest) => void,
    pollMs?: number,
  ) {
    this.watch = new PokedDir(dir, () => this.drain(), pollMs);
    this.drain();
  }

  /** Reads and removes every pending request, oldest first. */
  drain(): void {
    let names: string[];
    try {
      names = fs
        .readdirSync(this.dir)
        .filter((n) => n.endsWith(".json") && !n.startsWith("."))
        .sort();
    } catch {
      return;
    }
    for (const name of names) {
      const file = path.join(this.dir, name);
      let req: ControlRequest | undefined;
      try {
        req = controlRequestOf(readJsonBounded<unknown>(file, MAX_CONTROL_BYTES));
      } catch {
        req = undefined;
      }
      fs.rmSync(file, { force: true });
      if (req) {
        this.onRequest(req);
      }
    }
  }

  close(): void {
    this.watch.close();
  }
}
