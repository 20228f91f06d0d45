/**
 * Backends by name. Front ends (and the library entry) register the built-in ones (mux/builtin.ts) and any
 * from MUSTER_BACKEND_MODULE; the core only asks for a backend by the name a child recorded, so it never
 * imports a concrete one.
 */
import { backendStateDir } from "../artifacts/layout.js";
import { MusterError } from "../base/errors.js";
import { rawSetting } from "../base/settings/resolve.js";
import { LOCAL_PLACE, type Place } from "../place/place.js";
import { placeOf } from "../place/registry.js";
import { autoBackendName } from "./auto.js";
import type { Backend, PaneRef } from "./backend.js";

/** What a backend is made from: the caller's environment, a folder of its own, and the place it serves. */
export interface BackendContext {
  env: NodeJS.ProcessEnv;
  /** `<state>/backends/<name>`: the backend's own files (created by the backend when it needs them). */
  stateDir: string;
  /** Where its child hosts (and its client commands) run. */
  place: Place;
}

export type BackendFactory = (ctx: BackendContext) => Backend;

const NAME = /^[a-z][a-z0-9-]{0,31}$/;
const factories = new Map<string, BackendFactory>();

/** Makes a backend available by name; registering a name again replaces it (the newest module wins). */
export function registerBackend(name: string, factory: BackendFactory): void {
  if (!NAME.test(name))
    throw new MusterError("invalid_argument", `backend name ${JSON.stringify(name)} is not [a-z][a-z0-9-]*`);
  factories.set(name, factory);
}

export const backendNames = (): string[] => [...factories.keys()].sort();

/** The backend new children start in: MUSTER_BACKEND, else tmux where it exists (mux/auto.ts). */
export const defaultBackendName = (env: NodeJS.ProcessEnv): string =>
  rawSetting(env, "backend") || autoBackendName(env, (n) => factories.has(n));

/** One process's backends, one per terminal and place, made on first use and kept (a backend may cache). */
export class BackendSet {
  private readonly made = new Map<string, Backend>();
  readonly defaultName: string;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly stateRoot: string,
    explicit?: Backend,
  ) {
    if (explicit) this.made.set(key(explicit.name, explicit.place.name), explicit);
    this.defaultName = explicit?.name ?? defaultBackendName(env);
  }

  /** The backend called `name` for `place`; a clear error when nothing registered either in this process. */
  get(name: string = this.defaultName, place: string = LOCAL_PLACE): Backend {
    const have = this.made.get(key(name, place));
    if (have) return have;
    const factory = factories.get(name);
    if (!factory) {
      throw new MusterError(
        "unsupported",
        `backend "${name}" is not available here (available: ${backendNames().join(", ") || "none"}); a backend from outside muster is loaded with MUSTER_BACKEND_MODULE=<file.mjs>`,
      );
    }
    const at = placeOf(place, this.env);
    const b = factory({ env: this.env, stateDir: backendStateDir(this.stateRoot, name), place: at });
    // A plugin written before places had names runs its hosts where it always did: the place asked for.
    if (!(b as Partial<Backend>).place) Object.assign(b, { place: at });
    this.made.set(key(name, place), b);
    return b;
  }

  /** Whether `name` can be made here (made already, or registered). */
  has(name: string): boolean {
    return [...this.made.values()].some((b) => b.name === name) || factories.has(name);
  }

  /** The backend a pane belongs to (the place its child runs in: this machine unless named). */
  of(ref: PaneRef, place: string = LOCAL_PLACE): Backend {
    return this.get(ref.backend, place);
  }
}

const key = (backend: string, place: string): string => `${backend}@${place}`;

/** What a backend module's `register` export is handed: everything it needs, from this very copy of muster. */
export interface BackendModuleApi {
  registerBackend: typeof registerBackend;
  /** Registers a kind of place (where child hosts run): `registerPlace("ns", ({ name, env }) => place)`. */
  registerPlace: typeof import("../place/registry.js").registerPlace;
  /** This machine as a place: a place of another kind may run its commands through it. */
  localPlace: Place;
  localHostControl: import("./backend.js").HostControl;
  MusterError: typeof MusterError;
  /** The artifact mirror, for a place whose hosts see another disk (its `carry`). */
  mirror: {
    /**
     * Starts carrying a child's dir over the place's link (argv run here, its stdio reaching a relay hub
     * there; one link serves all the place's children).
     */
    carry: typeof import("../place/mirror/carry.js").carryByMirror;
    /** A relay hub's argv with this machine's node and install (wrap it to run it elsewhere). */
    relayHubArgv: typeof import("../place/mirror/carry.js").localRelayHubArgv;
  };
}
