// muster workflow run implement-review-loop "<the task>"
// The input is the task, or JSON {"task": "...", "maxIterations": 3}.
// A worker implements; a reviewer answers {approved, comments} (structured); while not approved, the worker
// implements again with the comments — at most maxIterations times (default 3). The result says whether it
// was approved, after how many iterations, and whether the cap stopped it.

export const name = "implement-review-loop";
export const description =
  "Implement, review ({approved, comments}), implement again with the comments, until approved or the iteration cap.";

const VERDICT = {
  description: "approved: true only when nothing must change; comments: each change still needed",
  schema: {
    type: "object",
    required: ["approved", "comments"],
    properties: { approved: { type: "boolean" }, comments: { type: "array", items: { type: "string" } } },
  },
};

/** Plain text is the task; a JSON object gives {task, maxIterations}. */
function args(input) {
  const text = input.trim();
  if (text.startsWith("{")) {
    const a = JSON.parse(text);
    if (typeof a.task !== "string")
      throw new Error('implement-review-loop: the JSON input needs "task" (a string)');
    const cap = a.maxIterations === undefined ? 3 : a.maxIterations;
    if (!Number.isInteger(cap) || cap < 1 || cap > 10)
      throw new Error('implement-review-loop: "maxIterations" must be a whole number from 1 to 10');
    return { task: a.task, cap };
  }
  return { task: input, cap: 3 };
}

const implementPrompt = (task, comments, previous) =>
  previous === undefined
    ? `Implement the task below.\n\n## Task\n\n${task}`
    : `Implement the task below again, addressing every review comment.\n\n## Task\n\n${task}\n\n## Review comments\n\n${comments.map((c) => `- ${c}`).join("\n")}\n\n## Your previous attempt\n\n${previous}`;

export default async (ctx, input) => {
  const { task, cap } = args(input);
  const history = [];
  let comments = [];
  let previous;
  for (let i = 1; i <= cap; i++) {
    ctx.phase(`iteration ${i} of ${cap}`);
    const impl = await ctx
      .agent({ agent: "worker", prompt: implementPrompt(task, comments, previous) })
      .await();
    if (impl.status !== "completed")
      return {
        approved: false,
        iterations: i,
        cap,
        capReached: false,
        stopped: `the implementation ${impl.status}: ${impl.reason ?? ""}`,
        history,
      };
    const review = await ctx
      .agent({
        agent: "reviewer",
        prompt: `Review the implementation below against its task.\n\n## Task\n\n${task}\n\n## Implementation\n\n${impl.text}`,
        output: VERDICT,
      })
      .await();
    if (review.status !== "completed")
      return {
        approved: false,
        iterations: i,
        cap,
        capReached: false,
        stopped: `the review ${review.status}: ${review.reason ?? ""}`,
        history,
      };
    history.push({ iteration: i, implementation: impl.childId, review: review.childId, ...review.output });
    if (review.output.approved)
      return { approved: true, iterations: i, cap, capReached: false, implementation: impl.text, history };
    comments = review.output.comments;
    previous = impl.text;
  }
  ctx.log(`stopped at the iteration cap (${cap}) without approval`);
  return {
    approved: false,
    iterations: cap,
    cap,
    capReached: true,
    implementation: previous,
    comments,
    history,
  };
};
