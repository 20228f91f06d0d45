import { defineTuiChecks } from "./tui-checks.js";

defineTuiChecks("codex");
