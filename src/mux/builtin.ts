/**
 * The backend entry: registers the built-in backends and loads the ones named by MUSTER_BACKEND_MODULE.
 * Imported by the front ends and the library entry, never by the core.
 */
import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { MusterError } from "../base/errors.js";
import { rawSetting } from "../base/settings/resolve.js";
import { CONTAINER_KIND, containerPlaceFactory, makeContainerPlace } from "../place/container/place.js";
import { clusterPlace } from "../place/k8s/clusters.js";
import { K8S_KIND, makePodPlace, podPlaceFactory } from "../place/k8s/place.js";
import { localPlace } from "../place/local/index.js";
import { carryByMirror, localRelayHubArgv } from "../place/mirror/carry.js";
import {
  registerChildPlace,
  registerHostChooser,
  registerNamedPlace,
  registerPlace,
} from "../place/registry.js";
import { sshHostChooser } from "../place/ssh/admin.js";
import { SSH_KIND, sshPlaceFactory } from "../place/ssh/place.js";
import { workingDir } from "../util/cwd.js";
import { importModule } from "../util/import-module.js";
import { localHostControl } from "./local-host.js";
import { createPtyBackend } from "./pty/backend.js";
import { type BackendModuleApi, registerBackend } from "./registry.js";
import { createTmuxBackend } from "./tmux/backend.js";
import { createZellijBackend } from "./zellij/backend.js";

registerBackend("tmux", ({ env, place }) => createTmuxBackend(env, place));
registerBackend("zellij", ({ env, stateDir, place }) => createZellijBackend(env, stateDir, place));
registerBackend("pty", (ctx) => createPtyBackend(ctx));
registerPlace(SSH_KIND, sshPlaceFactory);
registerHostChooser(sshHostChooser);
registerPlace(CONTAINER_KIND, containerPlaceFactory);
registerChildPlace(CONTAINER_KIND, makeContainerPlace);
registerPlace(K8S_KIND, podPlaceFactory);
registerChildPlace(K8S_KIND, makePodPlace);
registerNamedPlace(clusterPlace);

const loaded = new Map<string, Promise<void>>();

/**
 * Loads each module of MUSTER_BACKEND_MODULE (paths separated by the platform's path delimiter `:`) once.
 * A module exports `register(api)` and calls `api.registerBackend(name, factory)`: it gets muster's own
 * registry that way, whichever copy of muster it could import itself.
 */
export async function loadBackendModules(
  env: NodeJS.ProcessEnv = process.env,
  // workingDir, not process.cwd(): that throws in a deleted directory, where muster must still start.
  cwd = workingDir(env),
): Promise<void> {
  const spec = rawSetting(env, "backendModule");
  if (!spec) return;
  for (const p of spec.split(":").filter((s) => s !== "")) {
    // The working directory only for a relative path: a command run from a deleted directory must not fail here.
    const file = isAbsolute(p) ? p : resolve(cwd ?? process.cwd(), p);
    let once = loaded.get(file);
    if (!once) {
      once = loadOne(file);
      loaded.set(file, once);
    }
    await once;
  }
}

async function loadOne(file: string): Promise<void> {
  let mod: { register?: unknown; default?: unknown };
  try {
    mod = await importModule<typeof mod>(pathToFileURL(file).href);
  } catch (e) {
    throw new MusterError(
      "invalid_config",
      `MUSTER_BACKEND_MODULE: cannot load ${file}: ${(e as Error).message}`,
      {
        cause: e,
      },
    );
  }
  const register = typeof mod.register === "function" ? mod.register : mod.default;
  if (typeof register !== "function")
    throw new MusterError(
      "invalid_config",
      `MUSTER_BACKEND_MODULE: ${file} exports no register(api) function`,
    );
  const api: BackendModuleApi = {
    registerBackend,
    registerPlace,
    localPlace,
    localHostControl,
    MusterError,
    mirror: { carry: carryByMirror, relayHubArgv: localRelayHubArgv },
  };
  await register(api);
}
