/**
 * Place `container:<child id>`: a child in a container of its own (Docker or Podman, engine.ts). The container
 * is made when the child is spawned (`muster-<id>`, an init as PID 1 and `sleep infinity` as its main
 * process), from the spec kept under the state root (spec.ts); the child's host, its tmux server and the
 * agent CLI run inside it, reached with `<engine> exec`, and its artifact dir is mirrored here over one
 * `<engine> exec -i … relay-hub-main.js` link, as for an SSH host (far/far-place.ts). So a remote engine
 * (`DOCKER_HOST=ssh://…`) is the same code: nothing of this machine's disk is needed there but the working
 * directory's mount, which a worktree child does without (its work comes and goes as a git bundle).
 * `rm`/`gc` remove the container; one that is stopped (killed, its engine restarted) is started again so its
 * child's end can be recorded there; one that is gone leaves its record here, where it is.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { FarPlace, type ProbeAsk } from "../far/far-place.js";
import type { FarShell, RemoteRun } from "../far/remote.js";
import { mirrorEnded } from "../mirror/carry.js";
import type { Liveness } from "../place.js";
import type { ChildPlaceMaker } from "../registry.js";
import { type ContainerEngine, engineOf, engineSaid, runEngine } from "./engine.js";
import { type ContainerSpec, containerSpecs, resolveSpec } from "./spec.js";

export const CONTAINER_KIND = "container";
export const containerPlaceName = (id: string): string => `${CONTAINER_KIND}:${id}`;
/** The container of child `id` in its engine. */
export const containerName = (id: string): string => `muster-${id}`;

// The engine's own failures, as its CLI words them (docker and podman): the command never ran in the container.
const ENGINE_FAILED =
  /Error response from daemon|Cannot connect to the Docker daemon|is not running|no such container|unable to connect to Podman|can only create exec sessions on running containers/i;

/**
 * A bind mount as `--mount` words: unlike `--volume`, a source that is not there is an error, not an empty
 * folder made in its place (a remote engine's machine has none of this one's folders).
 */
function bind(source: string, target: string, mode: "ro" | "rw"): string[] {
  if (/[,\n"]/.test(source) || /[,\n"]/.test(target))
    throw new MusterError(
      "invalid_argument",
      `cannot mount ${JSON.stringify(source)} in a container: a comma, quote or newline in its path`,
    );
  return ["--mount", `type=bind,source=${source},target=${target}${mode === "ro" ? ",readonly" : ""}`];
}

/** The folder a container's user has as home: root's, or one made for another user (the caller's uid). */
const containerHome = (): string => (os.userInfo().uid === 0 ? "/root" : "/tmp/muster-home");

export class ContainerPlace extends FarPlace {
  readonly name: string;
  readonly container: string;
  readonly ownTerminal = true;
  protected readonly shell: FarShell;
  private readonly engine: ContainerEngine;

  constructor(
    readonly id: string,
    readonly spec: ContainerSpec,
    env: NodeJS.ProcessEnv,
  ) {
    super(env);
    this.name = containerPlaceName(id);
    this.container = containerName(id);
    this.engine = engineOf(env);
    this.shell = {
      label: `${this.engine.kind} container ${this.container}`,
      where: `container ${this.container}`,
      run: (argv, opts = {}) =>
        runEngine(
          this.engine,
          ["exec", ...(opts.input !== undefined ? ["-i"] : []), this.container, ...argv],
          opts,
        ),
      lostConnection: (r: RemoteRun) => r.exitCode !== 0 && ENGINE_FAILED.test(r.stderr),
    };
  }

  protected probeAsk(): ProbeAsk {
    return {
      dirs: this.spec.mount === "none" ? [] : [this.spec.workdir],
      node: "",
      where: `image ${this.spec.image}`,
      nodeFix: "use an image with Node 20+ (muster image build makes one)",
    };
  }

  protected override namedEnv(): readonly string[] {
    return this.spec.env;
  }

  protected linkArgv(argv: string[]): string[] {
    return [this.engine.cli, "exec", "-i", this.container, ...argv];
  }

  interactive(argv: string[]): string[] {
    return [this.engine.cli, "exec", "-it", this.container, ...argv];
  }

  installHint(runner: string): string {
    return `image ${this.spec.image} lacks it: make one that has it with muster image build --agent ${runner} [--tag <image>]`;
  }

  /** The container's state in its engine (`running`, `exited`, `created`…), or null when there is none. */
  async state(): Promise<string | null> {
    const r = await runEngine(this.engine, ["inspect", "--format", "{{.State.Status}}", this.container], {
      timeoutMs: 30_000,
    });
    if (r.exitCode === 0) return r.stdout.trim();
    if (/no such (object|container)/i.test(r.stderr)) return null;
    throw new MusterError("unreachable", `${this.engine.kind}: ${engineSaid(r)}`);
  }

  /** Makes the container (or starts it again when it is stopped). */
  protected override async provision(): Promise<void> {
    // A new child's container was never made (no spec kept for it yet): no engine question before the run.
    const state = fs.existsSync(containerSpecs.file(this.nearRoot, this.id)) ? await this.state() : null;
    if (state === "running") return;
    if (state !== null) {
      const r = await runEngine(this.engine, ["start", this.container], { timeoutMs: 60_000 });
      if (r.exitCode !== 0)
        throw new MusterError("unsupported", `could not start ${this.container} again: ${engineSaid(r)}`);
      return;
    }
    containerSpecs.save(this.nearRoot, this.id, this.spec);
    const r = await runEngine(this.engine, this.runArgv(), { timeoutMs: 120_000 });
    if (r.exitCode === 0) return;
    const said = engineSaid(r);
    if (/No such image|Unable to find image|image not known|pull access denied|manifest unknown/i.test(said))
      throw new MusterError(
        "not_found",
        `image ${this.spec.image} is not in the ${this.engine.kind} engine; make it with: muster image build (or ${this.engine.kind} pull it)`,
      );
    if (/network .* not found|network not found/i.test(said))
      throw new MusterError(
        "invalid_argument",
        `container network ${this.spec.network} is not in the ${this.engine.kind} engine: ${said}`,
      );
    throw new MusterError("unsupported", `could not make the child's container: ${said}`);
  }

  /** `<engine> run …` for the child's container; every value is its own argv word. */
  private runArgv(): string[] {
    const s = this.spec;
    const home = containerHome();
    const uid = os.userInfo().uid;
    const argv = [
      "run",
      "--detach",
      "--pull",
      "never",
      "--name",
      this.container,
      "--label",
      `muster.child=${this.id}`,
      "--label",
      `muster.root=${this.nearRoot}`,
      "--init",
      ...(s.network === "default" ? [] : ["--network", s.network]),
      ...(s.cpus !== undefined ? ["--cpus", String(s.cpus)] : []),
      ...(s.memory !== undefined ? ["--memory", s.memory] : []),
      // Not root here: the container's processes run as this user, so what they write to a mount is theirs.
      ...(uid === 0 ? [] : ["--user", `${uid}:${os.userInfo().gid}`, "--env", `HOME=${home}`]),
      ...(s.mount === "none" ? [] : [...bind(s.workdir, s.workdir, s.mount), "--workdir", s.workdir]),
      ...s.mounts.flatMap((m) => {
        const [here, there, mode] = m.split(":");
        return bind(here!, there!, mode === "ro" ? "ro" : "rw");
      }),
      ...s.config.flatMap((dir) =>
        bind(dir, path.posix.join(home, path.relative(os.homedir(), dir).split(path.sep).join("/")), "ro"),
      ),
      "--entrypoint",
      "sleep",
      s.image,
      "infinity",
    ];
    return argv;
  }

  async workdir(cwd: string): Promise<string> {
    await this.ready();
    if (this.spec.mount === "none") return this.readyNow().info.home || "/";
    if (cwd !== this.spec.workdir || !(await this.folderThere(cwd)))
      throw new MusterError("internal", `container ${this.container} has no mount of ${cwd}`);
    return cwd;
  }

  /**
   * A host that could not be asked about: dead when its container is gone (the record here is then the only
   * one: the mirror stops and the dir becomes local, so the child's end is recorded here), or stopped (it
   * is started again, so the next probe finds the host gone and records its end there, where the log is).
   */
  protected override async unanswered(dir: string): Promise<Liveness> {
    const state = await this.state().catch(() => undefined);
    if (state === undefined || state === "running") return "unknown";
    if (state === null) return this.letGo(dir, `its container ${this.container} was removed`);
    this.goneBecause(dir, `its container ${this.container} stopped (${state})`);
    await runEngine(this.engine, ["start", this.container], { timeoutMs: 60_000 }).catch(() => undefined);
    return "unknown";
  }

  /** The child is removed: its container goes whole, with everything in it. */
  override async forget(dir: string): Promise<void> {
    await this.endKeeper(dir);
    await this.discard();
  }

  /** The child was cancelled or closed: its container stops (its files stay; a resume starts it again). */
  async rest(dir: string): Promise<void> {
    // Its mirror takes the files written last first (it ends by itself once the host's end is in).
    await mirrorEnded(dir, this.name, 5_000);
    await runEngine(this.engine, ["stop", "--time", "5", this.container], { timeoutMs: 60_000 });
    this.unready();
  }

  async discard(): Promise<void> {
    await runEngine(this.engine, ["rm", "--force", "--volumes", this.container], { timeoutMs: 60_000 }).catch(
      () => undefined,
    );
    containerSpecs.drop(this.nearRoot, this.id);
  }
}

/** The place of a new child in a container of its own (registerChildPlace takes it). */
export const makeContainerPlace: ChildPlaceMaker = (request, ctx) => {
  if (request.kind !== CONTAINER_KIND) throw new MusterError("internal", `not a container: ${request.kind}`);
  const spec = resolveSpec(request.req, request.profile, {
    runner: ctx.runner,
    worktree: ctx.worktree,
    workdir: ctx.cwd,
  });
  return new ContainerPlace(ctx.id, spec, ctx.env);
};

/** The factory `registerPlace("container", …)` takes: `container:<child id>`, its spec as kept at spawn. */
export const containerPlaceFactory = containerSpecs.factory(
  (id, spec, env) => new ContainerPlace(id, spec, env),
);
