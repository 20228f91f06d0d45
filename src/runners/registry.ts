/**
 * The one list of runners: each agent CLI's descriptor (`<cli>/index.ts`), the built-in `mock` and `command`, and
 * the generic `acp`. The one-shot runners, session drivers, TUI adapters and help-text lists are read from it.
 */
import { acp } from "./acp.js";
import { aider } from "./aider/index.js";
import { claude } from "./claude/index.js";
import { codex } from "./codex/index.js";
import { commandRunner } from "./command.js";
import type { AgentCli } from "./descriptor.js";
import { gemini } from "./gemini/index.js";
import { mockRunner } from "./mock.js";
import { opencode } from "./opencode/index.js";
import { pi } from "./pi/index.js";
import type { TuiAdapter } from "./tui/types.js";
import type { Runner, SessionDriver, SessionIo, SessionSpec } from "./types.js";

// The order is the order `muster agents`, `doctor` and the help texts list them in.
const CLIS: readonly AgentCli[] = [
  { runner: mockRunner },
  { runner: commandRunner },
  claude,
  codex,
  pi,
  opencode,
  gemini,
  aider,
  acp,
];

const BY_NAME: ReadonlyMap<string, AgentCli> = new Map(CLIS.map((c) => [c.runner.name, c]));

export const runnerNames = (): string[] => [...BY_NAME.keys()];

export function getRunner(name: string): Runner | undefined {
  return BY_NAME.get(name)?.runner;
}

/** The driver of a session's protocol (every protocol a runner's `session()` names has one). */
export function sessionDriver(spec: SessionSpec, io: SessionIo): SessionDriver {
  const protocol = CLIS.find((c) => c.session?.protocol === spec.protocol)?.session;
  if (!protocol) throw new Error(`no session driver speaks ${spec.protocol}`);
  return protocol.driver(spec, io);
}

/** The adapter of a runner whose CLI muster can run as its own TUI in the pane (`mode: tui`). */
export function tuiAdapter(runner: string): TuiAdapter | undefined {
  return BY_NAME.get(runner)?.tui;
}

/** Runner names with a TUI mode (alphabetical), for the help text and the error that names them. */
export const TUI_RUNNERS = (): string[] =>
  CLIS.filter((c) => c.tui)
    .map((c) => c.runner.name)
    .sort();
