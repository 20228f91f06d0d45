/**
 * A child's Pod through the agent-sandbox CRDs (kubernetes-sigs/agent-sandbox) instead of a bare Pod: a
 * `SandboxClaim` (`extensions.agents.x-k8s.io/v1beta1`) naming a `SandboxWarmPool` (`spec.warmPoolRef`, the
 * one required field: since v0.5 a claim names a pool, and the pool its `SandboxTemplate`). The controller
 * hands the claim a warm Sandbox of the pool (its Pod made before, so the start is fast) or makes one from the
 * template (a Sandbox and Pod named as the claim), says which in `status.sandbox.name`, and sets the claim's
 * `Ready` condition once that Pod runs. The Pod is the Sandbox's annotation `agents.x-k8s.io/pod-name`, else
 * the Sandbox's own name (as the project's Go client resolves it). Deleting the claim deletes its Sandbox and
 * Pod (they are the claim's by owner reference). A Sandbox rests as `spec.operatingMode: Suspended` (the
 * controller deletes its Pod and keeps the Sandbox and its volumes) and wakes as `Running` (a new Pod, named
 * by the Sandbox again, its claim `Ready` once it runs).
 */
import { MusterError } from "../../base/errors.js";
import { apiCode, apiSaid, type KubeConfig, k8s } from "./client.js";
import { watchOne } from "./watch-one.js";

export const CLAIM_GROUP = "extensions.agents.x-k8s.io";
export const CLAIM_VERSION = "v1beta1";
const CLAIMS = "sandboxclaims";
const SANDBOX_GROUP = "agents.x-k8s.io";
const SANDBOX_VERSION = "v1beta1";
const POD_NAME_ANNOTATION = "agents.x-k8s.io/pod-name";
// Ready=False reasons the controller keeps retrying but a spawn cannot wait out: the claim names what is not there.
const HOPELESS = new Set(["WarmPoolNotFound", "TemplateNotFound", "InvalidMetadata", "ClaimExpired"]);

/** Where a claim is and what it asks for. */
export interface ClaimAsk {
  namespace: string;
  name: string;
  warmPool: string;
  labels: Record<string, string>;
}

/** The Pod that serves a ready claim, the container to exec in, and the Sandbox that has the Pod. */
export interface ClaimedPod {
  pod: string;
  container: string;
  sandbox: string;
}

/** What a Sandbox is asked to be (`spec.operatingMode`). */
type SandboxMode = "Running" | "Suspended";

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}
interface Claim {
  metadata?: { resourceVersion?: string; deletionTimestamp?: string };
  status?: { conditions?: Condition[]; sandbox?: { name?: string } };
}

const custom = async (kc: KubeConfig) => kc.makeApiClient((await k8s()).CustomObjectsApi);

// Per process, by context and server: the answer does not change while muster runs.
const served = new Map<string, Promise<boolean>>();

/** Whether the cluster serves SandboxClaims (the discovery document of their group/version), asked once. */
export function claimsServed(kc: KubeConfig): Promise<boolean> {
  const key = `${kc.getCurrentContext()} ${kc.getCurrentCluster()?.server ?? ""}`;
  let answer = served.get(key);
  if (!answer) {
    answer = (async () => {
      try {
        const list = await (await custom(kc)).getAPIResources({ group: CLAIM_GROUP, version: CLAIM_VERSION });
        return (list.resources ?? []).some((r) => r.name === CLAIMS);
      } catch (e) {
        if (apiCode(e) === 404) return false;
        throw new MusterError("unreachable", `cluster ${kc.getCurrentContext()}: ${apiSaid(e)}`);
      }
    })();
    served.set(key, answer);
    // A cluster that could not be asked is asked again next time.
    answer.catch(() => served.delete(key));
  }
  return answer;
}

/** The claim muster makes: the pool, and the child's labels on the claim (the Pod's are the template's). */
export function claimManifest(a: ClaimAsk): object {
  return {
    apiVersion: `${CLAIM_GROUP}/${CLAIM_VERSION}`,
    kind: "SandboxClaim",
    metadata: { name: a.name, namespace: a.namespace, labels: a.labels },
    spec: { warmPoolRef: { name: a.warmPool } },
  };
}

const ref = (a: { namespace: string; name: string }) => ({
  group: CLAIM_GROUP,
  version: CLAIM_VERSION,
  namespace: a.namespace,
  plural: CLAIMS,
  name: a.name,
});

/** The claim as it is now, or null when there is none. */
async function readClaim(kc: KubeConfig, a: { namespace: string; name: string }): Promise<Claim | null> {
  try {
    return (await (await custom(kc)).getNamespacedCustomObject(ref(a))) as Claim;
  } catch (e) {
    if (apiCode(e) === 404) return null;
    throw new MusterError("unreachable", `sandbox claim ${a.name}: ${apiSaid(e)}`);
  }
}

/** Ready: the Sandbox's name; a reason it never will be: an Error; else undefined (wait on). */
function verdict(a: ClaimAsk, claim: Claim): string | Error | undefined {
  const ready = claim.status?.conditions?.find((c) => c.type === "Ready");
  const sandbox = claim.status?.sandbox?.name;
  if (ready?.status === "True" && sandbox) return sandbox;
  if (ready?.status === "False" && HOPELESS.has(ready.reason ?? ""))
    return new MusterError(
      "invalid_argument",
      `sandbox claim ${a.name} (warm pool ${a.warmPool}): ${ready.reason}${ready.message ? `: ${ready.message}` : ""}`,
    );
  return undefined;
}

/**
 * Makes the claim when there is none and waits, watching, until it is ready; answers the Pod that serves it
 * and that Pod's first container (the template's). A claim that cannot become ready is deleted.
 */
export async function claimPod(kc: KubeConfig, a: ClaimAsk, deadline: number): Promise<ClaimedPod> {
  const had = await readClaim(kc, a);
  // A claim of an earlier turn whose Sandbox was put to rest (restClaimed): it wakes, and its new Pod is found
  // as the first one was, once the claim is Ready again.
  const rested = had?.status?.sandbox?.name;
  if (rested) await setSandboxMode(kc, a.namespace, rested, "Running");
  if (had === null) {
    try {
      await (await custom(kc)).createNamespacedCustomObject({ ...ref(a), body: claimManifest(a) });
    } catch (e) {
      const code = apiCode(e);
      throw new MusterError(
        code === 403 ? "unsupported" : code === 422 ? "invalid_argument" : "unreachable",
        `could not make the child's sandbox claim: ${apiSaid(e)}`,
      );
    }
  }
  const what = `sandbox claim ${a.name}`;
  let sandbox: string;
  try {
    sandbox = await watchOne(kc, {
      path: `/apis/${CLAIM_GROUP}/${CLAIM_VERSION}/namespaces/${a.namespace}/${CLAIMS}`,
      name: a.name,
      what,
      deadline,
      late: `${what} (warm pool ${a.warmPool}) was not ready within ${Math.round((deadline - Date.now()) / 1000)} s`,
      judge: (type, obj) =>
        type === "DELETED"
          ? new MusterError("unsupported", `${what} was deleted while it started`)
          : verdict(a, obj as Claim),
      reread: async () => {
        const now = await readClaim(kc, a);
        const v = now ? verdict(a, now) : undefined;
        if (v instanceof Error) throw v;
        return v;
      },
    });
  } catch (e) {
    if (e instanceof MusterError && e.code === "invalid_argument") await deleteClaim(kc, a);
    throw e;
  }
  return podOfSandbox(kc, a.namespace, sandbox);
}

const sandboxRef = (namespace: string, name: string) => ({
  group: SANDBOX_GROUP,
  version: SANDBOX_VERSION,
  namespace,
  plural: "sandboxes",
  name,
});

/**
 * Asks Sandbox `name` to be `mode` (a merge patch of `spec.operatingMode`, sent only when it is not that
 * already); nothing when there is no such Sandbox. Suspended: the controller deletes its Pod, keeping the
 * Sandbox and its volumes.
 */
async function setSandboxMode(
  kc: KubeConfig,
  namespace: string,
  name: string,
  mode: SandboxMode,
): Promise<void> {
  const { PatchStrategy, setHeaderOptions } = await k8s();
  const api = await custom(kc);
  try {
    const sb = (await api.getNamespacedCustomObject(sandboxRef(namespace, name))) as {
      spec?: { operatingMode?: SandboxMode };
    };
    if ((sb.spec?.operatingMode ?? "Running") !== mode)
      await api.patchNamespacedCustomObject(
        { ...sandboxRef(namespace, name), body: { spec: { operatingMode: mode } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
  } catch (e) {
    if (apiCode(e) === 404) return;
    const code = apiCode(e);
    throw new MusterError(
      code === 403 ? "unsupported" : "unreachable",
      `sandbox ${name}: could not make it ${mode}: ${apiSaid(e)}`,
    );
  }
}

/** The Pod of Sandbox `name` (its pod-name annotation, else its own name) and that Pod's first container. */
async function podOfSandbox(kc: KubeConfig, namespace: string, name: string): Promise<ClaimedPod> {
  let pod = name;
  try {
    const sb = (await (await custom(kc)).getNamespacedCustomObject(sandboxRef(namespace, name))) as {
      metadata?: { annotations?: Record<string, string> };
    };
    pod = sb.metadata?.annotations?.[POD_NAME_ANNOTATION] || name;
  } catch (e) {
    throw new MusterError("unreachable", `sandbox ${name}: ${apiSaid(e)}`);
  }
  try {
    const core = kc.makeApiClient((await k8s()).CoreV1Api);
    const p = await core.readNamespacedPod({ name: pod, namespace });
    const container = p.spec?.containers?.[0]?.name;
    if (!container) throw new MusterError("unsupported", `pod ${pod} of sandbox ${name} has no container`);
    return { pod, container, sandbox: name };
  } catch (e) {
    if (e instanceof MusterError) throw e;
    throw new MusterError("unreachable", `pod ${pod} of sandbox ${name}: ${apiSaid(e)}`);
  }
}

/**
 * Puts the claim's Sandbox to rest (Suspended: its Pod is deleted, the Sandbox and its volumes kept) until
 * claimPod wakes it; nothing when the claim or its Sandbox is gone.
 */
export async function restClaimed(kc: KubeConfig, a: { namespace: string; name: string }): Promise<void> {
  const sandbox = (await readClaim(kc, a))?.status?.sandbox?.name;
  if (sandbox) await setSandboxMode(kc, a.namespace, sandbox, "Suspended");
}

/** Deletes the claim (its Sandbox and Pod go with it); one that is gone already is fine. */
export async function deleteClaim(kc: KubeConfig, a: { namespace: string; name: string }): Promise<void> {
  await (await custom(kc)).deleteNamespacedCustomObject(ref(a)).catch((e: unknown) => {
    if (apiCode(e) !== 404) throw new MusterError("unreachable", `sandbox claim ${a.name}: ${apiSaid(e)}`);
  });
}
