/**
 * The official Kubernetes client (`@kubernetes/client-node`), loaded only where a Pod place is used (it costs
 * ~0.3 s to import): the kubeconfig (KUBECONFIG or ~/.kube/config, or the in-cluster service account when
 * muster itself runs in a Pod), a context chosen by name, and one `exec` of argv in a Pod over the API's
 * WebSocket (`v5.channel.k8s.io`, else v4), with its stdin, output and exit code.
 */
import { PassThrough, Readable, Writable } from "node:stream";
import { MusterError } from "../../base/errors.js";
import type { RemoteRun } from "../far/remote.js";

type K8s = typeof import("@kubernetes/client-node");
let loading: Promise<K8s> | undefined;

export const k8s = (): Promise<K8s> => {
  loading ??= import("@kubernetes/client-node");
  return loading;
};

export type KubeConfig = InstanceType<K8s["KubeConfig"]>;

/** The kubeconfig for `context` (default: its current context); in a Pod with no kubeconfig, the service account. */
export async function kubeConfig(env: NodeJS.ProcessEnv, context?: string): Promise<KubeConfig> {
  const { KubeConfig } = await k8s();
  const kc = new KubeConfig();
  if (env.KUBECONFIG || !env.KUBERNETES_SERVICE_HOST) {
    // loadFromDefault reads process.env: the caller's KUBECONFIG is the one that counts.
    const saved = process.env.KUBECONFIG;
    if (env.KUBECONFIG !== undefined) process.env.KUBECONFIG = env.KUBECONFIG;
    try {
      kc.loadFromDefault();
    } finally {
      if (saved === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = saved;
    }
  } else kc.loadFromCluster();
  if (context) {
    if (!kc.getContextObject(context))
      throw new MusterError(
        "not_found",
        `no Kubernetes context "${context}" in the kubeconfig (contexts: ${
          kc
            .getContexts()
            .map((c) => c.name)
            .join(", ") || "none"
        })`,
      );
    kc.setCurrentContext(context);
  }
  if (!kc.getCurrentCluster())
    throw new MusterError("invalid_config", "no Kubernetes cluster: set KUBECONFIG or a current context");
  return kc;
}

/** The namespace a context names, else `default`. */
export function namespaceOf(kc: KubeConfig): string {
  return kc.getContextObject(kc.getCurrentContext())?.namespace || "default";
}

/** A one-line error of the API (its Status message), for a MusterError of ours. */
export function apiSaid(e: unknown): string {
  const err = e as { body?: unknown; code?: number; message?: string };
  let body = err.body;
  if (typeof body === "string") {
    try {
      body = JSON.parse(body);
    } catch {}
  }
  const message = (body as { message?: string } | undefined)?.message;
  return (message ?? err.message ?? String(e)).split("\n")[0]!;
}

/** The HTTP status of a failed API call, when it has one. */
export const apiCode = (e: unknown): number | undefined => {
  const c = (e as { code?: unknown }).code;
  return typeof c === "number" ? c : undefined;
};

/**
 * Runs argv in container `container` of Pod `pod`; `input` goes to its stdin, then closes it. Resolves with
 * its output and exit code; throws `unreachable` when the API cannot be reached or refuses the exec.
 */
export async function execInPod(
  kc: KubeConfig,
  where: { namespace: string; pod: string; container: string },
  argv: readonly string[],
  opts: { input?: string | Buffer; timeoutMs?: number } = {},
): Promise<RemoteRun> {
  const { Exec } = await k8s();
  let stdout = "";
  let stderr = "";
  const sink = (add: (s: string) => void) =>
    new Writable({
      write(chunk: Buffer, _enc, done) {
        add(chunk.toString("utf8"));
        done();
      },
    });
  const stdin = opts.input !== undefined ? Readable.from([Buffer.from(opts.input)]) : null;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  return new Promise<RemoteRun>((resolve, reject) => {
    let settled = false;
    const finish = (r: RemoteRun | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (r instanceof Error) reject(r);
      else resolve(r);
    };
    const timer = setTimeout(
      () => finish(new MusterError("unreachable", `pod ${where.pod}: no answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    new Exec(kc)
      .exec(
        where.namespace,
        where.pod,
        where.container,
        [...argv],
        sink((s) => {
          stdout += s;
        }),
        sink((s) => {
          stderr += s;
        }),
        stdin,
        false,
        (status) => finish({ stdout, stderr, exitCode: exitCodeOf(status) }),
      )
      .then((ws) => {
        ws.on("close", () => setTimeout(() => finish({ stdout, stderr, exitCode: 1 }), 50));
      })
      .catch((e: unknown) => finish(new MusterError("unreachable", `pod ${where.pod}: ${apiSaid(e)}`)));
  });
}

/** The exit code a V1Status of an exec says (Success: 0; NonZeroExitCode: its ExitCode cause; else 126). */
export function exitCodeOf(status: { status?: string; reason?: string; details?: unknown }): number {
  if (status.status === "Success") return 0;
  const causes = (status.details as { causes?: { reason?: string; message?: string }[] } | undefined)?.causes;
  const code = Number(causes?.find((c) => c.reason === "ExitCode")?.message);
  return Number.isInteger(code) ? code : 126;
}

/** A stream pair for a long exec (the mirror's link, a person's terminal): what the caller writes goes in. */
export const duplexStdin = (): PassThrough => new PassThrough();
