import { defineCliChecks } from "./checks.js";

defineCliChecks({ name: "pi", errorMessage: /500 scripted upstream failure/ });
