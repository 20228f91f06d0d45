import { isMusterError } from "../base/errors.js";
import type { Muster } from "../core/muster.js";
import { oneLine } from "./shape.js";
import { workflowsOf } from "./workflow.js";

/** Every discovered workflow is the prompt `workflow:<name>` (clients such as Claude Code offer prompts as slash commands). */
export const PROMPT_PREFIX = "workflow:";

const INPUT = {
  name: "input",
  description: "The workflow input: every step receives it.",
  // Optional: the command alone runs on what the conversation already holds.
  required: false,
};

/** prompts/list: one prompt per discovered workflow (a file that does not parse is left out). */
export async function listPrompts(m: Muster) {
  return {
    prompts: (await workflowsOf(m)).list().workflows.map((w) => ({
      name: `${PROMPT_PREFIX}${w.name}`,
      description: w.description ? oneLine(w.description, 120) : `Run the ${w.name} workflow.`,
      arguments: [INPUT],
    })),
  };
}

/** Why prompts/get cannot answer: a one-line message (the server turns it into a protocol error). */
export class PromptError extends Error {}

/**
 * prompts/get: a user message asking the model to run the workflow with the subagents_workflow tool. The
 * tool (not this prompt) runs it, so the client shows the run's progress and the model gets its results.
 */
export async function getPrompt(m: Muster, name: string, args: Record<string, string> | undefined) {
  if (!name.startsWith(PROMPT_PREFIX)) throw new PromptError(`unknown prompt ${JSON.stringify(name)}`);
  const wf = name.slice(PROMPT_PREFIX.length);
  const workflows = await workflowsOf(m);
  let description: string;
  try {
    if (wf.includes("/") || wf.endsWith(".toml"))
      throw new PromptError(`unknown prompt ${JSON.stringify(name)}`);
    description = workflows.load(wf).description;
  } catch (e) {
    if (isMusterError(e)) throw new PromptError(e.message);
    throw e;
  }
  const input = args?.input ?? "";
  const given = input.trim() !== "";
  const call = JSON.stringify({ name: wf, input: given ? input : "…" });
  const text =
    `Run the muster workflow "${wf}"${description ? ` (${oneLine(description, 200)})` : ""} with the subagents_workflow tool: ${call}` +
    (given
      ? ". Then report its results."
      : ", taking the input from this conversation (ask me if it is not clear). Then report its results.");
  return {
    description: description || `Run the ${wf} workflow.`,
    messages: [{ role: "user" as const, content: { type: "text" as const, text } }],
  };
}
