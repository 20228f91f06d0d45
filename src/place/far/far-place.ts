/**
 * What every place on another machine shares (an SSH host, a container): a child's host runs there in a tmux
 * server (the tmux backend runs its commands through this place's exec) and writes its artifact dir on that
 * machine's disk under the state root there. The parent reads a mirror of it, kept by the place's keeper over
 * one link (`<link argv> node relay-hub-main.js --map <here> <there>`, place/mirror/), so every command works
 * on local files and a dropped link resumes from the mirror's byte cursor. muster's far side is installed on
 * first use, and again whenever this build differs (remote.ts). A subclass says how commands and the link
 * reach the machine (its FarShell), how a person's terminal does, and what the probe checks besides.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { childFiles, stateRoot } from "../../artifacts/layout.js";
import { MusterError } from "../../base/errors.js";
import { handoverEnv, resolveSettings } from "../../base/settings/resolve.js";
import { worktreePath } from "../../isolation/result.js";
import { sessionFileOf } from "../../sessions/store.js";
import { carryByMirror, stopKeeper } from "../mirror/carry.js";
import {
  ExecFailure,
  type ExecOptions,
  type ExecRun,
  type HostControl,
  type Liveness,
  type Place,
} from "../place.js";
import { remoteHostControl } from "./host-control.js";
import { checkNode, type FarShell, installOn, probeHost, type RemoteInfo } from "./remote.js";

/** Settings whose values are paths or names of this machine: a child on another machine must not get them. */
const LOCAL_ONLY = /^MUSTER_(HOME|BACKEND_MODULE|BACKEND|PLACE|TMUX_SOCKET|ZELLIJ_SESSION)$|^MUSTER_.*_BIN$/;

export interface FarReady {
  info: RemoteInfo;
  /** Where this build's far side is installed there. */
  install: string;
}

/** What the one probe of the machine also asks, and how a missing node is put right. */
export interface ProbeAsk {
  /** Folders to check in the same round trip (RemoteInfo.dirs). */
  dirs: readonly string[];
  /** The node to use there ("": the one on its PATH). */
  node: string;
  /** Names the machine in a refusal (`host build1`). */
  where: string;
  /** How to give it a node, for the refusal. */
  nodeFix: string;
}

export abstract class FarPlace implements Place {
  abstract readonly name: string;
  readonly host: HostControl;
  readonly tuiUnavailable =
    "the TUI mode needs node-pty, a native addon muster's part on another machine does not ship";
  protected readonly nearRoot: string;
  private readying: Promise<FarReady> | undefined;
  private provisioning: Promise<void> | undefined;
  private readied: FarReady | undefined;

  constructor(protected readonly env: NodeJS.ProcessEnv) {
    this.nearRoot = stateRoot(env);
    const control = remoteHostControl(
      async (argv) => {
        const r = await this.shell.run(argv, { timeoutMs: 15_000 }).catch(() => null);
        return r && r.exitCode === 0 ? r.stdout : null;
      },
      async (dir) => {
        await this.prepare();
        return this.pathThere(dir);
      },
    );
    this.host = {
      ...control,
      // A probe of a running child also keeps its mirror: a keeper that died is started again.
      alive: async (h) => {
        await this.mirror(h.dir, this.env, "revive").catch(() => undefined);
        const said = await control.alive(h);
        return said === "unknown" ? this.unanswered(h.dir) : said;
      },
      deathReason: async (h) => this.whyGone(h.dir) ?? null,
    };
  }

  /** How commands reach the machine. */
  protected abstract get shell(): FarShell;
  /** The argv here that runs `argv` there with stdin and stdout as one pipe (the mirror's link). */
  protected abstract linkArgv(argv: string[]): string[];
  /** What the probe also asks. */
  protected abstract probeAsk(): ProbeAsk;
  abstract interactive(argv: string[]): string[];

  /**
   * Makes the machine ready to start a host (a container is made, or started again); nothing by default.
   * Only a spawn or a resume calls it (through `ready`): a probe of a child never brings a machine back.
   */
  protected async provision(): Promise<void> {}

  /**
   * What a host that could not be asked about (`dir`'s) is: "unknown" here (a network is not a death); a
   * place that can tell its machine is gone for good (a removed container) says "dead".
   */
  protected async unanswered(_dir: string): Promise<Liveness> {
    return "unknown";
  }

  private readonly gone = new Map<string, string>();

  /** Why the host of `dir` found dead is gone, when the place said (goneBecause, letGo). */
  private whyGone(dir: string): string | undefined {
    return this.gone.get(dir);
  }

  /** Keeps why the host of `dir` is gone (or is about to be found gone), for the record of its end. */
  protected goneBecause(dir: string, why: string): void {
    this.gone.set(dir, why);
  }

  /**
   * The machine of `dir`'s host is gone for good (a removed container, a deleted or evicted Pod): its keeper
   * ends and the dir is no longer a mirror, so the child's end is recorded here, where its only record is now.
   */
  protected async letGo(dir: string, why: string): Promise<Liveness> {
    this.goneBecause(dir, why);
    await stopKeeper(dir, this.name).catch(() => undefined);
    const files = childFiles(dir);
    fs.rmSync(files.mirror, { force: true });
    fs.rmSync(files.mirrorLink, { force: true });
    return "dead";
  }

  /**
   * The machine was put to rest (a container stopped, a Sandbox suspended): the next `ready` in this process
   * (a long-lived one: the MCP server, a workflow) makes it again and asks it again what it has.
   */
  protected unready(): void {
    this.provisioning = undefined;
    this.readying = undefined;
  }

  /** A child removed: the keeper of a place made for it alone ends with it. */
  protected async endKeeper(dir: string): Promise<void> {
    await stopKeeper(dir, this.name).catch(() => undefined);
  }

  /** Variables every child there gets by name besides muster's settings and a profile's `env`. */
  protected namedEnv(): readonly string[] {
    return [];
  }

  /**
   * Probes the machine and installs muster's far side there when this build is not there yet (once per
   * process). The same round trip checks the folders `probeAsk` names.
   */
  prepare(): Promise<FarReady> {
    this.readying ??= (async () => {
      // Asked while this process makes the machine (a container): once it is there.
      await this.provisioning?.catch(() => undefined);
      const ask = this.probeAsk();
      const info = await probeHost(this.shell, [], ask.dirs, ask.node);
      checkNode(ask.where, info, ask.nodeFix);
      const install = await installOn(this.shell, info);
      this.readied = { info, install };
      return this.readied;
    })();
    // A failure is not kept: the next call asks again (the machine may be back).
    this.readying.catch(() => {
      this.readying = undefined;
    });
    return this.readying;
  }

  protected readyNow(): FarReady {
    if (!this.readied)
      throw new MusterError("internal", `place ${this.name}: used before the machine was asked what it has`);
    return this.readied;
  }

  /** A path under this machine's state root (a child's artifact dir, its worktree) there: under the state root there. */
  pathThere(dir: string): string {
    const rel = path.relative(this.nearRoot, path.resolve(dir));
    if (rel.startsWith("..") || path.isAbsolute(rel))
      throw new MusterError("internal", `${dir} is not under the state root ${this.nearRoot}`);
    return path.posix.join(this.readyNow().info.root, ...rel.split(path.sep));
  }

  async exec(argv: string[], opts: ExecOptions): Promise<ExecRun> {
    // A process that runs commands there will want the machine probed (a spawn's first command is its
    // terminal's version check): the probe goes alongside instead of after it.
    if (!this.readying) void this.prepare().catch(() => undefined);
    // A command while this process makes the machine (a container) waits for it to be there.
    await this.provisioning?.catch(() => undefined);
    let r: ExecRun;
    try {
      r = await this.shell.run(argv, {
        timeoutMs: opts.timeoutMs,
        ...(opts.input !== undefined ? { input: opts.input } : {}),
      });
    } catch (e) {
      throw new ExecFailure("timeout", (e as Error).message);
    }
    if (this.shell.lostConnection(r))
      throw new ExecFailure("start", `${this.shell.label}: ${r.stderr.trim().split("\n").pop()}`);
    return r;
  }

  hostArgv(dir: string, extra: string[] = []): string[] {
    const { info, install } = this.readyNow();
    return [
      info.node,
      path.posix.join(install, "dist", "child", "host.bundle.js"),
      this.pathThere(dir),
      ...extra,
    ];
  }

  scriptArgv(file: string): string[] {
    const { info, install } = this.readyNow();
    return [info.node, path.posix.join(install, ...file.split("/"))];
  }

  async findCommand(command: string): Promise<string | undefined> {
    const r = await this.exec(["sh", "-c", 'command -v -- "$1"', "sh", command], {
      env: {},
      timeoutMs: 15_000,
    });
    return r.exitCode === 0 ? r.stdout.trim() || undefined : undefined;
  }

  /** Whether `dir` is a folder there (the probe's answer when it asked, else one more command). */
  protected async folderThere(dir: string): Promise<boolean> {
    const { info } = await this.prepare();
    return (
      info.dirs.includes(dir) ||
      (await this.exec(["test", "-d", dir], { env: {}, timeoutMs: 15_000 })).exitCode === 0
    );
  }

  /** Makes the machine ready (once per process: `provision`, then the probe and install). */
  async ready(): Promise<void> {
    if (!this.provisioning) {
      this.provisioning = this.provision();
      this.provisioning.catch(() => {
        this.provisioning = undefined;
      });
    }
    await this.provisioning;
    await this.prepare();
  }

  handover(env: Record<string, string>, named: readonly string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(handoverEnv(resolveSettings(env))))
      if (!LOCAL_ONLY.test(k)) out[k] = v;
    for (const k of [...named, ...this.namedEnv()]) {
      const v = env[k];
      if (v !== undefined) out[k] = v;
    }
    return out;
  }

  async carry(dir: string, env: NodeJS.ProcessEnv): Promise<void> {
    await this.ready();
    await this.mirror(dir, env, "restart");
  }

  async forget(dir: string): Promise<void> {
    await this.prepare();
    const there = [dir, sessionFileOf(dir), worktreePath(this.nearRoot, path.basename(dir))].map((p) =>
      this.pathThere(p),
    );
    await this.exec(["rm", "-rf", "--", ...there], { env: {}, timeoutMs: 15_000 }).catch(() => undefined);
  }

  protected async mirror(dir: string, env: NodeJS.ProcessEnv, mode: "restart" | "revive"): Promise<void> {
    const { info, install } = mode === "revive" ? await this.prepare() : this.readyNow();
    const hub = path.posix.join(install, "dist", "place", "mirror", "relay-hub-main.js");
    const link = this.linkArgv([info.node, hub, "--map", this.nearRoot, info.root]);
    await carryByMirror(dir, link, { place: this.name, env, mode });
  }
}
