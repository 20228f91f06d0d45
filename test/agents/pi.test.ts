import { defineCliChecks } from "./checks.js";

defineCliChecks({
  name: "pi",
  session: true,
  streamsText: true,
  errorMessage: /500 scripted upstream failure/,
});
