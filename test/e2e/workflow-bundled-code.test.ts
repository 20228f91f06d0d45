import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-wfbundled");

/** A mock control line: the child answers `text` (URL-encoded, so it may hold spaces and newlines). */
const reply = (text: string): string => `mock: reply=${encodeURIComponent(text)}`;

/** The prompt a child was given (its first turn's prompt file). */
async function promptOf(childId: string): Promise<string> {
  const dir = path.join((await sb.json(["status", childId])).data.artifactDir, "prompts");
  return fs.readFileSync(path.join(dir, fs.readdirSync(dir).sort()[0]!), "utf8");
}

// biome-ignore lint/suspicious/noExplicitAny: test code reads records loosely
const eventsOf = (dir: string): any[] =>
  fs
    .readFileSync(path.join(dir, "events.ndjson"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("bundled code workflows on the mock agent", () => {
  it("parallel-review: the scout's structured {files} drives one reviewer per file, `limit` at a time, then one merged review", async () => {
    const files = ["src/a.ts", "src/b.ts", "src/c.ts"];
    // Every child sleeps a second, so reviewers overlap when the limit lets them; the scout answers the files.
    const task = `Add rate limiting to the API\nmock: sleep=1 ${reply(JSON.stringify({ files }))}`;
    const r = await sb.json(["workflow", "run", "parallel-review", JSON.stringify({ task, limit: 2 })]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.status).toBe("completed");
    expect(r.data.result.files).toEqual(files);
    expect(r.data.result.reviews.map((x: { file: string; status: string }) => [x.file, x.status])).toEqual(
      files.map((f) => [f, "completed"]),
    );
    // scout, three reviewers, the merge: in that order, with the agents the workflow names.
    expect(r.data.steps.map((a: { id: string; agent: string }) => `${a.id}:${a.agent}`)).toEqual([
      "agent-1:explorer",
      "agent-2:reviewer",
      "agent-3:reviewer",
      "agent-4:reviewer",
      "agent-5:reviewer",
    ]);
    expect(r.data.steps[0].output).toEqual({ files });
    for (const [i, f] of files.entries())
      expect(await promptOf(r.data.steps[i + 1].childId)).toMatch(
        new RegExp(`^Review the change below as it affects ${f.replace(".", "\\.")}:`),
      );
    const merge = await promptOf(r.data.steps[4].childId);
    expect(files.map((f) => merge.indexOf(`## Review of ${f}`))).toEqual(
      [...files.map((f) => merge.indexOf(`## Review of ${f}`))].sort((a, b) => a - b),
    );
    expect(merge.indexOf("## Review of src/a.ts")).toBeGreaterThan(0);
    // The limit held: never more than two reviewers at once, and it was reached.
    let open = 0;
    let most = 0;
    for (const e of eventsOf(r.data.dir)) {
      if (e.type === "step_started" && e.stepId !== "agent-1" && e.stepId !== "agent-5")
        most = Math.max(most, ++open);
      if (e.type === "step_settled" && e.stepId !== "agent-1" && e.stepId !== "agent-5") open--;
    }
    expect(most).toBe(2);
    expect(r.stderr).toMatch(/^muster: phase review$/m);
    expect(r.stderr).toMatch(/reviewing 3 file\(s\), 2 at a time/);

    // A scout whose answer does not fit the schema, even after its corrective turn: the run fails and says why.
    const bad = await sb.run(["workflow", "run", "parallel-review", `Review\n${reply('{"files": 3}')}`]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toMatch(/failed: the scout errored/);
  });

  it("implement-review-loop: a review that never approves stops at the iteration cap, and the result says so", async () => {
    const verdict = { approved: false, comments: ["add tests for the empty case"] };
    const task = `Add a --dry-run flag\n${reply(JSON.stringify(verdict))}`;
    const r = await sb.json([
      "workflow",
      "run",
      "implement-review-loop",
      JSON.stringify({ task, maxIterations: 2 }),
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.result).toMatchObject({ approved: false, iterations: 2, cap: 2, capReached: true });
    expect(r.data.result.comments).toEqual(verdict.comments);
    expect(r.data.steps.map((a: { agent: string }) => a.agent)).toEqual([
      "worker",
      "reviewer",
      "worker",
      "reviewer",
    ]);
    expect(r.stderr).toMatch(/stopped at the iteration cap \(2\) without approval/);
    expect(r.stderr).toMatch(/^muster: phase iteration 2 of 2$/m);
    // The second implementation got the first review's comments.
    expect(await promptOf(r.data.steps[2].childId)).toContain(
      "## Review comments\n\n- add tests for the empty case",
    );
    const bad = await sb.run([
      "workflow",
      "run",
      "implement-review-loop",
      '{"task": "x", "maxIterations": 0}',
    ]);
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toMatch(/"maxIterations" must be a whole number from 1 to 10/);
  });

  it("implement-review-loop: the comments reach the next implementation, whose answer reaches the review; approval ends the loop", async () => {
    // Scripted through the data the workflow passes on, so this only works if it does: review 1 rejects with a
    // comment whose second line scripts implementation 2's answer, and that answer scripts review 2's approval
    // (a later `mock:` line wins over the task's).
    const approve = JSON.stringify({ approved: true, comments: [] });
    const comment = `handle errors\n${reply(`fixed it\n${reply(approve)}`)}`;
    const task = `Parse the config\n${reply(JSON.stringify({ approved: false, comments: [comment] }))}`;
    const r = await sb.json(["workflow", "run", "implement-review-loop", JSON.stringify({ task })]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.data.result).toMatchObject({ approved: true, iterations: 2, cap: 3, capReached: false });
    expect(r.data.result.implementation).toMatch(/^fixed it\n/);
    expect(r.data.result.history.map((h: { approved: boolean }) => h.approved)).toEqual([false, true]);
    expect(r.data.steps).toHaveLength(4);
  });
});
