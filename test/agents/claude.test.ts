import { defineCliChecks } from "./checks.js";
import { defineWorkflowChecks } from "./workflow-checks.js";

defineCliChecks({
  name: "claude",
  streamsText: true,
  errorMessage: /API Error: 500 scripted upstream failure/,
  // Claude Code retries a 500 ten times with backoff (minutes); one answer is enough to prove the mapping.
  env: { CLAUDE_CODE_MAX_RETRIES: "0" },
});
defineWorkflowChecks("claude");
