/**
 * Place `k8s:<child id>`: a child in a Kubernetes Pod of its own (`muster-<id>`, one container `agent`
 * running `sleep infinity` with stdin and a TTY, labelled with the child's and the primary's ids), through
 * the official client (client.ts). The Pod is made at spawn and watched until it runs; the child's host, its
 * tmux server and its agent CLI run inside, reached with the API's exec; its artifact dir is mirrored here
 * over one long exec (`exec-main.js … relay-hub-main.js`), as for an SSH host (far/far-place.ts). Liveness is
 * the Pod's phase: one gone, evicted or failed leaves its record here, with the reason, and its child `lost`.
 * `rm`/`gc` delete the Pod (grace period); a bare Pod is kept across a cancel, so a resume continues in it.
 * With `sandboxWarmPool` (a cluster with the agent-sandbox CRDs) the Pod comes from a SandboxClaim instead
 * (sandbox-claim.ts): its name and container are the ones the claim was given, kept with the spec once known;
 * a cancel suspends its Sandbox (the Pod goes, the Sandbox and its volumes stay), a resume wakes it in a new
 * Pod, and `rm`/`gc` delete the claim.
 */
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import type { PodRequest } from "../../base/pod-request.js";
import { rawSetting } from "../../base/settings/resolve.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import { FarPlace, type ProbeAsk } from "../far/far-place.js";
import { keptSpecs } from "../far/kept-spec.js";
import type { FarShell, RemoteRun } from "../far/remote.js";
import { mirrorEnded } from "../mirror/carry.js";
import type { Liveness } from "../place.js";
import type { ChildPlaceMaker } from "../registry.js";
import { apiCode, apiSaid, execInPod, type KubeConfig, k8s, kubeConfig, namespaceOf } from "./client.js";
import {
  CLAIM_GROUP,
  CLAIM_VERSION,
  claimPod,
  claimsServed,
  deleteClaim,
  restClaimed,
} from "./sandbox-claim.js";
import { watchOne } from "./watch-one.js";

export const K8S_KIND = "k8s";
export const podPlaceName = (id: string): string => `${K8S_KIND}:${id}`;
export const podName = (id: string): string => `muster-${id}`;
const CONTAINER = "agent";
const EXEC_MAIN = path.join(PACKAGE_ROOT, "dist", "place", "k8s", "exec-main.js");
/** How long a new Pod may take to run (an image pull, a busy scheduler). */
const START_MS = 180_000;

/** A child's Pod as asked for: `--on k8s[:<context>]`, the image (MUSTER_K8S_IMAGE). */
export interface PodSpec {
  /** The kubeconfig context ("" for its current one). */
  context: string;
  namespace: string;
  image: string;
  /** Variables of the caller's environment handed to the child by name. */
  env: string[];
  /** The primary that owns the child (a label). */
  primary: string;
  /** The container's CPU and memory, as its request and limit. */
  cpu?: string;
  memory?: string;
  /** The Pod's service account (its token mounted only then). */
  serviceAccount?: string;
  /** A SandboxWarmPool: the Pod comes from a SandboxClaim on it (named as the Pod would be). */
  sandboxWarmPool?: string;
  /** The claim's Pod and its container, once the claim is ready (a bare Pod is `muster-<id>`, `agent`). */
  pod?: string;
  container?: string;
}

/** Each child's Pod spec, kept under the state root (`pods/<child id>.json`). */
const podSpecs = keptSpecs<PodSpec>("pods", "Pod");

type PodStatus = { phase?: string; reason?: string; message?: string } | undefined;

export class PodPlace extends FarPlace {
  readonly name: string;
  readonly ownTerminal = true;
  protected readonly shell: FarShell;
  private kc: Promise<KubeConfig> | undefined;

  constructor(
    readonly id: string,
    readonly spec: PodSpec,
    env: NodeJS.ProcessEnv,
  ) {
    super(env);
    this.name = podPlaceName(id);
    const self = this;
    this.shell = {
      get label() {
        return `pod ${self.pod}`;
      },
      get where() {
        return `pod ${self.pod}`;
      },
      run: async (argv, opts) =>
        execInPod(
          await this.kube(),
          { namespace: spec.namespace, pod: this.pod, container: this.container },
          argv,
          opts,
        ),
      // The API's refusal of an exec is thrown by execInPod; what comes back is always the command's own.
      lostConnection: (_r: RemoteRun) => false,
    };
  }

  /** The Pod the child runs in: its own, or the one its claim was given (its cold-start name until known). */
  get pod(): string {
    return this.claimedPod() ?? podName(this.id);
  }

  /** The claim's Pod once known: a place made before the claim was ready reads it from the kept spec. */
  private claimedPod(): string | undefined {
    if (this.spec.sandboxWarmPool && !this.spec.pod) {
      try {
        const kept = podSpecs.load(this.nearRoot, this.id);
        if (kept.pod) Object.assign(this.spec, { pod: kept.pod, container: kept.container });
      } catch {}
    }
    return this.spec.pod;
  }

  private get container(): string {
    return this.spec.container ?? CONTAINER;
  }

  private kube(): Promise<KubeConfig> {
    this.kc ??= kubeConfig(this.env, this.spec.context || undefined);
    this.kc.catch(() => {
      this.kc = undefined;
    });
    return this.kc;
  }

  private async core() {
    const { CoreV1Api } = await k8s();
    return (await this.kube()).makeApiClient(CoreV1Api);
  }

  protected probeAsk(): ProbeAsk {
    return {
      dirs: [],
      node: "",
      where: this.spec.sandboxWarmPool
        ? `the template of warm pool ${this.spec.sandboxWarmPool}`
        : `image ${this.spec.image}`,
      nodeFix: "use an image with Node 20+ and tmux (muster image build makes one)",
    };
  }

  protected override namedEnv(): readonly string[] {
    return this.spec.env;
  }

  private execArgv(argv: string[], tty: boolean): string[] {
    return [
      process.execPath,
      EXEC_MAIN,
      this.spec.context || "-",
      this.spec.namespace,
      this.pod,
      this.container,
      ...(tty ? ["--tty"] : []),
      "--",
      ...argv,
    ];
  }

  protected linkArgv(argv: string[]): string[] {
    return this.execArgv(argv, false);
  }

  interactive(argv: string[]): string[] {
    return this.execArgv(argv, true);
  }

  /** The child works in the Pod's home: nothing of this machine's checkout is there (a worktree comes as a bundle). */
  async workdir(): Promise<string> {
    await this.ready();
    return this.readyNow().info.home || "/";
  }

  installHint(runner: string): string {
    if (this.spec.sandboxWarmPool)
      return `the Pods of warm pool ${this.spec.sandboxWarmPool} lack it: its SandboxTemplate needs an image that has it (muster image build --agent ${runner} makes one)`;
    return `image ${this.spec.image} lacks it: make one that has it with muster image build --agent ${runner} and push it where the cluster pulls from (MUSTER_K8S_IMAGE)`;
  }

  /** The Pod's status, or null when there is none. */
  async status(): Promise<PodStatus | null> {
    try {
      const pod = await (await this.core()).readNamespacedPod({
        name: this.pod,
        namespace: this.spec.namespace,
      });
      return (pod.status ?? {}) as PodStatus;
    } catch (e) {
      if (apiCode(e) === 404) return null;
      throw new MusterError("unreachable", `pod ${this.pod}: ${apiSaid(e)}`);
    }
  }

  /** Makes the Pod (when there is none) and waits, watching, until it runs. */
  protected override async provision(): Promise<void> {
    if (this.spec.sandboxWarmPool) return this.claimed(this.spec.sandboxWarmPool);
    const now = await this.status();
    if (now === null) {
      podSpecs.save(this.nearRoot, this.id, this.spec);
      try {
        await (await this.core()).createNamespacedPod({
          namespace: this.spec.namespace,
          body: this.manifest(),
        });
      } catch (e) {
        const code = apiCode(e);
        throw new MusterError(
          code === 403 ? "unsupported" : code === 422 ? "invalid_argument" : "unreachable",
          `could not make the child's Pod: ${apiSaid(e)}`,
        );
      }
    } else if (now?.phase !== "Running" && now?.phase !== "Pending")
      throw new MusterError(
        "unsupported",
        `pod ${this.pod} is ${describe(now)}: it cannot run the child again`,
      );
    await this.running();
  }

  /** The claim made (when there is none) and ready; its Pod and container kept with the spec for every later process. */
  private async claimed(warmPool: string): Promise<void> {
    if (!this.spec.pod) podSpecs.save(this.nearRoot, this.id, this.spec);
    const got = await claimPod(
      await this.kube(),
      { namespace: this.spec.namespace, name: podName(this.id), warmPool, labels: this.labels() },
      Date.now() + START_MS,
    );
    // A Sandbox woken from rest has a new Pod, perhaps of another name.
    if (got.pod !== this.spec.pod || got.container !== this.spec.container) {
      Object.assign(this.spec, { pod: got.pod, container: got.container });
      podSpecs.save(this.nearRoot, this.id, this.spec);
    }
    await this.running();
  }

  private labels(): Record<string, string> {
    return {
      "app.kubernetes.io/managed-by": "muster",
      "muster.dev/child": this.id,
      "muster.dev/primary": this.spec.primary,
    };
  }

  /** The Pod muster asks for: one container, `sleep infinity` under stdin and a TTY, labels naming the child. */
  manifest(): object {
    const s = this.spec;
    const resources = {
      ...(s.cpu !== undefined ? { cpu: s.cpu } : {}),
      ...(s.memory !== undefined ? { memory: s.memory } : {}),
    };
    return {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: this.pod,
        namespace: this.spec.namespace,
        labels: this.labels(),
      },
      spec: {
        restartPolicy: "Never",
        ...(s.serviceAccount
          ? { serviceAccountName: s.serviceAccount, automountServiceAccountToken: true }
          : { automountServiceAccountToken: false }),
        containers: [
          {
            name: CONTAINER,
            image: s.image,
            command: ["sleep", "infinity"],
            stdin: true,
            tty: true,
            ...(Object.keys(resources).length > 0
              ? { resources: { requests: resources, limits: resources } }
              : {}),
          },
        ],
      },
    };
  }

  /** Resolves once the Pod runs (a watch on it, resumed from its last resourceVersion when it drops). */
  private async running(): Promise<void> {
    await watchOne(await this.kube(), {
      path: `/api/v1/namespaces/${this.spec.namespace}/pods`,
      name: this.pod,
      what: `pod ${this.pod}`,
      deadline: Date.now() + START_MS,
      late: `pod ${this.pod} did not run within ${START_MS / 1000} s`,
      judge: (type, obj) => {
        const st = obj.status as PodStatus;
        if (type === "DELETED")
          return new MusterError("unsupported", `pod ${this.pod} was deleted while it started`);
        if (st?.phase === "Running") return true;
        if (st?.phase === "Failed" || st?.phase === "Succeeded")
          return new MusterError("unsupported", `pod ${this.pod} did not start: ${describe(st)}`);
        return undefined;
      },
      reread: async () => ((await this.status())?.phase === "Running" ? true : undefined),
    });
  }

  /**
   * A host that could not be asked about: dead when its Pod is gone, evicted or failed (its record here is
   * the only one now: the mirror stops and the dir becomes local), with the reason kept for the record.
   */
  protected override async unanswered(dir: string): Promise<Liveness> {
    // A claim not ready yet has no Pod to ask about: its spawn is still waiting.
    if (this.spec.sandboxWarmPool && this.claimedPod() === undefined) return "unknown";
    const st = await this.status().catch(() => undefined);
    if (st === undefined || st?.phase === "Running" || st?.phase === "Pending") return "unknown";
    return this.letGo(
      dir,
      st === null ? `its Pod ${this.pod} is gone` : `its Pod ${this.pod} is ${describe(st)}`,
    );
  }

  override async forget(dir: string): Promise<void> {
    await this.endKeeper(dir);
    await this.discard();
  }

  /**
   * The child was cancelled or closed. A claimed child's Sandbox is suspended once its mirror has the last
   * files: its Pod goes (the cluster's resources with it), the Sandbox and its volumes stay, and a resume
   * wakes it in a new Pod (the child's record comes from here; what the agent kept in the Pod survives only
   * on the template's volumes). A bare Pod stays as it is, so a resume continues in it.
   */
  async rest(dir: string): Promise<void> {
    if (!this.spec.sandboxWarmPool) return;
    await mirrorEnded(dir, this.name, 5_000);
    await restClaimed(await this.kube(), { namespace: this.spec.namespace, name: podName(this.id) });
    this.unready();
  }

  async discard(): Promise<void> {
    if (this.spec.sandboxWarmPool)
      await deleteClaim(await this.kube(), { namespace: this.spec.namespace, name: podName(this.id) }).catch(
        () => undefined,
      );
    else
      await (await this.core())
        .deleteNamespacedPod({ name: this.pod, namespace: this.spec.namespace, gracePeriodSeconds: 5 })
        .catch(() => undefined);
    podSpecs.drop(this.nearRoot, this.id);
  }
}

function describe(st: PodStatus): string {
  const phase = st?.phase ?? "unknown";
  return st?.reason ? `${phase} (${st.reason}${st.message ? `: ${st.message}` : ""})` : phase;
}

/** The place of a new child in a Pod: `on` was `k8s` or `k8s:<context>` (registerChildPlace takes it). */
export const makePodPlace: ChildPlaceMaker = async (request, ctx) => {
  if (request.kind !== K8S_KIND) throw new MusterError("internal", `not a Pod: ${request.kind}`);
  const asked = checkPodRequest(request.profile ?? {});
  const on = request.on;
  // `--on k8s:<context>` wins over the profile's context.
  const context = on.includes(":") ? on.slice(on.indexOf(":") + 1) : (asked.context ?? "");
  const kc = await kubeConfig(ctx.env, context || undefined);
  if (asked.sandboxWarmPool !== undefined && !(await claimsServed(kc)))
    throw new MusterError(
      "unsupported",
      `sandbox warm pool ${asked.sandboxWarmPool}: cluster ${context || kc.getCurrentContext()} does not serve SandboxClaims (${CLAIM_GROUP}/${CLAIM_VERSION}); install the agent-sandbox extensions there, or leave sandboxWarmPool out for bare Pods`,
    );
  const spec: PodSpec = {
    context,
    namespace: asked.namespace ?? namespaceOf(kc),
    image: asked.image ?? rawSetting(ctx.env, "k8sImage") ?? "muster-agent:latest",
    env: [...new Set(asked.env ?? [])],
    primary: ctx.primary,
    ...(asked.cpu !== undefined ? { cpu: asked.cpu } : {}),
    ...(asked.memory !== undefined ? { memory: asked.memory } : {}),
    ...(asked.serviceAccount !== undefined ? { serviceAccount: asked.serviceAccount } : {}),
    ...(asked.sandboxWarmPool !== undefined ? { sandboxWarmPool: asked.sandboxWarmPool } : {}),
  };
  return new PodPlace(ctx.id, spec, ctx.env);
};

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;
const IMAGE = /^[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A profile's `k8s:` checked, field by field, in one line each; the values as they will go into the Pod. */
export function checkPodRequest(r: PodRequest): PodRequest {
  const bad = (what: string, v: unknown, expected: string) =>
    new MusterError("invalid_argument", `k8s ${what} ${JSON.stringify(v).slice(0, 80)} is not ${expected}`);
  const str = (k: keyof PodRequest, re: RegExp, expected: string) => {
    const v = r[k];
    if (v !== undefined && !(typeof v === "string" && re.test(v))) throw bad(k, v, expected);
  };
  str("context", /^[^\s]{1,253}$/, "a context's name");
  str("namespace", DNS_LABEL, "a namespace (a DNS label)");
  str("image", IMAGE, "an image name");
  str("cpu", QUANTITY, "a CPU quantity such as 500m or 2");
  str("memory", QUANTITY, "a memory quantity such as 512Mi or 2Gi");
  str("serviceAccount", DNS_SUBDOMAIN, "a service account's name");
  str("sandboxWarmPool", DNS_SUBDOMAIN, "a SandboxWarmPool's name");
  if (
    r.env !== undefined &&
    !(Array.isArray(r.env) && r.env.every((n) => typeof n === "string" && ENV_NAME.test(n)))
  )
    throw bad("env", r.env, "a list of variable names");
  return r;
}

/** The factory `registerPlace("k8s", …)` takes: `k8s:<child id>`, its Pod as kept at spawn. */
export const podPlaceFactory = podSpecs.factory((id, spec, env) => new PodPlace(id, spec, env));
