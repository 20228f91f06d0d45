/**
 * Worktree isolation for a child whose place is another machine (an SSH host): the parent's checkout is
 * never mounted there. At spawn the child's branch is made here at the parent's HEAD and shipped as a git
 * bundle; the place clones it into a worktree of its own and the child works there. Its work comes back the
 * same way: `fetchFarWork` has the place bundle the branch's new commits (and, for a diff, a snapshot commit
 * of what is not committed yet, made through a temporary index so the child's files and index stay as they
 * are), and fetches them into the parent's repository, so `diff` and `merge` work on local refs.
 * Everything there runs as fixed `sh` scripts through the place's exec, inputs as arguments or stdin.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import type { Place } from "../place/place.js";
import { writeJsonAtomic } from "../util/fsx.js";
import { git, runGit } from "./git.js";
import { farIsolationFile, type IsolationRecord, planWorktree } from "./worktree.js";

const GIT_ID = ["-c", "user.name=muster", "-c", "user.email=muster@localhost"];

// $1 = the worktree there, $2 = the branch; stdin = a bundle of refs/heads/$2. A clone of its own (there is
// no repository there to add a worktree to), on the branch, its files checked out.
const CLONE = [
  "set -eu",
  'mkdir -p "$(dirname "$1")"',
  'b=$(mktemp "$1.bundle.XXXXXX"); trap \'rm -f "$b"\' EXIT',
  'cat > "$b"',
  'git clone --quiet --branch "$2" "$b" "$1"',
  'git -C "$1" remote remove origin',
].join("\n");

// $1 = the worktree, $2 = the branch, $3 = the base, $4 = commit|snapshot; prints `committed=0|1` (whether
// leftovers were committed), then the bundle in base64 (nothing when there is nothing new). `commit` commits leftovers onto the branch, as a local merge does;
// `snapshot` makes a commit of the files as they are without touching the branch, index or files.
const BUNDLE = [
  "set -eu",
  'cd "$1"',
  `id="${GIT_ID.join(" ")}"`,
  'ref="refs/heads/$2"; committed=0',
  'if [ -n "$(git status --porcelain --untracked-files=all)" ]; then',
  '  if [ "$4" = commit ]; then',
  '    git add -A && git $id commit --quiet --no-verify -m "muster: work left uncommitted on the host"',
  "    committed=1",
  "  else",
  "    idx=$(mktemp); trap 'rm -f \"$idx\"' EXIT",
  '    GIT_INDEX_FILE="$idx" git read-tree HEAD && GIT_INDEX_FILE="$idx" git add -A',
  '    tree=$(GIT_INDEX_FILE="$idx" git write-tree)',
  '    c=$(git $id commit-tree "$tree" -p HEAD -m "muster: snapshot of the worktree")',
  '    git update-ref refs/muster/snapshot "$c"; ref=refs/muster/snapshot',
  "  fi",
  "fi",
  'echo "committed=$committed"',
  'if [ "$(git rev-list --count "$3..$ref")" = 0 ]; then exit 0; fi',
  'git bundle create --quiet - "$3..$ref" | base64',
].join("\n");

/**
 * Makes the child's branch here and its worktree at `far` on `place`; writes the record into the mirror
 * `artifactDir`; returns the child's working directory there. On failure the branch goes again.
 */
export async function createFarWorktree(
  place: Place,
  cwd: string,
  childId: string,
  far: string,
  artifactDir: string,
  name?: string,
): Promise<string> {
  const plan = planWorktree(cwd, childId, name);
  git(plan.repo, ["branch", plan.branch, plan.base]);
  try {
    const bundle = execFileSync(
      "git",
      ["-C", plan.repo, "bundle", "create", "--quiet", "-", `refs/heads/${plan.branch}`],
      {
        maxBuffer: 1024 * 1024 * 1024,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const r = await place.exec(["sh", "-c", CLONE, "sh", far, plan.branch], {
      env: {},
      input: bundle,
      timeoutMs: 10 * 60_000,
    });
    if (r.exitCode !== 0)
      throw new MusterError(
        "unsupported",
        `could not make the child's worktree in place ${place.name}: ${lastLine(r.stderr) || `exit ${r.exitCode}`}`,
      );
    const record: IsolationRecord = {
      v: 1,
      mode: "worktree",
      repo: plan.repo,
      worktree: far,
      branch: plan.branch,
      base: plan.base,
      place: place.name,
    };
    writeJsonAtomic(farIsolationFile(artifactDir), record);
    return path.posix.join(far, ...plan.sub.split(path.sep).filter(Boolean));
  } catch (e) {
    runGit(plan.repo, ["branch", "-D", plan.branch]);
    throw e;
  }
}

/** What fetchFarWork brought: the ref here that holds the work, and whether leftovers were committed there. */
export interface FetchedWork {
  ref: string;
  committedLeftovers: boolean;
}

/**
 * Brings a far child's work here. `commit`: its leftovers are committed there and its branch here moves to
 * its tip (the branch keeps every commit). `snapshot`: the ref is a snapshot here of the worktree as it is
 * now (remove it with dropSnapshot); with nothing new, the branch itself.
 */
export async function fetchFarWork(
  place: Place,
  r: IsolationRecord,
  how: "commit" | "snapshot",
): Promise<FetchedWork> {
  const out = await place.exec(["sh", "-c", BUNDLE, "sh", r.worktree, r.branch, r.base, how], {
    env: {},
    timeoutMs: 10 * 60_000,
  });
  if (out.exitCode !== 0)
    throw new MusterError(
      "unreachable",
      `could not read the child's work in place ${place.name}: ${lastLine(out.stderr) || `exit ${out.exitCode}`}`,
    );
  const [first = "", ...rest] = out.stdout.split("\n");
  const committedLeftovers = first.trim() === "committed=1";
  const text = rest.join("").trim();
  if (text === "") return { ref: `refs/heads/${r.branch}`, committedLeftovers };
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "muster-bundle-"));
  try {
    const file = path.join(tmp, "work.bundle");
    fs.writeFileSync(file, Buffer.from(text, "base64"));
    const theirs = how === "commit" ? `refs/heads/${r.branch}` : "refs/muster/snapshot";
    const here = how === "commit" ? `refs/heads/${r.branch}` : `refs/muster/snapshots/${r.branch}`;
    // Forced: the far branch is the child's, and only ever moves forward from what was fetched before.
    git(r.repo, ["fetch", "--quiet", "--no-write-fetch-head", file, `+${theirs}:${here}`]);
    return { ref: here, committedLeftovers };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Drops a snapshot ref fetchFarWork made (a ref under refs/muster/snapshots/). */
export function dropSnapshot(r: IsolationRecord, ref: string): void {
  if (ref.startsWith("refs/muster/snapshots/")) runGit(r.repo, ["update-ref", "-d", ref]);
}

const lastLine = (s: string): string => s.trim().split("\n").filter(Boolean).pop() ?? "";
