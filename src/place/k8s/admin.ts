/**
 * What `muster hosts` does with the Kubernetes clusters a user named, as plain data for the front ends: add
 * and list entries (clusters.ts) and check one (its kubeconfig context, the API server's answer and version,
 * its Pods of muster's in the namespace). The one module of the Pod place that front ends import
 * (scripts/import-rules.cjs).
 */
import { MusterError } from "../../base/errors.js";
import { apiSaid, k8s, kubeConfig, namespaceOf } from "./client.js";
import { listClusters, type NamedCluster } from "./clusters.js";

export type { NamedCluster } from "./clusters.js";
export { checkClusterName, listClusters, saveCluster } from "./clusters.js";

export interface ClusterCheck {
  name: string;
  context: string;
  namespace: string;
  server?: string;
  reachable: boolean;
  problems: string[];
  rttMs?: number;
  version?: string;
  /** Pods muster manages in the namespace now. */
  pods?: number;
}

/** The cluster entry called `name`; a clear error naming the ones there are when none is. */
export function getCluster(env: NodeJS.ProcessEnv, name: string): NamedCluster {
  const all = listClusters(env);
  const found = all.find((c) => c.name === name);
  if (found) return found;
  throw new MusterError(
    "not_found",
    `no cluster "${name}" (${all.length > 0 ? `clusters: ${all.map((c) => c.name).join(", ")}` : "no clusters yet"}); add it with: muster hosts add ${name} --k8s [--context <context>]`,
  );
}

/** Everything `hosts check` says of cluster `name`; never throws for a cluster that cannot be reached. */
export async function checkCluster(env: NodeJS.ProcessEnv, name: string): Promise<ClusterCheck> {
  const c = getCluster(env, name);
  const out: ClusterCheck = {
    name,
    context: c.k8s.context ?? "",
    namespace: c.k8s.namespace ?? "",
    reachable: false,
    problems: [],
  };
  let kc: Awaited<ReturnType<typeof kubeConfig>>;
  try {
    kc = await kubeConfig(env, c.k8s.context);
  } catch (e) {
    out.problems.push((e as Error).message);
    return out;
  }
  out.context = kc.getCurrentContext();
  out.namespace = c.k8s.namespace ?? namespaceOf(kc);
  out.server = kc.getCurrentCluster()?.server;
  const { VersionApi, CoreV1Api } = await k8s();
  try {
    const t0 = performance.now();
    const v = await kc.makeApiClient(VersionApi).getCode();
    out.rttMs = Math.round((performance.now() - t0) * 10) / 10;
    out.version = v.gitVersion;
    out.reachable = true;
    const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({
      namespace: out.namespace,
      labelSelector: "app.kubernetes.io/managed-by=muster",
    });
    out.pods = pods.items.length;
  } catch (e) {
    out.problems.push(`${out.reachable ? `namespace ${out.namespace}` : `cluster ${name}`}: ${apiSaid(e)}`);
  }
  return out;
}
