// Runner acp on the small real ACP agent (test/fixtures/acp-agent.mjs): the session settings it offers
// (config options, or the older modes/models) take the profile's acpMode, --model and --reasoning, or say
// why not; authenticate with the method the child's environment has; a refused session/load falls back to
// a new session carrying muster's transcript.
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { groupAlive } from "../../src/util/process-group.js";
import { REPO, readEvents, until, useSandbox } from "../helpers/cli.js";
import { killServerAndWait } from "../helpers/tmux.js";

const sb = useSandbox("mt-acpc");
const AGENT = path.join(REPO, "test", "fixtures", "acp-agent.mjs");
const agents = path.join(sb.cwd, ".muster", "agents");
fs.mkdirSync(agents, { recursive: true });
const profile = (name: string, fields: string, env: Record<string, string> = {}) =>
  fs.writeFileSync(
    path.join(agents, `${name}.md`),
    [
      "---",
      `description: ${name}`,
      "runner: acp",
      `command: ${JSON.stringify([process.execPath, AGENT])}`,
      ...(Object.keys(env).length ? ["env:", ...Object.entries(env).map(([k, v]) => `  ${k}: "${v}"`)] : []),
      fields,
      "---",
      "Be brief.",
      "",
    ].join("\n"),
  );
profile("acp-config", "acpMode: code", { ACP_FIXTURE_OFFER: "config" });
profile("acp-legacy", "acpMode: yolo", { ACP_FIXTURE_OFFER: "legacy" });
profile("acp-badmode", "acpMode: turbo", { ACP_FIXTURE_OFFER: "config" });
profile("acp-plain", "");
profile("acp-auth", "", { ACP_FIXTURE_AUTH: "1", FIXTURE_API_KEY: "fixture-secret" });
profile("acp-noauth", "", { ACP_FIXTURE_AUTH: "1" });
profile("acp-noload", "", { ACP_FIXTURE_REFUSE_LOAD: "1" });
fs.writeFileSync(path.join(agents, "mock-mode.md"), "---\nrunner: mock\nacpMode: code\n---\n");

/** The fixture's record of one session: its prompts, settings, what was set and how it authenticated. */
const fixtureSession = (text: string) => {
  const id = /of session (\S+) \(pid/.exec(text)?.[1];
  if (!id) throw new Error(`no session in ${JSON.stringify(text)}`);
  return JSON.parse(fs.readFileSync(path.join(sb.cwd, ".acp-fixture", `${id}.json`), "utf8"));
};
const spawnWait = (args: string[]) => sb.json(["spawn", ...args, "--wait", "--timeout", "60"]);

describe("runner acp: session settings the agent offers", () => {
  it("acpMode, --model and --reasoning are set through its config options; status and agents list what it offers", async () => {
    const r = await spawnWait([
      "--agent",
      "acp-config",
      "--model",
      "acp:m-large",
      "--reasoning",
      "high",
      "hi",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const result = r.data.results[0];
    expect(result.status, result.reason).toBe("completed");
    expect(r.data.spawned.warnings).toEqual([]);
    const s = fixtureSession(result.text);
    expect(s.settings).toEqual({ mode: "code", model: "m-large", thought: "high" });
    expect(s.set.sort()).toEqual(["mode=code", "model=m-large", "thought=high"]);
    const id = r.data.spawned.id as string;
    const st = await sb.json(["status", id]);
    expect(st.data.agentSession).toMatchObject({
      modes: ["ask", "code", "yolo"],
      mode: "code",
      models: ["m-small", "m-large"],
      model: "m-large",
      reasoningLevels: ["low", "high"],
      reasoning: "high",
      warnings: [],
    });
    const text = (await sb.run(["status", id])).stdout;
    expect(text).toContain("modes      ask, code (in use), yolo");
    expect(text).toContain("reasoning  low, high (in use)");
    const shown = await sb.run(["agents", "acp-config"]);
    expect(shown.stdout).toMatch(/acpMode\s+code/);
    expect(shown.stdout).toContain(`in child ${id}'s session`);
    expect(shown.stdout).toContain("modes: ask, code (in use), yolo");
    expect((await sb.json(["agents", "acp-config"])).data.offered).toMatchObject({ child: id, mode: "code" });
    await sb.run(["cancel", id]);
  });

  it("the older modes and models take set_mode and set_model; a choice it does not offer is a warning", async () => {
    const r = await spawnWait(["--agent", "acp-legacy", "--model", "m-large", "--reasoning", "high", "hi"]);
    const result = r.data.results[0];
    expect(result.status, result.reason).toBe("completed");
    expect(fixtureSession(result.text).settings).toMatchObject({ mode: "yolo", model: "m-large" });
    const warning = "the agent offers no reasoning choice: --reasoning high is not applied";
    expect(r.data.spawned.warnings).toEqual([warning]);
    expect(r.stderr).toContain(`muster: warning: ${warning}`);
    const id = r.data.spawned.id as string;
    expect(readEvents(result.artifactDir).find((e) => e.type === "agent_session")).toMatchObject({
      modes: ["ask", "code", "yolo"],
      mode: "yolo",
      model: "m-large",
      warnings: [warning],
    });
    expect((await sb.run(["status", id])).stdout).toContain(`warning    ${warning}`);
    // An agent that offers nothing: --model is a warning, not a silent no-op.
    const plain = await spawnWait(["--agent", "acp-plain", "--model", "acp:m-large", "hi"]);
    expect(plain.data.results[0].status).toBe("completed");
    expect(plain.data.spawned.warnings).toEqual([
      "the agent offers no model choice: --model acp:m-large is not applied",
    ]);
    await sb.run(["cancel", id, plain.data.spawned.id]);
  });

  it("an acpMode the agent does not offer errors the turn naming its modes; on another runner it is a spawn warning", async () => {
    const r = await spawnWait(["--agent", "acp-badmode", "hi"]);
    expect(r.data.results[0]).toMatchObject({ status: "errored" });
    expect(r.data.results[0].reason).toContain(
      'acpMode "turbo" is not a mode this agent offers (ask, code, yolo)',
    );
    const m = await spawnWait(["--agent", "mock-mode", "hi"]);
    expect(m.data.spawned.warnings).toEqual([
      'agent "mock-mode": mock opens no ACP session of its own choosing; acpMode is ignored',
    ]);
    await sb.run(["cancel", r.data.spawned.id, m.data.spawned.id]);
  });
});

describe("runner acp: authenticate", () => {
  it("an agent that needs authentication gets the method whose variable the child has", async () => {
    const r = await spawnWait(["--agent", "acp-auth", "hi"]);
    const result = r.data.results[0];
    expect(result.status, result.reason).toBe("completed");
    expect(fixtureSession(result.text).authenticated).toBe("fixture-key");
    await sb.run(["cancel", r.data.spawned.id]);
  });

  it("without that variable the turn errors in one line naming it and the agent's other methods", async () => {
    const r = await spawnWait(["--agent", "acp-noauth", "hi"]);
    expect(r.data.results[0]).toMatchObject({ status: "errored" });
    expect(r.data.results[0].reason).toBe(
      "the agent needs authentication (Authentication required): set FIXTURE_API_KEY in the child's environment (the profile's env); its other methods: Log in with a browser",
    );
    await sb.run(["cancel", r.data.spawned.id]);
  });
});

describe("runner acp: a session/load the agent refuses", () => {
  it("spawn --resume opens a new session whose first prompt carries muster's transcript", async () => {
    const first = await spawnWait(["--agent", "acp-noload", "remember the word tangerine"]);
    expect(first.data.results[0].status).toBe("completed");
    const id = first.data.spawned.id as string;
    const dir = first.data.results[0].artifactDir as string;
    const oldPid = readEvents(dir).find((e) => e.type === "runner_started")!.pid as number;
    await killServerAndWait(sb.socket);
    await until(() => !groupAlive(oldPid), 10_000);
    const r = await sb.json(["spawn", "--resume", id, "--wait", "--timeout", "60", "what was the word?"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const result = r.data.results[0];
    expect(result.status, result.reason).toBe("completed");
    // A new session (turn 1 of it) whose first prompt is the preamble, the conversation so far and the request.
    expect(result.text).toMatch(/^turn 1 of session \S+ \(pid \d+\): what was the word\?$/);
    const said = fixtureSession(result.text).turns[0] as string;
    expect(said).toMatch(
      /^Be brief\.\n\n---\n\nThe conversation so far:\n\nUser:\nremember the word tangerine/,
    );
    expect(said).toContain(first.data.results[0].text);
    expect(said).toMatch(/The new request:\n\nwhat was the word\?$/);
    const pane = await sb.run(["capture", id, "--lines", "200"]);
    expect(pane.stdout).toContain("the agent could not reload its session");
    await sb.run(["cancel", id]);
  });
});
