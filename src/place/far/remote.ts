/**
 * What muster needs to know of a machine it runs children on (an SSH host, a container) and puts there: one
 * probe (state root, node, tmux, the installed build, agent CLIs, free disk) and the install of muster's far
 * side (dist/remote, built by scripts/bundle.mjs: the child host, the relay hub, the mock agent and the
 * commands an agent runs in its pane) under `<state root>/install/<stamp>/`. Each is one fixed script run by
 * `sh -c`, its inputs as the script's arguments, never spliced into it, through the place's own shell.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { MusterError } from "../../base/errors.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";

/** What one command there printed, and how it ended. */
export interface RemoteRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * How a place on another machine runs argv there: `label` prefixes its errors (`ssh build1`), `where` names
 * it in a sentence (`build1`, `container mu-…`); `lostConnection` tells its own failure (no connection, an
 * engine that is gone) from the command's.
 */
export interface FarShell {
  readonly label: string;
  readonly where: string;
  run(argv: readonly string[], opts?: { input?: string | Buffer; timeoutMs?: number }): Promise<RemoteRun>;
  lostConnection(r: RemoteRun): boolean;
}

/** Node releases muster's far side runs on (package.json engines). */
export const MIN_NODE_MAJOR = 20;
export const REMOTE_DIST = path.join(PACKAGE_ROOT, "dist", "remote");

export interface RemoteInfo {
  /** The remote user's muster state root (absolute). */
  root: string;
  home: string;
  /** node on the non-interactive PATH there, and its version (`v24.1.0`); empty when none. */
  node: string;
  nodeVersion: string;
  /** `tmux -V` there, empty when none. */
  tmux: string;
  /** The build installed there (its STAMP), empty when none. */
  installed: string;
  /** Agent CLIs asked about, with their paths there. */
  clis: Record<string, string>;
  /** Free space under the state root's disk, in KiB (-1 when unknown). */
  freeKiB: number;
  /** Of the folders asked about, those that are folders there. */
  dirs: string[];
}

// $1 = the node to use ("": the one on the PATH there), $2.. = the CLIs to look for, then `--`, then folders to check. Prints key=value lines; nothing in it depends
// on the host's shell being bash.
const PROBE = [
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, in a script for sh
  'root="${XDG_STATE_HOME:-$HOME/.local/state}/muster"',
  'printf "root=%s\\nhome=%s\\n" "$root" "$HOME"',
  'node=$1; shift; [ -n "$node" ] || node=$(command -v node 2>/dev/null || true); printf "node=%s\\n" "$node"',
  'if [ -n "$node" ]; then printf "nodeVersion=%s\\n" "$("$node" --version 2>/dev/null)"; fi',
  'printf "tmux=%s\\n" "$(tmux -V 2>/dev/null)"',
  'printf "installed=%s\\n" "$(cat "$root/install/current" 2>/dev/null)"',
  'while [ $# -gt 0 ] && [ "$1" != -- ]; do p=$(command -v -- "$1" 2>/dev/null) && printf "cli.%s=%s\\n" "$1" "$p"; shift; done',
  "[ $# -gt 0 ] && shift",
  'for d in "$@"; do [ -d "$d" ] && printf "dir=%s\\n" "$d"; done',
  'd="$root"; while [ ! -d "$d" ]; do d=$(dirname "$d"); done',
  'printf "freeKiB=%s\\n" "$(df -Pk "$d" 2>/dev/null | awk "NR==2 {print \\$4}")"',
].join("\n");

/**
 * Asks the host what it has (one round trip): `clis` are binaries to look for on its PATH, `dirs`
 * folders to check (a child's working directory, asked in the same trip).
 */
export async function probeHost(
  sh: FarShell,
  clis: readonly string[] = [],
  dirs: readonly string[] = [],
  node = "",
): Promise<RemoteInfo> {
  const r = await sh.run(["sh", "-c", PROBE, "sh", node, ...clis, "--", ...dirs], { timeoutMs: 20_000 });
  if (r.exitCode !== 0) throw unreachable(sh, r);
  const kv = new Map<string, string>();
  for (const line of r.stdout.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) kv.set(line.slice(0, eq), line.slice(eq + 1));
  }
  const clisFound: Record<string, string> = {};
  for (const [k, v] of kv) if (k.startsWith("cli.")) clisFound[k.slice(4)] = v;
  const found = r.stdout
    .split("\n")
    .filter((l) => l.startsWith("dir="))
    .map((l) => l.slice(4));
  const root = kv.get("root") ?? "";
  if (!path.isAbsolute(root))
    throw new MusterError("unreachable", `${sh.label}: the host did not say its home`);
  const free = Number(kv.get("freeKiB"));
  return {
    root,
    home: kv.get("home") ?? "",
    node: kv.get("node") ?? "",
    nodeVersion: kv.get("nodeVersion") ?? "",
    tmux: kv.get("tmux") ?? "",
    installed: kv.get("installed") ?? "",
    clis: clisFound,
    freeKiB: Number.isFinite(free) && kv.get("freeKiB") !== "" ? free : -1,
    dirs: found,
  };
}

/** The error of a command the place could not run there (ssh: no connection, auth, a changed host key). */
export function unreachable(sh: FarShell, r: RemoteRun): MusterError {
  const said = r.stderr.trim().split("\n").filter(Boolean).pop() ?? `exit ${r.exitCode}`;
  return new MusterError("unreachable", `${sh.label}: ${said}`);
}

/**
 * Refuses a place whose node is missing or older than muster runs on, in one line: `where` names it (`host
 * build1`), `fix` says how to give it one.
 */
export function checkNode(where: string, info: RemoteInfo, fix: string): void {
  if (!info.node) throw new MusterError("unsupported", `${where} has no node on its PATH; ${fix}`);
  if (!info.nodeVersion)
    throw new MusterError("unsupported", `${where}: ${info.node} does not run there (is it a node binary?)`);
  const major = Number(/^v(\d+)\./.exec(info.nodeVersion)?.[1]);
  if (!(major >= MIN_NODE_MAJOR))
    throw new MusterError(
      "unsupported",
      `${where} runs node ${info.nodeVersion || "(unknown version)"}; Node ${MIN_NODE_MAJOR} or newer is needed there`,
    );
}

/** The stamp of the far side this install ships (scripts/bundle.mjs). */
export function localStamp(): string {
  try {
    return fs.readFileSync(path.join(REMOTE_DIST, "STAMP"), "utf8").trim();
  } catch {
    throw new MusterError("invalid_config", `${REMOTE_DIST} is missing: run npm run build`);
  }
}

// $1 = the state root, $2 = the stamp; the tree comes as a gzipped tar on stdin. It unpacks into a fresh
// folder beside the target and renames it in, so a host never runs a half-written install; `current` names
// the newest. Installs of other builds stay (a child started by one may still run from it).
const INSTALL = [
  "set -eu",
  'mkdir -p -m 700 "$1" && mkdir -p "$1/install"',
  'tmp=$(mktemp -d "$1/install/.new-XXXXXX")',
  "trap 'rm -rf \"$tmp\"' EXIT",
  'tar -xzf - -C "$tmp"',
  '[ "$(cat "$tmp/STAMP")" = "$2" ] || { echo "the install arrived damaged" >&2; exit 3; }',
  'if [ -d "$1/install/$2" ]; then rm -rf "$tmp"; else mv "$tmp" "$1/install/$2"; fi',
  'printf "%s\\n" "$2" > "$1/install/.current.tmp" && mv "$1/install/.current.tmp" "$1/install/current"',
].join("\n");

/** Puts this build's far side on the host (a no-op when it is there); returns where it is. */
export async function installOn(sh: FarShell, info: RemoteInfo): Promise<string> {
  const stamp = localStamp();
  const dir = path.posix.join(info.root, "install", stamp);
  if (info.installed === stamp) return dir;
  const tarball = execFileSync("tar", ["-czf", "-", "-C", REMOTE_DIST, "."], { maxBuffer: 64 * 1024 * 1024 });
  const r = await sh.run(["sh", "-c", INSTALL, "sh", info.root, stamp], {
    input: tarball,
    timeoutMs: 120_000,
  });
  if (sh.lostConnection(r)) throw unreachable(sh, r);
  if (r.exitCode !== 0) {
    const said = r.stderr.trim().split("\n").pop() ?? `exit ${r.exitCode}`;
    const full = /No space left/i.test(r.stderr);
    throw new MusterError(
      full ? "storage" : "unsupported",
      `could not install muster's host files on ${sh.where}${full ? " (the disk there is full)" : ""}: ${said}`,
    );
  }
  info.installed = stamp;
  return dir;
}
