import {
  newQuickJSWASMModule,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
} from "quickjs-emscripten";
import { MusterError } from "../../base/errors.js";
import { MAX_TIMER_MS, timerProblem } from "../../util/timer-limit.js";
import {
  type AgentHandle,
  type CodeRunOptions,
  type CodeRunResult,
  runCodeWorkflow,
  type WorkflowFn,
} from "../code/code.js";
import type { StepSpawn, WorkflowHost } from "../host.js";
import { PRELUDE } from "./sandbox-prelude.js";

export interface SandboxOptions extends Omit<CodeRunOptions, "maxAgents"> {
  /** The run's name in its record (default "sandbox"). */
  name?: string;
  /** Children one run may start; the next ctx.agent call throws inside the program (default 32). */
  maxChildren?: number;
  /** The QuickJS heap limit in bytes (default 32 MiB). */
  memoryBytes?: number;
  /** Continuous execution allowed between two awaits before the program is interrupted (default 1000 ms). */
  cpuMs?: number;
  /** The whole run, children included (default 1 hour). */
  wallMs?: number;
}

const MiB = 1024 * 1024;

/** One error for everything that stops a program: its message is what the run reports. */
class SandboxStop extends Error {}

/**
 * Runs a model-written program in QuickJS (a WebAssembly interpreter with its own heap; a fresh module per run,
 * so nothing a program does outlives it). The source is the body of `async (ctx, input) => { … }`: `return`
 * gives the result. Inside: only `ctx.agent / await / parallel / pipeline / phase / log` and `input` — no require, import,
 * process, fs, network or timers. Values cross as JSON strings, never host objects. Every ctx.agent call is a
 * real child through runCodeWorkflow, so the run record, cancellation and result shape are a code workflow's.
 */
export async function runSandboxed(
  source: string,
  input: string,
  host: WorkflowHost,
  opts: SandboxOptions = {},
): Promise<CodeRunResult> {
  const maxChildren = opts.maxChildren ?? 32;
  const memoryBytes = opts.memoryBytes ?? 32 * MiB;
  const cpuMs = opts.cpuMs ?? 1000;
  const wallMs = opts.wallMs ?? 60 * 60 * 1000;
  const { name, maxChildren: _m, memoryBytes: _b, cpuMs: _c, wallMs: _w, ...codeOpts } = opts;
  for (const [k, v, min] of [
    ["maxChildren", maxChildren, 0],
    ["memoryBytes", memoryBytes, MiB],
    ["cpuMs", cpuMs, 1],
    ["wallMs", wallMs, 1],
  ] as const)
    if (!Number.isSafeInteger(v) || v < min)
      throw new MusterError("invalid_argument", `${k} must be a whole number ≥ ${min}`);
  const tooLong = timerProblem(wallMs, "wallMs");
  if (tooLong) throw new MusterError("invalid_argument", `${tooLong} (${MAX_TIMER_MS} ms)`);
  return runCodeWorkflow(
    host,
    name ?? "sandbox",
    sandboxFn(source, { maxChildren, memoryBytes, cpuMs, wallMs }),
    input,
    // A backstop: the sandbox refuses the call itself before this is reached. The program is kept for resume.
    { ...codeOpts, maxAgents: maxChildren, origin: { kind: "sandbox", program: source } },
  );
}

/** The workflow function that runs `source` in a fresh QuickJS runtime (also what a resume runs again). */
export function sandboxFn(
  source: string,
  limits: { maxChildren: number; memoryBytes: number; cpuMs: number; wallMs: number } = {
    maxChildren: 32,
    memoryBytes: 32 * MiB,
    cpuMs: 1000,
    wallMs: 60 * 60 * 1000,
  },
): WorkflowFn {
  return async (ctx, inp) => {
    const qjs = await newQuickJSWASMModule();
    const rt = qjs.newRuntime();
    rt.setMemoryLimit(limits.memoryBytes);
    // Small enough that QuickJS reports the overflow before the host's own stack runs out (512 KiB did not).
    rt.setMaxStackSize(256 * 1024);
    const vm = rt.newContext();
    try {
      return await drive(rt, vm, source, inp, {
        agent: (call) => ctx.agent(call),
        phase: (n) => ctx.phase(n),
        log: (t) => ctx.log(t),
        signal: ctx.signal,
        ...limits,
      });
    } catch (e) {
      // The host's stack ran out inside the interpreter: the program's fault, said plainly.
      if (e instanceof RangeError) throw new SandboxStop("the program overflowed its stack");
      throw e;
    } finally {
      try {
        vm.dispose();
        rt.dispose();
      } catch {
        // A runtime stopped mid-allocation may not free cleanly; the module is dropped with it.
      }
    }
  };
}

interface Bridge {
  agent(call: StepSpawn): AgentHandle;
  phase(name: string): void;
  log(text: string): void;
  signal: AbortSignal;
  maxChildren: number;
  memoryBytes: number;
  cpuMs: number;
  wallMs: number;
}

/** This process's CPU time (user + system) in ms: while the VM runs synchronously, nearly all of it is the VM's. */
function cpuMsNow(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

async function drive(
  rt: QuickJSRuntime,
  vm: QuickJSContext,
  source: string,
  input: string,
  b: Bridge,
): Promise<unknown> {
  let budgetEnd = 0;
  let interrupted = false;
  // CPU time, not the wall clock: on a loaded machine a program that computes for 200 ms may take seconds of
  // wall time, and it must not be stopped for the machine's load.
  rt.setInterruptHandler(() => {
    if (cpuMsNow() <= budgetEnd) return false;
    interrupted = true;
    return true;
  });
  // Every entry into the VM gets a fresh CPU budget; awaiting a child (time outside the VM) costs nothing.
  const enter = (): void => {
    budgetEnd = cpuMsNow() + b.cpuMs;
  };
  let fail: (e: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {});
  const explain = (err: unknown): SandboxStop => {
    if (interrupted)
      return new SandboxStop(
        `the program ran ${b.cpuMs} ms without awaiting (CPU budget exceeded); it was stopped`,
      );
    const e = err as { name?: string; message?: string } | undefined;
    const msg =
      e && typeof e === "object" && "message" in e ? `${e.name ?? "Error"}: ${e.message}` : String(err);
    if (/out of memory/i.test(msg))
      return new SandboxStop(
        `the program exceeded its memory limit of ${Math.round(b.memoryBytes / MiB)} MiB`,
      );
    return new SandboxStop(`the program threw ${msg.slice(0, 2000)}`);
  };
  // The thrown value, copied out; a VM too broken to copy it (out of memory) still gives a reason.
  const take = (h: QuickJSHandle): unknown => {
    try {
      return vm.dump(h);
    } catch {
      return { name: "InternalError", message: "its error could not be copied out of the sandbox" };
    } finally {
      if (h.alive) h.dispose();
    }
  };
  const unwrap = <T>(r: { error: QuickJSHandle } | { value: T }): T => {
    if ("error" in r) throw explain(take(r.error));
    return r.value;
  };
  const pending = new Set<QuickJSDeferredPromise>();
  let closed = false;
  let program: QuickJSHandle | undefined;
  // With no child awaited and no job queued, nothing can ever settle the program (it has no timers): say so now
  // rather than at the wall-clock bound.
  const checkStuck = (): void => {
    if (!program?.alive || pending.size > 0 || rt.hasPendingJob()) return;
    const st = vm.getPromiseState(program);
    if (st.type === "fulfilled") st.value.dispose();
    else if (st.type === "rejected") st.error.dispose();
    else
      fail(
        new SandboxStop(
          "the program awaits a promise that nothing can settle (only ctx.agent results arrive later)",
        ),
      );
  };
  const pump = (): void => {
    if (closed) return;
    enter();
    let r: ReturnType<QuickJSRuntime["executePendingJobs"]>;
    try {
      r = rt.executePendingJobs();
    } catch (e) {
      // Called from a settled child's callback: a throw here would be an unhandled rejection in the host.
      fail(e instanceof RangeError ? new SandboxStop("the program overflowed its stack") : (e as Error));
      return;
    }
    if ("error" in r && r.error) fail(explain(take(r.error)));
    else if (interrupted) fail(explain(undefined));
    else checkStuck();
  };

  const handles = new Map<string, AgentHandle>();
  let started = 0;
  const start = vm.newFunction("start", (arg) => {
    let call: unknown;
    try {
      call = JSON.parse(vm.getString(arg));
    } catch {
      call = null;
    }
    const problem = checkCall(call);
    if (problem) return { error: vm.newError({ name: "TypeError", message: problem }) };
    if (started >= b.maxChildren)
      return { error: vm.newError(`the run's cap of ${b.maxChildren} children is reached`) };
    started += 1;
    const h = b.agent(call as StepSpawn);
    handles.set(h.id, h);
    return vm.newString(h.id);
  });
  const wait = vm.newFunction("await", (arg) => {
    const h = handles.get(vm.getString(arg));
    if (!h) return { error: vm.newError("no such agent handle") };
    const d = vm.newPromise();
    pending.add(d);
    void h.await().then((r) => {
      if (closed) return;
      // This runs on the host's own queue: anything thrown here must end the run, not become an unhandled rejection.
      try {
        const s = vm.newString(JSON.stringify(r));
        d.resolve(s);
        s.dispose();
        pending.delete(d);
        d.dispose();
      } catch (e) {
        fail(e as Error);
        return;
      }
      pump();
    });
    return d.handle;
  });
  const log = vm.newFunction("log", (arg) => {
    // One progress line, not a channel for megabytes.
    b.log(vm.getString(arg).slice(0, 4000));
  });
  const phase = vm.newFunction("phase", (arg) => {
    try {
      b.phase(vm.getString(arg).slice(0, 4000));
    } catch (e) {
      return { error: vm.newError({ name: "TypeError", message: (e as Error).message }) };
    }
  });

  const onAbort = (): void => fail(new SandboxStop("the run was cancelled"));
  b.signal.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(
    () => fail(new SandboxStop(`the run exceeded its wall-clock bound of ${Math.round(b.wallMs / 1000)} s`)),
    b.wallMs,
  );
  const owned: QuickJSHandle[] = [start, wait, log, phase];
  try {
    enter();
    const factory = unwrap(vm.evalCode(PRELUDE, "muster-prelude.js"));
    owned.push(factory);
    const api = unwrap(vm.callFunction(factory, vm.undefined, start, wait, log, phase));
    owned.push(api);
    const ctx = vm.getProp(api, "ctx");
    const out = vm.getProp(api, "out");
    owned.push(ctx, out);
    enter();
    // The program's text is compiled as a function body: `return` gives the result.
    const fn = unwrap(
      vm.evalCode(`(async function (ctx, input) {\n${source}\n})`, "workflow.js", { strict: true }),
    );
    owned.push(fn);
    const inp = vm.newString(input);
    owned.push(inp);
    enter();
    const promise = unwrap(vm.callFunction(fn, vm.undefined, ctx, inp));
    owned.push(promise);
    program = promise;
    const settled = vm.resolvePromise(promise);
    pump();
    const value = unwrap(await Promise.race([settled, failed]));
    owned.push(value);
    enter();
    const json = unwrap(vm.callFunction(out, vm.undefined, value));
    owned.push(json);
    try {
      return JSON.parse(vm.getString(json));
    } catch {
      throw new SandboxStop("the program's result is not JSON");
    }
  } finally {
    closed = true;
    clearTimeout(timer);
    b.signal.removeEventListener("abort", onAbort);
    for (const d of pending) d.dispose();
    for (const h of owned.reverse()) if (h.alive) h.dispose();
  }
}

/** Why a ctx.agent argument is refused, or undefined when it is a well-formed call. */
function checkCall(c: unknown): string | undefined {
  if (!c || typeof c !== "object" || Array.isArray(c)) return "ctx.agent needs {agent, prompt}";
  const o = c as Record<string, unknown>;
  if (typeof o.agent !== "string" || o.agent === "") return "ctx.agent: agent must be a non-empty string";
  if (typeof o.prompt !== "string" || o.prompt === "") return "ctx.agent: prompt must be a non-empty string";
  // A model-written program runs its children where the run runs, nowhere it picks.
  if (o.cwd !== undefined) return "ctx.agent: cwd is not available in a sandboxed program";
  if (o.on !== undefined) return "ctx.agent: on is not available in a sandboxed program";
  if (o.container !== undefined) return "ctx.agent: container is not available in a sandboxed program";
  // A check is a command run on this machine: not the program's to write.
  if (o.verify !== undefined) return "ctx.agent: verify is not available in a sandboxed program";
  for (const k of ["model", "reasoning"])
    if (o[k] !== undefined && typeof o[k] !== "string") return `ctx.agent: ${k} must be a string`;
  return undefined;
}
