import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { StepOutcome, StepSpawn, WorkflowHost } from "../../src/workflows/host.js";
import { runSandboxed, type SandboxOptions } from "../../src/workflows/sandbox/sandbox.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** A real WorkflowHost that records every spawn and answers each child with its prompt reversed, after a tick. */
class RecordingHost implements WorkflowHost {
  readonly spawns: StepSpawn[] = [];
  readonly cancelled: string[] = [];
  hang = false;
  private readonly onCancel = new Map<string, () => void>();
  private readonly dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-sandbox-"));
  constructor() {
    dirs.push(this.dir);
  }
  agents(): Set<string> {
    return new Set(["mock"]);
  }
  stateDir(): string {
    return this.dir;
  }
  async spawn(o: StepSpawn): Promise<{ id: string; turnId: string }> {
    this.spawns.push(o);
    return { id: `c${this.spawns.length}`, turnId: "t" };
  }
  async wait(id: string): Promise<StepOutcome> {
    // A hanging child settles only when cancelled.
    if (this.hang) return new Promise((res) => this.onCancel.set(id, () => res({ status: "cancelled" })));
    await new Promise((r) => setTimeout(r, 5));
    const call = this.spawns[Number(id.slice(1)) - 1]!;
    if (call.prompt === "fail") return { status: "errored", reason: "the child failed" };
    return { status: "completed", text: [...call.prompt].reverse().join("") };
  }
  async cancel(ids: string[]): Promise<void> {
    this.cancelled.push(...ids);
    for (const id of ids) this.onCancel.get(id)?.();
  }
}

const run = (source: string, host = new RecordingHost(), opts: SandboxOptions = {}) =>
  runSandboxed(source, "in", host, opts);

describe("sandboxed workflows: the ctx API inside QuickJS", () => {
  it("fans out, joins with ctx.await all / first and ctx.parallel; a failed child is a value; input and log reach it", async () => {
    const host = new RecordingHost();
    const logs: string[] = [];
    const r = await runSandboxed(
      `
      ctx.log("got " + input);
      const a = ctx.agent({ agent: "mock", prompt: "abc" });
      const b = ctx.agent({ agent: "mock", prompt: "fail" });
      const all = await ctx.await([a, b], "all");
      const { result, rest } = await ctx.await([ctx.agent({ agent: "mock", prompt: "xy" })], "first");
      const par = await ctx.parallel(["p", "q", "r"], async (s) => (await ctx.agent({ agent: "mock", prompt: s + "1" }).await()).text, { limit: 2 });
      return { all: all.map((x) => [x.id, x.status, x.text ?? x.reason]), first: result.text, rest: rest.length, par };
      `,
      "the input",
      host,
      { onProgress: (p) => p.type === "log" && logs.push(p.text) },
    );
    expect(r.error).toBeUndefined();
    expect(r.status).toBe("completed");
    expect(r.result).toEqual({
      all: [
        ["agent-1", "completed", "cba"],
        ["agent-2", "errored", "the child failed"],
      ],
      first: "yx",
      rest: 0,
      par: ["1p", "1q", "1r"],
    });
    expect(logs).toEqual(["got the input"]);
    expect(host.spawns).toHaveLength(6);
    expect(r.steps.map((a) => a.status)).toEqual([
      "completed",
      "errored",
      "completed",
      "completed",
      "completed",
      "completed",
    ]);
  });

  it("bad limits are refused before any run is recorded", async () => {
    const host = new RecordingHost();
    await expect(run("return 1;", host, { cpuMs: 0 })).rejects.toThrow(/cpuMs must be a whole number ≥ 1/);
    await expect(run("return 1;", host, { maxChildren: 1.5 })).rejects.toThrow(/maxChildren/);
    expect(fs.readdirSync(host.stateDir())).toEqual([]);
  });

  it("a throw ends the run failed with the program's message", async () => {
    const r = await run(`throw new Error("nope, " + input);`);
    expect(r.status).toBe("failed");
    expect(r.error).toBe("the program threw Error: nope, in");
  });

  it("a malformed ctx.agent call is a TypeError inside the program, and no child starts", async () => {
    const host = new RecordingHost();
    const r = await run(`ctx.agent({ agent: "mock" });`, host);
    expect(r.error).toMatch(/TypeError: ctx.agent: prompt must be a non-empty string/);
    expect(host.spawns).toHaveLength(0);
  });

  it("10,000 ctx.agent calls stop at the cap: a clear error and no child beyond it", async () => {
    const host = new RecordingHost();
    const r = await run(
      `const hs = []; for (let i = 0; i < 10000; i++) hs.push(ctx.agent({ agent: "mock", prompt: "p" + i })); return hs.length;`,
      host,
      { maxChildren: 5 },
    );
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/cap of 5 children is reached/);
    expect(host.spawns).toHaveLength(5);
  });

  it("the cap still holds when the program catches the cap error and keeps calling (default cap 32)", async () => {
    const host = new RecordingHost();
    const r = await run(
      `let refused = 0; for (let i = 0; i < 10000; i++) { try { ctx.agent({ agent: "mock", prompt: "p" }); } catch { refused++; } } return refused;`,
      host,
      // 10,000 refusals in one stretch take over a second on a loaded machine: this test is about the cap.
      { cpuMs: 30_000 },
    );
    expect(r.error).toBeUndefined();
    expect(r.result).toBe(10000 - 32);
    expect(host.spawns).toHaveLength(32);
  });

  it("an infinite loop is interrupted by the CPU budget with a clear error", async () => {
    const r = await run(`while (true) {}`, new RecordingHost(), { cpuMs: 200 });
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/ran 200 ms without awaiting \(CPU budget exceeded\)/);
  });

  it("an infinite loop after an await (inside a pending job) is interrupted too", async () => {
    const r = await run(
      `await ctx.agent({ agent: "mock", prompt: "a" }).await(); for (;;) {}`,
      new RecordingHost(),
      {
        cpuMs: 200,
      },
    );
    expect(r.error).toMatch(/CPU budget exceeded/);
  });

  it("awaiting a promise nothing can settle ends at once with a clear error, not at the wall-clock bound", async () => {
    const host = new RecordingHost();
    const r = await run(`ctx.agent({ agent: "mock", prompt: "a" }); await new Promise(() => {});`, host);
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/awaits a promise that nothing can settle/);
    expect(host.spawns).toHaveLength(1);
  });

  it("a huge allocation, or doubling a string, ends with a memory-limit error", async () => {
    const a = await run(`new Array(1e9).fill(1); return "no";`);
    expect(a.status).toBe("failed");
    expect(a.error).toMatch(/memory limit of 32 MiB/);
    const s = await run(
      `let s = "x"; const keep = []; for (;;) { s = s.repeat(2); keep.push(s); }`,
      new RecordingHost(),
      { memoryBytes: 8 * 1024 * 1024 },
    );
    expect(s.error).toMatch(/memory limit of 8 MiB/);
  });

  it("unbounded recursion ends with a stack overflow error, not a crash of the host", async () => {
    const r = await run(`const f = (n) => f(n + 1) + 1; return f(0);`);
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/stack overflow|overflowed its stack/i);
  });

  it("no host reaches the program: process, require, import, constructor tricks, timers", async () => {
    const r = await run(`
      const probe = (f) => { try { const v = f(); return v === undefined ? "undefined" : typeof v; } catch (e) { return "threw"; } };
      return {
        ctorProcess: probe(() => ctx.constructor.constructor("return process")()),
        fnProcess: probe(() => Function("return process")()),
        protoCtor: probe(() => Object.getPrototypeOf(ctx.agent).constructor("return process")()),
        fnThisProcess: probe(() => Function("return this")().process),
        handleCtor: probe(() => ctx.agent.constructor("return typeof process")() === "undefined" ? undefined : 1),
        require: typeof globalThis.require,
        processGlobal: typeof process,
        setTimeout: typeof setTimeout,
        fetch: typeof fetch,
        strictThis: (function () { return this; })() === undefined,
        importFs: await import("fs").then(() => "loaded", (e) => "refused"),
      };
    `);
    expect(r.error).toBeUndefined();
    expect(r.result).toEqual({
      ctorProcess: "threw",
      fnProcess: "threw",
      protoCtor: "threw",
      fnThisProcess: "undefined",
      handleCtor: "undefined",
      require: "undefined",
      processGlobal: "undefined",
      setTimeout: "undefined",
      fetch: "undefined",
      strictThis: true,
      importFs: "refused",
    });
  });

  it("each hostile program ends with its own clear error, its running child cancelled and no child started after", async () => {
    const cases: [string, string, RegExp][] = [
      ["escape", `Function("return process")().exit(1);`, /^the program threw ReferenceError: .*process/],
      [
        "prototype",
        `ctx.agent.constructor.constructor("return process")().pid;`,
        /ReferenceError: .*process/,
      ],
      ["loop", `for (;;) {}`, /ran 200 ms without awaiting \(CPU budget exceeded\)/],
      [
        "alloc",
        `const a = []; for (;;) a.push(new Array(1e6).fill(7));`,
        /exceeded its memory limit of 8 MiB/,
      ],
      ["throw", `throw new TypeError("bad plan");`, /^the program threw TypeError: bad plan$/],
    ];
    for (const [label, body, error] of cases) {
      const host = new RecordingHost();
      host.hang = true;
      const r = await run(
        `const first = ctx.agent({ agent: "mock", prompt: "a" });\n${body}\nctx.agent({ agent: "mock", prompt: "never" });`,
        host,
        // Only the loop meets the CPU budget: the others must fail for their own reason even on a loaded machine.
        { cpuMs: label === "loop" ? 200 : 10_000, memoryBytes: 8 * 1024 * 1024 },
      );
      expect(r.status, label).toBe("failed");
      expect(r.error, label).toMatch(error);
      expect(
        host.spawns.map((s) => s.prompt),
        label,
      ).toEqual(["a"]);
      expect(host.cancelled, label).toEqual(["c1"]);
    }
  });

  it("prototype pollution inside the sandbox does not reach the host; results cross as JSON only", async () => {
    const r = await run(`
      Object.prototype.polluted = "yes";
      Array.prototype.map = () => "hijacked";
      JSON.parse = () => ({ evil: true });
      const res = await ctx.agent({ agent: "mock", prompt: "ok" }).await();
      return { text: res.text, fn: () => 1, when: new Date(0) };
    `);
    expect(r.error).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect([1].map((x) => x + 1)).toEqual([2]);
    // The prelude parsed the child's result with the JSON captured before the program ran.
    expect(r.result).toEqual({ text: "ko", when: "1970-01-01T00:00:00.000Z" });
  });

  it("the wall-clock bound ends a run whose child never settles on its own, and cancels that child", async () => {
    const host = new RecordingHost();
    host.hang = true;
    const r = await run(`await ctx.agent({ agent: "mock", prompt: "a" }).await(); return "done";`, host, {
      wallMs: 300,
    });
    expect(r.status).toBe("failed");
    expect(r.error).toMatch(/wall-clock bound/);
    expect(host.cancelled).toEqual(["c1"]);
  });

  it("cancelling the run stops the program and cancels its running child; the run is cancelled", async () => {
    const host = new RecordingHost();
    host.hang = true;
    const ac = new AbortController();
    const p = run(`await ctx.agent({ agent: "mock", prompt: "a" }).await(); return "done";`, host, {
      signal: ac.signal,
      onProgress: (e) => {
        if (e.type === "agent_started") ac.abort();
      },
    });
    const r = await p;
    expect(r.status).toBe("cancelled");
    expect(r.result).toBeUndefined();
    expect(host.cancelled).toContain("c1");
  });
});
