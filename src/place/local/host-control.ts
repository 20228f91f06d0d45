/** HostControl for child hosts that are processes on this machine (tmux panes, plain detached processes). */
import { ENV } from "../../base/settings/resolve.js";
import { hostAlive, hostAliveAsync, processesMentioning, sessionLeadersWithEnv } from "../../util/proc.js";
import { signalGroup } from "../../util/process-group.js";
import type { HostControl, HostRef } from "../place.js";

function deliver(host: HostRef, signal: NodeJS.Signals): boolean {
  // The pid check first: a pid reused by another program must never get our signal.
  if (!hostAlive(host.pid, host.dir)) return false;
  try {
    process.kill(host.pid, signal);
    return true;
  } catch {
    return false; // it exited between the check and the signal
  }
}

export const localHostControl: HostControl = {
  async signal(host, signal) {
    return deliver(host, signal);
  },
  // Local /proc answers for certain: a local host is never "unknown".
  async alive(host) {
    return (await hostAliveAsync(host.pid, host.dir)) ? "alive" : "dead";
  },
  // A detached host is not our child: its status is not ours to read (a backend may know it, as tmux does).
  async exitStatus() {
    return null;
  },
  async signalGroup(_host, pgid, signal) {
    signalGroup(pgid, signal);
  },
  // A runner is spawned detached (a session of its own) with the child's MUSTER_ARTIFACT_DIR in its environment.
  async runnersOf(dir) {
    return sessionLeadersWithEnv(ENV.artifactDir, dir);
  },
  describeProcesses(dir) {
    return processesMentioning(dir)
      .map((p) => `pid ${p.pid} state ${p.state}${p.wchan ? ` in ${p.wchan}` : ""}`)
      .join(", ");
  },
};
