import type { AgentCli } from "../descriptor.js";
import { aiderRunner } from "./runner.js";

/** Aider: one-shot only (`aider --message-file`). */
export const aider: AgentCli = { runner: aiderRunner };
