import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two cores: more workers only make tmux and node start-up contend.
    maxWorkers: 2,
  },
});
