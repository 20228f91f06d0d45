// Codex (0.171) reads a project's .codex/config.toml only when the project is trusted: a table
// [projects."<path>"] with trust_level = "trusted" in the user's config.toml ($CODEX_HOME). It looks the
// project up by the folder (its canonical path, then as given), then by the root of its git repository — the
// main one for a linked worktree — and the first table found decides (config_toml.rs get_active_project,
// git_info.rs resolve_root_git_project_for_trust). Its trust prompt writes the repository root (or the folder
// outside git). muster never writes trust itself: trusting a folder is the user's decision.
import * as fs from "node:fs";
import * as path from "node:path";
import { isRepositoryDir } from "../../util/git-dir.js";
import { readFileBounded } from "../../util/safe-read.js";
import { codexConfigFile } from "./codex.js";
import { isObject } from "./edit.js";
import { load } from "./files.js";
import type { InstallContext } from "./spec.js";

const canonical = (p: string): string => {
  try {
    return fs.realpathSync(p);
  } catch {
    return p;
  }
};

/** The repository root Codex keys trust by for `dir`: the main repository's for a worktree; none outside git. */
export function codexRepoRoot(dir: string): string | undefined {
  let d = path.resolve(dir);
  for (;;) {
    const dotGit = path.join(d, ".git");
    const st = fs.statSync(dotGit, { throwIfNoEntry: false });
    if (st?.isDirectory()) {
      if (isRepositoryDir(dotGit)) return canonical(d);
    } else if (st) {
      // A linked worktree: ".git" is a file "gitdir: <main>/.git/worktrees/<name>".
      let text: string;
      try {
        text = readFileBounded(dotGit, 64 * 1024, { follow: true })
          .toString("utf8")
          .trim();
      } catch {
        return undefined;
      }
      if (!text.startsWith("gitdir:")) return undefined;
      const gitDir = canonical(path.resolve(d, text.slice("gitdir:".length).trim()));
      const worktrees = path.dirname(gitDir);
      if (path.basename(worktrees) !== "worktrees") return undefined;
      return canonical(path.dirname(path.dirname(worktrees)));
    }
    const up = path.dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

/** The keys Codex looks the project in `dir` up by, in its order. */
export function codexTrustKeys(dir: string): string[] {
  const root = codexRepoRoot(dir);
  return [...new Set([canonical(dir), path.resolve(dir), ...(root ? [root] : [])])];
}

export interface TrustCheck {
  file: string;
  missing: string[];
  /** How to fix it (muster mcp install does not: trust is the user's to give). */
  fix?: string;
}

/** Whether Codex trusts the project in ctx.cwd, read from the user's config.toml; nothing is written. */
export function codexTrust(ctx: Pick<InstallContext, "env" | "cwd">): TrustCheck {
  const file = codexConfigFile({ scope: "user", env: ctx.env, cwd: ctx.cwd });
  const keys = codexTrustKeys(ctx.cwd);
  // Where Codex's own trust prompt would record it: the repository root, else the folder.
  const key = codexRepoRoot(ctx.cwd) ?? keys[0]!;
  const fix = `add [projects.${JSON.stringify(key)}] with trust_level = "trusted" to ${file}, or start codex in ${ctx.cwd} once and trust it`;
  const untrusted = (why: string): TrustCheck => ({
    file,
    missing: [`Codex does not trust ${ctx.cwd} (${why}), so it ignores its .codex/config.toml`],
    fix,
  });
  let doc: Record<string, unknown>;
  try {
    const loaded = load({ file, format: "toml" });
    if (!loaded.exists) return untrusted(`${file} does not exist`);
    doc = loaded.doc;
  } catch (e) {
    return { file, missing: [(e as Error).message] };
  }
  const projects = isObject(doc.projects) ? doc.projects : {};
  const found = keys.find((k) => isObject(projects[k]));
  if (found === undefined) return untrusted(`no [projects.${JSON.stringify(key)}] table`);
  const level = (projects[found] as Record<string, unknown>).trust_level;
  if (level === "trusted") return { file, missing: [] };
  const has = level === undefined ? "no trust_level" : `trust_level = ${JSON.stringify(level)}`;
  return untrusted(`[projects.${JSON.stringify(found)}] has ${has}`);
}
