// The relay sends no event bytes the far disk could still lose: a host writes the records that only narrate a
// turn without an fsync each (artifacts/log.ts), so the relay syncs the log before they cross. Traced with strace
// on a real relay process (installed by .ci/run, as tmux and sshd are).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EventLog } from "../../src/artifacts/log.js";
import { connect, killAll, RELAY_MAIN, startRelay } from "../helpers/mirror.js";
import { waitFor } from "../helpers/tmux.js";

const dirs: string[] = [];
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
  killAll();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe("mirror: what crosses is durable on the far side", () => {
  it("a narrative record written without an fsync is fsync'd by the relay before its bytes go down the link", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "mt-mirror-durable-"));
    dirs.push(root);
    const far = path.join(root, "far");
    const near = path.join(root, "near");
    fs.mkdirSync(far, { mode: 0o700 });
    const log = EventLog.open(path.join(far, "events.ndjson"));
    cleanups.push(() => log.close());
    log.append({ type: "child_started", pid: process.pid, runner: "mock", by: "spawn" });

    const trace = path.join(root, "trace");
    const strace = ["-f", "-qq", "-y", "-s", "300", "-e", "trace=fsync,fdatasync,write", "-o", trace];
    const relay = startRelay(far, [...strace, process.execPath, RELAY_MAIN, far], "strace");
    const { feeder } = await connect(far, near, undefined, relay);
    cleanups.push(() => feeder.close());

    log.append({ type: "progress", turnId: "01a00000-0000-7000-8000-000000000001", text: "narrated-7f3a" });
    const mirrored = path.join(near, "events.ndjson");
    await waitFor(() => fs.readFileSync(mirrored, "utf8").includes("narrated-7f3a"), 10_000);
    feeder.close();
    await relay.exited;

    // Each frame is one write to the link (fd 1): the log must be fsync'd after the frame before this one.
    const lines = fs.readFileSync(trace, "utf8").split("\n");
    const toLink = (l: string): boolean => /\bwrite\(1</.test(l);
    const sent = lines.findIndex((l) => toLink(l) && l.includes("narrated-7f3a"));
    expect(sent).toBeGreaterThan(0);
    const before = lines.slice(0, sent).findLastIndex(toLink);
    const synced = lines
      .slice(before + 1, sent)
      .some((l) => /\b(fsync|fdatasync)\(\d+<[^>]*\/far\/events\.ndjson>\) = 0/.test(l));
    expect(synced).toBe(true);
  });
});
