import { defineCliChecks } from "./checks.js";

defineCliChecks({ name: "gemini", errorMessage: /500|scripted upstream failure/ });
