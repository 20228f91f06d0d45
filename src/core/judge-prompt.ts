/**
 * What a best-of judge is asked and how its answer is read: the prompt (the task, each candidate's outcome,
 * check and bounded diff), the JSON it must answer, and the candidate that answer names. Pure functions.
 */
import { extractJson } from "../util/json-answer.js";
import type { CompareRow, CompareView } from "./compare.js";

/** Each candidate's diff in the prompt is cut here: eight of them stay well inside one prompt. */
export const JUDGE_DIFF_BYTES = 32 * 1024;
const JUDGE_TASK_BYTES = 64 * 1024;

/** The answer asked for; runners that enforce a schema get it (claude --json-schema, codex --output-schema). */
export const VERDICT_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["winner", "reasoning"],
  properties: {
    winner: { type: "string", description: "the winning candidate's number (1, 2, …) or id" },
    reasoning: { type: "string", description: "why it is the best, in a few sentences" },
  },
};

const ASK = [
  "Answer with one JSON object only, in a ```json fenced block:",
  "```json",
  '{"winner": "<the number of the best candidate, or its id>", "reasoning": "<why, in a few sentences>"}',
  "```",
].join("\n");

/** Cut on a line boundary at `max` bytes, saying how much there was. */
export function cutText(text: string, max: number): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= max) return text;
  const head = Buffer.from(text).subarray(0, max).toString("utf8");
  const line = head.lastIndexOf("\n");
  return `${line > 0 ? head.slice(0, line + 1) : head}[… cut at ${max} of ${bytes} bytes]\n`;
}

function checkLine(r: CompareRow): string {
  const v = r.verified;
  if (!v) return "acceptance check: none";
  if (v.exitCode === 0) return `acceptance check \`${v.command}\`: passed`;
  return `acceptance check \`${v.command}\`: failed (${v.exitCode === null ? "killed" : `exit ${v.exitCode}`}); the end of its output:\n${v.outputTail.trimEnd()}`;
}

/** The judge's prompt: the candidates that can win (settled, not removed), each with its diff (see JUDGE_DIFF_BYTES). */
export function judgePrompt(view: CompareView, diffs: ReadonlyMap<string, string>): string {
  const parts = [
    `You are the judge of ${view.children.length} candidate solutions to one task. Each candidate worked on its own git branch, from the same starting point. Read the task, each candidate's outcome, acceptance check and diff, and pick the best one: a change that does the task correctly and passes its check beats one that does not.`,
    "",
    "## The task",
    "",
    cutText(view.task, JUDGE_TASK_BYTES).trimEnd(),
  ];
  for (const r of view.children) {
    parts.push("", `## Candidate ${r.n} (id ${r.id}, agent ${r.agent}, branch ${r.branch})`, "");
    if (r.status === "removed") {
      parts.push("removed before judging: it cannot win");
      continue;
    }
    parts.push(`outcome: ${r.status}`, checkLine(r));
    const diff = diffs.get(r.id) ?? "";
    parts.push(
      diff.trim() === ""
        ? "diff: no changes"
        : `diff:\n\`\`\`\`diff\n${cutText(diff, JUDGE_DIFF_BYTES).trimEnd()}\n\`\`\`\``,
    );
  }
  parts.push("", ASK);
  return `${parts.join("\n")}\n`;
}

/** The corrective turn: what was wrong with the answer, and the same demand again. */
export function judgeCorrection(error: string): string {
  return `Your answer could not be used: ${error}.\n\n${ASK}\n`;
}

/** The candidate a judge's answer names, with its reasoning; or why none. */
export function readVerdict(
  text: string,
  view: CompareView,
): { ok: true; row: CompareRow; reasoning: string } | { ok: false; error: string } {
  const got = extractJson(text);
  if (!got.ok) return { ok: false, error: got.error };
  const v = got.value as { winner?: unknown; reasoning?: unknown } | null;
  if (typeof v !== "object" || v === null || Array.isArray(v))
    return { ok: false, error: 'the answer is not a JSON object {"winner", "reasoning"}' };
  const winner =
    typeof v.winner === "number" ? String(v.winner) : typeof v.winner === "string" ? v.winner.trim() : "";
  if (winner === "") return { ok: false, error: 'the answer has no "winner"' };
  if (typeof v.reasoning !== "string" || v.reasoning.trim() === "")
    return { ok: false, error: 'the answer has no "reasoning"' };
  const row = candidateNamed(winner, view.children);
  if (!row)
    return {
      ok: false,
      error: `"${winner.slice(0, 80)}" names none of the candidates (${view.children
        .filter((r) => r.status !== "removed")
        .map((r) => r.n)
        .join(", ")})`,
    };
  return { ok: true, row, reasoning: v.reasoning.trim() };
}

/** A candidate by its number (`2`, `#2`, `candidate 2`), id, short id, unique id prefix or name; removed ones never. */
export function candidateNamed(ref: string, rows: CompareRow[]): CompareRow | undefined {
  const open = rows.filter((r) => r.status !== "removed");
  const num = /^(?:candidate\s*)?#?(\d{1,2})$/i.exec(ref)?.[1];
  if (num !== undefined) return open.find((r) => r.n === Number(num));
  const want = ref.toLowerCase();
  const exact = open.find((r) => r.id === want || r.name === ref || r.id.slice(-8) === want);
  if (exact) return exact;
  const pre = want.length >= 4 ? open.filter((r) => r.id.startsWith(want)) : [];
  return pre.length === 1 ? pre[0] : undefined;
}
