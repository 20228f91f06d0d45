import { defineCliChecks } from "./checks.js";

defineCliChecks({
  name: "opencode",
  session: true,
  saysRateLimitReset: true,
  errorMessage: /500|scripted upstream failure/,
});
