import { MusterError } from "../base/errors.js";
import { acpDriver } from "./acp/driver.js";
import type { AgentCli, SessionProtocol } from "./descriptor.js";
import type { Runner, SessionSpec, TurnInput, TurnPlan } from "./types.js";

/** The Agent Client Protocol over stdio: `runner: acp`, and the session mode of Gemini CLI and OpenCode. */
export const ACP_SESSION: SessionProtocol = { protocol: "acp", driver: acpDriver };

/**
 * Any agent that speaks the Agent Client Protocol over stdio, named by the profile's `command` (e.g.
 * `["gemini", "--acp"]`, an ACP adapter, your own agent). It runs only as a live session: one process for the
 * child's life, each turn a `session/prompt`; a new process reloads the session with `session/load` when the
 * agent offers it (else a new session gets muster's transcript). The profile's `acpMode`, the model and the
 * reasoning level are chosen among what the agent offers for the session.
 */
export const acpRunner: Runner = {
  name: "acp",
  description: "any Agent Client Protocol agent (profile `command`): one process per child, a prompt a turn",
  catalog: { provider: "acp", open: true, models: [] },
  resumeMode: () => "native",
  ignores: ["tools", "disallowedTools", "maxTurns"],
  // Whatever the agent asks (session/request_permission) goes to the parent.
  routesPermissions: true,
  acpModes: true,
  usage: "<command…>   (stdio: ACP JSON-RPC; initialize, session/new|load, session/prompt per turn)",
  plan(): TurnPlan {
    throw new MusterError(
      "unsupported",
      "the acp runner has no one-shot mode: it runs as a live session (drop `mode: oneshot` / MUSTER_RUNNER_MODE)",
    );
  },
  session(input: TurnInput): SessionSpec {
    if (!input.command || input.command.length === 0) {
      throw new MusterError("invalid_argument", "the acp runner needs the agent's argv (profile `command`)", {
        next: { action: "give_argv" },
      });
    }
    return {
      protocol: "acp",
      argv: input.command,
      cwd: input.cwd,
      env: input.env,
      ...(input.runnerSessionId ? { resume: input.runnerSessionId } : {}),
      ...(input.systemPrompt?.trim() ? { preamble: input.systemPrompt.trim() } : {}),
      // Set among what the agent offers once its session is open (a warning when it offers no such choice).
      ...(input.acpMode ? { modeId: input.acpMode } : {}),
      ...(input.model ? { model: input.model } : {}),
      ...(input.reasoning ? { reasoning: input.reasoning } : {}),
    };
  },
};

export const acp: AgentCli = { runner: acpRunner, session: ACP_SESSION };
