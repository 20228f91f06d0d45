import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { ensureDir, FILE_MODE, fsyncDir, readJsonIfExists } from "../util/fsx.js";
import { assertFullId, uuidv7 } from "../util/ids.js";

export interface PrimarySource {
  id: string;
  /** How it was chosen: explicit flag/env, or this directory's default (created on first use). */
  from: "explicit" | "workspace";
}

/** Resolves the primary: --primary / MUSTER_PRIMARY (set inside every child pane) → the workspace default for cwd. */
export function resolvePrimary(
  root: string,
  cwd: string,
  explicit?: string,
  env: NodeJS.ProcessEnv = process.env,
): PrimarySource {
  const given = explicit ?? env.MUSTER_PRIMARY;
  if (given) return { id: assertFullId(given, "primary id"), from: "explicit" };
  return { id: workspacePrimary(root, cwd), from: "workspace" };
}

/** The stable default primary of a directory, created on first use (race-safe: first writer wins). */
export function workspacePrimary(root: string, cwd: string): string {
  let real = cwd;
  try {
    real = fs.realpathSync(cwd);
  } catch {
    // A vanished cwd still gets a stable key from its path.
  }
  const dir = path.join(root, "workspaces");
  ensureDir(dir);
  const file = path.join(dir, `${createHash("sha256").update(real).digest("hex").slice(0, 32)}.json`);
  const existing = readJsonIfExists<{ primary: string }>(file);
  if (existing) return assertFullId(existing.primary, "workspace primary id");
  const doc = { primary: uuidv7(), cwd: real, createdAt: new Date().toISOString() };
  try {
    // wx: exactly one process creates it; the rest read the winner's id.
    const fd = fs.openSync(file, "wx", FILE_MODE);
    fs.writeFileSync(fd, `${JSON.stringify(doc, null, 2)}\n`);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fsyncDir(dir);
    return doc.primary;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    for (let i = 0; i < 50; i++) {
      const won = readJsonIfExists<{ primary?: string }>(file);
      if (won?.primary) return assertFullId(won.primary, "workspace primary id");
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
    throw e;
  }
}

/** Every primary that has state under the root, oldest first (ids are UUIDv7). */
export function listPrimaries(root: string): string[] {
  try {
    return fs
      .readdirSync(path.join(root, "primaries"), { withFileTypes: true })
      .filter((e) => e.isDirectory() && /^[0-9a-f-]{36}$/.test(e.name))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}
