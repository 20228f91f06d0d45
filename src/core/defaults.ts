/**
 * Defaults every front end shares (CLI, MCP, library callers), so a call that leaves something out
 * means the same thing wherever it is made.
 */
export { DEFAULT_AGENT, defaultAgent } from "../profiles/defaults.js";

/** How a wait for several children ends when no mode is given: once all of them have settled. */
export const DEFAULT_WAIT_MODE = "all" as const;
