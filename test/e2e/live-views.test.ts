/**
 * Views kept current from a watcher's events (LiveViews, behind `muster top` and `muster web`), on real mock
 * children in a private tmux server: when one child's status moves, only that child is read again; a silent
 * turn turns stalled with no event; and the web feed sends a status move (a child appearing, a turn settling)
 * without waiting out the window that coalesces a busy turn's events.
 */
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LiveViews } from "../../src/core/live-views.js";
import { createMuster, type Muster } from "../../src/index.js";
import { TreeFeed, type TreeUpdate } from "../../src/web/feed.js";
import { until, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-liveviews");
let m: Muster;

beforeAll(() => {
  m = createMuster({ env: sb.env, cwd: sb.cwd });
});

afterAll(async () => {
  await m.cancelTree(undefined, { graceMs: 2000 });
});

const statusOf = (views: { id: string; status: string }[], id: string) =>
  views.find((v) => v.id === id)?.status;

describe("LiveViews", () => {
  it("a status move reads that child again, not the others; all: true reads every one; a removed child is gone", async () => {
    const a = (await m.spawn({ agent: "mock", prompt: "mock: reply=one" })).id;
    const b = (await m.spawn({ agent: "mock", prompt: "mock: reply=one" })).id;
    const c = (await m.spawn({ agent: "mock", prompt: "mock: reply=one" })).id;
    await m.wait([a, b, c], { mode: "all", timeoutMs: 30_000 });
    await m.cancel(c);

    const views = new LiveViews(m);
    const moved: string[] = [];
    const seen: { id: string; type: string }[] = [];
    const w = await m.watch({
      onEvent: (id, e) => {
        seen.push({ id, type: e.type });
        if (views.apply(id, e)) moved.push(id);
      },
    });
    let meta = "";
    try {
      const first = await views.reload({ all: true });
      expect([statusOf(first, a), statusOf(first, b), statusOf(first, c)]).toEqual([
        "idle",
        "idle",
        "closed",
      ]);

      // b's meta.json becomes a symlink: any read of b now finds it unreadable. Nothing of b's status moves.
      meta = path.join((await m.view(b)).artifactDir, "meta.json");
      fs.renameSync(meta, `${meta}.kept`);
      fs.symlinkSync(`${meta}.kept`, meta);
      // c, closed, leaves the registry with no event at all.
      await m.remove([c]);

      // a's second turn: its status moves (idle → running → idle), which apply() says.
      moved.length = 0;
      const completionsOfA = () => seen.filter((s) => s.id === a && s.type === "completion").length;
      const before = completionsOfA();
      await m.send(a, "mock: reply=two");
      await until(() => completionsOfA() > before, 30_000);
      expect(moved).toContain(a);
      expect(moved).not.toContain(b);

      const partial = await views.reload();
      expect(partial.find((v) => v.id === a)?.turns).toHaveLength(2);
      expect(statusOf(partial, a)).toBe("idle");
      // b was kept as read before, not read again.
      expect(statusOf(partial, b)).toBe("idle");
      expect(partial.map((v) => v.id)).not.toContain(c);

      const full = await views.reload({ all: true });
      expect(statusOf(full, b)).toBe("unreadable");
      expect(statusOf(full, a)).toBe("idle");
    } finally {
      await w.close();
      // b whole again, so the tree's cancel at the end can read it.
      if (meta && fs.existsSync(`${meta}.kept`)) {
        fs.rmSync(meta, { force: true });
        fs.renameSync(`${meta}.kept`, meta);
      }
    }
  }, 90_000);
});

describe("LiveViews, time alone", () => {
  it("a turn silent past the stall limit reads stalled with no new event", async () => {
    const quiet = createMuster({ env: { ...sb.env, MUSTER_STALL_SECONDS: "2" }, cwd: sb.cwd });
    const id = (await quiet.spawn({ agent: "mock", prompt: "mock: sleep=30\nsilent work" })).id;
    try {
      const views = new LiveViews(quiet);
      const stateNow = () => views.current()?.find((v) => v.id === id)?.live.state;
      // Read while the turn runs and is not yet stalled: nothing new will be written until it ends.
      await until(async () => {
        const v = (await views.reload({ all: true })).find((x) => x.id === id);
        return v?.live.state === "working";
      }, 20_000);
      await until(() => stateNow() === "stalled", 10_000);
      expect(views.current()?.find((v) => v.id === id)?.live.detail).toMatch(/^no event for \d+s/);
    } finally {
      await quiet.cancel(id);
    }
  }, 60_000);
});

describe("the web feed", () => {
  it("a child appearing and its turn settling go out at once, while other events wait out the window", async () => {
    // The window for other events is a minute here: an update that waited it out would time this test out.
    const feed = new TreeFeed(m, () => {}, undefined, { coalesceMs: 60_000 });
    await feed.start();
    const server = http.createServer((req, res) => void feed.subscribe(req, res));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const updates: TreeUpdate[] = [];
    const req = http.get({ host: "127.0.0.1", port: (server.address() as AddressInfo).port, path: "/" });
    try {
      await new Promise<void>((resolve, reject) => {
        req.on("error", reject);
        req.on("response", (res) => {
          let buf = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => {
            buf += d;
            for (let end = buf.indexOf("\n\n"); end >= 0; end = buf.indexOf("\n\n")) {
              const frame = buf.slice(0, end);
              buf = buf.slice(end + 2);
              const data = /^data: (.*)$/m.exec(frame)?.[1];
              if (frame.startsWith("event: tree") && data) updates.push(JSON.parse(data));
            }
          });
          resolve();
        });
      });
      await until(() => updates.length > 0, 10_000);

      // A turn with steps: each tool event is one the long window holds back; the child's start and its
      // turn's end are not.
      const id = (await m.spawn({ agent: "mock", prompt: "mock: sleep=1 tools=3\nwork" })).id;
      await until(() => updates.some((u) => u.children.some((c) => c.id === id)), 20_000);
      await until(() => updates.some((u) => statusOf(u.children, id) === "idle"), 30_000);
      const last = updates[updates.length - 1]!.children.find((c) => c.id === id)!;
      expect(last.turns[0]?.status).toBe("completed");
    } finally {
      req.destroy();
      await feed.close();
      await new Promise((r) => server.close(r));
    }
  }, 90_000);
});
