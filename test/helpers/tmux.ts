/** Test utilities for private tmux servers; they never touch the default server (always `-L <name>`). */
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";

/** A unique private socket name: `<prefix>-<pid>-<random>`. */
export function privateSocket(prefix = "mt"): string {
  return `${prefix}-${process.pid}-${randomBytes(4).toString("hex")}`;
}

function assertPrivate(socket: string): void {
  if (!/^[A-Za-z0-9._-]+$/.test(socket) || socket === "default") {
    throw new Error(`refusing to touch tmux socket ${JSON.stringify(socket)}`);
  }
}

async function tmuxL(socket: string, args: string[]): Promise<{ stdout: string; exitCode: number }> {
  assertPrivate(socket);
  const r = await execa("tmux", ["-L", socket, ...args], { reject: false, timeout: 5_000, stdin: "ignore" });
  return { stdout: String(r.stdout ?? ""), exitCode: r.exitCode ?? -1 };
}

/** Children of each pid, from `ps` (portable enough for Linux and macOS). */
async function childrenOf(): Promise<Map<number, number[]>> {
  const r = await execa("ps", ["-A", "-o", "pid=,ppid="], { reject: false });
  const kids = new Map<number, number[]>();
  for (const line of String(r.stdout ?? "").split("\n")) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (pid && ppid !== undefined) kids.set(ppid, [...(kids.get(ppid) ?? []), pid]);
  }
  return kids;
}

/** The server pid, every pane pid and their descendants; [] when no server runs on `socket`. */
export async function listServerPids(socket: string): Promise<number[]> {
  const server = await tmuxL(socket, ["display-message", "-p", "#{pid}"]);
  if (server.exitCode !== 0) return [];
  const panes = await tmuxL(socket, ["list-panes", "-a", "-F", "#{pane_pid}"]);
  const roots = [server.stdout, ...panes.stdout.split("\n")].map(Number).filter((n) => n > 0);
  const kids = await childrenOf();
  const all = new Set<number>();
  const walk = (pid: number): void => {
    if (all.has(pid)) return;
    all.add(pid);
    for (const k of kids.get(pid) ?? []) walk(k);
  };
  for (const r of roots) walk(r);
  return [...all];
}

/** Alive and not a zombie (a zombie still answers signal 0). */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return true;
  }
}

/** kill-server, then waits (≤ timeoutMs) for the server and pane processes to exit, SIGKILLing stragglers. */
export async function killServerAndWait(socket: string, timeoutMs = 5_000): Promise<void> {
  assertPrivate(socket);
  // Where tmux puts `-L <socket>`, asked of the server; when the server is already gone (a test ended it), where
  // tmux would have made it (tmux's own rule: $TMUX_TMPDIR or /tmp, then tmux-<uid>).
  const path =
    (await tmuxL(socket, ["display-message", "-p", "#{socket_path}"])).stdout.trim() ||
    join(process.env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid?.() ?? 0}`, socket);
  const pids = await listServerPids(socket);
  await tmuxL(socket, ["kill-server"]);
  const deadline = Date.now() + timeoutMs;
  while (pids.some(isRunning) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const pid of pids.filter(isRunning)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  // The socket file outlives the server; remove it so stale sockets do not pile up.
  if (path.endsWith(`/${socket}`)) rmSync(path, { force: true });
}

/** Polls `probe` every 25 ms until it returns something other than undefined/false; throws after `ms`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  ms = 3_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * A real tmux client: `tmux attach` of session `s` on the `inner` server (running `cat`), itself in session
 * `o` of the `outer` server, which is its terminal. Returns TMUX and TMUX_PANE as a program in the inner
 * session sees them, so a command run with them acts on that client (popups are drawn where capture-pane of
 * the outer pane sees them).
 */
export async function attachedClient(
  outer: string,
  inner: string,
  opts: {
    env: NodeJS.ProcessEnv;
    inner: [cols: number, rows: number];
    outer: [cols: number, rows: number];
    cwd?: string;
  },
): Promise<{ TMUX: string; TMUX_PANE: string }> {
  const tmux = async (socket: string, args: string[]) =>
    String((await execa("tmux", ["-L", socket, ...args], { reject: false, stdin: "ignore" })).stdout);
  const size = ([x, y]: [number, number]) => ["-x", String(x), "-y", String(y)];
  const cwd = opts.cwd ? ["-c", opts.cwd] : [];
  await execa("tmux", ["-L", inner, "new-session", "-d", "-s", "s", ...size(opts.inner), ...cwd, "cat"], {
    env: opts.env,
  });
  await execa(
    "tmux",
    ["-L", outer, "new-session", "-d", "-s", "o", ...size(opts.outer), "--", "env", "-u", "TMUX"].concat([
      // -u: the client draws UTF-8 whatever the locale (without it, `·` is drawn as `~` and borders as `lqk`).
      "tmux",
      "-u",
      "-L",
      inner,
      "attach",
      "-t",
      "s",
    ]),
    { env: opts.env },
  );
  await waitFor(async () => ((await tmux(inner, ["list-clients"])).trim() !== "" ? true : undefined), 10_000);
  // One format per call: without a UTF-8 locale, tmux prints a tab in a format as `_`.
  const show = async (format: string) =>
    (await tmux(inner, ["display-message", "-p", "-t", "s", format])).trim();
  const [sock, pid, pane] = [await show("#{socket_path}"), await show("#{pid}"), await show("#{pane_id}")];
  return { TMUX: `${sock},${pid},0`, TMUX_PANE: pane };
}
