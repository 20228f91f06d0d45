/** A git checkout for a worktree test: made with one commit of `README`; `git(...)` runs git in it. */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

export interface TestRepo {
  dir: string;
  /** git in the checkout, as user t <t@t>; its stdout. */
  git(...args: string[]): string;
}

export function makeRepo(dir: string, readme = "here\n"): TestRepo {
  fs.mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", ...args]).toString();
  git("init", "--quiet", "-b", "main");
  fs.writeFileSync(path.join(dir, "README"), readme);
  git("add", "README");
  git("commit", "--quiet", "-m", "first");
  return { dir, git };
}
