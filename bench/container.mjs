#!/usr/bin/env node
// Children in containers (place container:<id>, `muster spawn --in container`) against local children, in one
// run, as ratios: spawn → turn_started, and one completion → the waiter (bench/one-child-place.mjs). The engine
// is a private dockerd under a temp folder (test/fixtures/docker-engine.mjs: a unix socket, no bridge, no
// iptables), the image is the one `muster image build` makes from this machine's files, and every container
// has no network (the mock's default). Root and docker.io only: elsewhere it says why and measures nothing.
// Usage: node bench/container.mjs [spawns=10] [alone=5]
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { dockerAvailable, startDockerEngine } from "../test/fixtures/docker-engine.mjs";
import { runAlone, vsLocal, vsLocalRows } from "./one-child-place.mjs";

const BIN = path.resolve(import.meta.dirname, "..", "bin", "muster.js");

/** Container vs local: spawn → turn_started, and one completion alone → the waiter. */
export async function containerVsLocal(spawns = 10, alones = 5) {
  const can = dockerAvailable();
  if (!can.ok) return { skipped: can.why };
  // Named so the CI's leftover check (.ci/run) looks there, as it does for the tests' engines.
  const engineBase = fs.mkdtempSync(path.join(os.tmpdir(), "mu-docker-"));
  return vsLocal({
    name: "container",
    socketPrefix: "mbd",
    spawnOpts: { container: {} },
    spawns,
    alones,
    // Ended however the bench ends: the engine with its containers too.
    reaper: [`--engine=${engineBase}`],
    async setup(env, cwd) {
      const engine = await startDockerEngine(engineBase);
      const stop = async () => {
        await engine.stop();
        fs.rmSync(engineBase, { recursive: true, force: true });
      };
      // This engine's client, whatever the caller's environment names.
      const withEngine = { ...env, ...engine.env, MUSTER_CONTAINER_ENGINE: engine.cli };
      const built = spawnSync(process.execPath, [BIN, "image", "build"], {
        env: withEngine,
        cwd,
        encoding: "utf8",
        timeout: 300_000,
      });
      if (built.status !== 0) {
        await stop();
        throw new Error(`muster image build exited ${built.status}: ${built.stderr.trim()}`);
      }
      // The gates are in the working directory, which a container has mounted: one write opens it on both sides.
      return {
        env: withEngine,
        gates: cwd,
        stop,
        about: { engine: "docker", engineStartMs: engine.startMs },
      };
    },
  });
}

export const containerRows = (r) => vsLocalRows(r, "container");

if (import.meta.url === `file://${process.argv[1]}`) await runAlone(containerVsLocal, containerRows);
