import { defineTuiChecks } from "./tui-checks.js";

defineTuiChecks("opencode", {
  // OpenCode's session ids are `ses_…`.
  sessionId: /^ses_[A-Za-z0-9]+$/,
  // Its TUI interrupts a turn on the second Escape ("esc again to interrupt").
  escapeKeys: ["Escape", "Escape"],
  // A new session's title request offers no tools; the turn's own request does.
  turnRequest: (body) => ((body as { tools?: unknown[] })?.tools?.length ?? 0) > 0,
});
