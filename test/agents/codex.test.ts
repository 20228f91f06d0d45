import { defineCliChecks } from "./checks.js";
import { defineWorkflowChecks } from "./workflow-checks.js";

// Codex words every upstream 5xx as "high demand"; its retries are bounded in the provider config (cli-setup.mjs).
defineCliChecks({ name: "codex", errorMessage: /experiencing high demand/ });
defineWorkflowChecks("codex");
