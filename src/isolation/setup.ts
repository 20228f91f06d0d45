/**
 * Worktree set-up: what a new worktree gets before its child's first turn, from two files of the parent's
 * checkout (its top level): `.muster/worktree-include` (include.ts: untracked files copied in) and
 * `.muster/worktree-setup`, an executable run in the new worktree, bounded in time and in the output kept.
 * Neither there: nothing happens. Everything is checked before the spawn creates anything (planSetup); a
 * set-up that fails or runs out of time fails the spawn with its output. A worktree on another machine gets
 * the same through its place's exec: the files as a tarball on stdin, the script's bytes run by
 * setup-main.js there (shipped with muster's far side).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { MusterError } from "../base/errors.js";
import type { Place } from "../place/place.js";
import { type BoundedRun, runBounded } from "../util/bounded-run.js";
import { copyIncluded, type IncludePlan, planInclude } from "./include.js";

export const SETUP_FILE = path.join(".muster", "worktree-setup");
/** How much of the end of a set-up's output is kept (its event, a refusal). */
export const SETUP_OUTPUT_KEEP_BYTES = 16 * 1024;
/** The far-side runner of a set-up script (built into dist/remote too). */
export const SETUP_MAIN = "dist/isolation/setup-main.js";

/** What a new worktree gets, as found in the parent's checkout before anything is created. */
export interface SetupPlan {
  repo: string;
  include: IncludePlan | null;
  /** The set-up script's path in the parent's checkout, when there is one. */
  script: string | null;
  timeoutMs: number;
}

/** What the set-up did: its record in the child's events. */
export interface SetupDone {
  included?: { files: number; bytes: number };
  script?: string;
  exitCode?: number;
  durationMs?: number;
  outputTail?: string;
}

/** What a far runner reads on its stdin: this header on one line, then the script's bytes. */
export interface SetupRequest {
  cwd: string;
  env: Record<string, string>;
  /** Whether `env` goes over the runner's own environment (another machine's) or is the whole of it. */
  inherit: boolean;
  timeoutMs: number;
  keepBytes: number;
}

/**
 * The set-up files of the checkout `repo`, checked: null when neither is there. A script that is not an
 * executable file, or an include list that leads out of the checkout or holds too much, refuses here.
 */
export function planSetup(repo: string, timeoutMs: number): SetupPlan | null {
  const include = planInclude(repo);
  const file = path.join(repo, SETUP_FILE);
  const st = fs.statSync(file, { throwIfNoEntry: false });
  let script: string | null = null;
  if (st) {
    if (!st.isFile()) throw refusal(`${file} is not a file`);
    try {
      fs.accessSync(file, fs.constants.X_OK);
    } catch {
      throw refusal(`${file} is not executable (chmod +x it, or remove it)`);
    }
    script = file;
  }
  if (!include && !script) return null;
  return { repo, include, script, timeoutMs };
}

/** The environment a set-up runs with: the child's, with who it is for and where. */
export interface SetupEnv {
  env: Record<string, string>;
  /** The child's environment is merged over the machine's own (a place on another machine). */
  inherit: boolean;
}

/** Sets up a worktree on this machine (`worktree`: its top level). Throws the refusal of a failed set-up. */
export async function setUpWorktree(
  plan: SetupPlan,
  worktree: string,
  env: SetupEnv,
  onSlow?: (text: string) => void,
): Promise<SetupDone> {
  const done: SetupDone = {};
  if (plan.include) {
    copyIncluded(plan.include, worktree);
    done.included = { files: plan.include.files, bytes: plan.include.bytes };
  }
  if (!plan.script) return done;
  const run = await slowNote(worktree, onSlow, () =>
    runBounded([plan.script!], {
      cwd: worktree,
      env: env.inherit ? { ...process.env, ...env.env } : env.env,
      timeoutMs: plan.timeoutMs,
      keepBytes: SETUP_OUTPUT_KEEP_BYTES,
    }).catch((e: Error) => {
      throw refusal(`${plan.script} could not start: ${e.message}`);
    }),
  );
  return { ...done, ...settled(plan, run) };
}

// $1 = the worktree's top there; stdin = a gzipped tarball of the included files, unpacked in place with
// their modes, owned by whoever unpacks them.
const UNPACK = ["set -eu", 'cd "$1"', "tar -xzpof -"].join("\n");

/** Sets up a worktree on another machine (`worktree`: its top level there), through the place's exec. */
export async function setUpFarWorktree(
  place: Place,
  plan: SetupPlan,
  worktree: string,
  env: SetupEnv,
  onSlow?: (text: string) => void,
): Promise<SetupDone> {
  const done: SetupDone = {};
  if (plan.include && plan.include.entries.length > 0) {
    const r = await place.exec(["sh", "-c", UNPACK, "sh", worktree], {
      env: {},
      input: tarballOf(plan.include),
      timeoutMs: 10 * 60_000,
    });
    if (r.exitCode !== 0)
      throw new MusterError(
        "unsupported",
        `could not copy the files of ${path.join(plan.repo, ".muster", "worktree-include")} into the worktree in place ${place.name}: ${lastLine(r.stderr) || `exit ${r.exitCode}`}`,
      );
  }
  if (plan.include) done.included = { files: plan.include.files, bytes: plan.include.bytes };
  if (!plan.script) return done;
  if (!place.scriptArgv)
    throw new MusterError("unsupported", `place ${place.name} cannot run ${SETUP_FILE} in a worktree there`);
  const request: SetupRequest = {
    cwd: worktree,
    ...env,
    timeoutMs: plan.timeoutMs,
    keepBytes: SETUP_OUTPUT_KEEP_BYTES,
  };
  const input = Buffer.concat([Buffer.from(`${JSON.stringify(request)}\n`), fs.readFileSync(plan.script)]);
  const argv = place.scriptArgv(SETUP_MAIN);
  const out = await slowNote(worktree, onSlow, () =>
    // The runner bounds the script there; this bound is only for a link that never answers.
    place.exec(argv, { env: {}, input, timeoutMs: plan.timeoutMs + 60_000 }),
  );
  let run: BoundedRun;
  try {
    run = JSON.parse(out.stdout.trim().split("\n").pop() ?? "") as BoundedRun;
  } catch {
    throw new MusterError(
      "unsupported",
      `${plan.script} could not run in place ${place.name}: ${lastLine(out.stderr) || `exit ${out.exitCode}`}`,
    );
  }
  return { ...done, ...settled(plan, run) };
}

/** The record of a set-up that ended well; the refusal (with its output's end) of one that did not. */
function settled(plan: SetupPlan, run: BoundedRun): SetupDone {
  const how = run.timedOut
    ? `did not finish within ${plan.timeoutMs / 1000}s (stopped)`
    : run.exitCode !== 0
      ? `failed (${run.exitCode === null ? `signal ${run.signal}` : `exit ${run.exitCode}`})`
      : "";
  if (how) {
    const out = run.outputTail.trimEnd();
    const cut = run.outputBytes > SETUP_OUTPUT_KEEP_BYTES ? "…\n" : "";
    throw new MusterError(
      "invalid_config",
      `${plan.script} ${how}: nothing was created${out ? "; the end of its output:" : " (it printed nothing)"}`,
      out ? { detail: `${cut}${out}` } : undefined,
    );
  }
  return {
    script: SETUP_FILE,
    exitCode: 0,
    durationMs: run.durationMs,
    outputTail: run.outputTail,
  };
}

// A set-up that takes longer than this is said to be running (it may install a project's dependencies).
const SLOW_MS = 1000;

async function slowNote<T>(
  worktree: string,
  onSlow: ((text: string) => void) | undefined,
  fn: () => Promise<T>,
) {
  const timer = onSlow
    ? setTimeout(() => onSlow(`running ${SETUP_FILE} in ${worktree}…`), SLOW_MS)
    : undefined;
  try {
    return await fn();
  } finally {
    clearTimeout(timer);
  }
}

/** The included files as a gzipped tarball: copied into a folder of their own first, then packed whole. */
function tarballOf(plan: IncludePlan): Buffer {
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), "muster-include-"));
  try {
    copyIncluded(plan, stage);
    // Each top-level name, not ".": the stage folder's own mode must not reach the worktree's top.
    const tops = [...new Set(plan.entries.map((e) => e.rel.split(path.sep)[0]!))];
    return execFileSync("tar", ["-czf", "-", "-C", stage, "--", ...tops], {
      maxBuffer: 1024 * 1024 * 1024,
      stdio: ["ignore", "pipe", "pipe"],
    });
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

const refusal = (msg: string) => new MusterError("invalid_config", msg);
const lastLine = (s: string): string => s.trim().split("\n").filter(Boolean).pop() ?? "";
