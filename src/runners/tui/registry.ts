// The TUI adapters are each CLI's descriptor's (runners/registry.ts); this path stays for its importers.
export { TUI_RUNNERS, tuiAdapter } from "../registry.js";
