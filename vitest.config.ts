import { defineConfig } from "vitest/config";

// Three projects, so a developer can run one: `npm run test:unit` (about a minute, no agent CLIs), or
// `npx vitest run --project e2e` / `--project agents`. npm test runs all three.
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two cores: more workers only make tmux and node start-up contend.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"] } },
      { extends: true, test: { name: "e2e", include: ["test/e2e/**/*.test.ts"] } },
      { extends: true, test: { name: "agents", include: ["test/agents/**/*.test.ts"] } },
    ],
  },
});
