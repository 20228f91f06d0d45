/**
 * `muster image build` and `muster image ls`: an image for container children with node, tmux, git, muster's
 * far side (installed where the probe looks for it, so a child's first spawn installs nothing) and the agent
 * CLIs asked for, from the npm registry (or npm's cache with `offline`). With no base image it is made from
 * this machine's own files (rootfs.ts) and `<engine> import`: no registry, no pull. With `from`, the image
 * is that base with muster's files copied in (`create`, `cp`, `commit`: no builder needed, Docker or Podman).
 * An image whose inputs are unchanged is kept as it is (its `muster.key` label says what went in).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { findOnPath } from "../../util/which.js";
import { localStamp, REMOTE_DIST } from "../far/remote.js";
import { execLocal } from "../local/exec.js";
import { type ContainerEngine, engineSaid, runEngine } from "./engine.js";
import { hostRootFs } from "./rootfs.js";
import { DEFAULT_IMAGE } from "./spec.js";

/** An agent CLI to put in the image: its runner's name, npm package, version and command. */
export interface AgentPackage {
  name: string;
  pkg: string;
  version: string;
  bin: string;
}

export interface ImageBuildOptions {
  tag?: string;
  /** A base image with node (20+) and tmux; default: this machine's files. */
  from?: string;
  agents: readonly AgentPackage[];
  /** Agent CLIs from npm's cache only (no registry). */
  offline?: boolean;
  /** A line of progress. */
  say?: (line: string) => void;
}

export interface BuiltImage {
  tag: string;
  id: string;
  bytes: number;
  /** `this machine` or the base image. */
  from: string;
  agents: string[];
  /** muster's far side in it (its build stamp). */
  muster: string;
  /** False when an image of the same inputs was there already. */
  built: boolean;
  ms: number;
}

export interface ImageRow {
  tag: string;
  id: string;
  bytes: number;
  created: string;
  agents: string[];
  muster: string;
}

const LABEL = "muster.image";
// Where the probe (far/remote.ts) looks for an install, for the image's root user.
const STATE_ROOT = "/root/.local/state/muster";
const AGENTS_DIR = "/opt/muster/agents";

export async function buildImage(engine: ContainerEngine, opts: ImageBuildOptions): Promise<BuiltImage> {
  const t0 = performance.now();
  const say = opts.say ?? (() => {});
  const tag = opts.tag ?? DEFAULT_IMAGE;
  const stamp = localStamp();
  const agents = [...opts.agents].sort((a, b) => a.name.localeCompare(b.name));
  const root = opts.from === undefined ? hostRootFs(engine.env) : undefined;
  const key = createHash("sha256")
    .update(JSON.stringify([root?.key() ?? opts.from, stamp, agents.map((a) => `${a.pkg}@${a.version}`)]))
    .digest("hex")
    .slice(0, 24);
  const have = await inspectImage(engine, tag);
  if (have && have.Config?.Labels?.["muster.key"] === key) {
    say(`${tag} is up to date`);
    return {
      ...described(have, tag, opts.from, agents, stamp),
      built: false,
      ms: Math.round(performance.now() - t0),
    };
  }
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), "muster-image-"));
  try {
    const tree = path.join(stage, "tree");
    stageMuster(tree, stamp);
    if (agents.length > 0) await stageAgents(tree, agents, !!opts.offline, engine.env, say);
    const labels = {
      [LABEL]: "1",
      "muster.key": key,
      "muster.stamp": stamp,
      "muster.agents": agents.map((a) => a.name).join(","),
    };
    if (root) {
      say(`packing this machine's node, tmux, git and shell tools (${root.entries.size} paths)`);
      stageHome(tree);
      const tarball = path.join(stage, "image.tar");
      const made = new Set(listTree(tree));
      const list = path.join(stage, "files");
      fs.writeFileSync(
        list,
        `${root
          .list()
          .filter((p) => !made.has(p))
          .join("\n")}\n`,
      );
      execFileSync(
        "tar",
        [
          "--create",
          `--file=${tarball}`,
          "--numeric-owner",
          "--owner=0",
          "--group=0",
          `--directory=${tree}`,
          ...fs.readdirSync(tree),
          "--no-recursion",
          "--directory=/",
          `--files-from=${list}`,
        ],
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      say(`importing ${(fs.statSync(tarball).size / 1e6).toFixed(0)} MB as ${tag}`);
      const node = fs.realpathSync(process.execPath);
      const PATH = ["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"];
      if (!PATH.includes(path.dirname(node))) PATH.unshift(path.dirname(node));
      const changes = [
        "ENV LANG=C.UTF-8",
        `ENV PATH=${PATH.join(":")}`,
        "ENV HOME=/root",
        "WORKDIR /root",
        'CMD ["/bin/sh"]',
        ...Object.entries(labels).map(([k, v]) => `LABEL ${k}=${v}`),
      ];
      const r = await runEngine(
        engine,
        ["import", ...changes.flatMap((c) => ["--change", c]), tarball, tag],
        {
          timeoutMs: 600_000,
        },
      );
      if (r.exitCode !== 0)
        throw new MusterError("unsupported", `could not import the image: ${engineSaid(r)}`);
    } else {
      await fromBase(engine, opts.from!, tag, tree, labels, say);
    }
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
  const made = await inspectImage(engine, tag);
  if (!made) throw new MusterError("internal", `image ${tag} is not there after its build`);
  return {
    ...described(made, tag, opts.from, agents, stamp),
    built: true,
    ms: Math.round(performance.now() - t0),
  };
}

/** The images `muster image build` made, newest first. */
export async function listImages(engine: ContainerEngine): Promise<ImageRow[]> {
  const r = await runEngine(engine, ["images", "--filter", `label=${LABEL}=1`, "--format", "{{.ID}}"], {
    timeoutMs: 60_000,
  });
  if (r.exitCode !== 0) throw new MusterError("unreachable", `${engine.kind} images: ${engineSaid(r)}`);
  const ids = [...new Set(r.stdout.split("\n").filter(Boolean))];
  if (ids.length === 0) return [];
  const ins = await runEngine(engine, ["image", "inspect", ...ids], { timeoutMs: 60_000 });
  if (ins.exitCode !== 0)
    throw new MusterError("unreachable", `${engine.kind} image inspect: ${engineSaid(ins)}`);
  const rows = (JSON.parse(ins.stdout) as Inspected[]).map((i) => ({
    tag: (i.RepoTags ?? []).join(", ") || "<none>",
    id: i.Id.replace(/^sha256:/, "").slice(0, 12),
    bytes: i.Size ?? 0,
    created: i.Created ?? "",
    agents: (i.Config?.Labels?.["muster.agents"] ?? "").split(",").filter(Boolean),
    muster: i.Config?.Labels?.["muster.stamp"] ?? "",
  }));
  return rows.sort((a, b) => b.created.localeCompare(a.created));
}

interface Inspected {
  Id: string;
  RepoTags?: string[];
  Size?: number;
  Created?: string;
  Config?: { Labels?: Record<string, string> | null };
}

async function inspectImage(engine: ContainerEngine, tag: string): Promise<Inspected | undefined> {
  const r = await runEngine(engine, ["image", "inspect", tag], { timeoutMs: 60_000 });
  if (r.exitCode !== 0) {
    if (/no such (image|object)|image not known|failed to find image/i.test(r.stderr)) return undefined;
    throw new MusterError("unreachable", `${engine.kind} image inspect: ${engineSaid(r)}`);
  }
  return (JSON.parse(r.stdout) as Inspected[])[0];
}

function described(
  i: Inspected,
  tag: string,
  from: string | undefined,
  agents: readonly AgentPackage[],
  stamp: string,
): Omit<BuiltImage, "built" | "ms"> {
  return {
    tag,
    id: i.Id.replace(/^sha256:/, "").slice(0, 12),
    bytes: i.Size ?? 0,
    from: from ?? "this machine",
    agents: agents.map((a) => `${a.name} ${a.version}`),
    muster: stamp,
  };
}

/** muster's far side, installed as the probe expects it (`install/<stamp>` and `install/current`). */
function stageMuster(tree: string, stamp: string): void {
  const install = path.join(tree, STATE_ROOT.slice(1), "install");
  fs.mkdirSync(install, { recursive: true, mode: 0o700 });
  fs.cpSync(REMOTE_DIST, path.join(install, stamp), { recursive: true });
  fs.writeFileSync(path.join(install, "current"), `${stamp}\n`);
}

/** What an image made from files needs besides them: users, a /tmp and a home. */
function stageHome(tree: string): void {
  fs.mkdirSync(path.join(tree, "etc"), { recursive: true });
  fs.writeFileSync(path.join(tree, "etc", "passwd"), "root:x:0:0:root:/root:/bin/sh\n");
  fs.writeFileSync(path.join(tree, "etc", "group"), "root:x:0:\n");
  fs.mkdirSync(path.join(tree, "tmp"), { recursive: true });
  fs.chmodSync(path.join(tree, "tmp"), 0o1777);
  fs.mkdirSync(path.join(tree, "root"), { recursive: true });
  fs.chmodSync(path.join(tree, "root"), 0o700);
}

/** The agent CLIs from npm into /opt/muster/agents, each command linked from /usr/local/bin. */
async function stageAgents(
  tree: string,
  agents: readonly AgentPackage[],
  offline: boolean,
  env: NodeJS.ProcessEnv,
  say: (line: string) => void,
): Promise<void> {
  const npm = findOnPath("npm", env.PATH);
  if (!npm)
    throw new MusterError("unsupported", "npm is not on PATH: it installs the agent CLIs into the image");
  const prefix = path.join(tree, AGENTS_DIR.slice(1));
  fs.mkdirSync(prefix, { recursive: true });
  fs.writeFileSync(path.join(prefix, "package.json"), '{"private":true}\n');
  say(
    `installing ${agents.map((a) => `${a.pkg}@${a.version}`).join(", ")}${offline ? " from npm's cache" : ""}`,
  );
  const r = await execLocal(
    [
      npm,
      "install",
      "--prefix",
      prefix,
      "--no-audit",
      "--no-fund",
      "--omit=dev",
      ...(offline ? ["--offline"] : []),
      ...agents.map((a) => `${a.pkg}@${a.version}`),
    ],
    { env: { ...env, npm_config_update_notifier: "false" }, timeoutMs: 15 * 60_000 },
  );
  if (r.exitCode !== 0)
    throw new MusterError(
      "unsupported",
      `npm could not install ${agents.map((a) => a.pkg).join(", ")}${offline ? " from its cache (try without --offline)" : ""}: ${r.stderr.trim().split("\n").filter(Boolean).slice(-1)[0] ?? `exit ${r.exitCode}`}`,
    );
  const bin = path.join(tree, "usr", "local", "bin");
  fs.mkdirSync(bin, { recursive: true });
  for (const a of agents) {
    const target = path.join(prefix, "node_modules", ".bin", a.bin);
    if (!fs.existsSync(target))
      throw new MusterError("unsupported", `${a.pkg}@${a.version} has no command ${a.bin}`);
    fs.symlinkSync(path.posix.join(AGENTS_DIR, "node_modules", ".bin", a.bin), path.join(bin, a.bin));
  }
}

/** Every path of the staged tree, relative ("a", "a/b"…). */
function listTree(tree: string): string[] {
  const out: string[] = [];
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(tree, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      out.push(p);
      if (e.isDirectory()) walk(p);
    }
  };
  walk("");
  return out;
}

/** The base image with the staged tree copied in and the labels set, committed as `tag`. */
async function fromBase(
  engine: ContainerEngine,
  base: string,
  tag: string,
  tree: string,
  labels: Record<string, string>,
  say: (line: string) => void,
): Promise<void> {
  say(`copying muster's files into ${base}`);
  const name = `muster-image-${process.pid}-${Date.now()}`;
  const created = await runEngine(engine, ["create", "--pull", "never", "--name", name, base, "true"], {
    timeoutMs: 120_000,
  });
  if (created.exitCode !== 0)
    throw new MusterError(
      "not_found",
      `base image ${base} is not in the ${engine.kind} engine (pull it first): ${engineSaid(created)}`,
    );
  try {
    const tar = execFileSync(
      "tar",
      ["--create", "--numeric-owner", "--owner=0", "--group=0", "-C", tree, "."],
      {
        maxBuffer: 2 ** 31 - 1,
      },
    );
    // Podman's cp from stdin now and then loses its own untar helper ("broken pipe"), most on a loaded
    // machine: the same bytes are copied once more before the build gives up.
    let cp = await runEngine(engine, ["cp", "-", `${name}:/`], { input: tar, timeoutMs: 600_000 });
    if (cp.exitCode !== 0 && /broken pipe/i.test(engineSaid(cp)))
      cp = await runEngine(engine, ["cp", "-", `${name}:/`], { input: tar, timeoutMs: 600_000 });
    if (cp.exitCode !== 0)
      throw new MusterError("unsupported", `could not copy into ${base}: ${engineSaid(cp)}`);
    const changes = Object.entries(labels).map(([k, v]) => `LABEL ${k}=${v}`);
    const commit = await runEngine(
      engine,
      ["commit", ...changes.flatMap((c) => ["--change", c]), name, tag],
      { timeoutMs: 600_000 },
    );
    if (commit.exitCode !== 0)
      throw new MusterError("unsupported", `could not commit ${tag}: ${engineSaid(commit)}`);
  } finally {
    await runEngine(engine, ["rm", "--force", name], { timeoutMs: 60_000 }).catch(() => undefined);
  }
}
