// The environment every benchmark runs muster in: its own state root and private tmux server, and no
// lineage inherited from a pane it might be started from.
import * as path from "node:path";

/** The run-slot bound (default 4) is lifted: benchmarks measure delivery and scheduling, not the bound. */
export function benchEnv(base, socket) {
  const env = {
    ...process.env,
    MUSTER_HOME: path.join(base, "home"),
    MUSTER_TMUX_SOCKET: socket,
    MUSTER_MAX_RUNNING: "100",
  };
  for (const k of ["TMUX", "TMUX_PANE", "MUSTER_PRIMARY", "MUSTER_CHILD_ID", "MUSTER_DEPTH"]) delete env[k];
  return env;
}
