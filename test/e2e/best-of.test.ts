/**
 * Best-of-N with real git, tmux on a private socket and real child hosts: `spawn --best-of 3` runs the mock
 * and a command-runner candidate (test/fixtures/candidate-agent.mjs, which writes `<its short id>.txt`) each in
 * a worktree of its own, with a --verify that the mock fails; the group's result, `compare` (table and JSON),
 * `compare --judge` with a fixture judge (test/fixtures/judge-agent.mjs) recording its verdict, `merge` of the
 * winner, and what `rm` does with the losers' branches. Then the refusals, each of which creates nothing.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO, readEvents, until, useSandbox, writeProjectAgent } from "../helpers/cli.js";
import { makeRepo } from "../helpers/git-repo.js";
import { runInBackground, whenStepRunning } from "../helpers/workflow.js";

const sb = useSandbox("mt-best");
const repo = makeRepo(sb.cwd);
const CANDIDATE = path.join(REPO, "test", "fixtures", "candidate-agent.mjs");
const JUDGE = path.join(REPO, "test", "fixtures", "judge-agent.mjs");
// Passes when the candidate changed something in its worktree: the mock only answers, so it fails.
const CHANGED = 'test -n "$(git status --porcelain)"';

const commandAgent = (name: string, argv: string[]) =>
  writeProjectAgent(sb, name, [
    "runner: command",
    "protocol: muster-jsonl",
    `command: ${JSON.stringify([process.execPath, ...argv])}`,
  ]);
commandAgent("writer", [CANDIDATE, "{prompt_file}"]);
commandAgent("judge2", [JUDGE, "{prompt_file}", "2"]);
commandAgent("judge-nobody", [JUDGE, "{prompt_file}", "nobody"]);
commandAgent("judge-prose", [JUDGE, "{prompt_file}", "prose"]);
// The agent profiles are the sandbox's own files, not the project's: git does not see them.
fs.appendFileSync(path.join(sb.cwd, ".git", "info", "exclude"), ".muster/\n");

const branches = (): string[] =>
  repo.git("branch", "--list", "muster/*", "--format=%(refname:short)").split("\n").filter(Boolean).sort();
const childCount = async (): Promise<number> => ((await sb.json(["ls"])).data.children ?? []).length;
/** This primary's completion groups folder (one primary in this sandbox). */
const groupFiles = (): string => {
  const primaries = path.join(sb.home, "primaries");
  return path.join(primaries, fs.readdirSync(primaries)[0]!, "groups");
};
const groupsDir = (): string[] => {
  const primaries = path.join(sb.home, "primaries");
  if (!fs.existsSync(primaries)) return [];
  return fs.readdirSync(primaries).flatMap((p) => {
    const d = path.join(primaries, p, "best-of");
    return fs.existsSync(d) ? fs.readdirSync(d) : [];
  });
};

describe("best-of-N", () => {
  it("refusals: a bad N, --resume/--fork/--group/--name/--isolation none, outside a git repo, an unknown group; nothing is created", async () => {
    const cases: [string[], RegExp][] = [
      [["--best-of", "1"], /--best-of takes a whole number from 2 to 8/],
      [["--best-of", "9"], /--best-of takes a whole number from 2 to 8/],
      [["--best-of", "two"], /--best-of takes a whole number from 2 to 8/],
      [["--agents", "mock"], /--best-of takes a whole number from 2 to 8/],
      [["--best-of", "2", "--resume", "abcd1234"], /--best-of starts new children: no --resume/],
      [["--best-of", "2", "--fork", "abcd1234"], /no --fork/],
      [["--best-of", "2", "--group", "g1"], /makes a completion group of its own: no --group/],
      [["--best-of", "2", "--name", "x1"], /no --name/],
      [["--best-of", "2", "--isolation", "none"], /git worktree of its own: no other --isolation/],
      [["--best-of", "2", "--agent", "mock", "--agents", "mock,writer"], /not both/],
      [["--agents", "mock,,writer"], /--agents has an empty name/],
    ];
    for (const [flags, said] of cases) {
      const r = await sb.run(["spawn", ...flags, "a task"]);
      expect(r.exitCode, flags.join(" ")).toBe(2);
      expect(r.stderr.trim().split("\n"), flags.join(" ")).toHaveLength(1);
      expect(r.stderr).toMatch(said);
    }
    const plain = fs.mkdtempSync(path.join(path.dirname(sb.home), "plain-"));
    const outside = await sb.run(["spawn", "--best-of", "3", "--cwd", plain, "a task"]);
    expect(outside.exitCode).toBe(2);
    expect(outside.stderr).toMatch(/--isolation worktree needs a git checkout/);
    const unknown = await sb.run(["compare", "best-00000000"]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(/no best-of group "best-00000000" here/);
    expect(await childCount()).toBe(0);
    expect(branches()).toEqual([]);
    expect(groupsDir()).toEqual([]);
  });

  it("without --wait: the group and candidates at once; compare shows them running; a judge is refused until they settle", async () => {
    const before = await childCount();
    const r = await sb.json(["spawn", "--best-of", "2", "a slow task\nmock: sleep=30"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const group = r.data.group as string;
    expect(r.data.children).toHaveLength(2);
    const view = (await sb.json(["compare", group])).data;
    expect(view.settled).toBe(false);
    for (const c of view.children) expect(["queued", "starting", "running"]).toContain(c.status);
    const judge = await sb.run(["compare", group, "--judge", "judge2"]);
    expect(judge.exitCode).toBe(2);
    expect(judge.stderr).toContain(`candidates 1, 2 of ${group} have not settled yet`);
    expect(judge.stderr).toMatch(/muster wait [0-9a-f]{8} [0-9a-f]{8}/);
    expect(await childCount()).toBe(before + 2);
    const ids = r.data.children.map((c: { id: string }) => c.id);
    expect((await sb.run(["rm", "--force", ...ids])).exitCode).toBe(0);
    expect(await childCount()).toBe(before);
  });

  it("a failed candidate's spawn undoes the whole run: no child, worktree, branch, group or record", async () => {
    const records = groupsDir();
    const groups = fs.readdirSync(groupFiles()).sort();
    // The third candidate's agent does not exist: the first two were already made.
    const r = await sb.run(["spawn", "--agents", "mock,writer,no-such-agent", "a task"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/no-such-agent/);
    expect(await childCount()).toBe(0);
    expect(branches()).toEqual([]);
    expect(groupsDir()).toEqual(records);
    expect(fs.readdirSync(groupFiles()).sort()).toEqual(groups);
    expect(fs.readdirSync(path.join(sb.home, "worktrees"))).toEqual([]);
  });

  it("best-of-3: group result, compare, a judge's verdict, merge of the winner, and the losers' branches", async () => {
    const r = await sb.json([
      "spawn",
      "--best-of",
      "3",
      "--agents",
      "mock,writer",
      "--verify",
      CHANGED,
      "--wait",
      "add a file of your own",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const group = r.data.group as string;
    expect(group).toMatch(/^best-[0-9a-f]{8}$/);
    expect(r.data.children.map((c: { agent: string }) => c.agent)).toEqual(["mock", "writer", "mock"]);
    expect(r.data.children.map((c: { name: string }) => c.name)).toEqual(
      [1, 2, 3].map((n) => `${group}-${n}`),
    );
    const [c1, c2, c3] = r.data.children as { id: string; branch: string }[];
    expect(c2!.branch).toBe(`muster/${group}-2`);
    // The group's result, in the run's order: who passed its check, the diff stat, usage and duration.
    const res = r.data.results;
    expect(res.map((x: { id: string }) => x.id)).toEqual([c1!.id, c2!.id, c3!.id]);
    expect(res.map((x: { status: string }) => x.status)).toEqual([
      "failed_verification",
      "completed",
      "failed_verification",
    ]);
    expect(res[0].verified).toMatchObject({ exitCode: 1, attempts: 1 });
    expect(res[1].verified).toMatchObject({ exitCode: 0 });
    expect(res[1].isolation.diffStat).toMatch(/1 file changed, 1 insertion/);
    expect(res[0].usage).toBeDefined();
    for (const x of res) expect(typeof x.durationMs).toBe("number");
    // One group, delivered once: nothing of it is left in the inbox.
    const inbox = (await sb.json(["inbox"])).data;
    expect(inbox.records).toEqual([]);
    expect(inbox.waitingGroups.filter((g: { groupId: string }) => g.groupId === group)).toEqual([]);

    // compare: the table, then the same as JSON.
    const table = await sb.run(["compare", group]);
    expect(table.exitCode, table.stderr).toBe(0);
    const rows = table.stdout.split("\n");
    expect(rows[1]).toMatch(
      /^#\s+ID\s+AGENT\s+STATUS\s+VERIFY\s+BRANCH\s+FILES\s+\+\/-\s+TOKENS\s+COST\s+DURATION/,
    );
    const row = (n: number) => rows.find((l) => l.startsWith(` ${n} `) || l.startsWith(`*${n} `)) ?? "";
    expect(row(1)).toMatch(
      new RegExp(
        `${c1!.id.slice(-8)}\\s+mock\\s+failed_verification\\s+failed exit 1\\s+muster/${group}-1\\s+0\\s+\\+0 -0`,
      ),
    );
    expect(row(2)).toMatch(
      new RegExp(`${c2!.id.slice(-8)}\\s+writer\\s+completed\\s+passed\\s+muster/${group}-2\\s+1\\s+\\+1 -0`),
    );
    expect(table.stdout).toContain(`muster compare ${group} --judge <agent>`);
    const view = (await sb.json(["compare", group])).data;
    expect(view).toMatchObject({ group, task: "add a file of your own", settled: true, verify: CHANGED });
    expect(view.children[1]).toMatchObject({
      n: 2,
      agent: "writer",
      status: "completed",
      diff: { files: 1, insertions: 1, deletions: 0, commits: 0, uncommitted: true },
    });
    expect(view.verdict).toBeUndefined();

    // A judge that names no candidate: one clear error, exit 1, nothing recorded.
    const nobody = await sb.run(["compare", group, "--judge", "judge-nobody"]);
    expect(nobody.exitCode).toBe(1);
    expect(nobody.stderr).toMatch(
      /no verdict recorded: the judge named no candidate, also after one correction: "42" names none of the candidates \(1, 2, 3\)/,
    );
    expect((await sb.json(["compare", group])).data.verdict).toBeUndefined();

    // A judge that answers prose first is corrected once, then picks 2; the verdict is recorded.
    const judged = await sb.json(["compare", group, "--judge", "judge-prose"]);
    expect(judged.exitCode, judged.stderr).toBe(0);
    expect(judged.data.verdict).toMatchObject({ winner: c2!.id, n: 2, judgeAgent: "judge-prose" });
    expect(judged.data.verdict.reasoning).toBe(
      "saw 3 candidates; number 2 passed its check with the smallest diff",
    );
    const judgeId = judged.data.verdict.judge as string;
    // The judge saw the task, every candidate, its check and its diff; it worked in the checkout, not a worktree.
    const judgeView = (await sb.json(["status", judgeId])).data;
    expect(judgeView.cwd).toBe(sb.cwd);
    expect(judgeView.status).toBe("closed");
    const prompts = path.join(judgeView.artifactDir, "prompts");
    const asked = fs.readFileSync(path.join(prompts, fs.readdirSync(prompts).sort()[0]!), "utf8");
    expect(asked).toContain("add a file of your own");
    expect(asked).toContain(`## Candidate 2 (id ${c2!.id}, agent writer, branch muster/${group}-2)`);
    expect(asked).toContain(`+++ b/${c2!.id.slice(-8)}.txt`);
    expect(asked).toMatch(/acceptance check `test -n .*`: failed \(exit 1\)/);
    expect(readEvents(judgeView.artifactDir).filter((e) => e.type === "turn_started")).toHaveLength(2);

    // compare afterwards shows the recorded verdict (a new process reads it from the run's record).
    const after = await sb.run(["compare", group]);
    expect(after.stdout).toMatch(new RegExp(`^\\*2\\s+${c2!.id.slice(-8)}`, "m"));
    expect(after.stdout).toContain(`verdict: candidate 2 (${c2!.id.slice(-8)}), judged by judge-prose`);
    expect(after.stdout).toContain(`take it: muster merge ${c2!.id.slice(-8)}`);

    // merge takes the winner: its file comes into the checkout; the losers' branches stay.
    const merged = await sb.json(["merge", c2!.id]);
    expect(merged.exitCode, merged.stderr).toBe(0);
    expect(fs.readFileSync(path.join(sb.cwd, `${c2!.id.slice(-8)}.txt`), "utf8")).toBe(
      "add a file of your own\n",
    );
    expect(branches()).toEqual([1, 2, 3].map((n) => `muster/${group}-${n}`));
  });

  it("rm of a loser removes its worktree; its branch goes when it holds nothing unmerged, else it is kept", async () => {
    const r = await sb.json(["spawn", "--agents", "writer,mock", "--wait", "another file"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const group = r.data.group as string;
    const [w, mk] = r.data.children as { id: string; branch: string }[];
    expect(branches()).toEqual(expect.arrayContaining([w!.branch, mk!.branch]));
    const gone = await sb.json(["rm", w!.id, mk!.id]);
    expect(gone.exitCode, gone.stderr).toBe(0);
    const fate = Object.fromEntries(
      gone.data.removed.map((x: { id: string; branch: { kept: boolean } }) => [x.id, x.branch.kept]),
    );
    // The writer's file is work not merged anywhere: its branch stays (git branch -D drops it); the mock's had none.
    expect(fate).toEqual({ [w!.id]: true, [mk!.id]: false });
    expect(branches()).toContain(w!.branch);
    expect(branches()).not.toContain(mk!.branch);
    const view = (await sb.json(["compare", group])).data;
    expect(
      view.children.map((c: { status: string; branchKept: boolean }) => [c.status, c.branchKept]),
    ).toEqual([
      ["removed", true],
      ["removed", false],
    ]);
    const judge = await sb.run(["compare", group, "--judge", "judge2"]);
    expect(judge.exitCode).toBe(2);
    expect(judge.stderr).toMatch(/every candidate of best-[0-9a-f]{8} was removed: nothing to judge/);

    // gc forgets a run none of whose children is left (children recent or not: none of those is removed here).
    const runs = () => groupsDir().sort();
    const before = runs();
    expect(before).toContain(`${group}.json`);
    const gc = await sb.json(["gc", "--older-than", "100d"]);
    expect(gc.exitCode, gc.stderr).toBe(0);
    expect(gc.data.removed).toEqual([]);
    expect(runs()).not.toContain(`${group}.json`);
    expect(gc.data.bestOfRemoved).toBe(before.length - runs().length);
    // Runs with a child left stay.
    expect(runs().length).toBeGreaterThan(0);
    const forgotten = await sb.run(["compare", group]);
    expect(forgotten.exitCode).not.toBe(0);
    expect(forgotten.stderr).toMatch(/no best-of group/);
  });
  it("a workflow's best-of step: the judge's winner's answer goes to the next step; without a judge, each completed one's, labelled", async () => {
    const flow = (name: string, judge: string) =>
      [
        `name = "${name}"`,
        "[[steps]]",
        'id = "impl"',
        'agents = ["mock", "writer"]',
        judge,
        'prompt = "add a file of your own"',
        "[[steps]]",
        'id = "review"',
        'agent = "mock"',
        'prompt = "review it"',
        'needs = ["impl"]',
        "",
      ].join("\n");
    const file = path.join(sb.cwd, "..", "judged.toml");
    fs.writeFileSync(file, flow("judged", 'judge = "judge2"'));
    const r = await sb.json(["workflow", "run", file], { timeout: 90_000 });
    expect(r.exitCode, r.stderr).toBe(0);
    const impl = r.data.steps.find((x: { id: string }) => x.id === "impl");
    expect(impl.status).toBe("completed");
    // The judge picked candidate 2 (the writer): the step's child is the winner, and its answer is handed on.
    const won = await sb.json(["result", impl.childId]);
    expect(won.data.agent).toBe("writer");
    const wrote = won.data.text as string;
    expect(wrote).toMatch(/^wrote [0-9a-f]{8}\.txt$/);
    const review = r.data.steps.find((x: { id: string }) => x.id === "review");
    const seen = (await sb.json(["result", review.childId])).data.text as string;
    const handed = `review it\n\n## Output of step "impl"\n\n${wrote}\n`;
    expect(seen).toContain(`prompt-sha256: ${createHash("sha256").update(handed).digest("hex")}`);

    // Without a judge: both candidates completed, and both answers go on, labelled with their agent and id.
    fs.writeFileSync(file, flow("unjudged", ""));
    const u = await sb.json(["workflow", "run", file], { timeout: 90_000 });
    expect(u.exitCode, u.stderr).toBe(0);
    const out = fs.readFileSync(path.join(u.data.dir, "outputs", "impl.md"), "utf8");
    expect(out).toMatch(/^## Candidate 1 \(mock, [0-9a-f]{8}\)\n\n# mock answer/);
    expect(out).toMatch(/\n\n## Candidate 2 \(writer, [0-9a-f]{8}\)\n\nwrote [0-9a-f]{8}\.txt$/);

    // What cannot go with a best-of step is refused before anything starts.
    fs.writeFileSync(file, flow("bad", 'judge = "judge2"\nagent = "mock"'));
    const bad = await sb.run(["workflow", "run", file]);
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stderr).toContain("give one agent for all the candidates, or a list of agents, not both");
  }, 120_000);
  it("a best-of step left by a killed runner starts again on resume: its old candidates are cancelled, new ones run", async () => {
    const gate = path.join(sb.cwd, "..", "gate-best");
    const file = path.join(sb.cwd, "..", "crashed.toml");
    fs.writeFileSync(
      file,
      `name = "crashed"\n[[steps]]\nid = "impl"\nagent = "mock"\nbest_of = 2\nprompt = "wait for it\\nmock: gate=${encodeURIComponent(gate)}"\n`,
    );
    const runner = runInBackground(sb, file);
    const before = await whenStepRunning(sb, "crashed");
    runner.kill("SIGKILL");
    await runner;
    const dir = path.join(sb.home, "primaries");
    const runDir = path.join(dir, fs.readdirSync(dir)[0]!, "workflows", before.runId);
    const startedSets = () =>
      readEvents(runDir)
        .filter((e) => e.type === "step_started")
        .map((e) => e.candidates as string[]);
    const [old] = startedSets();
    expect(old).toHaveLength(2);
    // The gate opens once the resumed step's candidates have started: an old one still running would pass it too.
    const resumed = sb.json(["workflow", "resume", before.runId], { timeout: 90_000 });
    await until(() => startedSets().length === 2, 30_000);
    fs.writeFileSync(gate, "open");
    const r = await resumed;
    expect(r.exitCode, r.stderr).toBe(0);
    const sets = startedSets();
    expect(sets).toHaveLength(2);
    expect(sets[1]!.some((id) => old!.includes(id))).toBe(false);
    expect(sets[1]).toContain(r.data.steps[0].childId);
    // The old candidates were cancelled, not waited for: their turn did not complete.
    for (const id of old!) {
      const st = (await sb.json(["status", id])).data;
      expect(st.status).toBe("closed");
      expect(st.lastOutcome).toBe("cancelled");
    }
  }, 120_000);
});
