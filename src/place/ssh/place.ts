/**
 * Place `ssh:<host>`: a child's host runs on an SSH host the user named (`muster hosts add`), in a tmux
 * server there (the tmux backend runs its commands through this place's exec), and writes its artifact dir
 * on that host's disk under the remote user's state root. The parent reads a mirror of it, kept by the
 * place's keeper over one `ssh host node relay-hub-main.js --map <here> <there>` link (place/mirror/), so
 * every command works on local files and a dropped connection resumes from the mirror's byte cursor.
 * Commands go through the system ssh, one ControlMaster per host (transport.ts). muster's far side is
 * installed on first use, and again whenever this build differs (remote.ts).
 */
import { createHash } from "node:crypto";
import * as os from "node:os";
import * as path from "node:path";
import { stateRoot } from "../../artifacts/layout.js";
import { MusterError } from "../../base/errors.js";
import { handoverEnv, resolveSettings } from "../../base/settings/resolve.js";
import { worktreePath } from "../../isolation/result.js";
import { sessionFileOf } from "../../sessions/store.js";
import { carryByMirror } from "../mirror/carry.js";
import { ExecFailure, type ExecOptions, type ExecRun, type HostControl, type Place } from "../place.js";
import { remoteHostControl } from "./host-control.js";
import { getHost, type NamedHost, sshHostOf } from "./hosts.js";
import { checkNode, installOn, probeHost, type RemoteInfo } from "./remote.js";
import { remoteArgv, type SshHost, SshTransport } from "./transport.js";

export const SSH_KIND = "ssh";
export const sshPlaceName = (host: string): string => `${SSH_KIND}:${host}`;

/** Settings whose values are paths or names of this machine: a child on another host must not get them. */
const LOCAL_ONLY = /^MUSTER_(HOME|BACKEND_MODULE|BACKEND|PLACE|TMUX_SOCKET|ZELLIJ_SESSION)$|^MUSTER_.*_BIN$/;

/** The folder of this user's ssh masters for one state root (short: a unix socket path holds ~100 bytes). */
export function controlDirFor(root: string): string {
  const h = createHash("sha256").update(root).digest("hex").slice(0, 10);
  return path.join(os.tmpdir(), `muster-ssh-${os.userInfo().uid}`, h);
}

interface Ready {
  info: RemoteInfo;
  install: string;
}

export class SshPlace implements Place {
  readonly name: string;
  readonly host: HostControl;
  readonly tuiUnavailable =
    "the TUI mode needs node-pty, a native addon muster's part on a host does not ship";
  private readonly ssh: SshHost;
  private readonly transport: SshTransport;
  private readonly nearRoot: string;
  private readying: Promise<Ready> | undefined;
  private readied: Ready | undefined;

  constructor(
    readonly entry: NamedHost,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.name = sshPlaceName(entry.name);
    this.ssh = sshHostOf(entry);
    this.nearRoot = stateRoot(env);
    this.transport = new SshTransport(controlDirFor(this.nearRoot));
    const control = remoteHostControl(
      async (argv) => {
        const r = await this.transport.run(this.ssh, argv, { timeoutMs: 15_000 }).catch(() => null);
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
        return control.alive(h);
      },
    };
  }

  /**
   * Probes the host and installs muster's far side there when this build is not there yet (once per process).
   * The same round trip checks the host's --workdir (RemoteInfo.dirs).
   */
  prepare(): Promise<Ready> {
    this.readying ??= (async () => {
      const dirs = this.entry.workdir ? [this.entry.workdir] : [];
      const info = await probeHost(this.transport, this.ssh, [], dirs, this.entry.node);
      checkNode(this.entry.name, info);
      const install = await installOn(this.transport, this.ssh, info);
      this.readied = { info, install };
      return this.readied;
    })();
    // A failure is not kept: the next call asks again (the host may be back).
    this.readying.catch(() => {
      this.readying = undefined;
    });
    return this.readying;
  }

  private readyNow(): Ready {
    if (!this.readied)
      throw new MusterError("internal", `place ${this.name}: used before the host was asked what it has`);
    return this.readied;
  }

  /** A path under this machine's state root (a child's artifact dir, its worktree) there: under the remote user's. */
  pathThere(dir: string): string {
    const rel = path.relative(this.nearRoot, path.resolve(dir));
    if (rel.startsWith("..") || path.isAbsolute(rel))
      throw new MusterError("internal", `${dir} is not under the state root ${this.nearRoot}`);
    return path.posix.join(this.readyNow().info.root, ...rel.split(path.sep));
  }

  async exec(argv: string[], opts: ExecOptions): Promise<ExecRun> {
    // A process that runs commands there will want the host probed (a spawn's first command is its terminal's
    // version check): the probe goes alongside, over the same master, instead of after it.
    if (!this.readying) void this.prepare().catch(() => undefined);
    let r: { exitCode: number; stdout: string; stderr: string };
    try {
      r = await this.transport.run(this.ssh, argv, {
        timeoutMs: opts.timeoutMs,
        ...(opts.input !== undefined ? { input: opts.input } : {}),
      });
    } catch (e) {
      throw new ExecFailure("timeout", (e as Error).message);
    }
    // 255 is ssh's own failure (no connection, refused key, changed host key), not the command's.
    if (
      r.exitCode === 255 &&
      /^(ssh|kex_|Connection|Host key|Permission denied|banner)|ssh_exchange/m.test(r.stderr)
    )
      throw new ExecFailure("start", `ssh ${this.entry.name}: ${r.stderr.trim().split("\n").pop()}`);
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

  async findCommand(command: string): Promise<string | undefined> {
    const r = await this.exec(["sh", "-c", 'command -v -- "$1"', "sh", command], {
      env: {},
      timeoutMs: 15_000,
    });
    return r.exitCode === 0 ? r.stdout.trim() || undefined : undefined;
  }

  async workdir(cwd: string): Promise<string> {
    const dir = this.entry.workdir ?? cwd;
    const { info } = await this.prepare();
    // The probe checked the host's --workdir on its way; another folder is asked about now.
    const there =
      info.dirs.includes(dir) ||
      (await this.exec(["test", "-d", dir], { env: {}, timeoutMs: 15_000 })).exitCode === 0;
    if (there) return dir;
    const fix = `muster hosts add ${this.entry.name} ${this.entry.target} --workdir <folder there>`;
    throw new MusterError(
      "invalid_argument",
      this.entry.workdir
        ? `host ${this.entry.name} has no folder ${dir} (its --workdir); make it there or change it: ${fix}`
        : `host ${this.entry.name} has no folder ${cwd} (this working directory); name one for its children: ${fix}`,
    );
  }

  async ready(): Promise<void> {
    await this.prepare();
  }

  handover(env: Record<string, string>, named: readonly string[]): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(handoverEnv(resolveSettings(env))))
      if (!LOCAL_ONLY.test(k)) out[k] = v;
    for (const k of [...named, ...(this.entry.env ?? [])]) {
      const v = env[k];
      if (v !== undefined) out[k] = v;
    }
    return out;
  }

  async carry(dir: string, env: NodeJS.ProcessEnv): Promise<void> {
    await this.prepare();
    await this.mirror(dir, env, "restart");
  }

  async forget(dir: string): Promise<void> {
    await this.prepare();
    const there = [dir, sessionFileOf(dir), worktreePath(this.nearRoot, path.basename(dir))].map((p) =>
      this.pathThere(p),
    );
    await this.exec(["rm", "-rf", "--", ...there], { env: {}, timeoutMs: 15_000 }).catch(() => undefined);
  }

  interactive(argv: string[]): string[] {
    const [ssh, ...rest] = remoteArgv(this.ssh, this.transport.controlDir, argv);
    return [ssh!, "-t", ...rest];
  }

  /** Ends this place's master connection (tests, `hosts rm`). */
  close(): Promise<void> {
    return this.transport.close([this.ssh]);
  }

  private async mirror(dir: string, env: NodeJS.ProcessEnv, mode: "restart" | "revive"): Promise<void> {
    const { info, install } = mode === "revive" ? await this.prepare() : this.readyNow();
    const hub = path.posix.join(install, "dist", "place", "mirror", "relay-hub-main.js");
    const link = remoteArgv(this.ssh, this.transport.controlDir, [
      info.node,
      hub,
      "--map",
      this.nearRoot,
      info.root,
    ]);
    await carryByMirror(dir, link, { place: this.name, env, mode });
  }
}

/** The factory `registerPlace("ssh", …)` takes: `ssh:<host>` names a host of the user's config. */
export function sshPlaceFactory({ name, env }: { name: string; env: NodeJS.ProcessEnv }): Place {
  const host = name.slice(name.indexOf(":") + 1);
  if (!name.includes(":") || host === "")
    throw new MusterError("invalid_argument", `place ${name} names no host (ssh:<host>)`);
  return new SshPlace(getHost(env, host), env);
}
