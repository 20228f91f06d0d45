import { definePermissionChecks } from "./permission-checks.js";

definePermissionChecks("claude");
