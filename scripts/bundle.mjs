#!/usr/bin/env node
// Bundles the child host into one file: it starts with every spawn, and one module loads ~30 ms faster
// than its module graph (measured here). tsc still type-checks and emits everything else.
// (Bundling the CLI the same way measured slower here, so the CLI loads its heavy parts lazily instead.)
import * as path from "node:path";
import { build } from "esbuild";

const root = path.resolve(import.meta.dirname, "..");
const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  // CommonJS dependencies (proper-lockfile, gray-matter) require node builtins: give the ESM bundle a real require.
  banner: {
    js: 'import { createRequire as __musterRequire } from "node:module"; const require = __musterRequire(import.meta.url);',
  },
  logLevel: "warning",
};
await build({
  ...common,
  entryPoints: [path.join(root, "src", "child", "host.ts")],
  outfile: path.join(root, "dist", "child", "host.bundle.js"),
  // Mode tui only (the agent's TUI under a pty, its screen model): tui-pty.js stays a file of its own, imported
  // when a TUI starts; bundled in, esbuild would hoist its node-pty and @xterm/headless imports to the top and
  // every host would load them at start (~40 ms).
  external: ["node-pty", "@xterm/headless", "./tui-pty.js"],
});
// The pty holder starts with every pty pane, before its child host can: one CommonJS file starts ~30 ms
// faster than an ES module graph here. node-pty (native) and the lazily loaded screen model stay outside.
await build({
  ...common,
  format: "cjs",
  banner: {},
  entryPoints: [path.join(root, "src", "mux", "pty", "holder.ts")],
  outfile: path.join(root, "dist", "mux", "pty", "holder.cjs"),
  external: ["node-pty", "./screen.js"],
});
