import * as fs from "node:fs";
import * as path from "node:path";
import type { ChildMeta, MusterEvent } from "../artifacts/events.js";
import { writeInboxItem } from "../artifacts/inbox.js";
import { childFiles } from "../artifacts/layout.js";
import type { Backend, Placement } from "../mux/backend.js";
import { createTmuxBackend } from "../mux/tmux/backend.js";
import { loadProfile } from "../profiles/profile.js";
import { resolveSettings } from "../profiles/settings.js";
import { getRunner, runnerNames } from "../runners/registry.js";
import { seedSession } from "../sessions/seed.js";
import { isResumable, loadSession, sessionFileOf } from "../sessions/store.js";
import { ensureDir, writeFileAtomic, writeJsonAtomic } from "../util/fsx.js";
import { shortId, uuidv7 } from "../util/ids.js";
import { PACKAGE_ROOT } from "../util/pkg.js";
import { type LoadedChild, loadChild, resolveChildId } from "./children.js";
import { isMusterError, MusterError } from "./errors.js";
import { type FollowUp, findOwner, queueTurn, type TurnSettings } from "./follow-up.js";
import { hostAlive, probeChild, settleFromParent, settleQueuedFromParent } from "./liveness.js";
import { type PrimaryPaths, primaryPaths, stateRoot } from "./paths.js";
import { resolvePrimary } from "./primary.js";
import { Registry, type RegistryEntry } from "./registry.js";
import { type TurnResult, toResult } from "./results.js";
import { lastCompletion, openTurn } from "./state.js";
import { type WaitOptions, type WaitOutcome, waitForTurns } from "./wait.js";
import { PrimaryWatcher, type WatchOptions } from "./watcher.js";

export interface MusterOptions {
  /** State root; default $MUSTER_HOME or ${XDG_STATE_HOME:-~/.local/state}/muster. */
  home?: string;
  primary?: string;
  cwd?: string;
  /** Environment handed to children (captured now) and read for MUSTER_* settings. */
  env?: NodeJS.ProcessEnv;
  backend?: Backend;
}

export interface SpawnOptions {
  agent: string;
  prompt: string;
  cwd?: string;
  /** argv for the command runner. */
  command?: string[];
  model?: string;
  reasoning?: string;
  placement?: Placement;
}

export interface CancelResult {
  id: string;
  /** The child's status afterwards. */
  status: string;
  /** Who recorded it: the child host, a parent (host unresponsive or never started), or nobody (already over). */
  by: "child" | "parent" | "none";
  /** Whether a turn was running or queued (and so settled `cancelled`). */
  turnCancelled: boolean;
}

export interface SpawnResult {
  id: string;
  turnId: string;
  agent: string;
  artifactDir: string;
  paneId: string;
  /** The model and reasoning the first turn runs with (call ?? profile ?? primary). */
  model?: string;
  reasoning?: string;
  /** Profile and settings warnings (a bad field, a model spelling passed over). */
  warnings: string[];
}

// Prompts travel as files (inbox/, prompts/), never through a pane or an event record, so this
// only bounds memory; a single argv word is capped by the OS at 128 KiB, larger prompts use --file.
export const MAX_PROMPT_BYTES = 1024 * 1024;
// The child host as one bundled file (scripts/bundle.mjs): it loads ~30 ms faster than its module graph.
const HOST_SCRIPT = path.join(PACKAGE_ROOT, "dist", "child", "host.bundle.js");

/** The core: every front end (CLI, MCP, library) calls these and nothing else. */
export class Muster {
  readonly root: string;
  readonly primary: string;
  readonly paths: PrimaryPaths;
  readonly registry: Registry;
  readonly backend: Backend;
  private readonly env: NodeJS.ProcessEnv;
  private readonly cwd: string;
  private muxVersion: Promise<string> | undefined;

  constructor(opts: MusterOptions = {}) {
    this.env = opts.env ?? process.env;
    this.cwd = path.resolve(opts.cwd ?? process.cwd());
    this.root = opts.home ? path.resolve(opts.home) : stateRoot(this.env);
    ensureDir(this.root);
    this.primary = resolvePrimary(this.root, this.cwd, opts.primary, this.env).id;
    this.paths = primaryPaths(this.root, this.primary);
    ensureDir(this.paths.artifacts);
    this.registry = new Registry(this.paths.registry, this.primary);
    this.backend = opts.backend ?? createTmuxBackend(this.env);
  }

  /** Starts a child in a new pane with its first turn queued; returns at once. Nothing is left behind on failure. */
  async spawn(opts: SpawnOptions): Promise<SpawnResult> {
    checkPrompt(opts.prompt);
    const profile = loadProfile(opts.agent, this.cwd, this.env);
    const runner = getRunner(profile.runner);
    if (!runner) {
      throw new MusterError(
        "usage",
        `agent "${profile.name}" (${profile.source}) uses runner "${profile.runner}", which is not available yet; runners: ${runnerNames().join(", ")}`,
      );
    }
    const settings = resolveSettings({
      runner: runner.name,
      call: {
        ...(opts.model ? { model: opts.model } : {}),
        ...(opts.reasoning ? { reasoning: opts.reasoning } : {}),
      },
      profile,
      env: this.env,
    });
    const command = opts.command && opts.command.length > 0 ? opts.command : profile.command;
    if (runner.name === "command" && !command) {
      throw new MusterError(
        "usage",
        `agent "${profile.name}" runs a command: give its argv after --, e.g. muster spawn --agent ${profile.name} "task" -- ./script.sh {prompt}`,
      );
    }
    const cwd = path.resolve(this.cwd, opts.cwd ?? ".");
    if (!fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory())
      throw new MusterError("usage", `working directory ${cwd} does not exist`);
    this.muxVersion ??= this.backend.version();
    await this.muxVersion;

    const id = uuidv7();
    const turnId = uuidv7();
    const dir = this.paths.artifactDir(id);
    const files = childFiles(dir);
    const parent = this.env.MUSTER_CHILD_ID ?? null;
    const depth = Number(this.env.MUSTER_DEPTH ?? "-1") + 1;
    const childEnv = Object.fromEntries(
      Object.entries(this.env).filter((e): e is [string, string] => typeof e[1] === "string"),
    );
    const meta: ChildMeta = {
      v: 1,
      id,
      primary: this.primary,
      parent,
      depth: Number.isFinite(depth) && depth >= 0 ? depth : 0,
      agent: profile.name,
      runner: runner.name,
      cwd,
      createdAt: new Date().toISOString(),
      profile: {
        name: profile.name,
        source: profile.source,
        ...(profile.model ? { model: profile.model } : {}),
        ...(profile.reasoning ? { reasoning: profile.reasoning } : {}),
        ...(command ? { command } : {}),
        ...(profile.protocol ? { protocol: profile.protocol } : {}),
        ...(profile.systemPrompt ? { systemPrompt: profile.systemPrompt } : {}),
      },
      envNames: Object.keys(childEnv).sort(),
    };
    const entry: RegistryEntry = {
      id,
      agent: profile.name,
      runner: runner.name,
      parent,
      createdAt: meta.createdAt,
      cwd,
      pane: null,
    };
    try {
      for (const d of [files.dir, files.inbox, files.outputs, files.prompts, files.control]) ensureDir(d);
      writeJsonAtomic(files.meta, meta);
      writeFileAtomic(files.events, "");
      writeJsonAtomic(files.envFile, { env: childEnv });
      seedSession(sessionFileOf(dir), {
        id,
        primary: this.primary,
        parent,
        agent: profile.name,
        runner: runner.name,
        cwd,
        createdAt: meta.createdAt,
        systemPrompt: profile.systemPrompt,
      });
      writeInboxItem(files.inbox, {
        v: 1,
        turnId,
        prompt: opts.prompt,
        source: "inbox",
        ...(settings.model ? { model: settings.model } : {}),
        ...(settings.reasoning ? { reasoning: settings.reasoning } : {}),
        createdAt: meta.createdAt,
      });
      await this.registry.update((doc) => {
        doc.children[id] = entry;
      });
      const pane = await this.backend.spawn({
        argv: hostArgv(dir),
        start: "immediate",
        cwd,
        name: `${profile.name}-${id.slice(-6)}`,
        ...(opts.placement ? { placement: opts.placement } : {}),
      });
      await this.registry.update((doc) => {
        const e = doc.children[id];
        if (e) e.pane = pane;
      });
      return {
        id,
        turnId,
        agent: profile.name,
        artifactDir: dir,
        paneId: pane.paneId,
        ...(settings.model ? { model: settings.model } : {}),
        ...(settings.reasoning ? { reasoning: settings.reasoning } : {}),
        warnings: [...profile.warnings, ...settings.warnings],
      };
    } catch (e) {
      await this.registry
        .update((doc) => {
          delete doc.children[id];
        })
        .catch(() => {});
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(sessionFileOf(dir), { force: true });
      throw e;
    }
  }

  /** Queues the child's next turn (it starts when the current one ends); the child must still be running. */
  async send(idOrPrefix: string, prompt: string, opts: TurnSettings = {}): Promise<FollowUp> {
    checkPrompt(prompt);
    const c = this.child(idOrPrefix);
    if (c.status === "closed" || c.status === "lost") {
      throw new MusterError(
        "not_running",
        `child ${c.entry.id} has ${c.status === "lost" ? "been lost" : "exited"}; continue it with: muster spawn --resume ${shortId(c.entry.id)} "…"`,
      );
    }
    return queueTurn(c, prompt, opts, this.env);
  }

  /**
   * Continues a settled child owned by this primary: a new turn in its pane, or — when the pane's host is
   * gone — in a new pane, from its stored conversation (native runner resume, or a transcript).
   */
  async resume(
    idOrPrefix: string,
    prompt: string,
    opts: TurnSettings & { placement?: Placement } = {},
  ): Promise<FollowUp> {
    checkPrompt(prompt);
    const c = this.childForResume(idOrPrefix);
    if (c.status === "running" || c.status === "starting") {
      throw new MusterError(
        "not_running",
        `child ${c.entry.id} already has an active turn; wait for it or cancel it first`,
      );
    }
    const session = loadSession(sessionFileOf(c.files.dir));
    if (!isResumable(session)) {
      throw new MusterError(
        "not_running",
        `child ${c.entry.id} is not resumable: no turn of it has completed with a result`,
      );
    }
    if (c.status === "idle") return queueTurn(c, prompt, opts, this.env);
    const follow = queueTurn(c, prompt, opts, this.env);
    const pane = await this.backend.spawn({
      argv: [...hostArgv(c.files.dir), "--resume"],
      start: "immediate",
      cwd: c.entry.cwd,
      name: `${c.entry.agent}-${c.entry.id.slice(-6)}`,
      ...(opts.placement ? { placement: opts.placement } : {}),
    });
    await this.registry.update((doc) => {
      const e = doc.children[c.entry.id];
      if (e) e.pane = pane;
    });
    // Return once the new host runs, so every later reader sees a live child, not the old exit.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const now = this.reload(c.entry);
      if (!now.state.exited && now.state.hostPid !== c.state.hostPid) break;
      if (Date.now() > deadline || (await this.backend.alive(pane)) === "dead") {
        await this.backend.kill(pane).catch(() => {});
        await settleQueuedFromParent(c.files.dir, "the resumed child host did not start");
        throw new MusterError(
          "mux_unavailable",
          `the resumed child ${c.entry.id} did not start in its new pane`,
        );
      }
      await new Promise((r) => setTimeout(r, 15));
    }
    return { ...follow, queued: false, newPane: pane.paneId };
  }

  /** Like child(), but says so when the id belongs to another primary (only the owner may resume). */
  private childForResume(idOrPrefix: string): LoadedChild {
    try {
      return this.child(idOrPrefix);
    } catch (e) {
      const owner = isMusterError(e) && e.code === "not_found" ? findOwner(this.root, idOrPrefix) : undefined;
      if (owner && owner !== this.primary) {
        throw new MusterError(
          "not_found",
          `child ${idOrPrefix} belongs to another primary (${owner}); only its owner can resume it`,
        );
      }
      throw e;
    }
  }

  /** Waits for the named children's current turns; see waitForTurns. */
  async wait(idsOrPrefixes: string[], opts: WaitOptions = {}): Promise<WaitOutcome> {
    const children = idsOrPrefixes.map((i) => this.child(i));
    return waitForTurns(this, children, opts);
  }

  /** The result of a settled turn (default: the latest), with the snapshot text verified against its sha256. */
  result(idOrPrefix: string, turnId?: string): TurnResult {
    const c = this.child(idOrPrefix);
    const completion = turnId ? c.state.completions.get(turnId) : lastCompletion(c.state);
    if (!completion) {
      if (turnId) throw new MusterError("not_found", `child ${c.entry.id} has no settled turn ${turnId}`);
      throw new MusterError(
        "not_running",
        `child ${c.entry.id} has no settled turn yet (status ${c.status}); muster wait ${shortId(c.entry.id)}`,
      );
    }
    return toResult(c, completion, true);
  }

  /** Cancels the running turn and closes the child; the pane stays readable. */
  async cancel(idOrPrefix: string, opts: { graceMs?: number } = {}): Promise<CancelResult> {
    const c = this.child(idOrPrefix);
    const id = c.entry.id;
    if (c.status === "closed" || c.status === "lost")
      return { id, status: c.status, by: "none", turnCancelled: false };
    const turnCancelled = c.status === "running" || c.status === "starting";
    const settledByChild = async (ms: number): Promise<CancelResult | undefined> => {
      const deadline = Date.now() + ms;
      for (;;) {
        const now = this.reload(c.entry);
        if (now.state.exited) return { id, status: now.status, by: "child", turnCancelled };
        if (Date.now() >= deadline) return undefined;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const pid = c.state.hostPid;
    if (pid !== undefined && hostAlive(pid, c.files.dir)) {
      process.kill(pid, "SIGTERM");
      const done = await settledByChild(opts.graceMs ?? 5000);
      if (done) return done;
      // The host did not settle in time: kill it, and settle from here once it is really gone.
      try {
        process.kill(pid, "SIGKILL");
      } catch {}
      for (let i = 0; i < 100 && hostAlive(pid, c.files.dir); i++)
        await new Promise((r) => setTimeout(r, 20));
    } else if (c.entry.pane) {
      // No host yet (or it just started): closing the pane sends it SIGHUP; give it a moment to record that itself.
      await this.backend.kill(c.entry.pane).catch(() => {});
      const done = await settledByChild(500);
      if (done) return done;
    }
    await settleFromParent(c.files.dir, "cancelled", "cancelled by muster cancel");
    return { id, status: "closed", by: "parent", turnCancelled };
  }

  /** All children of this primary, newest last, each reconciled with liveness. */
  async list(): Promise<LoadedChild[]> {
    const doc = this.registry.read();
    const out: LoadedChild[] = [];
    for (const entry of Object.values(doc.children).sort((a, b) => a.id.localeCompare(b.id))) {
      out.push(await this.reconcile(this.reload(entry)));
    }
    return out;
  }

  /** One child, reconciled with liveness. */
  async status(idOrPrefix: string): Promise<LoadedChild> {
    return this.reconcile(this.child(idOrPrefix));
  }

  /** Turns a dead host into a recorded `lost`; returns the child's fresh state. */
  async reconcile(c: LoadedChild): Promise<LoadedChild> {
    if (c.status === "closed" || c.status === "lost") return c;
    const v = await probeChild(this.backend, c.files.dir, c.entry.pane, c.entry.createdAt, c.state.hostPid);
    if (!v.dead) return c;
    await settleFromParent(c.files.dir, "lost", v.reason);
    return this.reload(c.entry);
  }

  async capture(idOrPrefix: string, lines = 200): Promise<{ id: string; text: string }> {
    const c = this.child(idOrPrefix);
    if (!c.entry.pane) throw new MusterError("not_running", `child ${c.entry.id} has no pane`);
    return { id: c.entry.id, text: await this.backend.capture(c.entry.pane, { lines }) };
  }

  /** Starts the long-lived watcher of this primary (events of every child, lost detection). */
  async watch(opts: WatchOptions): Promise<PrimaryWatcher> {
    const w = new PrimaryWatcher(this, opts);
    await w.start();
    return w;
  }

  /** Every event of every child of this primary as an async iterator (existing events first); break to stop. */
  async *events(opts: { livenessMs?: number } = {}): AsyncGenerator<{ id: string; event: MusterEvent }> {
    const queue: { id: string; event: MusterEvent }[] = [];
    let wake: (() => void) | undefined;
    const w = await this.watch({
      onEvent: (id, event) => {
        queue.push({ id, event });
        wake?.();
      },
      ...(opts.livenessMs ? { livenessMs: opts.livenessMs } : {}),
    });
    try {
      for (;;) {
        while (queue.length > 0) yield queue.shift()!;
        await new Promise<void>((r) => {
          wake = r;
        });
        wake = undefined;
      }
    } finally {
      await w.close();
    }
  }

  child(idOrPrefix: string): LoadedChild {
    return this.reload(resolveChildId(this.registry.read(), idOrPrefix));
  }

  reload(entry: RegistryEntry): LoadedChild {
    return loadChild(this.paths, entry);
  }

  /** Whether a turn is running now (for status displays). */
  static running(c: LoadedChild): boolean {
    return openTurn(c.state) !== undefined;
  }
}

/**
 * The pane's command. The host gets its runners' environment from env.json, so its own start can skip
 * what only slows node down (NODE_EXTRA_CA_CERTS: ~50 ms of certificate loading here).
 */
function hostArgv(dir: string): string[] {
  return ["env", "-u", "NODE_EXTRA_CA_CERTS", process.execPath, HOST_SCRIPT, dir];
}

function checkPrompt(prompt: string): void {
  if (prompt.trim() === "") throw new MusterError("usage", "the prompt is empty");
  const bytes = Buffer.byteLength(prompt);
  if (bytes > MAX_PROMPT_BYTES) {
    throw new MusterError(
      "usage",
      `the prompt is ${bytes} bytes; the limit is ${MAX_PROMPT_BYTES} (put the text in a file and refer to it in the prompt)`,
    );
  }
}

export const createMuster = (opts: MusterOptions = {}): Muster => new Muster(opts);

export type { MusterEvent };
