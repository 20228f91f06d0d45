/**
 * The import rules of docs/architecture.md ("Modules and dependency direction"), enforced:
 *   front ends (cli, mcp, tui, web, the library entry) → core → parts → base (util)
 * Run: npm run check:imports. Paths are relative to where depcruise runs (the project, or a test fixture).
 */
// workflows is a front end too (nothing below may import it); its own imports are not constrained yet:
// it still reads its run log with artifacts/reader.ts.
const FRONT = "^src/(cli|mcp|tui|web|workflows)/|^src/index\\.ts$";
// The entry points are where backends are wired in: they import the backend entry (registers tmux, loads
// MUSTER_BACKEND_MODULE), and the library entry re-exports the API a backend plugin is written against.
// The SSH hosts and Kubernetes clusters a user names are managed by `muster hosts`, container images by `muster image` and
// notification targets by `muster notify`, each through one admin module.
const BACKEND_ENTRY =
  "^src/mux/builtin\\.ts$|^src/place/(ssh|container|k8s)/admin\\.ts$|^src/notify/admin\\.ts$";
const BACKEND_API = "^src/mux/(backend|registry|local-host|builtin)\\.ts$";
const CORE = "^src/core/";
const PARTS = "^src/(artifacts|delivery|sessions|profiles|mux|place|runners|child|config|isolation|notify)/";
const BASE = "^src/(util|base)/";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-cycles",
      comment:
        "Modules form no import cycle (type-only imports count: they couple the modules all the same).",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "front-end-only-core",
      comment: "A front end parses arguments and renders; everything it shows comes from the core.",
      severity: "error",
      from: { path: "^src/(cli|mcp|tui|web)/" },
      to: { path: PARTS, pathNot: BACKEND_ENTRY },
    },
    {
      name: "front-end-renders-views",
      comment:
        "A front end renders the core's views of a child (core/views.ts), never the state the core loads it into (core/children.ts).",
      severity: "error",
      from: { path: FRONT },
      to: { path: "^src/core/children\\.ts$" },
    },
    {
      name: "library-entry-only-core",
      comment:
        "The library entry exports the core, and the backend plugin API (mux/backend, registry, local-host, builtin).",
      severity: "error",
      from: { path: "^src/index\\.ts$" },
      to: { path: PARTS, pathNot: BACKEND_API },
    },
    {
      name: "core-not-front-end",
      comment: "The core knows no screen and no protocol.",
      severity: "error",
      from: { path: `${CORE}|${PARTS}|${BASE}` },
      to: { path: FRONT },
    },
    {
      name: "part-not-core",
      comment: "Parts sit below the core: they never import it (errors and locks live in the base).",
      severity: "error",
      from: { path: PARTS },
      to: { path: CORE },
    },
    {
      name: "base-only-base",
      comment: "The base (util) imports nothing of muster above it.",
      severity: "error",
      from: { path: BASE },
      to: { path: `${FRONT}|${CORE}|${PARTS}` },
    },
    {
      name: "core-no-concrete-backend",
      comment:
        "The core talks to the Backend interface (src/mux/*.ts); a concrete backend (src/mux/<name>/) registers itself.",
      severity: "error",
      from: { path: CORE },
      to: { path: "^src/mux/[^/]+/" },
    },
    {
      name: "core-no-concrete-place",
      comment:
        "The core asks for a place by name (src/place/place.ts, registry.ts); a concrete place (src/place/<kind>/) registers itself.",
      severity: "error",
      from: { path: CORE },
      to: { path: "^src/place/[^/]+/" },
    },
    {
      name: "place-knows-no-terminal",
      comment:
        "Where a host runs knows nothing of what shows its terminal: terminals run through places, not back.",
      severity: "error",
      from: { path: "^src/place/" },
      to: { path: "^src/mux/" },
    },
    {
      name: "runners-not-mux",
      comment: "Runners never touch the multiplexer.",
      severity: "error",
      from: { path: "^src/runners/" },
      to: { path: "^src/mux/" },
    },
    {
      name: "mux-knows-no-agents",
      comment: "The multiplexer knows nothing of agents.",
      severity: "error",
      from: { path: "^src/mux/" },
      to: { path: "^src/(runners|profiles)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^(dist|node_modules)/" },
    tsPreCompilationDeps: true,
  },
};
