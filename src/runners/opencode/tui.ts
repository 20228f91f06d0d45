/**
 * OpenCode's interactive TUI (`opencode <cwd>`) as a muster child. Turn boundaries come from muster's plugin
 * (opencode-plugin.ts), named in the per-child config (OPENCODE_CONFIG_CONTENT, merged over the user's: the
 * project is not touched): chat.message (a turn starts, whoever typed it), tool hooks, permission.asked,
 * session.idle (the turn ended; the answer and usage of the run's assistant messages). Ready is read off the
 * screen (its input box drawn): the plugin starts seconds before the TUI takes keys, and a paste then is lost.
 * Escape interrupts only when pressed twice. Checked against the pinned 1.18.33;
 * it shows no trust or onboarding dialog with a configured provider, so none is looked for.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import type { Usage } from "../../artifacts/events.js";
import { ENV } from "../../base/settings/table.js";
import { writeFileAtomic } from "../../util/fsx.js";
import { PACKAGE_ROOT } from "../../util/pkg.js";
import { arr, binaryOf, num, obj, str } from "../common/shared.js";
import { ownHookSignal } from "../tui/own-hooks.js";
import type { HookLine, TuiAdapter, TuiHooks, TuiLaunch, TuiSignal } from "../tui/types.js";
import type { RunnerBinary, TurnInput } from "../types.js";
import { childConfig, opencodeModel, opencodeProviderError } from "./runner.js";

const BINARY: RunnerBinary = {
  command: "opencode",
  envVar: ENV.opencodeBin,
  install: "npm install -g opencode-ai",
};

/** The input box: lines of a `┃` bar closed by a `╹▀▀▀` line; its last line names the agent and model. */
const BAR = /^\s*┃ ?/;
const BOTTOM = /^\s*╹▀{10,}/;
/** The empty box's placeholder (a suggestion), not a draft. */
const PLACEHOLDER = /^Ask anything… /;

function inputBox(screen: string): string[] | undefined {
  const lines = screen.split("\n");
  const end = lines.findLastIndex((l) => BOTTOM.test(l));
  if (end < 1) return undefined;
  let start = end;
  while (start > 0 && BAR.test(lines[start - 1]!)) start--;
  if (start === end) return undefined;
  // Without its last line (agent · model).
  return lines.slice(start, end - 1).map((l) => l.replace(BAR, "").trimEnd());
}

function usageOf(u: unknown): Usage | undefined {
  const o = obj(u);
  if (num(o.input) === undefined && num(o.output) === undefined) return undefined;
  const cost = num(o.cost);
  return { input: num(o.input) ?? 0, output: num(o.output) ?? 0, ...(cost ? { cost } : {}) };
}

export const opencodeTui: TuiAdapter = {
  runner: "opencode",
  interruptReportsEnd: true,
  // Two Escapes as one write read as Alt+Escape: each is its own key press.
  interruptKeys: ["\x1b", "\x1b"],
  slowStart:
    "OpenCode installs @opencode-ai/plugin into each of its config folders before it loads any plugin (muster's too): offline, a folder where it never did so keeps it waiting until npm gives up",
  hooks: "chat.message, session.idle, tool.execute.before/after, permission.asked (muster's plugin, config)",
  launch(input: TurnInput, hooks: TuiHooks, resume: string | undefined): TuiLaunch {
    fs.mkdirSync(input.runnerDir, { recursive: true, mode: 0o700 });
    const config = JSON.parse(childConfig(input, opencodeModel(input.model))) as Record<string, unknown>;
    const plugin = pathToFileURL(
      path.join(PACKAGE_ROOT, "dist", "runners", "tui", "opencode-plugin.js"),
    ).href;
    // OpenCode has no system-prompt flag: the profile's prompt is an instructions file of this child.
    const instructions: string[] = [];
    if (input.systemPrompt?.trim()) {
      const file = path.join(input.runnerDir, "tui-instructions.md");
      writeFileAtomic(file, `${input.systemPrompt.trim()}\n`);
      instructions.push(file);
    }
    const merged = {
      ...config,
      plugin: [...arr(config.plugin), plugin],
      ...(instructions.length ? { instructions: [...arr(config.instructions), ...instructions] } : {}),
    };
    const model = opencodeModel(input.model);
    return {
      argv: [
        binaryOf(BINARY, input.env),
        ...(model ? ["-m", model] : []),
        ...(resume ? ["--session", resume] : []),
        input.cwd,
      ],
      cwd: input.cwd,
      env: {
        ...input.env,
        OPENCODE_CONFIG_CONTENT: JSON.stringify(merged),
        [ENV.tuiHookFile]: hooks.file,
      },
    };
  },
  signal(line: HookLine): TuiSignal | undefined {
    if (line.event !== "stop") return ownHookSignal(line);
    const p = obj(line.payload);
    const sessionId = str(p.session_id);
    const answer = str(p.answer);
    const usage = usageOf(p.usage);
    // The session.error that ended the run (OpenCode's APIError carries the provider's status, headers, body).
    const error = p.error != null ? obj(p.error) : undefined;
    const reason = error ? (str(obj(error.data).message) ?? str(error.name) ?? "the run failed") : undefined;
    const providerError = error && reason ? opencodeProviderError(error, reason) : undefined;
    return {
      kind: "stop",
      ...(reason ? { failure: { reason, ...(providerError ? { providerError } : {}) } } : {}),
      ...(sessionId ? { sessionId } : {}),
      ...(answer !== undefined ? { answer } : {}),
      ...(usage ? { usage } : {}),
      ...(p.interrupted === true ? { interrupted: true } : {}),
    };
  },
  dialog(): string | undefined {
    return undefined;
  },
  readyOnScreen(screen: string): boolean {
    return inputBox(screen) !== undefined;
  },
  draft(screen: string): string {
    const box = inputBox(screen) ?? [];
    const text = box.join("\n").trim();
    return PLACEHOLDER.test(text) ? "" : text;
  },
};
