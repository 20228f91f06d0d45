/**
 * HostControl for child hosts on an SSH host: each question is one fixed script run there with the pid and
 * the host's far artifact dir as arguments. A pid counts as the host only while its command line names that
 * dir (a pid reused by another program never gets our signal), and a zombie is dead, as /proc says here. A
 * host that cannot be asked (ssh fails) is "unknown", never "dead": a network is not a death.
 */
import type { HostControl, HostRef, Liveness } from "../place.js";

// $1 = pid, $2 = dir, $3 = signal name or "-" (only asks). Prints alive, dead or sent.
const HOST_SCRIPT = [
  'p="/proc/$1"',
  'if [ ! -r "$p/cmdline" ] || ! tr "\\0" "\\n" < "$p/cmdline" | grep -qxF -- "$2"; then echo dead; exit 0; fi',
  'case "$(sed -n "s/^State:[[:space:]]*\\(.\\).*/\\1/p" "$p/status" 2>/dev/null)" in Z|X) echo dead; exit 0;; esac',
  'if [ "$3" = "-" ]; then echo alive; elif kill -s "$3" "$1" 2>/dev/null; then echo sent; else echo dead; fi',
].join("\n");

/** How a place on another machine runs one short command there: its stdout, or null when it cannot ask. */
export type RemoteRunner = (argv: string[]) => Promise<string | null>;

export function remoteHostControl(run: RemoteRunner, farDir: (dir: string) => Promise<string>): HostControl {
  const ask = async (host: HostRef, signal: string): Promise<string | null> => {
    if (!Number.isInteger(host.pid) || host.pid <= 1) return "dead";
    const dir = await farDir(host.dir).catch(() => null);
    return dir === null ? null : run(["sh", "-c", HOST_SCRIPT, "sh", String(host.pid), dir, signal]);
  };
  return {
    async signal(host, signal) {
      return (await ask(host, signal.replace(/^SIG/, "")))?.trim() === "sent";
    },
    async alive(host): Promise<Liveness> {
      const out = (await ask(host, "-"))?.trim();
      return out === "alive" ? "alive" : out === "dead" ? "dead" : "unknown";
    },
    // The terminal knows how a host ended (tmux keeps a dead pane's status); the place does not.
    async exitStatus() {
      return null;
    },
    async signalGroup(_host, pgid, signal) {
      if (Number.isInteger(pgid) && pgid > 1)
        await run(["kill", "-s", signal.replace(/^SIG/, ""), "--", `-${pgid}`]);
    },
  };
}
