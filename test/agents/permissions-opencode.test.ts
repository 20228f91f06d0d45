import { definePermissionChecks } from "./permission-checks.js";

definePermissionChecks("opencode");
