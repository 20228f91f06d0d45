/**
 * A stand-in Kubernetes API server (no real one can run here), typed for the tests: Pods, watches, delete,
 * eviction and the exec subresource over WebSocket, each Pod a folder whose exec'd commands are real processes.
 * The implementation is test/fixtures/k8s-standin.mjs, plain JS so the benchmark can start one too.
 */
import * as impl from "../fixtures/k8s-standin.mjs";

/** A Pod as the stand-in keeps and sends it (plain JSON: timestamps are strings). */
export interface K8sPod {
  kind: "Pod";
  apiVersion: "v1";
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    resourceVersion: string;
    creationTimestamp: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    [key: string]: unknown;
  };
  spec: {
    containers: { name: string; image: string; [key: string]: unknown }[];
    nodeName?: string;
    [key: string]: unknown;
  };
  status: {
    phase: "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";
    reason?: string;
    message?: string;
    conditions?: { type: string; status: string; [key: string]: unknown }[];
    containerStatuses?: {
      name: string;
      ready: boolean;
      state: Record<string, unknown>;
      [key: string]: unknown;
    }[];
    [key: string]: unknown;
  };
}

export interface K8sStandin {
  /** `http://127.0.0.1:<port>` (no TLS). */
  url: string;
  /**
   * A kubeconfig under base: cluster `standin`, contexts `standin` (user admin, token admin-token, the
   * current one) and `standin-viewer` (user viewer: get, list and watch only), both in namespace muster.
   */
  kubeconfig: string;
  /** "muster", the one namespace there is. */
  namespace: string;
  /** The current pods (copies), by name. */
  pods(): K8sPod[];
  /** `<base>/pods/<name>`: cwd, HOME and TMUX_TMPDIR of every process exec'd in the pod. */
  podDir(name: string): string;
  /**
   * Node-pressure eviction, as the kubelet does it: kills the pod's processes, then phase Failed, reason
   * Evicted, `message` (default "The node was low on resource: memory."); the pod stays until deleted.
   */
  evict(name: string, message?: string): Promise<void>;
  /** Ends every open watch response, as an API server does when a watch times out. */
  dropWatches(): void;
  /** How many watch responses are open now. */
  watching(): number;
  /** How long a scheduled pod takes from then on to run (default 10 ms): its image pulled, its container started. */
  setStartDelay(ms: number): void;
  /** Every request seen (exec upgrades too); a query key given more than once has an array. */
  requests: { method: string; path: string; query: Record<string, string | string[]>; user: string | null }[];
  /** Every Pod body POSTed, as received (refused ones too). */
  manifests: Record<string, unknown>[];
  /** The SandboxClaims now (copies; none without `agentSandbox`). */
  sandboxClaims(): K8sObject[];
  /** The Sandboxes now (copies): warm ones of a pool, and claims' ones. */
  sandboxes(): K8sObject[];
  /**
   * Kills every process of every pod (SIGTERM, SIGKILL after 2 s) and waits until they are gone, then closes
   * the server and its connections. Removes nothing; a second call waits for the first.
   */
  stop(): Promise<void>;
}

/** A custom object as the stand-in keeps it (plain JSON). */
// biome-ignore lint/suspicious/noExplicitAny: an API object of any shape, read by the tests.
export type K8sObject = Record<string, any>;

/**
 * The agent-sandbox CRDs, served only when given: SandboxTemplates as their Pod spec by name, and warm pools
 * (a template, and how many warm Sandboxes it keeps made).
 */
export interface AgentSandboxConfig {
  templates: Record<string, { containers: { name: string; image: string; [key: string]: unknown }[] }>;
  warmPools: Record<string, { template: string; replicas: number }>;
}

/** Starts a stand-in API server keeping its kubeconfig and pod folders under `base` (a temp folder of the test). */
export const startK8sStandin: (
  base: string,
  opts?: { agentSandbox?: AgentSandboxConfig },
) => Promise<K8sStandin> = impl.startK8sStandin as (
  base: string,
  opts?: { agentSandbox?: AgentSandboxConfig },
) => Promise<K8sStandin>;
