import * as fs from "node:fs";
import * as path from "node:path";

/**
 * Whether a `.git` folder is a repository's: git itself needs its HEAD. An empty `.git` is not one: agent
 * sandboxes make one for a moment as the mount point that keeps `.git` read-only inside a writable root
 * (Codex's does so in the temp dir), and taking it for a repository would move every directory below.
 */
export function isRepositoryDir(dotGit: string): boolean {
  return fs.statSync(path.join(dotGit, "HEAD"), { throwIfNoEntry: false })?.isFile() === true;
}
