// Runs the primary watcher over the children of this directory's primary and reports its CPU use.
import { createMuster } from "../dist/index.js";

const seconds = Number(process.argv[2] ?? 10);
const m = createMuster();
let events = 0;
const w = await m.watch({ onEvent: () => events++ });
await new Promise((r) => setTimeout(r, 3000)); // steady state: past start-up compilation and GC
const c0 = process.cpuUsage();
const t0 = performance.now();
await new Promise((r) => setTimeout(r, seconds * 1000));
const cpu = process.cpuUsage(c0);
const wall = performance.now() - t0;
const children = w.size;
await w.close();
const cpuMs = (cpu.user + cpu.system) / 1000;
process.stdout.write(
  JSON.stringify({
    children,
    watched: events > 0,
    windowMs: Math.round(wall),
    cpuMs: Math.round(cpuMs * 10) / 10,
    percentOfOneCore: Math.round((cpuMs / wall) * 1000) / 10,
  }),
);
