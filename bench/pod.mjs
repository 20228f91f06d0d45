#!/usr/bin/env node
// Children in Kubernetes Pods (place k8s:<id>, `muster spawn --on k8s`) against local children, in one run, as
// ratios: spawn → turn_started, and one completion → the waiter (bench/one-child-place.mjs). The cluster is the
// stand-in API server (test/fixtures/k8s-standin.mjs) in this process: the real API and exec-over-WebSocket
// protocol, but each Pod is a folder on this machine whose processes run here, started ~10 ms after it is
// made. With no scheduler and no image to pull, what the ratio shows is muster's own overhead: the Pod's API
// calls, the install into it and every command (and the mirror's link) going through exec. Root only (the
// stand-in finds a Pod's daemons through /proc): elsewhere it says why and measures nothing.
// Usage: node bench/pod.mjs [spawns=10] [alone=5]
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startK8sStandin } from "../test/fixtures/k8s-standin.mjs";
import { runAlone, vsLocal, vsLocalRows } from "./one-child-place.mjs";

/** Pod vs local: spawn → turn_started, and one completion alone → the waiter. */
export async function podVsLocal(spawns = 10, alones = 5) {
  if (process.getuid?.() !== 0) return { skipped: "needs root" };
  // The stand-in's folder (its kubeconfig and every Pod's folder), named as the k8s tests name theirs.
  const apiBase = fs.mkdtempSync(path.join(os.tmpdir(), "mu-k8s-"));
  return vsLocal({
    name: "pod",
    socketPrefix: "mbk",
    spawnOpts: { on: "k8s" },
    spawns,
    alones,
    // The stand-in dies with this process, but what it started in a Pod runs on in a session of its own.
    reaper: [`--k8s=${apiBase}`],
    async setup(env) {
      const api = await startK8sStandin(apiBase);
      // The gates: outside every Pod's folder and the working directory; they open only because the stand-in's
      // Pods' processes run on this machine (a Pod mounts nothing from here).
      const gates = path.join(apiBase, "gates");
      fs.mkdirSync(gates);
      return {
        env: { ...env, KUBECONFIG: api.kubeconfig },
        gates,
        about: { cluster: "stand-in API server" },
        stop: async () => {
          await api.stop();
          fs.rmSync(apiBase, { recursive: true, force: true });
        },
      };
    },
  });
}

export const podRows = (r) => vsLocalRows(r, "Pod (stand-in)");

if (import.meta.url === `file://${process.argv[1]}`) await runAlone(podVsLocal, podRows);
