/** `muster hosts`: the SSH hosts children can run on (`spawn --on <host>`): add, ls, rm, check, install. */
import type { Command } from "commander";
import { MusterError } from "../../base/errors.js";
import { POD_FIELDS, type PodRequest } from "../../base/pod-request.js";
import { AGENT_CLI_COMMANDS } from "../../core/catalog.js";
import { shortId } from "../../util/ids.js";
import { collect, muster } from "../context.js";
import { ExitWith, printJson, say } from "../output.js";
import { visibleLine } from "../sanitize.js";

// The hosts module (and what it needs) loads only in these commands.
const admin = () => import("../../place/ssh/admin.js");
const clusters = () => import("../../place/k8s/admin.js");

/** `hosts add`'s flags: an SSH host's, or with --k8s a Pod request's (`--env` is both kinds'). */
interface AddFlags extends PodRequest {
  json?: boolean;
  sshConfig?: string;
  sshOption?: string[];
  workdir?: string;
  node?: string;
  k8s?: boolean;
}

const SSH_ONLY = ["sshConfig", "sshOption", "workdir", "node"] as const;
// A Pod's fields are flags of their own with --k8s (`--env` is both kinds').
const K8S_ONLY = POD_FIELDS.filter((k) => k !== "env");
const flagName = (k: string): string => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** `hosts add <name> --k8s …`: a cluster entry, its fields checked as a profile's `k8s:` is. */
async function addCluster(name: string, dest: string | undefined, flags: AddFlags): Promise<void> {
  if (dest !== undefined)
    throw new MusterError(
      "invalid_argument",
      "hosts add --k8s takes no destination: name the cluster with --context",
    );
  const stray = SSH_ONLY.find((k) => flags[k] !== undefined);
  if (stray) throw new MusterError("invalid_argument", `${flagName(stray)} is for SSH hosts, not with --k8s`);
  const c = await clusters();
  const saved = await c.saveCluster(
    process.env,
    name,
    Object.fromEntries(POD_FIELDS.map((k) => [k, flags[k]])),
  );
  if (flags.json) return printJson(saved);
  say(`added cluster ${name} (${clusterLine(saved.k8s)}); check it with: muster hosts check ${name}\n`);
}

function clusterLine(k: object): string {
  const words = Object.entries(k)
    .filter(([key]) => key !== "env")
    .map(([key, v]) => `${key} ${String(v)}`);
  const env = (k as { env?: string[] }).env;
  return ["k8s", ...words, ...(env ? [`env ${env.join(",")}`] : [])].join(", ");
}

function sshOption(kv: string): [string, string] {
  const eq = kv.indexOf("=");
  if (eq <= 0)
    throw new MusterError("invalid_argument", `--ssh-option takes key=value, not ${JSON.stringify(kv)}`);
  return [kv.slice(0, eq), kv.slice(eq + 1)];
}

const jsonOption = (c: Command): Command =>
  c.option("--json", "print one JSON document on stdout, nothing else");

export function registerHosts(program: Command): void {
  const hosts = program
    .command("hosts")
    .summary("SSH hosts children can run on (spawn --on <host>)")
    .description(
      "SSH hosts children can run on: `muster spawn --on <host>` starts a child's host there, in a tmux server of that host, and mirrors its record here. Kept in the user's config file. Agent CLIs must already be installed on the host; muster installs its own part there on first use.",
    );

  jsonOption(
    hosts
      .command("add")
      .description(
        "name an SSH host, or with --k8s a Kubernetes cluster (a new name, or replace the entry of one)",
      )
      .argument("<name>", "muster's name for it (letters, digits, . _ -)")
      .argument("[destination]", "an alias of your ssh config, or user@host[:port] (not with --k8s)")
      .option("--ssh-config <file>", "ssh config file to use (ssh -F)")
      .option("--ssh-option <key=value>", "an ssh option (ssh -o), repeatable", collect)
      .option(
        "--workdir <dir>",
        "the folder children work in there (absolute; default: the same path as here)",
      )
      .option("--env <NAME>", "a variable of yours handed to children there, repeatable", collect)
      .option(
        "--node <path>",
        "the node to run there, when a non-interactive ssh session has none on its PATH",
      )
      .option("--k8s", "a Kubernetes cluster: each child on it runs in a Pod of its own")
      .option("--context <context>", "with --k8s: the kubeconfig context (default: its current one)")
      .option("--namespace <ns>", "with --k8s: the namespace (default: the context's, else default)")
      .option(
        "--image <image>",
        "with --k8s: the Pods' image (default MUSTER_K8S_IMAGE, else muster-agent:latest)",
      )
      .option("--cpu <quantity>", "with --k8s: each Pod's CPU request and limit (500m, 2)")
      .option("--memory <quantity>", "with --k8s: each Pod's memory request and limit (512Mi, 2Gi)")
      .option(
        "--service-account <name>",
        "with --k8s: the Pods' service account (its token mounted only then)",
      )
      .option(
        "--sandbox-warm-pool <name>",
        "with --k8s: each child's Pod from a SandboxClaim on this SandboxWarmPool (the agent-sandbox CRDs; the Pod is its template's)",
      ),
  ).action(async (name: string, dest: string | undefined, flags: AddFlags) => {
    if (flags.k8s) return addCluster(name, dest, flags);
    const stray = K8S_ONLY.find((k) => flags[k] !== undefined);
    if (stray) throw new MusterError("invalid_argument", `${flagName(stray)} goes with --k8s`);
    if (dest === undefined)
      throw new MusterError(
        "invalid_argument",
        "hosts add <name> <destination>: give an ssh destination (alias or user@host), or --k8s for a Kubernetes cluster",
      );
    const a = await admin();
    a.checkHostName(name);
    const entry = a.hostEntry(dest, {
      ...(flags.sshConfig !== undefined ? { sshConfig: flags.sshConfig } : {}),
      options: (flags.sshOption ?? []).map(sshOption),
      ...(flags.workdir !== undefined ? { workdir: flags.workdir } : {}),
      ...(flags.env ? { env: flags.env } : {}),
      ...(flags.node !== undefined ? { node: flags.node } : {}),
    });
    await a.saveHost(process.env, name, entry);
    if (flags.json) return printJson({ name, ...entry });
    say(`added host ${name} (${entry.target}); check it with: muster hosts check ${name}\n`);
  });

  jsonOption(hosts.command("ls").description("list the hosts and clusters")).action(
    async (flags: { json?: boolean }) => {
      const list = (await admin()).listHosts(process.env);
      const named = (await clusters()).listClusters(process.env);
      if (flags.json) return printJson({ hosts: list, clusters: named });
      if (list.length === 0 && named.length === 0)
        return say("no hosts; add one with: muster hosts add <name> <user@host|alias> (or --k8s)\n");
      for (const h of list)
        say(
          `${h.name}\t${h.target}${h.workdir ? `\tworkdir ${h.workdir}` : ""}${h.env ? `\tenv ${h.env.join(",")}` : ""}\n`,
        );
      for (const c of named) say(`${c.name}\t${clusterLine(c.k8s)}\n`);
    },
  );

  jsonOption(
    hosts
      .command("rm")
      .description("forget a host (refused while children of this workspace live there, unless --force)")
      .argument("<name>")
      .option("--force", "forget it even with children there (they stay, unreachable from here)"),
  ).action(async (name: string, flags: { json?: boolean; force?: boolean }) => {
    const a = await admin();
    const live = (await muster({}).views()).filter(
      (v) => v.place === a.sshPlaceName(name) && !["closed", "lost", "unreadable"].includes(v.status),
    );
    if (live.length > 0 && !flags.force)
      throw new MusterError(
        "busy",
        `host ${name} has ${live.length} live child${live.length === 1 ? "" : "ren"} here (${live.map((v) => v.name ?? shortId(v.id)).join(", ")}): cancel them first, or give --force`,
      );
    await a.disconnectHost(process.env, name);
    const removed = await a.removeHost(process.env, name);
    if (!removed) throw new MusterError("not_found", `no host "${name}"`);
    if (flags.json) return printJson({ removed: name });
    say(`removed host ${name}\n`);
  });

  jsonOption(
    hosts
      .command("check")
      .description(
        "reach a host and report: round trip, node and tmux there, muster's part there and its build, agent CLIs found, free disk, the variables children get",
      )
      .argument("<name>")
      .option("--env", "only list the variables handed to children there"),
  ).action(async (name: string, flags: { json?: boolean; env?: boolean }) => {
    const k = await clusters();
    if (k.listClusters(process.env).some((x) => x.name === name)) {
      const c = await k.checkCluster(process.env, name);
      if (flags.json) printJson(c);
      else {
        say(
          `cluster ${c.name} (context ${c.context || "?"}${c.server ? `, ${c.server}` : ""}): ${c.reachable ? `reachable, ${c.rttMs} ms round trip${c.version ? `, Kubernetes ${c.version}` : ""}` : "unreachable"}\n`,
        );
        say(`  namespace ${c.namespace}${c.pods !== undefined ? ` (${c.pods} Pods of muster's)` : ""}\n`);
        for (const p of c.problems) say(`  problem: ${visibleLine(p)}\n`);
      }
      if (!c.reachable || c.problems.length > 0) throw new ExitWith(1);
      return;
    }
    const c = await (await admin()).checkHost(process.env, name, AGENT_CLI_COMMANDS());
    if (flags.json) printJson(c);
    else if (flags.env) {
      say(
        `children on ${name} get muster's settings, their profile's env, and: ${c.env.join(", ") || "nothing else"}\n`,
      );
    } else {
      say(
        `host ${c.name} (${c.target}): ${c.reachable ? `reachable, ${c.rttMs} ms round trip` : "unreachable"}\n`,
      );
      if (c.node) say(`  node    ${c.node.version || "missing"}${c.node.path ? ` (${c.node.path})` : ""}\n`);
      if (c.tmux !== undefined) say(`  tmux    ${c.tmux || "missing"}\n`);
      if (c.muster)
        say(
          `  muster  ${c.muster.installed ? (c.muster.current ? `${c.muster.installed} (this build)` : `${c.muster.installed} (another build: installed again on first use)`) : "not installed (installed on first use, or: muster hosts install)"}\n`,
        );
      if (c.clis)
        say(
          `  agents  ${Object.keys(c.clis).join(", ") || "no agent CLI found (only mock and command agents run there)"}\n`,
        );
      if (c.freeKiB !== undefined && c.freeKiB >= 0)
        say(`  disk    ${Math.round(c.freeKiB / 1024)} MiB free\n`);
      if (c.workdir) say(`  workdir ${c.workdir}\n`);
      say(`  env     ${c.env.join(", ") || "(muster's settings and each profile's env only)"}\n`);
      for (const p of c.problems) say(`  problem: ${visibleLine(p)}\n`);
    }
    if (!c.reachable || c.problems.length > 0) throw new ExitWith(1);
  });

  jsonOption(
    hosts
      .command("install")
      .description("put this build's part of muster on a host (also done on first use)")
      .argument("<name>"),
  ).action(async (name: string, flags: { json?: boolean }) => {
    const r = await (await admin()).installHost(process.env, name);
    if (flags.json) return printJson(r);
    say(r.already ? `host ${name} already has ${r.stamp}\n` : `installed ${r.stamp} on ${name} (${r.dir})\n`);
  });
}
