import { defineCliChecks } from "./checks.js";
import { defineCodexPermissionChecks } from "./codex-permissions.js";
import { defineWorkflowChecks } from "./workflow-checks.js";

// Codex words every upstream 5xx as "high demand"; its retries are bounded in the provider config (cli-setup.mjs).
defineCliChecks({
  name: "codex",
  session: true,
  streamsText: true,
  errorMessage: /experiencing high demand/,
});
defineCodexPermissionChecks();
defineWorkflowChecks("codex");
