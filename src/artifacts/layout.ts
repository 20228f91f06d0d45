/**
 * The on-disk layout of the state root, in one place (DESIGN.md §3; the artifact dir: artifacts/README.md).
 * Every path under the state root is spelled here and nowhere else:
 *
 *   <root>/primaries/<primary>/{registry.json, receipts.ndjson, budget.json, pause.json, notify.log, groups/, slots/,
 *                               best-of/<group>.json, artifacts/<child>/…, subagents/<child>.jsonl}
 *   <root>/workspaces/<sha256(dir)[:32]>.json
 *   <root>/bin/<hash>/muster
 *   <root>/backends/<name>/                (a backend's own state)
 */
import * as os from "node:os";
import * as path from "node:path";
import { rawSetting } from "../base/settings/resolve.js";
import { workingDir } from "../util/cwd.js";
import { sha256Hex } from "../util/sha256.js";

/** State root: $MUSTER_HOME, else ${XDG_STATE_HOME:-~/.local/state}/muster. */
export function stateRoot(env: NodeJS.ProcessEnv = process.env): string {
  // A relative MUSTER_HOME is taken from the working directory, which may be gone (see workingDir).
  const home = rawSetting(env, "home");
  if (home) return path.resolve(workingDir(env), home);
  const state = env.XDG_STATE_HOME || path.join(env.HOME || os.homedir(), ".local", "state");
  return path.join(state, "muster");
}

/** `<root>/primaries`: one folder per primary. */
export const primariesDir = (root: string): string => path.join(root, "primaries");

/** `<root>/workspaces/<hash>.json`: the primary recorded for a workspace directory. */
export const workspaceFile = (root: string, dir: string): string =>
  path.join(root, "workspaces", `${sha256Hex(dir).slice(0, 32)}.json`);

/** `<root>/bin`: folders of `muster` shims for children's PATH (see util/self-bin.ts). */
export const selfBinRoot = (root: string): string => path.join(root, "bin");

/** `<root>/backends/<name>`: the state a backend keeps for itself. */
export const backendStateDir = (root: string, name: string): string => path.join(root, "backends", name);

/** Paths of one primary's state. */
export function primaryPaths(root: string, primary: string) {
  return primaryPathsAt(path.join(primariesDir(root), primary));
}

/** Paths of one primary's state, from its folder (`<root>/primaries/<primary>`). */
export function primaryPathsAt(dir: string) {
  return {
    dir,
    registry: path.join(dir, "registry.json"),
    /** Consumed delivery records (append + fsync). */
    receipts: path.join(dir, "receipts.ndjson"),
    groups: path.join(dir, "groups"),
    /** Each best-of run's record (its task, children and the judge's verdict), `best-of/<group>.json`. */
    bestOf: path.join(dir, "best-of"),
    /** The tree's shared budget. */
    budget: path.join(dir, "budget.json"),
    /** The tree's pause after a provider refused it (a quota, a credential): no turn starts while it holds. */
    pause: path.join(dir, "pause.json"),
    /** What a parent's notices (of a child it recorded lost) could not reach, a line each. */
    notifyLog: path.join(dir, "notify.log"),
    /** Run-slot tickets of the child hosts. */
    slots: path.join(dir, "slots"),
    artifacts: path.join(dir, "artifacts"),
    artifactDir: (child: string) => path.join(dir, "artifacts", child),
    /** Each child's conversation, `subagents/<child>.jsonl`. */
    subagents: path.join(dir, "subagents"),
    sessionFile: (child: string) => path.join(dir, "subagents", `${child}.jsonl`),
  };
}

export type PrimaryPaths = ReturnType<typeof primaryPathsAt>;

/** A child's artifact dir is `<root>/primaries/<primary>/artifacts/<child>`: the state root, its primary's paths and the child's id, from it. */
export function pathsOfArtifactDir(artifactDir: string): {
  root: string;
  primary: PrimaryPaths;
  child: string;
} {
  const primaryDir = path.resolve(artifactDir, "..", "..");
  return {
    root: path.resolve(primaryDir, "..", ".."),
    primary: primaryPathsAt(primaryDir),
    child: path.basename(artifactDir),
  };
}

/** File names inside one child's artifact dir (spec: artifacts/README.md). */
export function childFiles(dir: string) {
  return {
    dir,
    meta: path.join(dir, "meta.json"),
    events: path.join(dir, "events.ndjson"),
    output: path.join(dir, "output.md"),
    outputs: path.join(dir, "outputs"),
    inbox: path.join(dir, "inbox"),
    prompts: path.join(dir, "prompts"),
    control: path.join(dir, "control"),
    /** Cancellation snapshots (`muster cancel --snapshot`): snapshots/<turnId>.json, 0600. */
    snapshots: path.join(dir, "snapshots"),
    /** Answers to the agent's pending requests (`muster answer`), answers/<requestId>.json, 0600. */
    answers: path.join(dir, "answers"),
    /** Private files an agent CLI needs for this child (settings, its own session files); never the user's. */
    runner: path.join(dir, "runner"),
    /** The spawning environment, handed over once: the child host deletes it on read. */
    envFile: path.join(dir, "env.json"),
    /** Present while a parent is cancelling the child: its host starts no turn from then on. */
    closing: path.join(dir, "closing"),
    /** Disk space the host keeps to record a failure on a full disk. */
    reserve: path.join(dir, ".reserve"),
    /** Present on this machine when the dir is a mirror of a child placed elsewhere (store-mirrored.ts). */
    mirror: path.join(dir, ".mirror.json"),
    /** In a mirror while its link to the far side is down: since when, and why (place/mirror/keeper.ts). */
    mirrorLink: path.join(dir, ".mirror-link.json"),
    /** The parent's records for a mirrored child's log, on their way to the far side (store-mirrored.ts). */
    appends: path.join(dir, "appends"),
  };
}

export type ChildFiles = ReturnType<typeof childFiles>;

export const promptFile = (dir: string, turnId: string): string => path.join(dir, "prompts", `${turnId}.txt`);
