import { defineAcpAdapterChecks } from "./acp-adapter-checks.js";

// Zed's Claude Code adapter runs the Claude Code its SDK bundles, which refuses to run as root (these
// machines, CI) unless IS_SANDBOX=1; it starts in mode `default`, which asks before every Bash call.
defineAcpAdapterChecks({
  name: "claude-agent-acp",
  base: "claude",
  acpMode: "acceptEdits",
  model: "haiku",
  permScenario: "perm",
  env: { IS_SANDBOX: "1", CLAUDE_CODE_MAX_RETRIES: "0" },
});
