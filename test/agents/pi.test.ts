import { defineCliChecks } from "./checks.js";

defineCliChecks({ name: "pi", streamsText: true, errorMessage: /500 scripted upstream failure/ });
