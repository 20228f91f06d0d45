import { aiderRunner } from "../clis/aider.js";
import type { AgentCli } from "../descriptor.js";

/** Aider: one-shot only (`aider --message-file`). */
export const aider: AgentCli = { runner: aiderRunner };
