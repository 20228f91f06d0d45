import * as fs from "node:fs";
import * as path from "node:path";
import type { Usage } from "../../artifacts/events.js";
import { ENV } from "../../base/settings/table.js";
import { writeFileAtomic } from "../../util/fsx.js";
import { readFileBounded } from "../../util/safe-read.js";
import { binaryOf, runnerDir, splitModel } from "../common/shared.js";
import type { AgentMessage, Runner, StreamParser, TurnInput, TurnPlan } from "../types.js";
import { AIDER_EXPLANATIONS, aiderProviderError, LITELLM_ERROR } from "./provider.js";

/** Aider's conversation log inside the child's runner folder; its path is the runner session id. */
export const AIDER_HISTORY = "aider.chat.history.md";
const AIDER_INPUT_HISTORY = "aider.input.history";
const AIDER_INSTRUCTIONS = "instructions.md";

// The announcement block aider prints before it sends the message (base_coder.get_announcements) and the
// notices around it; kept off the answer.
const BANNER =
  /^(Aider v\d|(Main |Editor |Weak )?[Mm]odel: |Git repo: |Repo-map: |Added .+ to the chat|Restored previous conversation history|Multiline mode: |Warning: |Analytics have been )/;
// "Tokens: 1.2k sent, 3.4k cache write, 12k cache hit, 300 received." then, when the model has prices,
// " Cost: $0.01 message, $0.02 session." on the same line (or the next one when both cache figures are shown).
const TOKENS =
  /^Tokens: ([\d.,]+k?) sent(?:, [\d.,]+k? cache write)?(?:, [\d.,]+k? cache hit)?, ([\d.,]+k?) received\.(?:\s+Cost: \$([\d.]+) message, \$[\d.]+ session\.)?\s*$/;
const COST = /^Cost: \$([\d.]+) message, \$[\d.]+ session\.\s*$/;
const APPLIED = /^Applied edit to (.+)$/;
// A confirmation aider answered by itself under --yes-always: "Add file to the chat? (Y)es/(N)o … [Yes]: y".
const ASKED = /\? \(Y\)es\/\(N\)o.*\[[^\]]*\]: \S*\s*$/;
// LLM failures: aider reports them on stdout and still exits 0 (base_coder.send_message): litellm's text (long
// text wrapped by aider's console), its own explanation, then "Retrying in N seconds..." or a blank line.
const RETRYING = /^Retrying in [\d.]+ seconds/;
const NOTICE = /^(Retrying in [\d.]+ seconds|Empty response received from LLM|The API provider )/;
/** The first line of one of aider's explanations (a long one wraps). */
const explains = (t: string) =>
  AIDER_EXPLANATIONS.has(t) || (t.length >= 20 && [...AIDER_EXPLANATIONS].some((e) => e.startsWith(t)));
// --no-pretty reasoning output (reasoning_tags.py): a dashed rule, then ► **THINKING** … ► **ANSWER**.
const THINKING = "► **THINKING**";
const ANSWER = "► **ANSWER**";
const RULE = /^-{3,}\s*$/;

/** "1.2k" → 1200, "12k" → 12000, "850" → 850 (aider's format_tokens). */
export function aiderTokens(s: string): number {
  const t = s.replace(/,/g, "");
  const n = Number.parseFloat(t);
  if (!Number.isFinite(n)) return 0;
  return Math.round(t.endsWith("k") ? n * 1000 : n);
}

/**
 * Aider's plain-text stdout (`--no-pretty`) → muster messages. Everything up to the blank line that follows the
 * announcement block is status; after it, lines are the answer except usage reports, applied edits, reasoning and
 * LLM errors.
 */
export function aiderParser(historyFile: string): StreamParser {
  let preamble = true;
  let sawBanner = false;
  let thinking = false;
  let answer = "";
  let blanks = 0;
  let rule: string | undefined;
  let pendingUsage: Usage | undefined;
  let llmError: string | undefined;
  // Inside the lines of one LLM failure: litellm's text (kept whole for llmError), then aider's explanation.
  let failing: "exception" | "explanation" | undefined;
  // The last line that said something other than aider's own status: the reason when aider fails.
  let lastNote: string | undefined;

  const flushUsage = (): AgentMessage[] => {
    if (!pendingUsage) return [];
    const u = pendingUsage;
    pendingUsage = undefined;
    return [{ type: "usage", usage: u }];
  };
  const text = (t: string): AgentMessage[] => {
    // Blank lines are held: none before the answer starts, none after it ends, the ones inside kept.
    const lead = answer !== "" ? "\n".repeat(blanks) : "";
    blanks = 0;
    answer += `${lead}${t}\n`;
    return [{ type: "text", text: `${lead}${t}\n` }];
  };
  const flushRule = (): AgentMessage[] => {
    if (rule === undefined) return [];
    const r = rule;
    rule = undefined;
    return thinking ? [{ type: "raw", text: r }] : text(r);
  };

  const body = (t: string): AgentMessage[] => {
    const trimmed = t.trim();
    if (trimmed === THINKING || trimmed === ANSWER) {
      rule = undefined;
      thinking = trimmed === THINKING;
      return [{ type: "raw", text: trimmed }];
    }
    if (RULE.test(t)) {
      const out = flushRule();
      rule = t;
      return out;
    }
    const out = flushRule();
    if (trimmed === "") {
      failing = undefined;
      if (!thinking) blanks++;
      return out;
    }
    if (thinking) return [...out, { type: "raw", text: t }];
    const edit = APPLIED.exec(t);
    if (edit) {
      const file = edit[1]!.trim();
      return [
        ...out,
        { type: "tool", phase: "start", name: "edit", summary: file },
        { type: "tool", phase: "end", name: "edit", summary: file },
      ];
    }
    if (LITELLM_ERROR.test(trimmed)) {
      llmError = trimmed;
      lastNote = trimmed;
      failing = "exception";
      return [...out, { type: "raw", text: t }];
    }
    if (failing && !RETRYING.test(trimmed)) {
      if (failing === "exception" && explains(trimmed)) failing = "explanation";
      else if (failing === "exception") {
        // litellm's text went on past the console's width: the same exception.
        llmError = `${llmError} ${trimmed}`;
        lastNote = llmError;
        return [...out, { type: "raw", text: t }];
      }
      return [...out, { type: "progress", text: trimmed }];
    }
    failing = undefined;
    if (NOTICE.test(t)) {
      lastNote = trimmed;
      return [...out, { type: "progress", text: trimmed }];
    }
    if (ASKED.test(t)) return [...out, { type: "raw", text: t }];
    return [...out, ...text(t)];
  };

  return {
    line(raw) {
      const t = raw.replace(/\r$/, "");
      const cost = COST.exec(t);
      if (cost && pendingUsage) {
        pendingUsage.cost = Number.parseFloat(cost[1]!);
        return [...flushUsage(), { type: "raw", text: t }];
      }
      const out = flushUsage();
      const tokens = TOKENS.exec(t);
      if (tokens) {
        // A usage report means the message was sent: whatever follows is the reply's aftermath.
        preamble = false;
        pendingUsage = { input: aiderTokens(tokens[1]!), output: aiderTokens(tokens[2]!) };
        if (tokens[3] !== undefined) {
          pendingUsage.cost = Number.parseFloat(tokens[3]);
          out.push(...flushUsage());
        }
        return [...out, { type: "raw", text: t }];
      }
      if (preamble) {
        if (/^Aider v\d/.test(t)) sawBanner = true;
        if (t.trim() === "") {
          // main.py prints one empty line after the announcements, right before the message is sent.
          if (sawBanner) preamble = false;
          return out;
        }
        if (!BANNER.test(t) && !ASKED.test(t)) lastNote = t.trim();
        return [...out, { type: "raw", text: t }];
      }
      return [...out, ...body(t)];
    },
    end({ code, signal }) {
      const out = [...flushUsage(), ...flushRule()];
      if (fs.existsSync(historyFile)) out.push({ type: "session", id: historyFile });
      const final = answer.replace(/\s+$/, "");
      if (final === "" && (code !== 0 || llmError)) {
        const why = signal ? `killed by ${signal}` : `exit code ${code}`;
        const reason = llmError ?? (lastNote ? (code === 0 ? lastNote : `${why}: ${lastNote}`) : undefined);
        // Nothing on stdout explains the failure: no result, so the turn reports the exit and stderr's last line.
        const providerError = llmError ? aiderProviderError(llmError) : undefined;
        if (reason)
          out.push({
            type: "result",
            status: "errored",
            reason,
            ...(providerError ? { providerError } : {}),
          });
        return out;
      }
      out.push({ type: "result", status: "completed", text: final === "" ? "" : `${final}\n` });
      return out;
    },
  };
}

/** Aider's `--model` spelling: `provider/model` (litellm's), from muster's `provider:model`. */
function aiderModel(model: string | undefined): string | undefined {
  const { provider, id } = splitModel(model);
  if (!id) return undefined;
  return provider && provider !== "aider" ? `${provider}/${id}` : id;
}

// The body comes from a profile, itself at most 1 MiB.
const MAX_INSTRUCTIONS_BYTES = 1024 * 1024;

/** Writes the profile body where `--read` can find it (only when it changed). */
function writeInstructions(dir: string, body: string): string {
  const file = path.join(dir, AIDER_INSTRUCTIONS);
  let current: string | undefined;
  try {
    // At most a profile's size, never through a symlink, never blocking on a FIFO: anything else is rewritten.
    current = readFileBounded(file, MAX_INSTRUCTIONS_BYTES).toString("utf8");
  } catch {
    current = undefined;
  }
  // Renamed into place: whatever was planted at the path is replaced, not written through.
  if (current !== body) writeFileAtomic(file, body);
  return file;
}

/** Aider, one-shot: `aider --message-file <prompt> --yes-always …`, history kept in the child's runner folder. */
export const aiderRunner: Runner = {
  name: "aider",
  description: "Aider (`aider --message-file`, plain text); resumes with --restore-chat-history",
  binary: {
    command: "aider",
    envVar: ENV.aiderBin,
    install: "python -m pip install aider-install && aider-install",
  },
  usage:
    "aider --yes-always --no-auto-commits --no-pretty --no-fancy-input --no-check-update --no-show-release-notes --no-analytics --no-gitignore --no-show-model-warnings --chat-history-file <runnerDir>/aider.chat.history.md --input-history-file <runnerDir>/aider.input.history [--restore-chat-history] [--read <runnerDir>/instructions.md] [--model <provider>/<model>] [--reasoning-effort <r>] --message-file <prompt-file>",
  catalog: { provider: "aider", open: true, models: [] },
  resumeMode: () => "native",
  ignores: ["tools", "disallowedTools", "maxTurns"],
  plan(input: TurnInput): TurnPlan {
    const dir = path.resolve(runnerDir(input));
    const history = path.join(dir, AIDER_HISTORY);
    const model = aiderModel(input.model);
    const body = input.systemPrompt?.trim();
    // Headless: every confirmation is answered yes (shell commands still need an explicit yes, so aider skips
    // them); no commits, colours, prompt_toolkit, update checks, release notes or analytics prompt. Paths are
    // absolute, so no value can be read as an option; the prompt travels in a file, never in argv.
    const argv = [
      binaryOf(this.binary!, input.env),
      "--yes-always",
      "--no-auto-commits",
      "--no-pretty",
      "--no-fancy-input",
      "--no-check-update",
      "--no-show-release-notes",
      "--no-analytics",
      // Not the user's project files or browser: no .gitignore edits, no "open the docs?" answered yes.
      "--no-gitignore",
      "--no-show-model-warnings",
      "--chat-history-file",
      history,
      "--input-history-file",
      path.join(dir, AIDER_INPUT_HISTORY),
      ...(input.runnerSessionId ? ["--restore-chat-history"] : []),
      ...(body ? ["--read", writeInstructions(dir, `${body}\n`)] : []),
      ...(model ? ["--model", model] : []),
      ...(input.reasoning ? ["--reasoning-effort", input.reasoning] : []),
      "--message-file",
      path.resolve(input.promptFile),
    ];
    return { argv, cwd: input.cwd, env: input.env, protocol: "text", parser: aiderParser(history) };
  },
};
