import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runTmux } from "../../src/mux/tmux/exec.js";
import { Gate } from "../../src/util/gate.js";

const dir = mkdtempSync(join(tmpdir(), "muster-tmux-gate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A stand-in tmux client: notes how many of its kind are running as it starts, then lingers. With
// `hold` as its last word it stays until the release file exists (as display-popup stays for a person).
const fake = join(dir, "tmux");
writeFileSync(
  fake,
  `#!/bin/sh
d=${dir}
touch "$d/in.$$"
ls "$d" | grep -c '^in\\.' >> "$d/counts"
for last; do :; done
if [ "$last" = hang ]; then rm -f "$d/in.$$"; exec sleep 100; fi
if [ "$last" = hold ]; then rm -f "$d/in.$$"; while [ ! -e "$d/release" ]; do sleep 0.05; done; exit 0; fi
sleep 0.2
rm -f "$d/in.$$"
`,
);
chmodSync(fake, 0o755);
const env = { MUSTER_TMUX_BIN: fake };
const counts = () => readFileSync(join(dir, "counts"), "utf8").trim().split("\n").map(Number);

describe("tmux clients per server", () => {
  it("a burst of 40 short commands runs at most 4 clients at once, and every one completes", async () => {
    const runs = await Promise.all(
      Array.from({ length: 40 }, () =>
        runTmux({ flag: "-L", value: "gate-a" }, ["display-message"], { env }),
      ),
    );
    expect(runs.map((r) => r.exitCode)).toEqual(Array(40).fill(0));
    const seen = counts();
    expect(seen).toHaveLength(40);
    expect(Math.max(...seen)).toBeLessThanOrEqual(4);
    // The queue is used: the burst did overlap.
    expect(Math.max(...seen)).toBeGreaterThan(1);
  });

  it("held commands (a popup) neither wait behind nor block short ones", async () => {
    const server = { flag: "-L" as const, value: "gate-b" };
    const held = Array.from({ length: 5 }, () =>
      runTmux(server, ["display-popup", "hold"], { env, held: true }),
    );
    const short = await runTmux(server, ["display-message"], { env });
    expect(short.exitCode).toBe(0);
    writeFileSync(join(dir, "release"), "");
    expect((await Promise.all(held)).map((r) => r.exitCode)).toEqual(Array(5).fill(0));
  });

  it("a command that times out fails those queued behind it at once, not each after its own timeout", async () => {
    const server = { flag: "-L" as const, value: "gate-c" };
    const opts = { env, timeoutMs: 400 };
    const calls = [
      ...Array.from({ length: 4 }, () => runTmux(server, ["display-message", "hang"], opts)),
      ...Array.from({ length: 6 }, () => runTmux(server, ["display-message"], opts)),
    ];
    const ended = await Promise.allSettled(calls);
    const why = ended.map((r) => (r.status === "rejected" ? (r.reason as Error).message : "completed"));
    expect(why.slice(0, 4)).toEqual(Array(4).fill("tmux display-message timed out after 400 ms"));
    expect(why.slice(4)).toEqual(
      Array(6).fill("not sent: tmux display-message timed out after 400 ms on the same server"),
    );
  });
});

describe("Gate", () => {
  it("lets `width` through, queues the rest in order, and passes a slot on when a task fails", async () => {
    const gate = new Gate(2);
    const started: number[] = [];
    const settle = new Map<number, () => void>();
    const task = (i: number) => () =>
      new Promise<number>((resolve, reject) => {
        started.push(i);
        settle.set(i, () => (i === 0 ? reject(new Error("boom")) : resolve(i)));
      });
    const tick = () => new Promise((r) => setImmediate(r));
    const all = [0, 1, 2, 3].map((i) => gate.run(task(i)));
    await tick();
    expect(started).toEqual([0, 1]);
    expect(gate.load).toEqual({ running: 2, waiting: 2 });
    settle.get(0)?.();
    await expect(all[0]).rejects.toThrow("boom");
    await tick();
    expect(started).toEqual([0, 1, 2]);
    settle.get(1)?.();
    await tick();
    expect(started).toEqual([0, 1, 2, 3]);
    settle.get(2)?.();
    settle.get(3)?.();
    expect(await Promise.all(all.slice(1))).toEqual([1, 2, 3]);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it("failWaiting ends the waiting tasks, never the running ones", async () => {
    const gate = new Gate(1);
    let open = () => {};
    const first = gate.run(
      () =>
        new Promise<string>((r) => {
          open = () => r("ran");
        }),
    );
    const second = gate.run(async () => "never");
    gate.failWaiting(new Error("hung"));
    await expect(second).rejects.toThrow("hung");
    open();
    expect(await first).toBe("ran");
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it("refuses a width below 1", () => {
    expect(() => new Gate(0)).toThrow(RangeError);
  });
});
