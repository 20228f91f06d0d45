import { MusterError } from "../base/errors.js";
import type { Runner, TurnInput, TurnPlan } from "./types.js";

/** Substitutes `{prompt}` and `{prompt_file}` inside argv words; without either, the prompt is the last argument. */
export function expandCommand(command: string[], prompt: string, promptFile: string): string[] {
  const uses = command.some((w) => w.includes("{prompt}") || w.includes("{prompt_file}"));
  const argv = command.map((w) => w.replaceAll("{prompt_file}", promptFile).replaceAll("{prompt}", prompt));
  return uses ? argv : [...argv, prompt];
}

/** Any argv; stdout is the answer (`protocol: text`) or muster's JSONL agent protocol. */
export const commandRunner: Runner = {
  name: "command",
  description: "any argv; {prompt} / {prompt_file} placeholders; stdout is the answer",
  // The program is the user's: muster cannot know which models it takes, so any spelling is accepted.
  catalog: { provider: "command", open: true, models: [] },
  // A plain-text tool is stateless; an agent speaking muster's protocol gets the conversation so far.
  resumeMode: (protocol) => (protocol === "muster-jsonl" ? "transcript" : "none"),
  plan(input: TurnInput): TurnPlan {
    if (!input.command || input.command.length === 0) {
      throw new MusterError("invalid_argument", "the command runner needs an argv", {
        next: { action: "give_argv" },
      });
    }
    const protocol = input.protocol ?? "text";
    return {
      argv: expandCommand(input.command, input.prompt, input.promptFile),
      cwd: input.cwd,
      env: input.env,
      protocol,
      // In muster's protocol `result` is the agent's last word (artifacts/README.md).
      settleOnResult: protocol === "muster-jsonl",
    };
  },
};
