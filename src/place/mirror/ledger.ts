/**
 * The far side's record of the outbound files it was given (`.mirror-delivered.ndjson` in the artifact dir,
 * a dot-name no reader takes for an artifact): path and sha256 of each version, appended with fsync after
 * the file is whole in its temp and before it is renamed in. It is what makes delivery once-only across
 * reconnects: a mirror that still holds an inbox item the host already took is told it is gone, not asked
 * for it again. A relay killed between the record and the rename finishes the rename when it starts again.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { readAllRecords } from "../../artifacts/reader.js";
import { appendAll, openAppend } from "../../util/fsx.js";
import { listFiles, shaOfFile } from "./paths.js";
import { tempOf } from "./transfer.js";

export const LEDGER = ".mirror-delivered.ndjson";

export class DeliveryLedger {
  /** The last version delivered of each outbound path. */
  readonly delivered = new Map<string, string>();
  private readonly file: string;

  constructor(private readonly root: string) {
    this.file = path.join(root, LEDGER);
    for (const r of readAllRecords<{ path?: unknown; sha?: unknown }>(this.file))
      if (typeof r.path === "string" && typeof r.sha === "string") this.delivered.set(r.path, r.sha);
  }

  record(rel: string, sha: string): void {
    const fd = openAppend(this.file);
    try {
      appendAll(fd, `${JSON.stringify({ path: rel, sha })}\n`);
    } finally {
      fs.closeSync(fd);
    }
    this.delivered.set(rel, sha);
  }

  /** Finishes deliveries a killed relay recorded but did not rename in; drops temp files it never recorded. */
  recover(): void {
    for (const rel of this.delivered.keys()) {
      const final = path.join(this.root, rel);
      const tmp = tempOf(final);
      if (!fs.existsSync(tmp)) continue;
      if (shaOfFile(tmp) === this.delivered.get(rel)) fs.renameSync(tmp, final);
      else fs.rmSync(tmp, { force: true });
    }
    for (const d of ["inbox", "control", "answers", "."]) {
      let names: string[];
      try {
        names = fs.readdirSync(path.join(this.root, d));
      } catch {
        continue;
      }
      for (const n of names)
        if (n.startsWith(".") && n.endsWith(".mirror.tmp"))
          fs.rmSync(path.join(this.root, d, n), { force: true });
    }
  }

  /** Outbound files there now that came through the mirror, unchanged since: path → sha. */
  presentDelivered(): Map<string, string> {
    const out = new Map<string, string>();
    for (const rel of listFiles(this.root, "outbound")) {
      const want = this.delivered.get(rel);
      if (want && shaOfFile(path.join(this.root, rel)) === want) out.set(rel, want);
    }
    return out;
  }
}
