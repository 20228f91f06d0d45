/**
 * Backends by name. Front ends (and the library entry) register the built-in ones (mux/builtin.ts) and any
 * from MUSTER_BACKEND_MODULE; the core only asks for a backend by the name a child recorded, so it never
 * imports a concrete one.
 */
import { backendStateDir } from "../artifacts/layout.js";
import { MusterError } from "../base/errors.js";
import { rawSetting } from "../base/settings/resolve.js";
import { autoBackendName } from "./auto.js";
import type { Backend, PaneRef } from "./backend.js";

/** What a backend is made from: the caller's environment and a folder of its own under the state root. */
export interface BackendContext {
  env: NodeJS.ProcessEnv;
  /** `<state>/backends/<name>`: the backend's own files (created by the backend when it needs them). */
  stateDir: string;
}

export type BackendFactory = (ctx: BackendContext) => Backend;

export const DEFAULT_BACKEND = "tmux";
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

/** One process's backends, made on first use and kept (a backend may cache what it looked up). */
export class BackendSet {
  private readonly made = new Map<string, Backend>();
  readonly defaultName: string;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly stateRoot: string,
    explicit?: Backend,
  ) {
    if (explicit) this.made.set(explicit.name, explicit);
    this.defaultName = explicit?.name ?? defaultBackendName(env);
  }

  /** The backend called `name`; a clear error when nothing registered it in this process. */
  get(name: string = this.defaultName): Backend {
    const have = this.made.get(name);
    if (have) return have;
    const factory = factories.get(name);
    if (!factory) {
      throw new MusterError(
        "unsupported",
        `backend "${name}" is not available here (available: ${backendNames().join(", ") || "none"}); a backend from outside muster is loaded with MUSTER_BACKEND_MODULE=<file.mjs>`,
      );
    }
    const b = factory({ env: this.env, stateDir: backendStateDir(this.stateRoot, name) });
    this.made.set(name, b);
    return b;
  }

  /** Whether `name` can be made here (made already, or registered). */
  has(name: string): boolean {
    return this.made.has(name) || factories.has(name);
  }

  /** The backend a pane belongs to. */
  of(ref: PaneRef): Backend {
    return this.get(ref.backend);
  }
}

/** What a backend module's `register` export is handed: everything it needs, from this very copy of muster. */
export interface BackendModuleApi {
  registerBackend: typeof registerBackend;
  localHostControl: import("./backend.js").HostControl;
  MusterError: typeof MusterError;
}
