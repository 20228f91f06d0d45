import { describe, expect, it } from "vitest";
import { bestOfConflict } from "../../src/core/best-of.js";
import { type CompareRow, type CompareView, statTotals } from "../../src/core/compare.js";
import { candidateNamed, cutText, judgePrompt, readVerdict } from "../../src/core/judge-prompt.js";

const row = (n: number, id: string, extra: Partial<CompareRow> = {}): CompareRow => ({
  n,
  id,
  agent: "mock",
  branch: `muster/best-x-${n}`,
  status: "completed",
  settled: true,
  ...extra,
});
const A = "01a24d27-225b-7000-b2be-839a94014d38";
const B = "01a24d27-237d-7000-8314-748e6890991d";
const C = "01a24d27-2455-7000-859c-0f460cc6512e";
const view: CompareView = {
  group: "best-x",
  task: "do it",
  repo: "/r",
  createdAt: "",
  settled: true,
  children: [row(1, A), row(2, B, { name: "best-x-2" }), row(3, C, { status: "removed" })],
};

describe("best-of: what a run takes", () => {
  it("N from 2 to 8, or one per agent; the refused combinations", () => {
    expect(bestOfConflict({ n: 3 })).toBeUndefined();
    expect(bestOfConflict({ agents: ["a", "b"] })).toBeUndefined();
    expect(bestOfConflict({ n: 5, agents: ["a", "b"] })).toBeUndefined();
    expect(bestOfConflict({ n: 1 })).toBe("count");
    expect(bestOfConflict({ n: 9 })).toBe("count");
    expect(bestOfConflict({ n: 2.5 })).toBe("count");
    expect(bestOfConflict({ agents: ["a"] })).toBe("count");
    expect(bestOfConflict({})).toBe("no_count");
    expect(bestOfConflict({ n: 2, agent: "a", agents: ["a", "b"] })).toBe("agent_and_agents");
    expect(bestOfConflict({ agents: ["a", " "] })).toBe("empty_agent");
    expect(bestOfConflict({ n: 2, isolation: "none" })).toBe("isolation");
    expect(bestOfConflict({ n: 2, isolation: "worktree" })).toBeUndefined();
    expect(bestOfConflict({ n: 2, group: "g" })).toBe("group");
    expect(bestOfConflict({ n: 2, seal: true })).toBe("group");
    expect(bestOfConflict({ n: 2, name: "x" })).toBe("name");
    expect(bestOfConflict({ n: 2, fork: "x" })).toBe("fork");
    expect(bestOfConflict({ n: 2, resume: "x" })).toBe("resume");
  });

  it("the totals of a diff stat", () => {
    expect(statTotals(" a | 2 +-\n b | 1 +\n 2 files changed, 2 insertions(+), 1 deletion(-)")).toEqual({
      files: 2,
      insertions: 2,
      deletions: 1,
    });
    expect(statTotals(" a | 3 ---\n 1 file changed, 3 deletions(-)")).toEqual({
      files: 1,
      insertions: 0,
      deletions: 3,
    });
    expect(statTotals("")).toEqual({ files: 0, insertions: 0, deletions: 0 });
  });
});

describe("best-of: the judge", () => {
  it("names a candidate by number, id, short id, name or unique prefix; never a removed one", () => {
    expect(candidateNamed("2", view.children)?.id).toBe(B);
    expect(candidateNamed("#1", view.children)?.id).toBe(A);
    expect(candidateNamed("Candidate 2", view.children)?.id).toBe(B);
    expect(candidateNamed(A, view.children)?.id).toBe(A);
    expect(candidateNamed("6890991d", view.children)?.id).toBe(B);
    expect(candidateNamed("best-x-2", view.children)?.id).toBe(B);
    expect(candidateNamed("01a24d27-237d", view.children)?.id).toBe(B);
    expect(candidateNamed("01a24d27", view.children)).toBeUndefined();
    expect(candidateNamed("3", view.children)).toBeUndefined();
    expect(candidateNamed(C, view.children)).toBeUndefined();
    expect(candidateNamed("4", view.children)).toBeUndefined();
  });

  it("reads the verdict from a fenced block or a bare object, and says why an answer names nobody", () => {
    const ok = readVerdict('Mine:\n```json\n{"winner": 2, "reasoning": "tests pass"}\n```', view);
    expect(ok).toMatchObject({ ok: true, reasoning: "tests pass" });
    expect(ok.ok && ok.row.id).toBe(B);
    expect(readVerdict('{"winner": "1", "reasoning": "r"}', view).ok).toBe(true);
    expect(readVerdict("the second one", view)).toMatchObject({ ok: false });
    expect(readVerdict('{"winner": "2"}', view)).toEqual({
      ok: false,
      error: 'the answer has no "reasoning"',
    });
    expect(readVerdict('{"reasoning": "r"}', view)).toEqual({
      ok: false,
      error: 'the answer has no "winner"',
    });
    expect(readVerdict('{"winner": "7", "reasoning": "r"}', view)).toEqual({
      ok: false,
      error: '"7" names none of the candidates (1, 2)',
    });
  });

  it("the prompt holds the task, each candidate's outcome, check and bounded diff", () => {
    const failing = row(1, A, {
      status: "failed_verification",
      verified: { command: "npm test", exitCode: 1, durationMs: 5, outputTail: "1 failing\n", attempts: 1 },
    });
    const big = `${"+x\n".repeat(20_000)}`;
    const p = judgePrompt(
      { ...view, children: [failing, view.children[1]!, view.children[2]!] },
      new Map([[A, big]]),
    );
    expect(p).toContain("## The task\n\ndo it");
    expect(p).toContain(`## Candidate 1 (id ${A}, agent mock, branch muster/best-x-1)`);
    expect(p).toContain("acceptance check `npm test`: failed (exit 1); the end of its output:\n1 failing");
    expect(p).toMatch(/\[… cut at 32768 of 60000 bytes\]/);
    expect(p).toContain("## Candidate 2");
    expect(p).toContain("diff: no changes");
    expect(p).toContain("removed before judging: it cannot win");
    expect(p).toContain('{"winner": "<the number of the best candidate, or its id>"');
    expect(cutText("short", 10)).toBe("short");
  });
});
