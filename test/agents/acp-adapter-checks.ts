// A real ACP adapter (Zed's claude-agent-acp, codex-acp) as a `runner: acp` child against the scripted
// endpoint, in real tmux: two turns on one process and one session, the profile's acpMode and the call's
// --model / --reasoning set among what it offers, resume after the tmux server is gone (session/load), a
// permission request allowed and denied by the parent, and an interrupt then a cancel.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { cliBinDir, cliCache } from "../../scripts/pinned-clis.mjs";
import { groupAlive } from "../../src/util/process-group.js";
// @ts-expect-error plain JS fixture
import { prepareCli } from "../fixtures/cli-setup.mjs";
// @ts-expect-error plain JS fixture
import { PERM_COMMAND, startEndpoint } from "../fixtures/llm-endpoint.mjs";
import { readEvents, until, useSandbox, waitedJson } from "../helpers/cli.js";
import { killServerAndWait } from "../helpers/tmux.js";
import type { Endpoint } from "./checks.js";

export interface AcpAdapterCase {
  /** Its name in scripts/pinned-clis.mjs (ACP_ADAPTERS) and its bin. */
  name: "claude-agent-acp" | "codex-acp";
  /** The CLI whose offline setup (test/fixtures/cli-setup.mjs) it shares. */
  base: "claude" | "codex";
  /** A mode it offers other than the one it starts in, for the profile's acpMode. */
  acpMode: string;
  /** --model and --reasoning among what it offers (reasoning: only where it offers levels). */
  model: string;
  reasoning?: string;
  /** The endpoint scenario whose shell call makes it ask the parent in the mode it starts in. */
  permScenario: "perm" | "escalate";
  /** Its only refusal ends the turn (codex-acp's "abort": stopReason cancelled), so no answer follows it. */
  refusalEndsTurn?: boolean;
  env?: Record<string, string>;
}

export function defineAcpAdapterChecks(c: AcpAdapterCase): void {
  describe(`${c.name} as a runner acp child (real adapter, scripted endpoint)`, { timeout: 180_000 }, () => {
    const sb = useSandbox(`mt-${c.base}-acp`);
    const bin = path.join(cliBinDir(c.name) as string, c.name);
    let ep: Endpoint;
    let env: NodeJS.ProcessEnv;
    let kept: { id: string; dir: string } | undefined;
    const workDir = (tag: string) => {
      const d = path.join(sb.cwd, tag);
      fs.mkdirSync(d, { recursive: true });
      return d;
    };
    const completions = (dir: string) => readEvents(dir).filter((e) => e.type === "completion");
    const pids = (dir: string) =>
      readEvents(dir)
        .filter((e) => e.type === "runner_started")
        .map((e) => e.pid as number);

    beforeAll(async () => {
      if (!fs.existsSync(bin))
        throw new Error(
          `${c.name} is not installed in ${cliCache()}: run node scripts/install-clis.mjs (npm test does this)`,
        );
      ep = (await startEndpoint()) as Endpoint;
      env = {
        ...prepareCli(c.base, ep.url, sb.env.HOME as string),
        ...c.env,
        TMPDIR: workDir(".tmp"),
      };
      const agents = path.join(sb.cwd, ".muster", "agents");
      fs.mkdirSync(agents, { recursive: true });
      const profile = (name: string, extra: string) =>
        fs.writeFileSync(
          path.join(agents, `${name}.md`),
          `---\ndescription: ${c.name}\nrunner: acp\ncommand: ${JSON.stringify([bin])}\n${extra}---\n`,
        );
      profile(c.name, `acpMode: ${c.acpMode}\n`);
      // No acpMode: the mode it starts in asks the parent before a shell call.
      profile(`${c.name}-ask`, "");
    });
    afterAll(async () => {
      await ep?.close();
    });

    it("two turns on one process and one ACP session; acpMode, --model and --reasoning are set among what it offers", async () => {
      ep.setScenario("text");
      const settings = ["--model", c.model, ...(c.reasoning ? ["--reasoning", c.reasoning] : [])];
      const args = ["spawn", "--agent", c.name, ...settings, "--cwd", workDir("two")];
      const first = await waitedJson(sb, [...args, "remember the word tangerine"], env);
      const r1 = first.data.results?.[0];
      expect(r1?.status, `${JSON.stringify(first.data)} ${first.stderr}`).toBe("completed");
      expect(r1.text.trim()).toMatch(/^scripted answer \d+$/);
      expect(first.data.spawned.warnings).toEqual([]);
      const id = first.data.spawned.id as string;
      const dir = r1.artifactDir as string;
      const offered = readEvents(dir).find((e) => e.type === "agent_session")!;
      expect(offered.modes).toContain(c.acpMode);
      expect(offered).toMatchObject({ mode: c.acpMode, model: c.model });
      expect(offered.warnings).toBeUndefined();
      if (c.reasoning) expect(offered.reasoning).toBe(c.reasoning);
      expect((await sb.run(["status", id], { env })).stdout).toContain(`${c.acpMode} (in use)`);
      const before = ep.requests.length;
      const second = await waitedJson(sb, ["send", id, "what was the word?"], env);
      expect(second.data.results?.[0]?.status, JSON.stringify(second.data)).toBe("completed");
      const sent = ep.lastModelBody(before);
      expect(sent).toContain("remember the word tangerine");
      expect(sent).toContain("what was the word?");
      expect(sent).toContain(r1.text.trim());
      const [c1, c2] = completions(dir);
      expect(c1.runnerSessionId).toBeTruthy();
      expect(c2.runnerSessionId).toBe(c1.runnerSessionId);
      expect(new Set(pids(dir)).size).toBe(1);
      expect(groupAlive(pids(dir)[0]!)).toBe(true);
      kept = { id, dir };
    });

    it("after the tmux server is gone, spawn --resume reloads the session on a new process", async () => {
      expect(kept, "needs the first check's child").toBeDefined();
      const { id, dir } = kept!;
      const old = pids(dir)[0]!;
      await killServerAndWait(sb.socket);
      await until(() => !groupAlive(old), 10_000);
      ep.setScenario("text");
      const before = ep.requests.length;
      const r = await waitedJson(sb, ["spawn", "--resume", id, "and the first thing I said?"], env);
      expect(r.data.results?.[0]?.status, `${JSON.stringify(r.data)} ${r.stderr}`).toBe("completed");
      const sent = ep.lastModelBody(before);
      expect(sent).toContain("remember the word tangerine");
      expect(sent).toContain("and the first thing I said?");
      expect(new Set(completions(dir).map((e) => e.runnerSessionId)).size).toBe(1);
      expect(new Set(pids(dir)).size).toBe(2);
      await sb.run(["cancel", id], { env });
    });

    /** A child whose shell call waits for the parent; resolves once the request is in the inbox. */
    const spawnAsking = async (tag: string) => {
      ep.setScenario(c.permScenario);
      const cwd = workDir(tag);
      const s = await sb.json(["spawn", "--agent", `${c.name}-ask`, "--cwd", cwd, "make perm.txt"], { env });
      expect(s.exitCode, s.stderr).toBe(0);
      const id = s.data.id as string;
      const req = await until(
        async () =>
          (await sb.json(["inbox", "--peek"], { env })).data.requests?.find(
            (q: { child: string }) => q.child === id,
          ),
        120_000,
        500,
      );
      return { id, cwd, req, dir: s.data.artifactDir as string };
    };

    it("a shell call it asks about goes to the parent; muster allow runs it", async () => {
      const { id, cwd, req, dir } = await spawnAsking("allow");
      expect(req).toMatchObject({ type: "permission" });
      expect(`${req.tool} ${req.summary ?? ""}`).toContain(PERM_COMMAND);
      expect((await sb.json(["status", id], { env })).data.live.state).toBe("waiting-permission");
      expect(fs.existsSync(path.join(cwd, "perm.txt"))).toBe(false);
      expect((await sb.json(["allow", req.id], { env })).exitCode).toBe(0);
      const r = (await sb.json(["wait", id, "--timeout", "120"], { env })).data.results[0];
      expect(r.status, r.reason).toBe("completed");
      expect(fs.readFileSync(path.join(cwd, "perm.txt"), "utf8").trim()).toBe("hi");
      expect(r.text).toMatch(/^TOOL SAID: /);
      const perms = readEvents(dir).filter((e) => e.type === "permission");
      expect(perms.map((e) => e.state)).toEqual(["pending", "granted"]);
      await sb.run(["cancel", id], { env });
    });

    it("muster deny: the call does not run and the turn still ends", async () => {
      const { id, cwd, req, dir } = await spawnAsking("deny");
      expect((await sb.json(["deny", req.id], { env })).exitCode).toBe(0);
      const r = (await sb.json(["wait", id, "--timeout", "120"], { env })).data.results[0];
      if (!c.refusalEndsTurn) {
        expect(r.status, r.reason).toBe("completed");
        expect(r.text).toMatch(/^TOOL SAID: /);
      } else expect(r.status).toBeTruthy();
      expect(fs.existsSync(path.join(cwd, "perm.txt"))).toBe(false);
      const perms = readEvents(dir).filter((e) => e.type === "permission");
      expect(perms.map((e) => e.state)).toEqual(["pending", "denied"]);
      await sb.run(["cancel", id], { env });
    });

    it("send --mode now interrupts a slow turn through session/cancel; muster cancel ends the process", async () => {
      ep.setScenario("slow");
      const before = ep.requests.length;
      const s = await sb.json(["spawn", "--agent", c.name, "--cwd", workDir("cancel"), "a long story"], {
        env,
      });
      expect(s.exitCode, s.stderr).toBe(0);
      const id = s.data.id as string;
      const dir = s.data.artifactDir as string;
      await until(
        () => ep.requests.slice(before).some((q) => q.scenario === "slow" && q.api !== null),
        60_000,
      );
      await until(
        async () => (await sb.run(["capture", id], { env })).stdout.includes("slow chunk 2"),
        30_000,
      );
      ep.setScenario("text");
      const r = await waitedJson(sb, ["send", id, "--mode", "now", "a short one"], env);
      expect(r.data.results?.[0]?.status, JSON.stringify(r.data)).toBe("completed");
      expect(completions(dir)[0]).toMatchObject({ status: "interrupted" });
      const pid = pids(dir)[0]!;
      expect(new Set(pids(dir)).size).toBe(1);
      expect(groupAlive(pid)).toBe(true);
      expect((await sb.json(["cancel", id], { env, timeout: 60_000 })).exitCode).toBe(0);
      await until(() => !groupAlive(pid), 15_000);
    });
  });
}
