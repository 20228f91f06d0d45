// The sanitizer lives in util so every front end (the CLI, the supervisor TUI) shows child text the same way.
export { visible, visibleLine } from "../util/sanitize.js";
