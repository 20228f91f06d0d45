/**
 * Place `ssh:<host>`: a child's host runs on an SSH host the user named (`muster hosts add`), under the remote
 * user's state root, its artifact dir mirrored here over one `ssh host node relay-hub-main.js` link
 * (far/far-place.ts has what every place on another machine shares). Commands go through the system ssh, one
 * ControlMaster per host (transport.ts).
 */
import { createHash } from "node:crypto";
import * as os from "node:os";
import * as path from "node:path";
import { stateRoot } from "../../artifacts/layout.js";
import { MusterError } from "../../base/errors.js";
import { FarPlace, type ProbeAsk } from "../far/far-place.js";
import type { FarShell } from "../far/remote.js";
import type { Place } from "../place.js";
import { getHost, type NamedHost, sshHostOf } from "./hosts.js";
import { remoteArgv, type SshHost, SshTransport, sshShell } from "./transport.js";

export const SSH_KIND = "ssh";
export const sshPlaceName = (host: string): string => `${SSH_KIND}:${host}`;
/** How a host with no usable node gets one (the end of checkNode's refusal). */
export const SSH_NODE_FIX =
  "install Node 20+ there for non-interactive ssh, or name one with hosts add --node <path>";

/** The folder of this user's ssh masters for one state root (short: a unix socket path holds ~100 bytes). */
export function controlDirFor(root: string): string {
  const h = createHash("sha256").update(root).digest("hex").slice(0, 10);
  return path.join(os.tmpdir(), `muster-ssh-${os.userInfo().uid}`, h);
}

export class SshPlace extends FarPlace {
  readonly name: string;
  private readonly ssh: SshHost;
  private readonly transport: SshTransport;
  protected readonly shell: FarShell;

  constructor(
    readonly entry: NamedHost,
    env: NodeJS.ProcessEnv,
  ) {
    super(env);
    this.name = sshPlaceName(entry.name);
    this.ssh = sshHostOf(entry);
    this.transport = new SshTransport(controlDirFor(stateRoot(env)));
    this.shell = sshShell(this.transport, this.ssh, entry.name);
  }

  protected probeAsk(): ProbeAsk {
    return {
      dirs: this.entry.workdir ? [this.entry.workdir] : [],
      node: this.entry.node ?? "",
      where: `host ${this.entry.name}`,
      nodeFix: SSH_NODE_FIX,
    };
  }

  protected override namedEnv(): readonly string[] {
    return this.entry.env ?? [];
  }

  protected linkArgv(argv: string[]): string[] {
    return remoteArgv(this.ssh, this.transport.controlDir, argv);
  }

  async workdir(cwd: string): Promise<string> {
    const dir = this.entry.workdir ?? cwd;
    await this.ready();
    if (await this.folderThere(dir)) return dir;
    const fix = `muster hosts add ${this.entry.name} ${this.entry.target} --workdir <folder there>`;
    throw new MusterError(
      "invalid_argument",
      this.entry.workdir
        ? `host ${this.entry.name} has no folder ${dir} (its --workdir); make it there or change it: ${fix}`
        : `host ${this.entry.name} has no folder ${cwd} (this working directory); name one for its children: ${fix}`,
    );
  }

  interactive(argv: string[]): string[] {
    const [ssh, ...rest] = remoteArgv(this.ssh, this.transport.controlDir, argv);
    return [ssh!, "-t", ...rest];
  }

  /** Ends this place's master connection (tests, `hosts rm`). */
  close(): Promise<void> {
    return this.transport.close([this.ssh]);
  }
}

/** The factory `registerPlace("ssh", …)` takes: `ssh:<host>` names a host of the user's config. */
export function sshPlaceFactory({ name, env }: { name: string; env: NodeJS.ProcessEnv }): Place {
  const host = name.slice(name.indexOf(":") + 1);
  if (!name.includes(":") || host === "")
    throw new MusterError("invalid_argument", `place ${name} names no host (ssh:<host>)`);
  return new SshPlace(getHost(env, host), env);
}
