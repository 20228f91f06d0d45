import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DirWatch, FALLBACK_POLL_MS } from "../../src/child/dir-watch.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "muster-dirwatch-"));
  dirs.push(d);
  return d;
};
const until = async (ok: () => boolean) => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((r) => setTimeout(r, 50));
  return ok();
};

describe("DirWatch: a folder's changes, watched or polled", () => {
  it("with fs.watch working: a new file is noticed through the watch", async () => {
    const d = tmp();
    let calls = 0;
    const w = new DirWatch(d, () => {
      calls += 1;
    });
    try {
      expect(w.watching).toBe(true);
      expect(w.pollMs).toBeGreaterThan(FALLBACK_POLL_MS);
      fs.writeFileSync(path.join(d, "a.json"), "{}");
      expect(await until(() => calls > 0)).toBe(true);
    } finally {
      w.close();
    }
  });

  it("when the watch cannot be set up (EMFILE: inotify instances used up), the folder is polled fast instead", async () => {
    const d = tmp();
    let calls = 0;
    const noInotify = (): fs.FSWatcher => {
      throw Object.assign(new Error("EMFILE: too many open files, watch"), { code: "EMFILE" });
    };
    const w = new DirWatch(
      d,
      () => {
        calls += 1;
      },
      noInotify,
    );
    try {
      expect(w.watching).toBe(false);
      expect(w.pollMs).toBe(FALLBACK_POLL_MS);
      fs.writeFileSync(path.join(d, "a.json"), "{}");
      expect(await until(() => calls >= 2)).toBe(true);
    } finally {
      w.close();
    }
  });
});
