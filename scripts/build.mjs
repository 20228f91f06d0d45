#!/usr/bin/env node
// npm run build: tsc → dist/, the bundles (scripts/bundle.mjs), then dist/.build-stamp (scripts/build-stamp.mjs).
// With --if-stale (npm's `prepare`, which every `npm install`, `npm link` and first `npx muster` runs) it builds
// only when dist/ is missing or not the build of the sources as they are now.
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { inputsHash, staleReason, writeStamp } from "./build-stamp.mjs";

const root = path.resolve(import.meta.dirname, "..");
// Hashed before building: a source edited while tsc runs leaves the next prepare a build to do.
const hash = inputsHash(root);
if (process.argv.includes("--if-stale")) {
  const why = staleReason(root, hash);
  if (!why) {
    console.error("muster: dist/ is up to date with src/, nothing to build (npm run build rebuilds)");
    process.exit(0);
  }
  console.error(`muster: building dist/ (${why})…`);
}
const steps = [
  [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", path.join(root, "tsconfig.json")],
  [path.join(root, "scripts", "bundle.mjs")],
];
for (const args of steps) {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
writeStamp(root, hash);
