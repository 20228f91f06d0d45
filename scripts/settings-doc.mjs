#!/usr/bin/env node
// Regenerates the environment table in docs/state-and-environment.md from src/base/settings/table.ts (no
// build needed: esbuild bundles the renderer in memory). --check exits 1, writing nothing, when it is stale.
import * as fs from "node:fs";
import * as path from "node:path";
import { build } from "esbuild";

const root = path.resolve(import.meta.dirname, "..");
const out = await build({
  entryPoints: [path.join(root, "src", "base", "settings", "doc.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  write: false,
  logLevel: "warning",
});
const doc = await import(
  `data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString("base64")}`
);
const name = "docs/state-and-environment.md";
const file = path.join(root, ...name.split("/"));
const before = fs.readFileSync(file, "utf8");
const after = doc.withSettingsSection(before);
if (process.argv.includes("--check")) {
  if (after !== before) {
    process.stderr.write(`${name}: the environment table is stale; run node scripts/settings-doc.mjs\n`);
    process.exit(1);
  }
} else if (after !== before) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, after);
  fs.renameSync(tmp, file);
  process.stdout.write(`${name}: environment table updated\n`);
}
