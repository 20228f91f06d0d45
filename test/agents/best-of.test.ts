/**
 * Best-of-3 across the mock and two real agent CLIs (pi and Claude Code) against the scripted endpoint, in a
 * real git checkout and real tmux: each candidate works in a worktree of its own, the real CLIs run the
 * scripted shell tool there (`echo hello > out.txt`), the mock only answers, so `--verify "test -f out.txt"`
 * fails it; `compare` shows them side by side; Claude Code judges through its own structured output (the
 * endpoint's "structured" scenario), its verdict is recorded, and `merge` takes the winner's out.txt.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain JS fixture
import { cliBinDir, cliCache } from "../../scripts/pinned-clis.mjs";
// @ts-expect-error plain JS fixture
import { prepareCli, TEST_MODELS } from "../fixtures/cli-setup.mjs";
// @ts-expect-error plain JS fixture
import { startEndpoint } from "../fixtures/llm-endpoint.mjs";
import { readEvents, useSandbox, writeProjectAgent } from "../helpers/cli.js";
import { makeRepo } from "../helpers/git-repo.js";
import type { Endpoint } from "./checks.js";

const CLIS = ["pi", "claude"] as const;

describe("best-of-3: mock, pi and claude (real CLIs, scripted endpoint)", { timeout: 240_000 }, () => {
  const sb = useSandbox("mt-best-real");
  const repo = makeRepo(sb.cwd);
  let ep: Endpoint & { setStructured(v: unknown): void };
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    for (const c of CLIS)
      if (!fs.existsSync(path.join(cliBinDir(c), c)))
        throw new Error(
          `${c} is not installed in ${cliCache()}: run node scripts/install-clis.mjs (npm test does this)`,
        );
    ep = await startEndpoint();
    const home = sb.env.HOME as string;
    const tmp = path.join(path.dirname(sb.home), "tmp");
    fs.mkdirSync(tmp, { recursive: true });
    env = {
      ...prepareCli("pi", ep.url, home),
      ...prepareCli("claude", ep.url, home),
      PATH: [...CLIS.map((c) => cliBinDir(c)), sb.env.PATH].join(path.delimiter),
      TMPDIR: tmp,
    };
    // Each candidate's agent with its test model: one --model cannot serve two CLIs.
    for (const c of CLIS) writeProjectAgent(sb, `cand-${c}`, [`runner: ${c}`, `model: ${TEST_MODELS[c]}`]);
    fs.appendFileSync(path.join(sb.cwd, ".git", "info", "exclude"), ".muster/\n");
  });
  afterAll(async () => {
    await ep?.close();
  });

  it("the group's result, compare, a judge's verdict through Claude Code's structured output, merge of the winner", async () => {
    ep.setScenario("tool");
    const r = await sb.json(
      [
        ...["spawn", "--best-of", "3", "--agents", "mock,cand-pi,cand-claude"],
        ...["--verify", "test -f out.txt", "--wait", "--timeout", "150s", "make the file"],
      ],
      { env, timeout: 200_000 },
    );
    const group = r.data.group as string;
    // biome-ignore lint/suspicious/noExplicitAny: parsed CLI output
    const res = r.data.results as Record<string, any>[];
    const said = () => `${JSON.stringify(res?.map((x) => [x.agent, x.status, x.reason]))} ${r.stderr}`;
    expect(r.exitCode, said()).toBe(0);
    expect(
      res.map((x) => [x.agent, x.status]),
      said(),
    ).toEqual([
      ["mock", "failed_verification"],
      ["cand-pi", "completed"],
      ["cand-claude", "completed"],
    ]);
    for (const x of res.slice(1)) {
      expect(x.verified).toMatchObject({ exitCode: 0, attempts: 1 });
      expect(x.isolation.diffStat).toMatch(/out\.txt +\| 1 \+/);
      expect(x.usage.input).toBeGreaterThan(0);
      // The tool ran in the candidate's own worktree, never in the checkout.
      expect(fs.readFileSync(path.join(x.isolation.worktree, "out.txt"), "utf8").trim()).toBe("hello");
    }
    expect(fs.existsSync(path.join(sb.cwd, "out.txt"))).toBe(false);

    const table = await sb.run(["compare", group], { env });
    expect(table.stdout).toMatch(/ 1 +\w{8} +mock +failed_verification +failed exit 1 /);
    expect(table.stdout).toMatch(/ 2 +\w{8} +cand-pi +completed +passed +muster\/best-\w{8}-2 +1 +\+1 -0 /);
    expect(table.stdout).toMatch(
      / 3 +\w{8} +cand-claude +completed +passed +muster\/best-\w{8}-3 +1 +\+1 -0 /,
    );

    ep.setScenario("structured");
    ep.setStructured({ winner: "3", reasoning: "it wrote out.txt and passed its check" });
    const before = ep.requests.length;
    const judged = await sb.json(["compare", group, "--judge", "cand-claude", "--timeout", "120s"], {
      env,
      timeout: 150_000,
    });
    expect(judged.exitCode, judged.stderr).toBe(0);
    const winner = res[2]!.id as string;
    expect(judged.data.verdict).toMatchObject({
      winner,
      n: 3,
      reasoning: "it wrote out.txt and passed its check",
      judgeAgent: "cand-claude",
    });
    // Claude Code was given the verdict's schema (its StructuredOutput tool) and the candidates' diffs.
    const asked = JSON.stringify(ep.requests.slice(before).map((q) => q.body));
    expect(asked).toContain("StructuredOutput");
    expect(asked).toContain("out.txt");
    const judge = (await sb.json(["status", judged.data.verdict.judge], { env })).data;
    expect(readEvents(judge.artifactDir).filter((e) => e.type === "turn_started")).toHaveLength(1);

    const merged = await sb.json(["merge", winner], { env });
    expect(merged.exitCode, merged.stderr).toBe(0);
    expect(fs.readFileSync(path.join(sb.cwd, "out.txt"), "utf8").trim()).toBe("hello");
    expect(
      repo.git("branch", "--list", "muster/*", "--format=%(refname:short)").trim().split("\n"),
    ).toHaveLength(3);
    await sb.run(["cancel", "--all"], { env });
  });
});
