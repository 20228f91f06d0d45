import * as fs from "node:fs";
import * as path from "node:path";
import { writeFileAtomic } from "../../util/fsx.js";
import { oneLine } from "../../util/text.js";
import type { AgentMessage, RunnerBinary, StreamParser, TurnInput, TurnPlan } from "../types.js";

/** One JSON object per line, or undefined for anything else (banners, warnings). */
export function jsonObject(line: string): Record<string, unknown> | undefined {
  const t = line.trim();
  if (!t.startsWith("{")) return undefined;
  try {
    const o = JSON.parse(t) as unknown;
    return o !== null && typeof o === "object" && !Array.isArray(o)
      ? (o as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
export const num = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isFinite(v) ? v : undefined;
export const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A JSONL stream: each object goes to `read`; a line that is not JSON is shown in the pane as is. */
export function jsonlParser(
  read: (o: Record<string, unknown>) => AgentMessage[],
  end?: StreamParser["end"],
): StreamParser {
  return {
    line(line) {
      const o = jsonObject(line);
      if (!o) return line.trim() ? [{ type: "raw", text: line }] : [];
      return read(o);
    },
    ...(end ? { end } : {}),
  };
}

// The argument that says most about a tool call, in the spellings the CLIs use.
const SALIENT = ["command", "cmd", "file_path", "filePath", "path", "pattern", "query", "url", "description"];

/** A one-line summary of a tool call's input: its command, path or query, else compact JSON. */
export function toolSummary(input: unknown): string {
  if (typeof input === "string") return oneLine(input);
  const o = obj(input);
  for (const k of SALIENT) {
    const v = o[k];
    if (typeof v === "string" && v.trim()) return oneLine(v);
    if (Array.isArray(v) && v.every((w) => typeof w === "string")) return oneLine(v.join(" "));
  }
  const json = JSON.stringify(input ?? {});
  return oneLine(json === "{}" ? "" : json);
}

/** `provider:model` → its parts; a bare id has no provider. */
export function splitModel(model: string | undefined): { provider?: string; id?: string } {
  if (!model) return {};
  const at = model.indexOf(":");
  return at > 0 ? { provider: model.slice(0, at), id: model.slice(at + 1) } : { id: model };
}

/** The program to run: the path in the runner's env var, else its name (found through the child's PATH). */
export function binaryOf(bin: RunnerBinary, env: Record<string, string | undefined>): string {
  const explicit = env[bin.envVar];
  return explicit?.trim() ? explicit.trim() : bin.command;
}

/**
 * The prompt for CLIs with no flag for extra system instructions: the profile's body goes ahead of the
 * first turn's prompt only (later turns resume a conversation that already holds it).
 */
export function withInstructions(input: TurnInput): string {
  if (!input.systemPrompt?.trim() || input.runnerSessionId) return input.prompt;
  return `${input.systemPrompt.trim()}\n\n---\n\n${input.prompt}`;
}

// One argv word may hold 128 KiB on Linux (MAX_ARG_STRLEN); prompts above this go by stdin or file.
const ARGV_PROMPT_MAX = 96 * 1024;

/** True when the prompt is too large to travel as one argv word. */
const promptTooLongForArgv = (prompt: string): boolean => Buffer.byteLength(prompt) > ARGV_PROMPT_MAX;

/** The prompt as a file of its own (for stdin), when it differs from the prompt file the host wrote. */
function promptAsFile(input: TurnInput, prompt: string): string {
  if (prompt === input.prompt) return input.promptFile;
  const file = path.join(runnerDir(input), `prompt-${input.turnId}.txt`);
  // Renamed into place: a symlink planted at the path is replaced, not written through.
  writeFileAtomic(file, prompt);
  return file;
}

/**
 * How the prompt reaches the CLI: as argv words, or — too large for one argv word — as its stdin (every
 * supported CLI reads a prompt from a non-terminal stdin), with `onStdin` in argv instead.
 */
export function passPrompt(
  input: TurnInput,
  prompt: string,
  inArgv: (p: string) => string[],
  onStdin: string[] = [],
): { args: string[]; stdinFile?: string } {
  if (!promptTooLongForArgv(prompt)) return { args: inArgv(prompt) };
  return { args: onStdin, stdinFile: promptAsFile(input, prompt) };
}

/** A turn of an agent CLI: its argv, its stream parser, and the prompt's stdin file when it has one. */
export function cliPlan(
  input: TurnInput,
  argv: string[],
  parser: StreamParser,
  prompt: { stdinFile?: string },
  env: Record<string, string> = input.env,
): TurnPlan {
  return {
    argv,
    cwd: input.cwd,
    env,
    protocol: "muster-jsonl",
    parser,
    ...(prompt.stdinFile ? { stdinFile: prompt.stdinFile } : {}),
  };
}

/** Makes sure the child's private runner folder exists (children made before it existed lack it). */
export function runnerDir(input: TurnInput): string {
  fs.mkdirSync(input.runnerDir, { recursive: true, mode: 0o700 });
  return input.runnerDir;
}
