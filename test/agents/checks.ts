// The five checks every real agent CLI must pass as a muster child, against the scripted
// endpoint, in real tmux. Each CLI has its own test file so two CLIs run at once.
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { cliBinDir, cliCache, PINNED_CLIS } from "../../scripts/pinned-clis.mjs";
import { groupAlive } from "../../src/util/process-group.js";
// @ts-expect-error plain JS fixture
import { prepareCli, TEST_MODELS } from "../fixtures/cli-setup.mjs";
// @ts-expect-error plain JS fixture
import { startEndpoint, TOOL_COMMAND } from "../fixtures/llm-endpoint.mjs";
import { processesWithEnv, readEvents, type Sandbox, until, useSandbox, waitedJson } from "../helpers/cli.js";
import { killServerAndWait } from "../helpers/tmux.js";
import { siblingHeldUntilResume } from "../helpers/tree-pause.js";

/** The scripted endpoint (test/fixtures/llm-endpoint.mjs) as the agent checks use it. */
export interface Endpoint {
  url: string;
  requests: { path: string; api: string | null; body: unknown; scenario: string }[];
  lastModelBody(before: number): string;
  setScenario(s: string): void;
  /** Requests whose body holds `marker` get the provider error `kind` in the provider's own format. */
  failWhen(marker: string, kind: string): void;
  clearFailures(): void;
  setRetryHint(ms: number | undefined): void;
  setResetSeconds(n: number): void;
  close(): Promise<void>;
}

export interface CliCase {
  name: "claude" | "codex" | "pi" | "opencode" | "gemini";
  /** What the CLI's own message for an upstream 500 looks like. */
  errorMessage: RegExp;
  /** The CLI streams text as it is generated (not only whole messages): the pane must show it mid-turn. */
  streamsText?: boolean;
  /** The CLI has a long-lived mode muster runs it in by default (runner mode `session`). */
  session?: boolean;
  /** Extra env for this CLI in the tests (e.g. fewer retries against the scripted 500). */
  env?: Record<string, string>;
  /** The CLI says when a provider's rate limit lifts (Claude Code and Codex say only that it was hit). */
  saysRateLimitReset?: boolean;
}

/** One child's settled turn, read back through the CLI (`--json`). */
async function spawnAndWait(sb: Sandbox, env: NodeJS.ProcessEnv, args: string[]) {
  const r = await waitedJson(sb, ["spawn", ...args], env);
  const result = r.data.results?.[0];
  if (!result) throw new Error(`no result (exit ${r.exitCode}): ${JSON.stringify(r.data)} ${r.stderr}`);
  return { id: r.data.spawned.id as string, result, exitCode: r.exitCode, stderr: r.stderr };
}

/** Processes started for one child other than its host: the child id is in their environment (daemons too). */
const processesOfChild = (id: string, hostPid: number): string[] =>
  processesWithEnv(`MUSTER_CHILD_ID=${id}`)
    .filter((p) => p.pid !== hostPid)
    .map((p) => `${p.pid} ${p.cmdline}`);

const completions = (dir: string) => readEvents(dir).filter((e) => e.type === "completion");

export function defineCliChecks(c: CliCase): void {
  // Real CLIs start slowly under load (opencode: 5-15 s a turn on 2 busy cores): generous per-test time.
  describe(`${c.name} as a muster child (real CLI, scripted endpoint)`, { timeout: 180_000 }, () => {
    const sb = useSandbox(`mt-${c.name}`);
    const binDir = cliBinDir(c.name) as string;
    const model = TEST_MODELS[c.name] as string;
    let ep: Endpoint;
    let env: NodeJS.ProcessEnv;
    let resumed: { id: string; artifactDir: string } | undefined;
    const lastModelBody = (before: number) => ep.lastModelBody(before);
    const childArgs = (cwd: string, prompt: string) => [
      "--agent",
      c.name,
      "--model",
      model,
      "--cwd",
      cwd,
      prompt,
    ];
    const workDir = (tag: string) => {
      const d = path.join(sb.cwd, tag);
      fs.mkdirSync(d, { recursive: true });
      return d;
    };

    beforeAll(async () => {
      if (!fs.existsSync(path.join(binDir, c.name))) {
        throw new Error(
          `${c.name} is not installed in ${cliCache()}: run node scripts/install-clis.mjs (npm test does this)`,
        );
      }
      ep = (await startEndpoint()) as Endpoint;
      env = {
        ...prepareCli(c.name, ep.url, sb.env.HOME as string),
        ...c.env,
        PATH: `${binDir}${path.delimiter}${sb.env.PATH}`,
        // Some CLIs drop files in the temp dir (gemini: an error report per failure): keep them in the sandbox.
        TMPDIR: workDir(".tmp"),
      };
    });
    afterAll(async () => {
      await ep?.close();
    });

    it("muster doctor finds the CLI and reports its version", async () => {
      const d = await sb.json(["doctor"], { env });
      const cli = d.data.agentClis.find((x: { name: string }) => x.name === c.name);
      expect(cli).toMatchObject({ found: true, path: path.join(binDir, c.name) });
      expect(cli.version).toContain(PINNED_CLIS.find((p: { name: string }) => p.name === c.name).version);
    });

    it("1. completes a turn: the result is the scripted answer and usage is recorded", async () => {
      ep.setScenario("text");
      const r = await spawnAndWait(sb, env, childArgs(workDir("one"), "say hi"));
      expect(r.result.status, `${r.result.reason} ${r.stderr}`).toBe("completed");
      expect(r.result.text.trim()).toMatch(/^scripted answer \d+$/);
      const done = completions(r.result.artifactDir).at(-1)!;
      expect(done.usage.input).toBeGreaterThan(0);
      expect(done.usage.output).toBeGreaterThan(0);
      expect(typeof done.runnerSessionId).toBe("string");
      expect(readEvents(r.result.artifactDir).some((e) => e.type === "runner_started")).toBe(true);
      // CLIs whose final record is their last word settle on it, before the process exits (exitCode null).
      expect(done.exitCode).toBe(["claude", "codex", "pi", "gemini", "opencode"].includes(c.name) ? null : 0);
    });

    it("2. runs the scripted shell tool in the child's cwd, and the pane shows the tool", async () => {
      ep.setScenario("tool");
      const cwd = workDir("tool");
      const r = await spawnAndWait(sb, env, childArgs(cwd, "make the file"));
      expect(r.result.status, `${r.result.reason} ${r.stderr}`).toBe("completed");
      const events = () => JSON.stringify(readEvents(r.result.artifactDir)).slice(0, 4000);
      expect(fs.existsSync(path.join(cwd, "out.txt")), events()).toBe(true);
      expect(fs.readFileSync(path.join(cwd, "out.txt"), "utf8").trim()).toBe("hello");
      expect(r.result.text.trim()).toBe("The file out.txt now says hello.");
      const tools = readEvents(r.result.artifactDir).filter((e) => e.type === "tool_activity");
      expect(tools.map((t) => t.phase)).toEqual(["start", "end"]);
      expect(tools[0].summary).toContain(TOOL_COMMAND);
      const pane = await sb.run(["capture", r.id, "--lines", "200"], { env });
      expect(pane.stdout).toContain(TOOL_COMMAND);
    });

    it("3. muster send runs turn 2 through the CLI's own resume: the endpoint saw turn 1", async () => {
      ep.setScenario("text");
      const first = await spawnAndWait(sb, env, childArgs(workDir("resume"), "remember the word tangerine"));
      expect(first.result.status).toBe("completed");
      const answer1 = first.result.text.trim();
      const before = ep.requests.length;
      const second = await waitedJson(sb, ["send", first.id, "what was the word?"], env);
      expect(second.data.results?.[0]?.status, JSON.stringify(second.data)).toBe("completed");
      const sent = lastModelBody(before);
      expect(sent).toContain("what was the word?");
      expect(sent).toContain("remember the word tangerine");
      expect(sent).toContain(answer1);
      const [c1, c2] = completions(first.result.artifactDir);
      expect(c2.runnerSessionId).toBe(c1.runnerSessionId);
      const starts = readEvents(first.result.artifactDir).filter((e) => e.type === "runner_started");
      // Each turn records the process that ran it.
      expect(starts.map((e) => e.turnId)).toEqual([c1.turnId, c2.turnId]);
      if (c.session) {
        // One process across both turns, still alive between them (runner mode session).
        expect(new Set(starts.map((e) => e.pid)).size).toBe(1);
        expect(groupAlive(starts[0]!.pid as number)).toBe(true);
      } else expect(new Set(starts.map((e) => e.pid)).size).toBe(2);
      resumed = { id: first.id, artifactDir: first.result.artifactDir };
    });

    it("3b. after the tmux server is gone, spawn --resume continues the CLI's session in a new pane", async () => {
      expect(resumed, "needs check 3's child").toBeDefined();
      const { id, artifactDir } = resumed!;
      await killServerAndWait(sb.socket);
      ep.setScenario("text");
      const before = ep.requests.length;
      const r = await waitedJson(sb, ["spawn", "--resume", id, "and the first thing I said?"], env);
      expect(r.data.results?.[0]?.status, JSON.stringify(r.data)).toBe("completed");
      expect(r.data.resumed.newPane).toMatch(/^%\d+$/);
      const sent = lastModelBody(before);
      expect(sent).toContain("remember the word tangerine");
      expect(sent).toContain("what was the word?");
      const all = completions(artifactDir);
      expect(new Set(all.map((e) => e.runnerSessionId)).size).toBe(1);
    });

    it("3c. spawn --fork hands the CLI the forked conversation; the fork's next turn resumes a session of its own", async () => {
      expect(resumed, "needs check 3's child").toBeDefined();
      ep.setScenario("text");
      const before = ep.requests.length;
      const f = await waitedJson(
        sb,
        ["spawn", "--fork", resumed!.id, "which fruit was it, in one word?"],
        env,
      );
      expect(f.data.results?.[0]?.status, JSON.stringify(f.data)).toBe("completed");
      const sent = lastModelBody(before);
      expect(sent).toContain("remember the word tangerine");
      expect(sent).toContain("which fruit was it, in one word?");
      const forkDir = f.data.results[0].artifactDir as string;
      const mine = completions(forkDir)[0]!.runnerSessionId;
      expect(mine, "the fork's own runner session").toBeTruthy();
      expect(completions(resumed!.artifactDir).map((e) => e.runnerSessionId)).not.toContain(mine);
      const again = ep.requests.length;
      const next = await waitedJson(sb, ["send", f.data.spawned.id, "spell it backwards"], env);
      expect(next.data.results?.[0]?.status, JSON.stringify(next.data)).toBe("completed");
      // The CLI's own resume carries the forked conversation on: muster did not send it again.
      const body = lastModelBody(again);
      expect(body).toContain("remember the word tangerine");
      expect(body).toContain("spell it backwards");
      expect(completions(forkDir)[1]!.runnerSessionId).toBe(mine);
      const runnerPrompts = fs
        .readdirSync(path.join(forkDir, "prompts"))
        .filter((n) => n.endsWith(".runner.txt"));
      expect(runnerPrompts, "only the first turn carried the conversation as text").toHaveLength(1);
      await sb.run(["cancel", f.data.spawned.id], { env });
    });

    it("a prompt too large for one argv word (200 KiB) reaches the model whole, through stdin", async () => {
      ep.setScenario("text");
      const cwd = workDir("big");
      const file = path.join(cwd, "..", "big-prompt.txt");
      fs.writeFileSync(file, `BIG-START ${"lorem ipsum ".repeat(17_000)} BIG-END`);
      const before = ep.requests.length;
      const r = await sb.json(
        [
          "spawn",
          "--wait",
          "--timeout",
          "120",
          "--agent",
          c.name,
          "--model",
          model,
          "--cwd",
          cwd,
          "--file",
          file,
        ],
        { env, timeout: 150_000 },
      );
      expect(r.data.results?.[0]?.status, JSON.stringify(r.data).slice(0, 2000)).toBe("completed");
      const sent = lastModelBody(before);
      expect(sent).toContain("BIG-START");
      expect(sent).toContain("BIG-END");
    });

    it("4. muster cancel during a slow stream settles cancelled and leaves no process of the CLI", async () => {
      ep.setScenario("slow");
      const before = ep.requests.length;
      const s = await sb.json(["spawn", ...childArgs(workDir("cancel"), "write a long story")], { env });
      expect(s.exitCode, s.stderr).toBe(0);
      const id = s.data.id as string;
      await until(
        () => ep.requests.slice(before).some((q) => q.api !== null && q.scenario === "slow"),
        60_000,
      );
      if (c.streamsText) {
        // Watchable: the answer shows in the pane while it is being written, long before the turn ends.
        await until(
          async () => (await sb.run(["capture", id], { env })).stdout.includes("slow chunk 2"),
          20_000,
        );
      }
      // The CLI leads its own process group (pid = pgid); pi renames its process, so the group is the handle.
      const pgid = readEvents(s.data.artifactDir).find((e) => e.type === "runner_started")?.pid as number;
      expect(groupAlive(pgid)).toBe(true);
      const hostPid = readEvents(s.data.artifactDir).find((e) => e.type === "child_started")?.pid as number;
      expect(processesOfChild(id, hostPid).length).toBeGreaterThan(0);
      const r = await sb.json(["cancel", id], { env, timeout: 60_000 });
      expect(r.exitCode, r.stderr).toBe(0);
      let last: unknown;
      const st = await until(async () => {
        const x = await sb.json(["status", id], { env });
        last = x.data;
        return x.data.turnList?.[0]?.status === "cancelled" ? x.data : undefined;
      }, 30_000).catch((e) => {
        throw new Error(`${(e as Error).message}; last status ${JSON.stringify(last)}`);
      });
      expect(st.lastOutcome).toBe("cancelled");
      await until(() => !groupAlive(pgid), 5_000);
      expect(processesOfChild(id, hostPid)).toEqual([]);
    });

    if (c.session) {
      it("6. MUSTER_RUNNER_MODE=oneshot runs the same turns a process each, and they still resume", async () => {
        ep.setScenario("text");
        const oneshot = { ...env, MUSTER_RUNNER_MODE: "oneshot" };
        const first = await spawnAndWait(
          sb,
          oneshot,
          childArgs(workDir("oneshot"), "remember the word plum"),
        );
        expect(first.result.status, first.result.reason).toBe("completed");
        const before = ep.requests.length;
        const second = await waitedJson(sb, ["send", first.id, "the word?"], oneshot);
        expect(second.data.results?.[0]?.status, JSON.stringify(second.data)).toBe("completed");
        expect(lastModelBody(before)).toContain("remember the word plum");
        const starts = readEvents(first.result.artifactDir).filter((e) => e.type === "runner_started");
        expect(new Set(starts.map((e) => e.pid)).size).toBe(2);
      });
    }

    if (c.session) {
      it("7. send --mode now interrupts a slow streamed answer through the protocol; the process stays for turn 2", async () => {
        ep.setScenario("slow");
        const before = ep.requests.length;
        const s = await sb.json(["spawn", ...childArgs(workDir("steer"), "write a long story")], { env });
        expect(s.exitCode, s.stderr).toBe(0);
        const id = s.data.id as string;
        await until(
          () => ep.requests.slice(before).some((q) => q.api !== null && q.scenario === "slow"),
          60_000,
        );
        ep.setScenario("text");
        const r = await waitedJson(sb, ["send", id, "--mode", "now", "stop; say hi"], env);
        expect(r.data.results?.[0]?.status, JSON.stringify(r.data)).toBe("completed");
        const [first, second] = completions(s.data.artifactDir);
        expect(first).toMatchObject({ turnId: s.data.turnId, status: "interrupted" });
        expect(second.status).toBe("completed");
        const starts = readEvents(s.data.artifactDir).filter((e) => e.type === "runner_started");
        expect(starts).toHaveLength(2);
        expect(new Set(starts.map((e) => e.pid)).size).toBe(1);
        expect(groupAlive(starts[0]!.pid as number)).toBe(true);
        await sb.run(["cancel", id], { env });
      });
    }

    it("8. a quota error (the provider's own 429/400 body) is classified, pauses the tree, and resume-tree continues", async () => {
      ep.setScenario("text");
      ep.failWhen("QUOTA-MARK", "quota");
      // OpenCode retries a 429 itself five times with backoff; the hint makes those retries instant.
      ep.setRetryHint(0);
      try {
        for (const mode of c.session ? ["session", "oneshot"] : ["oneshot"]) {
          const modeEnv = mode === "oneshot" ? { ...env, MUSTER_RUNNER_MODE: "oneshot" } : env;
          const r = await waitedJson(
            sb,
            ["spawn", ...childArgs(workDir(`quota-${mode}`), "QUOTA-MARK hi")],
            modeEnv,
          );
          const result = r.data.results?.[0];
          expect(result?.status, `${mode}: ${JSON.stringify(r.data).slice(0, 1500)}`).toBe("errored");
          expect(result.providerError, mode).toMatchObject({ kind: "quota" });
          expect(completions(result.artifactDir).at(-1)!.providerError.kind).toBe("quota");
          // The parent hears of the pause once, with the completion that caused it.
          expect(r.data.treePaused, mode).toMatchObject({ kind: "quota", child: r.data.spawned.id });
          // Nothing new starts: a sibling spawned now waits, shown as paused, until resume-tree.
          await siblingHeldUntilResume(sb, env);
        }
      } finally {
        ep.clearFailures();
        ep.setRetryHint(undefined);
        await sb.run(["resume-tree"], { env });
      }
    });

    if (c.saysRateLimitReset) {
      it("9. a rate limit lifting in a few seconds (the provider's own 429) is waited out: the turn runs again and completes", async () => {
        ep.setScenario("text");
        ep.setResetSeconds(3);
        ep.failWhen("RATE-MARK", "rate_limit");
        ep.setRetryHint(0);
        try {
          const s = await sb.json(["spawn", ...childArgs(workDir("rate"), "RATE-MARK hi")], { env });
          expect(s.exitCode, s.stderr).toBe(0);
          // The limit lifts once the host has said it waits for it.
          await until(() => readEvents(s.data.artifactDir).some((e) => e.type === "rate_limited"), 90_000);
          ep.clearFailures();
          const done = await sb.json(["wait", s.data.id, "--timeout", "120s"], { env, timeout: 150_000 });
          expect(done.data.results[0]?.status, JSON.stringify(done.data).slice(0, 1500)).toBe("completed");
          const limited = readEvents(s.data.artifactDir).filter((e) => e.type === "rate_limited");
          expect(limited[0]).toMatchObject({ attempt: 1 });
          expect(completions(s.data.artifactDir)).toHaveLength(1);
        } finally {
          ep.clearFailures();
          ep.setRetryHint(undefined);
          ep.setResetSeconds(3600);
        }
      });
    }

    it("5. an upstream 500 settles errored with the CLI's own message, not a hang", async () => {
      ep.setScenario("error500");
      const r = await spawnAndWait(sb, env, childArgs(workDir("err"), "fail"));
      expect(r.result.status).toBe("errored");
      expect(r.result.reason).toMatch(c.errorMessage);
    });
  });
}
