import { defineTuiChecks } from "./tui-checks.js";

// OpenCode's session ids are `ses_…`; its TUI interrupts a turn on the second Escape ("esc again to interrupt").
defineTuiChecks("opencode", { sessionId: /^ses_[A-Za-z0-9]+$/, escapeKeys: ["Escape", "Escape"] });
