/**
 * `.muster/worktree-include`: files of the parent's checkout that git does not carry (`.env`, a local config)
 * copied into each new worktree at the same place. One path per line, relative to the checkout's top, taken
 * as written (no globs); `#` starts a comment line. Every path, and every symlink met under it, must stay
 * inside the checkout; symlinks are copied as what they point at. What is listed is checked and measured
 * before anything is copied, so a refusal leaves nothing.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";

/** What the listed paths may hold in all: more refuses the spawn. */
export const INCLUDE_MAX_BYTES = 64 * 1024 * 1024;

export const INCLUDE_FILE = path.join(".muster", "worktree-include");

/** One line of the list that names a path: its line number and the path as written. */
export interface IncludeLine {
  line: number;
  path: string;
}

/** A file or folder to make in the worktree: its path relative to the checkout, and where to read it. */
export interface IncludeEntry {
  rel: string;
  /** The real path it is read from (symlinks resolved). */
  from: string;
  kind: "dir" | "file";
  mode: number;
  bytes: number;
}

export interface IncludePlan {
  entries: IncludeEntry[];
  files: number;
  bytes: number;
  /** Listed paths that are not there (skipped), one line each. */
  warnings: string[];
}

/**
 * The list's lines that name a path; a line that leads out of the checkout (`..`, absolute) or names the
 * checkout itself or its `.git` is refused, naming the file and line.
 */
export function parseIncludeList(text: string, file: string): IncludeLine[] {
  const out: IncludeLine[] = [];
  text.split("\n").forEach((raw, i) => {
    const p = raw.replace(/\r$/, "").trim();
    if (p === "" || p.startsWith("#")) return;
    const where = `${file} line ${i + 1}`;
    if (p.includes("\0")) throw refusal(`${where}: a path holds a NUL byte`);
    if (path.isAbsolute(p)) throw refusal(`${where}: ${p} is absolute; give a path inside the checkout`);
    const norm = path.normalize(p).replace(/[/\\]+$/, "");
    if (norm === ".." || norm.startsWith(`..${path.sep}`))
      throw refusal(`${where}: ${p} leads out of the checkout`);
    if (norm === "." || norm === "") throw refusal(`${where}: ${p} names the whole checkout`);
    if (norm.split(path.sep)[0] === ".git") throw refusal(`${where}: ${p} is git's own folder`);
    out.push({ line: i + 1, path: norm });
  });
  return out;
}

/**
 * Reads `<repo>/.muster/worktree-include` and measures what it names (null when there is no such file);
 * refuses a path leading out of the checkout, and a total over INCLUDE_MAX_BYTES.
 */
export function planInclude(repo: string): IncludePlan | null {
  const file = path.join(repo, INCLUDE_FILE);
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw refusal(`${file} cannot be read: ${(e as Error).message}`);
  }
  const root = fs.realpathSync(repo);
  const plan: IncludePlan = { entries: [], files: 0, bytes: 0, warnings: [] };
  const seen = new Set<string>();
  for (const { line, path: rel } of parseIncludeList(text, file)) {
    const where = `${file} line ${line}`;
    const abs = path.join(root, rel);
    if (!fs.lstatSync(abs, { throwIfNoEntry: false })) {
      const glob = /[*?[]/.test(rel) ? " (globs are not expanded)" : "";
      plan.warnings.push(`${INCLUDE_FILE} line ${line}: ${rel} is not there${glob}; skipped`);
      continue;
    }
    walk(plan, root, rel, where, seen, []);
  }
  if (plan.bytes > INCLUDE_MAX_BYTES)
    throw refusal(
      `${file}: the listed paths hold ${mib(plan.bytes)}, over the bound of ${mib(INCLUDE_MAX_BYTES)}`,
    );
  return plan;
}

/** Adds `rel` (and all under it) to the plan; `stack` holds the real folders it is inside (a loop refuses). */
function walk(
  plan: IncludePlan,
  root: string,
  rel: string,
  where: string,
  seen: Set<string>,
  stack: string[],
): void {
  const abs = path.join(root, rel);
  let real: string;
  try {
    real = fs.realpathSync(abs);
  } catch {
    throw refusal(`${where}: ${rel} is a symlink to nothing`);
  }
  if (real !== root && !real.startsWith(`${root}${path.sep}`))
    throw refusal(`${where}: ${rel} is a symlink leading out of the checkout (to ${real})`);
  if (real === root || stack.includes(real))
    throw refusal(`${where}: ${rel} is a symlink loop (it leads back to a folder it is in)`);
  if (seen.has(rel)) return;
  seen.add(rel);
  const st = fs.statSync(real);
  if (st.isDirectory()) {
    plan.entries.push({ rel, from: real, kind: "dir", mode: st.mode & 0o7777, bytes: 0 });
    for (const name of fs.readdirSync(real).sort())
      walk(plan, root, path.join(rel, name), where, seen, [...stack, real]);
  } else if (st.isFile()) {
    plan.entries.push({ rel, from: real, kind: "file", mode: st.mode & 0o7777, bytes: st.size });
    plan.files += 1;
    plan.bytes += st.size;
  }
  // Sockets, fifos and devices are not files to copy.
}

/** Copies the plan's entries into `dest` (a worktree's top), each at its path there, with its mode. */
export function copyIncluded(plan: IncludePlan, dest: string): void {
  for (const e of plan.entries) {
    const to = path.join(dest, e.rel);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    // A path the checkout tracks (or a link git made) is replaced, never written through.
    const there = fs.lstatSync(to, { throwIfNoEntry: false });
    if (there && (there.isSymbolicLink() || there.isDirectory() !== (e.kind === "dir")))
      fs.rmSync(to, { recursive: true, force: true });
    if (e.kind === "dir") fs.mkdirSync(to, { recursive: true });
    else {
      fs.copyFileSync(e.from, to);
      fs.chmodSync(to, e.mode);
    }
  }
  // Folders' modes last, deepest first: a read-only folder would refuse what goes in it.
  for (const e of [...plan.entries].reverse())
    if (e.kind === "dir") fs.chmodSync(path.join(dest, e.rel), e.mode);
}

const refusal = (msg: string) => new MusterError("invalid_config", msg);
const mib = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MiB`;
