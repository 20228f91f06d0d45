import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { type PrimaryPaths, primariesDir, primaryPaths, workspaceFile } from "../artifacts/layout.js";
import { MusterError } from "../base/errors.js";
import { rawSetting } from "../base/settings/resolve.js";
import { ensureDir, fsyncDir, readJson, readJsonIfExists, writeFileAtomic } from "../util/fsx.js";
import { isRepositoryDir } from "../util/git-dir.js";
import { assertFullId, assertIdOrPrefix, isFullId, shortId, uuidv7 } from "../util/ids.js";
import { Registry } from "./registry.js";

export interface PrimarySource {
  id: string;
  /** How it was chosen: explicit flag/env, or the workspace default of the working directory. */
  from: "explicit" | "workspace";
  /** For a workspace primary: the directory it belongs to (git work tree root, or a directory that has one). */
  workspace?: string;
  /** False while a workspace primary is not recorded yet: `id` is tentative until claimWorkspacePrimary. */
  recorded: boolean;
}

/**
 * Resolves the primary without writing anything: --primary / MUSTER_PRIMARY (set inside every child pane;
 * a full id, or the short id / a unique prefix of an existing primary) → the workspace default for cwd.
 */
export function resolvePrimary(
  root: string,
  cwd: string,
  explicit?: string,
  env: NodeJS.ProcessEnv = process.env,
): PrimarySource {
  const given = explicit ?? rawSetting(env, "primary");
  if (given) return { id: explicitPrimary(root, given), from: "explicit", recorded: true };
  if (!fs.statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) {
    throw new MusterError("invalid_argument", `the current directory (${cwd}) no longer exists`, {
      next: { action: "primaries", name: true },
    });
  }
  const real = fs.realpathSync(cwd);
  const workspace = workspaceDir(root, real, env);
  const id = recordedPrimary(root, workspace);
  // Nothing is written for a read: a primary that does not exist yet simply has no children.
  return id
    ? { id, from: "workspace", workspace, recorded: true }
    : { id: uuidv7(), from: "workspace", workspace, recorded: false };
}

/** A full primary id as given, or the one existing primary whose id starts or ends with the given digits. */
export function explicitPrimary(root: string, given: string): string {
  const want = assertIdOrPrefix(given, "primary id");
  if (isFullId(want)) return want;
  const matches = listPrimaries(root).filter((p) => p.startsWith(want) || p.endsWith(want));
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new MusterError(
      "invalid_argument",
      `primary id "${given}" is ambiguous: ${matches.map(shortId).join(", ")}; give more of its digits`,
    );
  }
  throw new MusterError("not_found", `unknown primary "${given}"`, { next: { action: "primaries" } });
}

/**
 * The directory whose primary a working directory uses: the enclosing git work tree (one repository = one
 * primary), else the nearest ancestor that already has a primary (not ~, / or the temp dir), else itself.
 */
export function workspaceDir(root: string, realCwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const ancestors: string[] = [];
  for (let d = realCwd; ; d = path.dirname(d)) {
    ancestors.push(d);
    if (path.dirname(d) === d) break;
  }
  // A primary once made in ~, / or the temp dir must not swallow every directory below it.
  const shared = new Set([
    path.parse(realCwd).root,
    realOrSelf(env.HOME || os.homedir()),
    realOrSelf(os.tmpdir()),
  ]);
  return (
    ancestors.find(isGitWorkTree) ??
    ancestors.find((d) => (d === realCwd || !shared.has(d)) && fs.existsSync(workspaceFile(root, d))) ??
    realCwd
  );
}

function realOrSelf(p: string): string {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
}

/** A repository's `.git` directory, or a `.git` file pointing at one (a linked worktree or a submodule). */
function isGitWorkTree(dir: string): boolean {
  const dotGit = path.join(dir, ".git");
  const st = fs.statSync(dotGit, { throwIfNoEntry: false });
  if (st?.isDirectory()) return isRepositoryDir(dotGit);
  if (!st?.isFile() || st.size > 4096) return false;
  try {
    return fs.readFileSync(dotGit, "utf8").startsWith("gitdir:");
  } catch {
    return false;
  }
}

/** The primary recorded for a workspace directory, if any. */
function recordedPrimary(root: string, dir: string): string | undefined {
  const existing = readJsonIfExists<{ primary: string }>(workspaceFile(root, dir));
  return existing ? assertFullId(existing.primary, "workspace primary id") : undefined;
}

/**
 * Records `id` as the workspace's primary unless another process got there first (race-safe: the first
 * writer wins); returns the primary that holds.
 */
export function claimWorkspacePrimary(root: string, dir: string, id: string): string {
  const file = workspaceFile(root, dir);
  ensureDir(path.dirname(file));
  const doc = { primary: id, cwd: dir, createdAt: new Date().toISOString() };
  // Written whole to a temp file, then linked into place: link() fails if the name exists, so exactly one
  // process records the primary, and no reader ever sees a half-written record.
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  try {
    writeFileAtomic(tmp, `${JSON.stringify(doc, null, 2)}\n`);
    fs.linkSync(tmp, file);
    fsyncDir(path.dirname(file));
    return id;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    return assertFullId(readJson<{ primary: string }>(file).primary, "workspace primary id");
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** Every primary that has state under the root, oldest first (ids are UUIDv7). */
export function listPrimaries(root: string): string[] {
  try {
    return fs
      .readdirSync(primariesDir(root), { withFileTypes: true })
      .filter((e) => e.isDirectory() && /^[0-9a-f-]{36}$/.test(e.name))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/** A process's primary: its id, paths and registry; state is created on first write, never by a read. */
export class OwnPrimary {
  private source: PrimarySource;
  private current: { paths: PrimaryPaths; registry: Registry };
  private claimed = false;

  constructor(
    private readonly root: string,
    source: PrimarySource,
  ) {
    this.source = source;
    this.current = this.at(source.id);
  }

  get id(): string {
    return this.source.id;
  }

  /** Where this primary came from, for a message that has to say why it is not another one. */
  get origin(): string {
    if (this.source.from === "explicit") return "given by --primary or MUSTER_PRIMARY";
    return `${this.source.recorded ? "recorded" : "none recorded yet"} for ${this.source.workspace}`;
  }
  get paths(): PrimaryPaths {
    return this.current.paths;
  }
  get registry(): Registry {
    return this.current.registry;
  }

  /**
   * Records a new workspace primary and creates its directories; when another process recorded the
   * workspace's primary first, this one adopts it (nothing was written under the tentative id).
   */
  claim(): void {
    if (this.claimed) return;
    if (!this.source.recorded && this.source.workspace) {
      const id = claimWorkspacePrimary(this.root, this.source.workspace, this.source.id);
      this.source = { ...this.source, id, recorded: true };
      this.current = this.at(id);
    }
    ensureDir(this.current.paths.artifacts);
    this.claimed = true;
  }

  private at(id: string) {
    const paths = primaryPaths(this.root, id);
    return { paths, registry: new Registry(paths.registry, id) };
  }
}
