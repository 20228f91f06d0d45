// mode tui: the real pinned CLI's own TUI (Claude Code, Pi) runs in the child's pane under a pty
// inside the host, against the scripted endpoint, in a private tmux; turns come from its hooks, never from
// the screen. Each CLI has its own test file so two run at once.
import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { cliBinDir, cliCache } from "../../scripts/pinned-clis.mjs";
import { groupAlive } from "../../src/util/process-group.js";
// @ts-expect-error plain JS fixture
import { prepareCli, TEST_MODELS } from "../fixtures/cli-setup.mjs";
// @ts-expect-error plain JS fixture
import { PERM_COMMAND, startEndpoint, TOOL_COMMAND } from "../fixtures/llm-endpoint.mjs";
import { processesWithEnv, readEvents, sleep, until, useSandbox, waitedJson } from "../helpers/cli.js";
import { killServerAndWait } from "../helpers/tmux.js";
import { siblingHeldUntilResume } from "../helpers/tree-pause.js";
import type { Endpoint } from "./checks.js";

const completions = (dir: string) => readEvents(dir).filter((e) => e.type === "completion");

/**
 * Claude Code's first-run screens, settled the way a user settles them once (its ~/.claude.json in the
 * sandbox HOME): onboarding done, the scripted API key approved, these folders trusted. A folder left out
 * shows the trust dialog (the blocker test).
 */
function settleClaudeFirstRun(home: string, trusted: string[]): void {
  const file = path.join(home, ".claude.json");
  fs.writeFileSync(
    file,
    JSON.stringify({
      hasCompletedOnboarding: true,
      theme: "dark",
      customApiKeyResponses: { approved: ["sk-ant-scripted"], rejected: [] },
      projects: Object.fromEntries(
        trusted.map((d) => [d, { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true }]),
      ),
    }),
  );
}

/**
 * Codex's start-up notices (a newer model's announcement), settled the way a user settles them once (its
 * config.toml in the sandbox CODEX_HOME, as Codex itself writes them).
 */
function settleCodexFirstRun(codexHome: string): void {
  fs.appendFileSync(
    path.join(codexHome, "config.toml"),
    '\n[notice.model_migrations]\n"gpt-5.5" = "gpt-6-sol"\n\n[tui.model_availability_nux]\n"gpt-6.1-sol" = 1\n',
  );
}

/** What differs per CLI: its session id's shape, and the keys a person presses to interrupt a turn. */
export interface TuiCheckOptions {
  sessionId?: RegExp;
  escapeKeys?: string[];
  /** Which model requests are the turn's own (OpenCode sends a title request of its own first). */
  turnRequest?: (body: unknown) => boolean;
}

export function defineTuiChecks(
  cli: "claude" | "codex" | "gemini" | "opencode" | "pi",
  opts: TuiCheckOptions = {},
): void {
  describe(`${cli} in mode tui (real TUI in the pane, scripted endpoint)`, { timeout: 240_000 }, () => {
    const sb = useSandbox(`mt-tui-${cli}`);
    const binDir = cliBinDir(cli) as string;
    let ep: Endpoint;
    let env: NodeJS.ProcessEnv;
    let first: { id: string; dir: string; paneId: string } | undefined;
    const workDir = (tag: string) => {
      const d = path.join(sb.cwd, tag);
      fs.mkdirSync(d, { recursive: true });
      return d;
    };
    const lastModelBody = (before: number) => ep.lastModelBody(before);
    const spawnArgs = (cwd: string, prompt: string) => [
      "spawn",
      "--tui",
      "--agent",
      cli,
      "--model",
      TEST_MODELS[cli] as string,
      "--cwd",
      cwd,
      prompt,
    ];
    const tmux = (...args: string[]) => execa("tmux", ["-L", sb.socket, ...args]);
    /** The turn's own model request is streaming the slow answer (a side request does not count). */
    const slowTurnStarted = (before: number) =>
      ep.requests
        .slice(before)
        .some((q) => q.api !== null && q.scenario === "slow" && (opts.turnRequest?.(q.body) ?? true));

    beforeAll(async () => {
      if (!fs.existsSync(path.join(binDir, cli)))
        throw new Error(`${cli} is not installed in ${cliCache()}: run node scripts/install-clis.mjs`);
      ep = (await startEndpoint()) as Endpoint;
      env = {
        ...prepareCli(cli, ep.url, sb.env.HOME as string),
        ...(cli === "claude" ? { CLAUDE_CODE_MAX_RETRIES: "0" } : {}),
        PATH: `${binDir}${path.delimiter}${sb.env.PATH}`,
        TMPDIR: workDir(".tmp"),
        // As in a CI job: the TUI in the pane must still draw live (ink draws nothing where it sees CI).
        CI: "true",
      };
      if (cli === "codex") settleCodexFirstRun(env.CODEX_HOME as string);
      if (cli === "claude")
        settleClaudeFirstRun(
          sb.env.HOME as string,
          ["one", "cancel", "steer", "tool", "ask", "esc", "quota"].map(workDir),
        );
    });
    afterAll(async () => {
      await ep?.close();
    });

    it("a turn completes from the TUI's hooks: the answer, usage and the CLI's session id are recorded", async () => {
      ep.setScenario("text");
      const s = await sb.json(spawnArgs(workDir("one"), "say hi"), { env });
      expect(s.exitCode, s.stderr).toBe(0);
      const w = await sb.json(["wait", s.data.id, "--timeout", "120"], { env, timeout: 150_000 });
      const r = w.data.results?.[0];
      if (r?.status !== "completed") {
        // What the TUI showed and what muster recorded: the one clue when this fails only in a long run.
        const screen = (await tmux("capture-pane", "-p", "-t", s.data.paneId).catch(() => ({ stdout: "" })))
          .stdout;
        const events = readEvents(s.data.artifactDir).map((e) => e.type);
        throw new Error(
          `no completed turn: ${JSON.stringify(w.data)}; model requests: ${ep.requests.length}; events: ${events.join(",")}; screen:\n${screen}`,
        );
      }
      expect(r.text.trim()).toMatch(/^scripted answer \d+$/);
      const done = completions(s.data.artifactDir).at(-1)!;
      expect(done.usage.input).toBeGreaterThan(0);
      expect(done.usage.output).toBeGreaterThan(0);
      expect(done.runnerSessionId).toMatch(opts.sessionId ?? /^[0-9a-f-]{36}$/);
      // `muster result` reads the same snapshot.
      const res = await sb.run(["result", s.data.id], { env });
      expect(res.stdout.trim()).toBe(r.text.trim());
      // The pane shows the CLI's own TUI, with the prompt muster pasted into it and, once the TUI has drawn
      // it (its hooks may report the turn before its screen does), the answer.
      let pane = "";
      await until(async () => {
        pane = (await tmux("capture-pane", "-p", "-t", s.data.paneId)).stdout;
        return /scripted answer \d+/.test(pane);
      }, 15_000).catch(() => undefined);
      expect(pane).toContain("say hi");
      expect(pane).toMatch(/scripted answer \d+/);
      first = { id: s.data.id, dir: s.data.artifactDir, paneId: s.data.paneId };
    });

    it("a follow-up (muster send) is pasted into the idle TUI and becomes turn 2 of the same session", async () => {
      expect(first, "needs the first test's child").toBeDefined();
      const before = ep.requests.length;
      const r = await waitedJson(sb, ["send", first!.id, "what was the word?"], env);
      expect(r.data.results?.[0]?.status, JSON.stringify(r.data)).toBe("completed");
      const sent = lastModelBody(before);
      expect(sent).toContain("what was the word?");
      expect(sent).toContain("say hi");
      const [c1, c2] = completions(first!.dir);
      expect(c2!.runnerSessionId).toBe(c1!.runnerSessionId);
      // One TUI process across the turns.
      const starts = readEvents(first!.dir).filter((e) => e.type === "runner_started");
      expect(new Set(starts.map((e) => e.pid)).size).toBe(1);
      expect(groupAlive(starts[0]!.pid as number)).toBe(true);
    });

    it("a multi-line prompt with non-ASCII text is pasted whole: the model gets every line", async () => {
      expect(first, "needs the first test's child").toBeDefined();
      const before = ep.requests.length;
      const prompt = ["- first line starts with a dash", "zweite Zeile: ÄÖÜ ß ✓ 日本", "", "last line"].join(
        "\n",
      );
      const file = path.join(workDir(".prompts"), "multi.txt");
      fs.writeFileSync(file, prompt);
      const r = await waitedJson(sb, ["send", first!.id, "--file", file], env);
      expect(r.data.results?.[0]?.status, JSON.stringify(r.data)).toBe("completed");
      const sent = lastModelBody(before);
      for (const line of prompt.split("\n").filter(Boolean))
        expect(sent).toContain(JSON.stringify(line).slice(1, -1));
    });

    it("a line a person types into the pane becomes a turn of its own, recorded like a sent one", async () => {
      expect(first, "needs the first test's child").toBeDefined();
      const before = completions(first!.dir).length;
      await tmux("send-keys", "-t", first!.paneId, "-l", "typed by a person");
      // A person's pause before Enter: Gemini CLI reads an Enter within 30 ms of a key as part of a paste.
      await sleep(200);
      await tmux("send-keys", "-t", first!.paneId, "Enter");
      const done = await until(() => completions(first!.dir)[before], 60_000, 200);
      expect(done.status).toBe("completed");
      const started = readEvents(first!.dir).find(
        (e) => e.type === "turn_started" && e.turnId === done.turnId,
      );
      expect(started?.source).toBe("typed");
      expect(fs.readFileSync(path.join(first!.dir, started!.promptPath), "utf8")).toBe("typed by a person");
      const res = await sb.run(["result", first!.id, "--turn", done.turnId], { env });
      expect(res.stdout.trim()).toMatch(/^scripted answer \d+$/);
    });

    it("after the tmux server is gone, spawn --resume starts the TUI on the same session", async () => {
      expect(first, "needs the first test's child").toBeDefined();
      await killServerAndWait(sb.socket);
      ep.setScenario("text");
      const before = ep.requests.length;
      const r = await sb.json(
        ["spawn", "--resume", first!.id, "--wait", "--timeout", "120", "and before that?"],
        {
          env,
          timeout: 150_000,
        },
      );
      expect(r.data.results?.[0]?.status, JSON.stringify(r.data)).toBe("completed");
      const sent = lastModelBody(before);
      expect(sent).toContain("and before that?");
      expect(sent).toContain("say hi");
      expect(sent).toContain("typed by a person");
      const all = completions(first!.dir);
      expect(new Set(all.map((e) => e.runnerSessionId)).size).toBe(1);
      // The new process's transcript holds the earlier turns too: only this turn's reply counts for its usage.
      expect(all.at(-1)!.usage.output).toBe(all[0]!.usage.output);
    });

    it("a tool call inside the TUI runs in the child's cwd and is recorded as tool_activity", async () => {
      ep.setScenario("tool");
      const cwd = workDir("tool");
      const s = await sb.json(spawnArgs(cwd, "make the file"), { env });
      expect(s.exitCode, s.stderr).toBe(0);
      const w = await sb.json(["wait", s.data.id, "--timeout", "120"], { env, timeout: 150_000 });
      expect(w.data.results?.[0]?.status, JSON.stringify(w.data)).toBe("completed");
      expect(w.data.results[0].text.trim()).toBe("The file out.txt now says hello.");
      expect(fs.readFileSync(path.join(cwd, "out.txt"), "utf8").trim()).toBe("hello");
      const tools = readEvents(s.data.artifactDir).filter((e) => e.type === "tool_activity");
      expect(tools.map((t) => t.phase)).toEqual(["start", "end"]);
      expect(tools.every((t) => t.turnId === s.data.turnId)).toBe(true);
      expect(tools[0].summary).toContain(TOOL_COMMAND);
      await sb.run(["cancel", s.data.id], { env });
    });

    it("send --mode now interrupts the TUI's turn (Escape) and the follow-up runs on the same TUI", async () => {
      ep.setScenario("slow");
      const before = ep.requests.length;
      const s = await sb.json(spawnArgs(workDir("steer"), "write a long story"), { env });
      expect(s.exitCode, s.stderr).toBe(0);
      await until(() => slowTurnStarted(before), 120_000);
      ep.setScenario("text");
      const r = await waitedJson(sb, ["send", s.data.id, "--mode", "now", "stop; say hi"], env);
      expect(r.data.results?.[0]?.status, JSON.stringify(r.data)).toBe("completed");
      expect(r.data.results[0].text.trim()).toMatch(/^scripted answer \d+$/);
      const [first, second] = completions(s.data.artifactDir);
      expect(first).toMatchObject({ turnId: s.data.turnId, status: "interrupted" });
      expect(second!.status).toBe("completed");
      const starts = readEvents(s.data.artifactDir).filter((e) => e.type === "runner_started");
      expect(new Set(starts.map((e) => e.pid)).size).toBe(1);
      await sb.run(["cancel", s.data.id], { env });
    });

    it("Escape pressed by a person in the pane settles the turn interrupted; the TUI takes the next one", async () => {
      ep.setScenario("slow");
      const before = ep.requests.length;
      const s = await sb.json(spawnArgs(workDir("esc"), "write a long story"), { env });
      expect(s.exitCode, s.stderr).toBe(0);
      await until(() => slowTurnStarted(before), 120_000);
      ep.setScenario("text");
      // Keys apart, as a person presses them (two at once read as Alt+Escape).
      for (const key of opts.escapeKeys ?? ["Escape"]) {
        await tmux("send-keys", "-t", s.data.paneId, key);
        await new Promise((r) => setTimeout(r, 300));
      }
      const first = await until(() => completions(s.data.artifactDir)[0], 30_000, 200);
      expect(first).toMatchObject({
        turnId: s.data.turnId,
        status: "interrupted",
        reason: "interrupted in the pane",
      });
      const r = await sb.json(["send", s.data.id, "--wait", "--timeout", "60", "say hi"], {
        env,
        timeout: 90_000,
      });
      expect(r.data.results?.[0]?.status, JSON.stringify(r.data)).toBe("completed");
      expect(r.data.results[0].text.trim()).toMatch(/^scripted answer \d+$/);
      await sb.run(["cancel", s.data.id], { env });
    });

    it("cancel ends the TUI's process group: no process of the CLI is left", async () => {
      ep.setScenario("slow");
      const before = ep.requests.length;
      const s = await sb.json(spawnArgs(workDir("cancel"), "write a long story"), { env });
      expect(s.exitCode, s.stderr).toBe(0);
      await until(() => slowTurnStarted(before), 120_000);
      const pgid = readEvents(s.data.artifactDir).find((e) => e.type === "runner_started")?.pid as number;
      expect(groupAlive(pgid)).toBe(true);
      const hostPid = readEvents(s.data.artifactDir).find((e) => e.type === "child_started")?.pid as number;
      const others = () =>
        processesWithEnv(`MUSTER_CHILD_ID=${s.data.id}`)
          .filter((p) => p.pid !== hostPid)
          .map((p) => `${p.pid} ${p.cmdline}`);
      expect(others().length).toBeGreaterThan(0);
      const c = await sb.json(["cancel", s.data.id], { env, timeout: 60_000 });
      expect(c.exitCode, c.stderr).toBe(0);
      await until(() => completions(s.data.artifactDir).at(-1)?.status === "cancelled", 30_000);
      await until(() => !groupAlive(pgid), 5_000);
      expect(others()).toEqual([]);
    });

    // Claude Code and Codex: Pi has no trust dialog (registered, not skipped, for those two).
    // Codex asks only for a git repository's folder; Claude Code for any folder it was not told to trust.
    const trust = {
      claude: { text: /Is this a project you created or one you trust/, keys: ["Down", "Enter"] },
      codex: { text: /Trust this folder\?/, keys: ["Enter"] },
    }[cli as string];
    if (trust)
      it("a start-up dialog (workspace trust) is reported as waiting-input with its text until a person answers it", async () => {
        ep.setScenario("text");
        const cwd = workDir("untrusted");
        if (cli === "codex") await execa("git", ["init", "-q", cwd]);
        const s = await sb.json(spawnArgs(cwd, "say hi"), { env });
        expect(s.exitCode, s.stderr).toBe(0);
        const st = await until(
          async () => {
            const x = await sb.json(["status", s.data.id], { env });
            return x.data.live?.state === "waiting-input" ? x.data : undefined;
          },
          60_000,
          500,
        );
        const q = readEvents(s.data.artifactDir).find((e) => e.type === "question");
        expect(st.live.detail, q?.text).toMatch(/^asks: /);
        expect(st.live.detail, q?.text).toMatch(trust.text);
        // A person answers it in the pane: the prompt muster held back is submitted, the question closed.
        for (const key of trust.keys) await tmux("send-keys", "-t", s.data.paneId, key);
        const w = await sb.json(["wait", s.data.id, "--timeout", "60"], { env, timeout: 90_000 });
        expect(w.data.results?.[0]?.status, JSON.stringify(w.data)).toBe("completed");
        expect(w.data.results[0].text.trim()).toMatch(/^scripted answer \d+$/);
        const answered = readEvents(s.data.artifactDir).find((e) => e.type === "answered");
        expect(answered?.requestId).toBe(q?.requestId);
        await sb.json(["cancel", s.data.id], { env, timeout: 60_000 });
      });

    // Claude Code only: Pi has no trust dialog and no permission prompt (registered, not skipped, for Claude).
    if (cli === "claude")
      it("a tool the profile does not pre-approve waits in the TUI as waiting-permission until a person allows it", async () => {
        // A project profile narrows the tools to Read: Bash then asks in the TUI.
        fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
        fs.writeFileSync(
          path.join(sb.cwd, ".muster", "agents", "claude-read.md"),
          "---\ndescription: read-only claude in its TUI\nrunner: claude\nmode: tui\ntools: [Read]\n---\n",
        );
        // The model runs `muster ask …` in the shell: not an edit, so Claude Code asks before running it.
        ep.setScenario("ask");
        const cwd = workDir("ask");
        const s = await sb.json(
          [
            "spawn",
            "--agent",
            "claude-read",
            "--model",
            TEST_MODELS.claude as string,
            "--cwd",
            cwd,
            "pick a color",
          ],
          { env },
        );
        expect(s.exitCode, s.stderr).toBe(0);
        const st = await until(
          async () => {
            const x = await sb.json(["status", s.data.id], { env });
            return x.data.live?.state === "waiting-permission" ? x.data : undefined;
          },
          60_000,
          500,
        );
        expect(st.live.detail).toContain("Bash");
        expect(st.live.detail).toContain("muster ask");
        // The person allows it (the first choice, "Yes"); the command then asks the parent, who answers.
        await tmux("send-keys", "-t", s.data.paneId, "Enter");
        const q = await until(
          () =>
            readEvents(s.data.artifactDir).find((e) => e.type === "question" && e.text === "Which color?"),
          60_000,
          200,
        );
        expect((await sb.run(["answer", q.requestId, "teal"], { env })).exitCode).toBe(0);
        const w = await sb.json(["wait", s.data.id, "--timeout", "60"], { env, timeout: 90_000 });
        expect(w.data.results?.[0]?.status, JSON.stringify(w.data)).toBe("completed");
        expect(w.data.results[0].text).toContain("PARENT SAID:");
        expect(w.data.results[0].text).toContain("teal");
        const perms = readEvents(s.data.artifactDir).filter((e) => e.type === "permission");
        expect(perms.map((p) => `${p.state}:${p.tool}`)).toEqual(["pending:Bash", "granted:Bash"]);
        await sb.json(["cancel", s.data.id], { env, timeout: 60_000 });
      });

    // Codex only: its sandbox-escalation prompt (Pi asks nothing; Claude Code's prompt is checked above).
    if (cli === "codex")
      it("a command codex asks to run outside its sandbox waits as waiting-permission until a person allows it", async () => {
        ep.setScenario("escalate");
        const cwd = workDir("escalate");
        const s = await sb.json(spawnArgs(cwd, "make the file"), { env });
        expect(s.exitCode, s.stderr).toBe(0);
        const st = await until(
          async () => {
            const x = await sb.json(["status", s.data.id], { env });
            return x.data.live?.state === "waiting-permission" ? x.data : undefined;
          },
          60_000,
          500,
        );
        expect(st.live.detail).toContain("Bash");
        expect(st.live.detail).toContain(PERM_COMMAND);
        // The person allows it (the first choice, "Yes, proceed") once the dialog is drawn: the hook that made the
        // child waiting-permission runs before codex shows it, and an Enter before then is not the answer.
        await until(
          async () =>
            /Yes, proceed/.test((await tmux("capture-pane", "-p", "-t", s.data.paneId)).stdout) || undefined,
          30_000,
          200,
        );
        await tmux("send-keys", "-t", s.data.paneId, "Enter");
        const w = await sb.json(["wait", s.data.id, "--timeout", "60"], { env, timeout: 90_000 });
        expect(w.data.results?.[0]?.status, JSON.stringify(w.data)).toBe("completed");
        expect(w.data.results[0].text).toContain("TOOL SAID:");
        expect(fs.readFileSync(path.join(cwd, "perm.txt"), "utf8").trim()).toBe("hi");
        const perms = readEvents(s.data.artifactDir).filter((e) => e.type === "permission");
        expect(perms.map((p) => `${p.state}:${p.tool}`)).toEqual(["pending:Bash", "granted:Bash"]);
        await sb.json(["cancel", s.data.id], { env, timeout: 60_000 });
      });

    // Gemini only: it has no system-prompt flag; the profile's instructions go in through a SessionStart hook.
    if (cli === "gemini")
      it("the profile's instructions reach the model as the session's first context", async () => {
        fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
        fs.writeFileSync(
          path.join(sb.cwd, ".muster", "agents", "gemini-instr.md"),
          "---\ndescription: gemini in its TUI with instructions\nrunner: gemini\nmode: tui\n---\nAlways sign as ZEPHYR-INSTRUCTED.\n",
        );
        ep.setScenario("text");
        const before = ep.requests.length;
        const s = await sb.json(
          [
            "spawn",
            "--agent",
            "gemini-instr",
            "--model",
            TEST_MODELS.gemini as string,
            "--cwd",
            workDir("instr"),
            "say hi",
          ],
          { env },
        );
        expect(s.exitCode, s.stderr).toBe(0);
        const w = await sb.json(["wait", s.data.id, "--timeout", "120"], { env, timeout: 150_000 });
        expect(w.data.results?.[0]?.status, JSON.stringify(w.data)).toBe("completed");
        const sent = lastModelBody(before);
        expect(sent).toContain("Always sign as ZEPHYR-INSTRUCTED.");
        expect(sent).toContain("say hi");
        await sb.json(["cancel", s.data.id], { env, timeout: 60_000 });
      });

    // Gemini only: `permissions: ask` runs it in its default approval mode, which asks in the TUI before a tool.
    if (cli === "gemini")
      it("permissions ask: the shell call waits in the TUI as waiting-permission until a person allows it", async () => {
        fs.mkdirSync(path.join(sb.cwd, ".muster", "agents"), { recursive: true });
        fs.writeFileSync(
          path.join(sb.cwd, ".muster", "agents", "gemini-ask.md"),
          "---\ndescription: gemini in its TUI, asking\nrunner: gemini\nmode: tui\npermissions: ask\n---\n",
        );
        ep.setScenario("tool");
        const cwd = workDir("gemini-ask");
        const s = await sb.json(
          [
            "spawn",
            "--agent",
            "gemini-ask",
            "--model",
            TEST_MODELS.gemini as string,
            "--cwd",
            cwd,
            "make the file",
          ],
          { env },
        );
        expect(s.exitCode, s.stderr).toBe(0);
        const st = await until(
          async () => {
            const x = await sb.json(["status", s.data.id], { env });
            return x.data.live?.state === "waiting-permission" ? x.data : undefined;
          },
          60_000,
          500,
        );
        expect(st.live.detail).toContain("run_shell_command");
        expect(fs.existsSync(path.join(cwd, "out.txt"))).toBe(false);
        // The person allows it (the first choice, "Allow once") once the dialog is drawn: the notification hook
        // that made the child waiting-permission may come before it, and an Enter before then is not the answer.
        await until(
          async () =>
            /Allow once/.test((await tmux("capture-pane", "-p", "-t", s.data.paneId)).stdout) || undefined,
          30_000,
          200,
        );
        await tmux("send-keys", "-t", s.data.paneId, "Enter");
        const w = await sb.json(["wait", s.data.id, "--timeout", "60"], { env, timeout: 90_000 });
        expect(w.data.results?.[0]?.status, JSON.stringify(w.data)).toBe("completed");
        expect(fs.readFileSync(path.join(cwd, "out.txt"), "utf8").trim()).toBe("hello");
        const perms = readEvents(s.data.artifactDir).filter((e) => e.type === "permission");
        expect(perms.map((p) => `${p.state}:${p.tool}`)).toEqual([
          "pending:run_shell_command",
          "granted:run_shell_command",
        ]);
        await sb.json(["cancel", s.data.id], { env, timeout: 60_000 });
      });

    // Gemini only: it skips a settings file in a folder others may write to, so muster's hooks never load.
    if (cli === "gemini")
      it("a settings folder gemini refuses (under /tmp) is reported as waiting-input with gemini's warning", async () => {
        ep.setScenario("text");
        const home = fs.mkdtempSync(path.join("/tmp", "mt-tui-gemini-insecure-"));
        const insecure = { ...env, MUSTER_HOME: home };
        try {
          const s = await sb.json(spawnArgs(workDir("insecure"), "say hi"), { env: insecure });
          expect(s.exitCode, s.stderr).toBe(0);
          const st = await until(
            async () => {
              const x = await sb.json(["status", s.data.id], { env: insecure });
              return x.data.live?.state === "waiting-input" ? x.data : undefined;
            },
            60_000,
            500,
          );
          expect(st.live.detail).toMatch(/^asks: .*Security Warning: Skipping system settings file/);
          await sb.json(["cancel", s.data.id], { env: insecure, timeout: 60_000 });
          await until(() => completions(s.data.artifactDir).at(-1)?.status === "cancelled", 30_000);
        } finally {
          fs.rmSync(home, { recursive: true, force: true });
        }
      });

    it("a quota error from the provider settles the TUI's turn errored with providerError and pauses the tree", async () => {
      ep.setScenario("text");
      ep.failWhen("QUOTA-MARK", "quota");
      // OpenCode retries a 429 itself five times with backoff; the hint makes those retries instant.
      ep.setRetryHint(0);
      try {
        const cwd = workDir("quota");
        const s = await sb.json(spawnArgs(cwd, "QUOTA-MARK hi"), { env });
        expect(s.exitCode, s.stderr).toBe(0);
        const w = await sb.json(["wait", s.data.id, "--timeout", "120"], { env, timeout: 150_000 });
        if (cli === "gemini") {
          // Gemini CLI shows a menu first ("Usage limit reached for <model>": … / Stop) that waits for a person:
          // muster chooses Stop, so the run ends with the error in gemini's recording.
          const chose = readEvents(s.data.artifactDir).find(
            (e) => e.type === "progress" && /muster chose "Stop/.test(String(e.text)),
          );
          expect(chose?.text).toMatch(
            /^the agent's TUI asked "Usage limit reached for .+": muster chose "Stop/,
          );
        }
        const r = w.data.results?.[0];
        if (r?.providerError?.kind !== "quota") {
          // What the TUI showed and what its hooks said: the clue when the error was not read.
          const screen = (await tmux("capture-pane", "-p", "-t", s.data.paneId).catch(() => ({ stdout: "" })))
            .stdout;
          const hooksFile = path.join(s.data.artifactDir, "runner", "tui-hooks.ndjson");
          const hooks = fs.existsSync(hooksFile) ? fs.readFileSync(hooksFile, "utf8").slice(-4000) : "";
          throw new Error(`no quota error: ${JSON.stringify(w.data)}\nhooks:\n${hooks}\nscreen:\n${screen}`);
        }
        expect(r.status).toBe("errored");
        expect(completions(s.data.artifactDir).at(-1)!.providerError.kind).toBe("quota");
        // The tree pauses: a sibling spawned now is held, shown as paused, until resume-tree.
        const st = await sb.json(["status", s.data.id], { env });
        expect(st.data.treePaused).toMatchObject({ kind: "quota", child: s.data.id });
        const sib = await siblingHeldUntilResume(sb, env);
        // Gone again: the checks after this one count this tree's children by agent.
        expect((await sb.run(["rm", sib], { env })).exitCode).toBe(0);
        // The TUI that failed takes the next turn once the provider answers again.
        ep.clearFailures();
        const next = await waitedJson(sb, ["send", s.data.id, "say hi"], env);
        expect(next.data.results?.[0]?.status, JSON.stringify(next.data)).toBe("completed");
        await sb.run(["cancel", s.data.id], { env });
      } finally {
        ep.clearFailures();
        ep.setRetryHint(undefined);
        await sb.run(["resume-tree"], { env });
      }
    });

    it("mode tui on a runner without a TUI is refused in one line, creating nothing", async () => {
      const r = await sb.run(["spawn", "--tui", "--agent", "mock", "hi"], { env });
      expect(r.exitCode).not.toBe(0);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(/has no TUI mode/);
      const ls = await sb.json(["ls", "--all"], { env });
      expect(JSON.stringify(ls.data)).not.toContain('"agent":"mock"');
    });
  });
}
