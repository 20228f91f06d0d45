import * as fs from "node:fs";
import * as path from "node:path";

export interface FindFilesOptions {
  /** File name suffix, e.g. ".md". */
  ext: string;
  /** What the files are, for the "too many" warning ("profiles", "workflows"). */
  what: string;
  /** Also list non-directories that are not regular files (a FIFO or device): their reader refuses them by name. */
  special?: boolean;
  maxDepth?: number;
  maxFiles?: number;
}

/**
 * `**\/*<ext>` under `dir`, shallowest first then by path; hidden entries skipped, symlink loops guarded,
 * depth and count bounded (past the count, a warning says how many were ignored).
 */
export function findFiles(dir: string, opts: FindFilesOptions, warnings: string[]): string[] {
  const maxDepth = opts.maxDepth ?? 8;
  const maxFiles = opts.maxFiles ?? 2000;
  const found: { file: string; depth: number }[] = [];
  const seen = new Set<string>();
  const visit = (d: string, depth: number): void => {
    let real: string;
    try {
      real = fs.realpathSync(d);
    } catch {
      return;
    }
    if (seen.has(real) || depth > maxDepth) return;
    seen.add(real);
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name.startsWith(".")) continue;
      const p = path.join(d, e.name);
      const st = e.isSymbolicLink() ? fs.statSync(p, { throwIfNoEntry: false }) : e;
      if (st?.isDirectory()) visit(p, depth + 1);
      else if (st && (st.isFile() || opts.special) && e.name.endsWith(opts.ext))
        found.push({ file: p, depth });
    }
  };
  visit(dir, 0);
  found.sort((a, b) => a.depth - b.depth || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  if (found.length > maxFiles)
    warnings.push(`${dir}: more than ${maxFiles} ${opts.what}; the rest are ignored`);
  return found.slice(0, maxFiles).map((f) => f.file);
}
