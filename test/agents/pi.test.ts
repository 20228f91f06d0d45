import { defineCliChecks } from "./checks.js";

defineCliChecks({
  name: "pi",
  session: true,
  streamsText: true,
  saysRateLimitReset: true,
  errorMessage: /500 scripted upstream failure/,
});
