import { defineCliChecks } from "./checks.js";

defineCliChecks({ name: "opencode", errorMessage: /500|scripted upstream failure/ });
