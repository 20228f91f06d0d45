/**
 * A real agent CLI (the pinned pi) as a child on an SSH test host (test/helpers/ssh-hosts.ts), against the
 * scripted endpoint. Everything the child needs is on that host only: pi on its non-interactive PATH
 * (/usr/local/bin, covered by a tmpfs in the host's own mount namespace), pi's config in its private /root,
 * and the endpoint listening on its own loopback (a process of this test inside the host's network
 * namespace): a model request the endpoint sees can only have come from the host. Root only.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { cliBinDir, cliCache } from "../../scripts/pinned-clis.mjs";
import { controlDirFor } from "../../src/place/ssh/place.js";
// @ts-expect-error plain JS fixture
import { prepareCli } from "../fixtures/cli-setup.mjs";
import { readEvents, sandbox, until, waitedJson } from "../helpers/cli.js";
import { type NetnsEndpoint, startEndpointIn } from "../helpers/netns-endpoint.js";
import { cancelAndStopKeeper } from "../helpers/place-keeper.js";
import {
  existsOn,
  farDirOf,
  type SshTestHost,
  sshHostsAvailable,
  startSshHost,
} from "../helpers/ssh-hosts.js";

const available = sshHostsAvailable();
const sb = sandbox("mt-sshpi");
/** The pinned pi's install folder (…/pi-<version>) and its launcher inside it. */
const binDir = cliBinDir("pi") as string;
const piInstall = path.dirname(path.dirname(binDir));
const piLauncher = path.relative(piInstall, path.join(binDir, "pi"));

let base = "";
let host: SshTestHost | undefined;
let endpoint: NetnsEndpoint | undefined;
/** The environment prepareCli gives pi (PI_OFFLINE, …): named for the host with `hosts add --env`. */
let piEnv: Record<string, string> = {};

const farDir = (dir: string) => farDirOf(sb.home, dir);
const modelBodies = (from: number) => endpoint!.modelBodies(from);

/**
 * Puts the pinned pi on the host's PATH, in the host's mount namespace only (its propagation is private):
 * a tmpfs over /usr/local/bin holding pi's install folder (a bind mount) and a `pi` link into it. The install
 * is under this machine's /root, which the host covers with its own: a non-recursive bind of the filesystem
 * that holds it ($1, its mount point here) reaches it from under that cover. (A link through
 * /proc/<pid>/root would not do: node resolves its main module's real path, out of the link, to the
 * covered /root.)
 */
const PUT_PI_ON_PATH = [
  "mount -t tmpfs -o mode=755 host-pi /usr/local/bin",
  "mkdir /usr/local/bin/.fs /usr/local/bin/.pi",
  'mount --bind "$1" /usr/local/bin/.fs',
  'mount --bind "/usr/local/bin/.fs/$2" /usr/local/bin/.pi',
  "umount /usr/local/bin/.fs && rmdir /usr/local/bin/.fs",
  'ln -s ".pi/$3" /usr/local/bin/pi',
  "test -x /usr/local/bin/pi",
].join("\n");

describe.skipIf(!available.ok && !process.env.CI)(
  "pi as a child on an SSH test host (real CLI, scripted endpoint there)",
  { timeout: 180_000 },
  () => {
    beforeAll(async () => {
      if (!available.ok) throw new Error(available.why);
      if (!fs.existsSync(path.join(binDir, "pi")))
        throw new Error(
          `pi is not installed in ${cliCache()}: run node scripts/install-clis.mjs (npm test does this)`,
        );
      base = fs.mkdtempSync(path.join(os.tmpdir(), "mu-sshpi-"));
      const h = startSshHost(base, "h1");
      host = h;
      const add = ["hosts", "add", "h1", h.alias, "--ssh-config", h.config, "--workdir", "/root"];
      const added = await sb.run(add);
      expect(added.exitCode, added.stderr).toBe(0);
      // The tmpfs below must not hide the host's node.
      const before = (await sb.json(["hosts", "check", "h1"])).data;
      expect(before.node.ok, JSON.stringify(before)).toBe(true);
      expect(before.node.path.startsWith("/usr/local/bin/")).toBe(false);
      expect(before.clis.pi).toBeUndefined();

      const fsRoot = execFileSync("findmnt", ["-n", "-o", "TARGET", "-T", piInstall]).toString().trim();
      h.inside(["sh", "-euc", PUT_PI_ON_PATH, "sh", fsRoot, path.relative(fsRoot, piInstall), piLauncher]);

      endpoint = await startEndpointIn(path.join(path.dirname(h.config), "ns.net"));
      const url = endpoint.url;
      // pi's config, written here into the host's folder (which the host sees at the same path), copied
      // into the host's own /root.
      const cfgHome = path.join(path.dirname(h.config), "pi-home");
      piEnv = prepareCli("pi", url, cfgHome) as Record<string, string>;
      h.inside(["cp", "-R", path.join(cfgHome, ".pi"), "/root/.pi"]);
      const named = Object.keys(piEnv).flatMap((n) => ["--env", n]);
      const readd = await sb.run([...add, ...named]);
      expect(readd.exitCode, readd.stderr).toBe(0);
    }, 60_000);

    afterAll(async () => {
      await cancelAndStopKeeper(sb, "ssh:h1");
      await endpoint?.stop();
      host?.stop();
      expect(await sb.cleanup()).toEqual([]);
      if (base) fs.rmSync(base, { recursive: true, force: true });
      fs.rmSync(controlDirFor(sb.home), { recursive: true, force: true });
    }, 60_000);

    it("hosts check finds pi on the host's PATH there, and node as before; this machine's PATH is untouched", async () => {
      const c = (await sb.json(["hosts", "check", "h1"])).data;
      expect(c.problems).toEqual([]);
      expect(c.clis.pi).toBe("/usr/local/bin/pi");
      expect(c.env).toEqual(Object.keys(piEnv));
      // The mounts are the host's own.
      expect(fs.existsSync("/usr/local/bin/pi")).toBe(false);
      expect(host!.inside(["sh", "-c", "PI_OFFLINE=1 pi --version 2>&1"]).trim()).toMatch(/\d+\.\d+\.\d+/);
    });

    it("spawn --on h1 --agent pi completes with the scripted answer; send resumes pi's session there; the files are on the host", async () => {
      const h = host!;
      const first = await waitedJson(
        sb,
        ["spawn", "--on", "h1", "--agent", "pi", "--model", "local:scripted", "say hi"],
        piEnv,
      );
      const r1 = first.data.results?.[0];
      expect(r1?.status, `${JSON.stringify(first.data)} ${first.stderr}`).toBe("completed");
      expect(r1.text.trim()).toMatch(/^scripted answer \d+$/);
      const id = first.data.spawned.id as string;
      const dir = r1.artifactDir as string;
      // The model request came from the host: the endpoint listens on the host's loopback only.
      expect(modelBodies(0).some((b) => b.includes("say hi"))).toBe(true);
      const st = (await sb.json(["status", id])).data;
      expect(st).toMatchObject({ status: "idle", place: "ssh:h1", cwd: "/root" });

      const before = endpoint!.requests.length;
      const second = await waitedJson(sb, ["send", id, "again"], piEnv);
      const r2 = second.data.results?.[0];
      expect(r2?.status, `${JSON.stringify(second.data)} ${second.stderr}`).toBe("completed");
      expect(r2.text.trim()).toMatch(/^scripted answer \d+$/);
      expect(r2.text.trim()).not.toBe(r1.text.trim());
      // pi resumed its own session: turn 2's model request carries turn 1, which muster did not send again.
      const sent = modelBodies(before).at(-1) ?? "";
      expect(sent).toContain("again");
      expect(sent).toContain("say hi");
      expect(sent).toContain(r1.text.trim());
      const done = readEvents(dir).filter((e) => e.type === "completion");
      expect(done).toHaveLength(2);
      expect(typeof done[0]!.runnerSessionId).toBe("string");
      expect(done[1]!.runnerSessionId).toBe(done[0]!.runnerSessionId);
      expect(done[0]!.usage.input).toBeGreaterThan(0);
      // One pi process for both turns (runner mode session), and it runs on the host: its network is the host's.
      const starts = readEvents(dir).filter((e) => e.type === "runner_started");
      expect(new Set(starts.map((e) => e.pid)).size).toBe(1);
      const netPin = path.join(path.dirname(h.config), "ns.net");
      expect(fs.readlinkSync(`/proc/${starts[0]!.pid}/ns/net`)).toBe(`net:[${fs.statSync(netPin).ino}]`);

      // The child's files are on the host: its artifact dir there, pi's session under the host's /root.
      const far = farDir(dir);
      expect(existsOn(h, path.posix.join(far, "events.ndjson"))).toBe(true);
      expect(fs.existsSync(far)).toBe(false);
      const sessions = h.inside([
        "sh",
        "-c",
        `grep -rl -- "$1" /root/.pi/agent/sessions`,
        "sh",
        done[0]!.runnerSessionId,
      ]);
      expect(sessions.trim()).not.toBe("");
      // The mirror here is the far log, byte for byte.
      await until(
        () =>
          h.inside(["cat", path.posix.join(far, "events.ndjson")]) ===
          fs.readFileSync(path.join(dir, "events.ndjson"), "utf8"),
        10_000,
      );
      expect(fs.readFileSync(path.join(dir, "events.ndjson"), "utf8")).toBe(
        h.inside(["cat", path.posix.join(far, "events.ndjson")]),
      );
    });
  },
);
