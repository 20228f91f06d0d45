#!/usr/bin/env node
// Bundles the child host into one file: it starts with every spawn, and one module loads ~30 ms
// faster than its dozen-module graph (measured here). tsc still type-checks and emits everything else.
import * as path from "node:path";
import { build } from "esbuild";

const root = path.resolve(import.meta.dirname, "..");
await build({
  entryPoints: [path.join(root, "src", "child", "host.ts")],
  outfile: path.join(root, "dist", "child", "host.bundle.js"),
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  logLevel: "warning",
});
