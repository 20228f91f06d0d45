import { defineCliChecks } from "./checks.js";

defineCliChecks({ name: "opencode", session: true, errorMessage: /500|scripted upstream failure/ });
