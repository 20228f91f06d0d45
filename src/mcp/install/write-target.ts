// Where an install may write a config file. A project's files stay in the project: a config folder or file
// that is a symlink leading out of it (to /etc, a folder elsewhere) is refused before anything is written;
// one leading to another place inside is followed, and the file there is written. Only a regular file (or
// none yet) is ever written, in either scope.
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { kindOf } from "../../util/safe-read.js";

const refuse = (message: string): MusterError => new MusterError("invalid_config", message);

/** Where `p` leads: every symlink on the way resolved, also a dangling one; a missing rest kept as named. */
export function resolveAll(p: string, hops = 0): string {
  if (hops > 40) throw refuse(`refusing to write ${p}: too many levels of symbolic links`);
  try {
    return fs.realpathSync(p);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") throw e;
  }
  const dir = path.dirname(p);
  if (dir === p) return p;
  const at = path.join(resolveAll(dir, hops), path.basename(p));
  if (fs.lstatSync(at, { throwIfNoEntry: false })?.isSymbolicLink())
    return resolveAll(path.resolve(path.dirname(at), fs.readlinkSync(at)), hops + 1);
  return at;
}

const inside = (root: string, p: string): boolean => {
  const rel = path.relative(root, p);
  return rel === "" || (!rel.startsWith(`..${path.sep}`) && rel !== ".." && !path.isAbsolute(rel));
};

/** Refuses `file` when what it leads to exists and is not a regular file. */
function regularOrAbsent(file: string, target: string): void {
  const st = fs.statSync(target, { throwIfNoEntry: false });
  if (st && !st.isFile())
    throw refuse(
      `refusing to write ${file}: ${target === file ? "it" : `its target ${target}`} is ${kindOf(st)}; nothing was written`,
    );
}

/**
 * Why a project install may not write `file`, if so: each symlink on the way from `root` (the config folder,
 * the file) is checked, and the first that leads out of the project is named with where it points.
 */
export function leavesProject(file: string, root: string): string | undefined {
  const realRoot = fs.realpathSync(root);
  let at = root;
  for (const part of path.relative(root, file).split(path.sep)) {
    at = path.join(at, part);
    const st = fs.lstatSync(at, { throwIfNoEntry: false });
    if (!st) break;
    if (!st.isSymbolicLink()) continue;
    const to = resolveAll(at);
    if (!inside(realRoot, to)) return `${at} is a symlink to ${to}, outside the project ${root}`;
  }
  const target = resolveAll(file);
  return inside(realRoot, target) ? undefined : `it leads to ${target}, outside the project ${root}`;
}

/** The path a project install writes `file` at: its resolved target, inside `root`, a regular file or none. */
export function projectTarget(file: string, root: string): string {
  const why = leavesProject(file, root);
  if (why) throw refuse(`refusing to write ${file}: ${why}; nothing was written`);
  const target = resolveAll(file);
  regularOrAbsent(file, target);
  return target;
}

/** The path a user install writes `file` at: through a symlink to its existing target (dotfiles), else the file. */
export function userTarget(file: string): string {
  let target = file;
  try {
    target = fs.realpathSync(file);
  } catch (e) {
    // A dangling symlink (or none yet): the rename puts a regular file at the path itself.
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  regularOrAbsent(file, target);
  return target;
}
