/** The place every child runs in today: this machine, its processes seen through /proc. */
import * as path from "node:path";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import { findOnPath } from "../../util/which.js";
import { LOCAL_PLACE, type Place } from "../place.js";
import { execLocal } from "./exec.js";
import { localHostControl } from "./host-control.js";

// The child host as one bundled file (scripts/bundle.mjs): it loads ~30 ms faster than its module graph.
const HOST_SCRIPT = path.join(PACKAGE_ROOT, "dist", "child", "host.bundle.js");

export const localPlace: Place = {
  name: LOCAL_PLACE,
  host: localHostControl,
  exec: execLocal,
  // The host gets its runners' environment from env.json, so its own start can skip what only slows node
  // down (NODE_EXTRA_CA_CERTS: ~50 ms of certificate loading here).
  hostArgv: (dir, extra = []) => [
    "env",
    "-u",
    "NODE_EXTRA_CA_CERTS",
    process.execPath,
    HOST_SCRIPT,
    dir,
    ...extra,
  ],
  findCommand: async (command, env) => findOnPath(command, env.PATH),
};

export { localHostControl };
