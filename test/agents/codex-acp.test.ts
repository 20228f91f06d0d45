import { defineAcpAdapterChecks } from "./acp-adapter-checks.js";

// Zed's Codex adapter starts `read-only`: a command asking to run outside its sandbox waits for the parent
// (a sandboxed one fails here: codex's Linux sandbox cannot start in this container).
defineAcpAdapterChecks({
  name: "codex-acp",
  base: "codex",
  acpMode: "auto",
  model: "gpt-5.4",
  reasoning: "high",
  permScenario: "escalate",
  // Its one refusal option is "abort" (reject_once), which ends the turn with stopReason cancelled.
  refusalEndsTurn: true,
});
