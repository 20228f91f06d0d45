import * as path from "node:path";
import { type PrimaryPaths, stateRoot } from "../artifacts/layout.js";
import { type LoadedSettings, loadSettings } from "../config/settings.js";
import type { Backend } from "../mux/backend.js";
import { BackendSet } from "../mux/registry.js";
import { workingDir } from "../util/cwd.js";
import { type Limits, limitsOf } from "./limits.js";
import { stallMsOf } from "./live-state.js";
import { backendNameOf, placeNameOf } from "./panes.js";
import { OwnPrimary, resolvePrimary } from "./primary.js";
import type { Registry, RegistryEntry } from "./registry.js";

export interface MusterOptions {
  /** State root; default $MUSTER_HOME or ${XDG_STATE_HOME:-~/.local/state}/muster. */
  home?: string;
  primary?: string;
  cwd?: string;
  /** Environment handed to children (captured now) and read for MUSTER_* settings. */
  env?: NodeJS.ProcessEnv;
  /** The backend new children start in (and the one for refs of its name); default: by name, MUSTER_BACKEND or tmux. */
  backend?: Backend;
}

/**
 * What the core stands on, resolved once when it is built: environment, working directory, state root, this
 * process's primary, the backends it uses and every setting. Muster adds the operations on top.
 */
export class CoreSetup {
  readonly root: string;
  /** Every backend this process has used, by name; a child's operations go to the one it recorded. */
  readonly backends: BackendSet;
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  private readonly muxVersion = new Map<string, Promise<string>>();
  /** Every MUSTER_* setting with its source, read once (base/settings). */
  readonly settings: LoadedSettings;
  /** Tree limits in force for this process (env, then config, then defaults). */
  readonly limits: Limits;
  /** An open turn with no event for this long shows as stalled (MUSTER_STALL_SECONDS, config, 60 s). */
  readonly stallMs: number;

  /** This process's primary: resolved without writing, recorded by the first write (see claimPrimary). */
  protected readonly own: OwnPrimary;

  /** Builds the core without writing anything: state is created by the first write (see claimPrimary). */
  constructor(opts: MusterOptions = {}) {
    this.env = opts.env ?? process.env;
    // workingDir, not process.cwd(): a deleted working directory must not stop a command that does not need it.
    this.cwd = path.resolve(workingDir(this.env), opts.cwd ?? ".");
    this.root = opts.home ? path.resolve(workingDir(this.env), opts.home) : stateRoot(this.env);
    this.own = new OwnPrimary(this.root, resolvePrimary(this.root, this.cwd, opts.primary, this.env));
    this.backends = new BackendSet(this.env, this.root, opts.backend);
    // Every setting from one read of the environment and the config file.
    this.settings = loadSettings(this.env);
    this.limits = limitsOf(this.settings.values);
    this.stallMs = stallMsOf(this.settings.values);
  }

  /** This primary's id (tentative while a new workspace's primary is not recorded yet). */
  get primary(): string {
    return this.own.id;
  }

  get paths(): PrimaryPaths {
    return this.own.paths;
  }

  get registry(): Registry {
    return this.own.registry;
  }

  /** Creates this primary's state before its first write; reads and refused commands never call it. */
  claimPrimary(): void {
    this.own.claim();
  }

  /** The backend new children start in (MUSTER_BACKEND, default tmux). */
  get backend(): Backend {
    return this.backends.get();
  }

  /** The backend a child runs in, by its record: its pane's backend, else the one it was spawned for. */
  backendOf(entry: Pick<RegistryEntry, "pane" | "backend" | "place">): Backend {
    return this.backends.get(backendNameOf(entry), placeNameOf(entry));
  }

  /** Checks once per instance and backend that the multiplexer runs (throws mux_unavailable). */
  async ensureMux(backend: Backend = this.backend): Promise<void> {
    if (!this.muxVersion.has(backend.name)) this.muxVersion.set(backend.name, backend.version());
    await this.muxVersion.get(backend.name);
  }
}
