/**
 * `env.json`: the environment a child's host hands its agent, written by the parent (0600, at spawn and
 * resume) and deleted by the host as it reads it (it may hold secrets). A host on this machine gets the
 * spawning environment whole; a host on another machine gets only what its place hands over, `inherit`ed
 * over its own environment there (PATH, HOME and the rest are that machine's).
 */
import * as fs from "node:fs";
import { readJson, writeJsonAtomic } from "../util/fsx.js";

export interface HostEnv {
  env: Record<string, string>;
  /** Merged over the host's own environment rather than replacing it. */
  inherit?: boolean;
}

export function writeHostEnv(file: string, handed: HostEnv): void {
  writeJsonAtomic(file, handed.inherit ? { env: handed.env, inherit: true } : { env: handed.env });
}

/** The environment from `file`, which is removed; without one (never written, already taken) the host's own. */
export function takeHostEnv(file: string, own: NodeJS.ProcessEnv): Record<string, string> {
  const mine = Object.fromEntries(
    Object.entries(own).filter((e): e is [string, string] => typeof e[1] === "string"),
  );
  try {
    const handed = readJson<HostEnv>(file);
    return handed.inherit ? { ...mine, ...handed.env } : handed.env;
  } catch {
    return mine;
  } finally {
    fs.rmSync(file, { force: true });
  }
}
