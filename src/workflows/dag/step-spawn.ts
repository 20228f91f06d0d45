/** What a TOML step's child (or each of a best-of step's candidates) is started with. */
import type { StepSpawn } from "../host.js";
import type { WorkflowStep } from "./toml.js";

/**
 * The prompt a step's child receives: its own prompt, the workflow input, then each dependency's output,
 * labelled and in the order of `needs`.
 */
export function stepPrompt(step: WorkflowStep, input: string, outputs: ReadonlyMap<string, string>): string {
  const parts = [step.prompt];
  if (input.trim() !== "") parts.push(`## Workflow input\n\n${input}`);
  for (const n of step.needs) parts.push(`## Output of step "${n}"\n\n${outputs.get(n) ?? ""}`);
  return `${parts.join("\n\n")}\n`;
}

/** The spawn of a step whose needs have settled: its agent and overrides, and the prompt with their outputs. */
export function stepSpawn(
  step: WorkflowStep,
  input: string,
  outputs: ReadonlyMap<string, string>,
): StepSpawn {
  return {
    agent: step.agent,
    prompt: stepPrompt(step, input, outputs),
    ...(step.model ? { model: step.model } : {}),
    ...(step.reasoning ? { reasoning: step.reasoning } : {}),
    ...(step.on ? { on: step.on } : {}),
    ...(step.container ? { container: step.container } : {}),
    ...(step.restart !== undefined ? { restart: step.restart } : {}),
    ...(step.verify ? { verify: step.verify } : {}),
  };
}
