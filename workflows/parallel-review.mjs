// muster workflow run parallel-review "<the change to review>"
// The input is the change (a diff, a branch, a description), or JSON {"task": "...", "limit": 4}.
// A scout lists the files to review (a structured answer, {files: [...]}); one reviewer per file runs,
// `limit` at a time; a last step merges their reviews. The fan-out follows the scout's answer.

export const name = "parallel-review";
export const description =
  "A scout lists the files a change touches; one reviewer per file (a few at a time); then one merged review.";

const FILES = {
  description: "the files to review, paths relative to the repository root",
  schema: {
    type: "object",
    required: ["files"],
    properties: { files: { type: "array", items: { type: "string", minLength: 1 }, maxItems: 32 } },
  },
};

/** Plain text is the task; a JSON object gives {task, limit}. */
function args(input) {
  const text = input.trim();
  if (text.startsWith("{")) {
    const a = JSON.parse(text);
    if (typeof a.task !== "string")
      throw new Error('parallel-review: the JSON input needs "task" (a string)');
    const limit = a.limit === undefined ? 4 : a.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > 16)
      throw new Error('parallel-review: "limit" must be a whole number from 1 to 16');
    return { task: a.task, limit };
  }
  return { task: input, limit: 4 };
}

export default async (ctx, input) => {
  const { task, limit } = args(input);
  ctx.phase("scout");
  const scout = await ctx
    .agent({
      agent: "explorer",
      prompt: `List the files a reviewer must read to review the change below: the files it changes, and any file whose behaviour it changes.\n\n## Change\n\n${task}`,
      output: FILES,
    })
    .await();
  if (scout.status !== "completed")
    throw new Error(`the scout ${scout.status}: ${scout.reason ?? (scout.errors ?? []).join("; ")}`);
  const files = [...new Set(scout.output.files)];
  ctx.log(`reviewing ${files.length} file(s), ${limit} at a time`);

  ctx.phase("review");
  const reviews = await ctx.parallel(
    files,
    (file) =>
      ctx
        .agent({
          agent: "reviewer",
          prompt: `Review the change below as it affects ${file}: correctness, regressions, missing tests. Cite file:line.\n\n## Change\n\n${task}`,
        })
        .await(),
    { limit },
  );

  ctx.phase("gather");
  const sections = reviews.map(
    (r, i) =>
      `## Review of ${files[i]}\n\n${r.status === "completed" ? r.text : `(no review: ${r.status}${r.reason ? `, ${r.reason}` : ""})`}`,
  );
  const merged = await ctx
    .agent({
      agent: "reviewer",
      prompt: `Merge the per-file reviews below into one review: findings most severe first, duplicates removed, each with its file:line.\n\n${sections.join("\n\n")}`,
    })
    .await();
  return {
    files,
    reviews: reviews.map((r, i) => ({ file: files[i], status: r.status, childId: r.childId })),
    status: merged.status,
    review: merged.status === "completed" ? merged.text : merged.reason,
  };
};
