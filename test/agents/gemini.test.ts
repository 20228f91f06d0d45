import { defineCliChecks } from "./checks.js";

defineCliChecks({ name: "gemini", streamsText: true, errorMessage: /500|scripted upstream failure/ });
