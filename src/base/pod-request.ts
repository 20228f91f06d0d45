/**
 * A child's Kubernetes Pod as a profile asks for it (`k8s:`), before place/k8s/place.ts checks it. Plain
 * data, so the core and profiles share it without importing a place.
 */
export interface PodRequest {
  /** The kubeconfig context (default: its current one; `--on k8s:<context>` wins). */
  context?: string;
  /** Default: the context's namespace, else `default`. */
  namespace?: string;
  /** Default MUSTER_K8S_IMAGE, else `muster-agent:latest`. */
  image?: string;
  /** A CPU quantity (`500m`, `2`), as the container's request and limit. */
  cpu?: string;
  /** A memory quantity (`512Mi`, `2Gi`), as the container's request and limit. */
  memory?: string;
  /** The Pod's service account (its token is mounted only then). */
  serviceAccount?: string;
  /** Variables of the caller's environment handed to the child by name. */
  env?: string[];
  /**
   * A SandboxWarmPool of the agent-sandbox CRDs: the child's Pod comes from a SandboxClaim on it (image, CPU,
   * memory and service account are then its template's).
   */
  sandboxWarmPool?: string;
}

/** The fields a Pod request has, as a profile's `k8s:` map and a named cluster's entry spell them. */
export const POD_FIELDS = [
  "context",
  "namespace",
  "image",
  "cpu",
  "memory",
  "serviceAccount",
  "env",
  "sandboxWarmPool",
] as const satisfies readonly (keyof PodRequest)[];
