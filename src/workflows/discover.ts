import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { isMusterError, MusterError } from "../base/errors.js";
import { PACKAGE_ROOT } from "../util/pkg.js";
import { findFiles } from "../util/tree.js";
import { CODE_EXTS, readCodeWorkflowFile, readWorkflowText } from "./code/code-file.js";
import { parseWorkflow, WORKFLOW_NAME, type WorkflowDef } from "./dag/toml.js";

export type WorkflowLayer = "bundled" | "user" | "project";

/** A workflow as loaded by name: a TOML DAG, or a code module (no steps: its `source` is run). */
export interface LoadedWorkflow extends WorkflowDef {
  kind: "toml" | "code";
}

/** A discovered workflow: the file that won its name, and the ones it shadows (lower layers first). */
export interface FoundWorkflow extends LoadedWorkflow {
  layer: WorkflowLayer;
  shadows: { source: string; layer: WorkflowLayer }[];
}

/** A file that could not be read as a workflow; asking for its name must say so. */
export interface BrokenWorkflow {
  /** The file stem (its `name` could not be read). */
  name: string;
  source: string;
  layer: WorkflowLayer;
  message: string;
  rank: number;
}

export interface WorkflowDiscovery {
  /** Winners, sorted by name. */
  workflows: FoundWorkflow[];
  broken: BrokenWorkflow[];
  warnings: string[];
  /** Folders searched, lowest precedence first. */
  dirs: { layer: WorkflowLayer; dir: string }[];
  ranks: Map<string, number>;
}

const MAX_FILES = 2000;
const MAX_DEPTH = 8;

/** Where workflows are found, lowest precedence first: bundled, user, project. */
export function workflowDirs(cwd: string, env: NodeJS.ProcessEnv): { layer: WorkflowLayer; dir: string }[] {
  const home = env.HOME || os.homedir();
  const config = env.XDG_CONFIG_HOME || path.join(home, ".config");
  return [
    { layer: "bundled", dir: path.join(PACKAGE_ROOT, "workflows") },
    { layer: "user", dir: path.join(config, "muster", "workflows") },
    { layer: "project", dir: path.join(path.resolve(cwd), ".muster", "workflows") },
  ];
}

/** `**\/*.toml`, then `**\/*.mjs` and `**\/*.js` (code workflows), under `dir` (see findFiles). */
function workflowFiles(dir: string, warnings: string[]): string[] {
  return [".toml", ...CODE_EXTS].flatMap((ext) =>
    findFiles(dir, { ext, what: "workflows", maxDepth: MAX_DEPTH, maxFiles: MAX_FILES }, warnings),
  );
}

/** A discovered file as a workflow: TOML parsed and checked; a code module only named (never run here). */
function readAny(file: string): LoadedWorkflow {
  if (file.endsWith(".toml")) return { ...readWorkflowFile(file), kind: "toml" };
  return { ...readCodeWorkflowFile(file), steps: [], kind: "code" };
}

/** Reads one workflow file (at most 1 MiB); throws a one-line MusterError "invalid_config" for any problem. */
export function readWorkflowFile(file: string): WorkflowDef {
  return parseWorkflow(readWorkflowText(file), file);
}

/** Every workflow in every layer; a later layer shadows an earlier one by name. Never throws on a bad file. */
export function discoverWorkflows(cwd: string, env: NodeJS.ProcessEnv = process.env): WorkflowDiscovery {
  const dirs = workflowDirs(cwd, env);
  const warnings: string[] = [];
  const broken: BrokenWorkflow[] = [];
  const winners = new Map<string, FoundWorkflow>();
  const ranks = new Map<string, number>();
  const scanned = new Set<string>();
  dirs.forEach(({ layer, dir }, rank) => {
    // The same folder reached twice (cwd = HOME, or a symlink) must not shadow itself.
    const real = fs.existsSync(dir) ? fs.realpathSync(dir) : undefined;
    if (!real || scanned.has(real)) return;
    scanned.add(real);
    const here = new Map<string, FoundWorkflow>();
    for (const file of workflowFiles(dir, warnings)) {
      let def: LoadedWorkflow;
      try {
        def = readAny(file);
      } catch (e) {
        if (!isMusterError(e)) throw e;
        const stem = path.basename(file).replace(/\.(toml|mjs|js)$/, "");
        broken.push({ name: stem, source: file, layer, message: e.message, rank });
        warnings.push(`${e.message}; skipped`);
        continue;
      }
      const first = here.get(def.name);
      if (first) {
        warnings.push(`${file}: workflow "${def.name}" is also defined by ${first.source}, which is used`);
        first.shadows.push({ source: file, layer });
        continue;
      }
      const prev = winners.get(def.name);
      const found: FoundWorkflow = {
        ...def,
        layer,
        shadows: prev ? [{ source: prev.source, layer: prev.layer }, ...prev.shadows] : [],
      };
      here.set(def.name, found);
      winners.set(def.name, found);
      ranks.set(def.name, rank);
    }
  });
  const workflows = [...winners.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { workflows, broken, warnings, dirs, ranks };
}

/**
 * A workflow by name (TOML or code), or by TOML file when `ref` names one (contains a "/" or ends in ".toml"). A broken file whose
 * stem is the name, at or above the winner's layer, is an error rather than a silent fallback.
 */
export function loadWorkflow(ref: string, cwd: string, env: NodeJS.ProcessEnv = process.env): LoadedWorkflow {
  if (ref.includes("/") || ref.endsWith(".toml"))
    return { ...readWorkflowFile(path.resolve(cwd, ref)), kind: "toml" };
  if (!WORKFLOW_NAME.test(ref))
    throw new MusterError(
      "invalid_argument",
      `invalid workflow name ${JSON.stringify(ref)}: use letters, digits, ".", "_" or "-"`,
    );
  const found = discoverWorkflows(cwd, env);
  const winner = found.workflows.find((w) => w.name === ref);
  const rank = found.ranks.get(ref) ?? -1;
  const broken = found.broken.filter((b) => b.name === ref && b.rank >= rank).pop();
  if (broken) throw new MusterError("invalid_config", broken.message);
  if (winner) return winner;
  const names = found.workflows.map((w) => w.name);
  throw new MusterError(
    "not_found",
    `unknown workflow "${ref}"; available: ${names.length ? names.join(", ") : "(none)"}`,
  );
}
