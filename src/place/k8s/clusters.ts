/**
 * Kubernetes clusters a user has named (`muster hosts add <name> --k8s …`), kept beside the SSH hosts under
 * `hosts` in the user's config file as `{ "k8s": { context, namespace, image, cpu, memory, serviceAccount,
 * env } }` (an SSH host's entry has a `target` instead, so each kind reads only its own). `--on <name>` puts a
 * child in a Pod of its own there, as `--on k8s:<context>` does, with the entry's fields over its profile's
 * `k8s:` (a profile says what its agent needs; the entry, where the cluster is and what it runs).
 */

import { MusterError } from "../../base/errors.js";
import type { PodRequest } from "../../base/pod-request.js";
import { readConfigFile, updateConfig } from "../../config/config.js";
import type { NamedPlaceResolver } from "../registry.js";
import { checkPodRequest, K8S_KIND } from "./place.js";

export interface NamedCluster {
  name: string;
  k8s: PodRequest;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
// Words `--on` gives a meaning of its own.
const RESERVED = new Set(["any", "local", K8S_KIND]);

/** Checks a cluster entry's name as `--on` will take it. */
export function checkClusterName(name: string): string {
  if (!NAME.test(name) || RESERVED.has(name))
    throw new MusterError(
      "invalid_argument",
      `cluster name ${JSON.stringify(name).slice(0, 70)} must be letters, digits, . _ - (not "any", "local" or "k8s")`,
    );
  return name;
}

function entriesIn(config: Record<string, unknown>): Record<string, unknown> {
  const h = config.hosts;
  return h !== null && typeof h === "object" && !Array.isArray(h) ? (h as Record<string, unknown>) : {};
}

const isCluster = (e: unknown): e is { k8s: PodRequest } =>
  e !== null && typeof e === "object" && "k8s" in e && typeof (e as { k8s: unknown }).k8s === "object";

/** Every cluster the user has named, by name (an entry that no longer checks out is left out). */
export function listClusters(env: NodeJS.ProcessEnv): NamedCluster[] {
  return Object.entries(entriesIn(readConfigFile(env).config))
    .filter(([name, e]) => NAME.test(name) && isCluster(e))
    .flatMap(([name, e]) => {
      try {
        return [{ name, k8s: checkPodRequest((e as { k8s: PodRequest }).k8s) }];
      } catch {
        return [];
      }
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Adds or replaces a cluster entry (its fields checked as a profile's `k8s:` is), under the config's lock. */
export async function saveCluster(
  env: NodeJS.ProcessEnv,
  name: string,
  req: PodRequest,
): Promise<NamedCluster> {
  checkClusterName(name);
  const k8s = checkPodRequest(Object.fromEntries(Object.entries(req).filter(([, v]) => v !== undefined)));
  if (k8s.env) k8s.env = [...new Set(k8s.env)];
  await updateConfig(env, (config) => ({ ...config, hosts: { ...entriesIn(config), [name]: { k8s } } }));
  return { name, k8s };
}

/** `--on <name>` for a cluster entry: a Pod of the child's own there; undefined for any other name. */
export const clusterPlace: NamedPlaceResolver = (name, env, profile) => {
  const c = listClusters(env).find((x) => x.name === name);
  if (!c) return undefined;
  const env_ = [...new Set([...(profile?.env ?? []), ...(c.k8s.env ?? [])])];
  return {
    kind: K8S_KIND,
    on: K8S_KIND,
    profile: { ...profile, ...c.k8s, ...(env_.length > 0 ? { env: env_ } : {}) },
  };
};
