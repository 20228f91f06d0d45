/**
 * A root file system from this machine's own files, for an image that needs no base image pull: the node
 * running muster, tmux, a shell, git and the small programs a child host, tmux, muster's scripts and git call,
 * each with the libraries `ldd` names, terminfo, the C.UTF-8 locale and git's helpers. Only paths are
 * collected here (with every symlink on their way, and their parent folders); `tar --no-recursion` reads the
 * files themselves, so nothing is copied twice.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { findOnPath } from "../../util/which.js";

/** What must be there: a child's terminal, its shell, and git for a worktree child's bundles. */
export const REQUIRED_BINS = ["tmux", "sh", "bash", "git", "tar", "gzip"];
/** What is taken when this machine has it: what muster's scripts, tmux, git and an agent's tools call. */
export const OPTIONAL_BINS = [
  "cat",
  "ls",
  "mkdir",
  "mktemp",
  "rm",
  "rmdir",
  "mv",
  "cp",
  "ln",
  "chmod",
  "touch",
  "env",
  "sleep",
  "kill",
  "ps",
  "df",
  "awk",
  "base64",
  "head",
  "tail",
  "grep",
  "sed",
  "find",
  "xargs",
  "diff",
  "id",
  "uname",
  "readlink",
  "realpath",
  "dirname",
  "basename",
  "wc",
  "tr",
  "cut",
  "sort",
  "uniq",
  "tee",
  "stat",
  "date",
  "true",
  "false",
  "test",
  "printf",
  "sha256sum",
  "rg",
];
const DATA_DIRS = [
  "/lib/terminfo",
  "/usr/share/terminfo",
  "/etc/terminfo",
  "/usr/lib/locale/C.utf8",
  "/usr/lib/git-core",
  "/usr/share/git-core",
];
// What goes in changed: bump, so no tarball cached from before is reused.
const LAYOUT = 2;

export class RootFs {
  /** Absolute path → lstat. */
  readonly entries = new Map<string, fs.Stats>();

  /** Adds `p` with every symlink on its way and its parents; `recursive`: a folder's whole tree. */
  add(p: string, recursive = false): void {
    const parts = path.resolve(p).split("/").filter(Boolean);
    let cur = "/";
    for (let i = 0; i < parts.length; i++) {
      const next = path.join(cur, parts[i]!);
      const st = fs.lstatSync(next);
      this.entries.set(next, st);
      if (st.isSymbolicLink()) {
        this.add(path.resolve(cur, fs.readlinkSync(next), ...parts.slice(i + 1)), recursive);
        return;
      }
      cur = next;
    }
    if (recursive && this.entries.get(cur)?.isDirectory())
      for (const name of fs.readdirSync(cur)) this.add(path.join(cur, name), true);
  }

  /** Sorted (a folder before what is in it), without the leading "/". */
  list(): string[] {
    return [...this.entries.keys()].sort().map((p) => p.slice(1));
  }

  /** A key over every entry's path, kind, size, mode and time: the same files give the same key. */
  key(): string {
    const h = createHash("sha256");
    h.update(`layout ${LAYOUT}\n`);
    for (const p of [...this.entries.keys()].sort()) {
      const st = this.entries.get(p)!;
      const link = st.isSymbolicLink() ? fs.readlinkSync(p) : "";
      // A folder by its path and mode only: its time changes whenever anything is installed next to a file.
      const stamp = st.isDirectory() ? "" : `${st.size}\0${st.mtimeMs}`;
      h.update(`${p}\0${st.mode}\0${stamp}\0${link}\n`);
    }
    return h.digest("hex");
  }
}

/**
 * This machine's files for an image: `node` (the one running muster), the required and optional programs
 * and `extra` ones by name, their libraries and the data folders. A required program that is missing refuses
 * in one line.
 */
export function hostRootFs(env: NodeJS.ProcessEnv, extra: readonly string[] = []): RootFs {
  const root = new RootFs();
  const bins = [fs.realpathSync(process.execPath)];
  for (const name of [...REQUIRED_BINS, ...OPTIONAL_BINS, ...extra]) {
    const p = findOnPath(name, env.PATH) ?? findOnPath(name, "/usr/sbin:/sbin");
    if (p) bins.push(p);
    else if (REQUIRED_BINS.includes(name) || extra.includes(name))
      throw new MusterError(
        "unsupported",
        `${name} is not on this machine's PATH: it cannot go into the image (install it, or build --from an image that has node and tmux)`,
      );
  }
  for (const b of bins) root.add(b);
  // The merged-/usr links themselves, so /bin/sh and the ELF loader's path resolve.
  for (const l of ["/bin", "/sbin", "/lib", "/lib64"])
    if (fs.lstatSync(l, { throwIfNoEntry: false })?.isSymbolicLink()) root.add(l);
  root.add("/bin/sh");
  const ldd = spawnSync("ldd", bins, { encoding: "utf8" });
  for (const m of (ldd.stdout ?? "").matchAll(/(?:=>\s*)?(\/[^\s:]+)\s+\(0x/g)) root.add(m[1]!);
  for (const d of DATA_DIRS) if (fs.existsSync(d)) root.add(d, true);
  return root;
}
