// Every `$ muster …` sample in the console blocks (and `npx muster …` in the sh blocks) of README.md
// and every docs/*.md must parse against the real CLI: the commander program from src/cli/main.ts, with every action replaced by a no-op,
// so a renamed command or option fails here instead of in a reader's terminal. Also: the documented limits
// agree with the code.
import * as fs from "node:fs";
import * as path from "node:path";
import { type Command, CommanderError } from "commander";
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";
import { MAX_PROMPT_BYTES } from "../../src/core/host-launch.js";
import { DOCS, REPO } from "../helpers/docs.js";

const read = (file: string): string => fs.readFileSync(path.join(REPO, file), "utf8");
const README = read("README.md");
// Run inside a child's pane by bin/muster.js before commander is loaded (src/cli/child-commands.ts).
const CHILD_COMMANDS = new Set(["progress", "done", "error"]);

/** Splits shell text into words (single and double quotes, backslash escapes); null while a quote is open. */
function shellWords(text: string): string[] | null {
  const words: string[] = [];
  let cur: string | null = null;
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === "\\" && quote === '"' && i + 1 < text.length) cur += text[++i];
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      cur ??= "";
    } else if (ch === "\\" && i + 1 < text.length) cur = (cur ?? "") + text[++i];
    else if (ch === "#" && cur === null)
      break; // a comment to the end of the line
    else if (/\s/.test(ch)) {
      if (cur !== null) words.push(cur);
      cur = null;
    } else cur = (cur ?? "") + ch;
  }
  if (quote) return null;
  if (cur !== null) words.push(cur);
  return words;
}

/** The argv (after `muster`) of every sample command, with the line it starts on. */
function readmeSamples(md: string): { line: number; argv: string[] }[] {
  const out: { line: number; argv: string[] }[] = [];
  const lines = md.split("\n");
  let block: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.startsWith("```")) {
      block = block === null ? l.slice(3).trim() : null;
      continue;
    }
    if (block === "console" && l.startsWith("$ ")) {
      // A quoted argument may span lines (a multi-line prompt): read on until the quotes close.
      let text = l.slice(2);
      let words = shellWords(text);
      for (let j = i + 1; words === null && j < lines.length; j++) {
        text += `\n${lines[j]}`;
        words = shellWords(text);
      }
      if (words?.[0] === "muster") out.push({ line: i + 1, argv: words.slice(1) });
    }
    if (block === "sh") {
      for (const part of l.split("&&")) {
        const words = shellWords(part) ?? [];
        const at = words[0] === "npx" ? 1 : 0;
        if (words[at] === "muster") out.push({ line: i + 1, argv: words.slice(at + 1) });
      }
    }
  }
  return out;
}

/** Parses argv with the real program without running anything; returns commander's error, if any. */
async function dryParse(argv: string[]): Promise<string | undefined> {
  if (CHILD_COMMANDS.has(argv[0] ?? "")) return undefined;
  const program = await buildProgram();
  let ran: string | undefined;
  // `ran` is the command path that ran ("workflow run"): nested subcommands (mcp install, workflow run) count.
  const quiet = (c: Command, prefix: string[]): void => {
    c.configureOutput({ writeOut: () => {}, writeErr: () => {} });
    for (const sub of c.commands) {
      const path = [...prefix, sub.name()];
      sub.action(() => {
        ran = path.join(" ");
      });
      quiet(sub, path);
    }
  };
  quiet(program, []);
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) return `${e.code}: ${e.message}`;
    throw e;
  }
  const want = ran === undefined ? undefined : argv.slice(0, ran.split(" ").length).join(" ");
  return ran !== undefined && ran === want ? undefined : `no command ran for ${argv[0]}`;
}

describe("command samples in the README and the docs", () => {
  const samples = readmeSamples(README);
  const byDoc = DOCS.map((file) => ({ file, samples: readmeSamples(read(file)) }));

  it("finds the samples (the session, the first line)", () => {
    expect(samples.length).toBeGreaterThanOrEqual(8);
    expect(samples.map((s) => s.argv[0])).toEqual(
      expect.arrayContaining(["demo", "spawn", "ls", "wait", "send", "status", "cancel", "rm", "doctor"]),
    );
    const spawn = samples.find((s) => s.argv[0] === "spawn")!;
    expect(spawn.argv).toEqual(["spawn", "--agent", "mock", "Summarise the repo\nmock: sleep=2 tools=3"]);
  });

  it("finds the samples of the reference that moved to docs/ (workflows, MCP install)", () => {
    expect(DOCS).toEqual(expect.arrayContaining(["docs/cli.md", "docs/workflows.md", "docs/mcp.md"]));
    const of = (file: string) => byDoc.find((d) => d.file === file)!.samples.map((s) => s.argv.join(" "));
    expect(of("docs/workflows.md")).toEqual(
      expect.arrayContaining(["workflow list", "workflow runs", "workflow resume 3f9c2a1b"]),
    );
    expect(of("docs/workflows.md").length).toBeGreaterThanOrEqual(7);
    expect(of("docs/mcp.md")).toEqual(
      expect.arrayContaining(["mcp install claude", "mcp doctor codex --project"]),
    );
  });

  it("every sample in every document parses against the real CLI", async () => {
    const bad: string[] = [];
    for (const { file, samples } of byDoc) {
      for (const s of samples) {
        const err = await dryParse(s.argv);
        if (err) bad.push(`${file}:${s.line}: muster ${s.argv.join(" ")} → ${err}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("the check fails for an unknown command, an unknown option or a missing argument", async () => {
    expect(await dryParse(["spwan", "task"])).toMatch(/unknownCommand/);
    expect(await dryParse(["spawn", "--agnet", "mock", "task"])).toMatch(/unknownOption/);
    expect(await dryParse(["wait", "--timeout"])).toMatch(/optionMissingArgument/);
    expect(await dryParse(["rm"])).toMatch(/missingArgument/);
    expect(await dryParse(["rm", "--force", "abcd1234", "ef567890"])).toBeUndefined();
  });
});

describe("documented limits agree with the code", () => {
  it("the prompt limit in docs/agents.md and artifacts/README.md is MAX_PROMPT_BYTES (1 MiB)", () => {
    expect(MAX_PROMPT_BYTES).toBe(1024 * 1024);
    const protocol = read("artifacts/README.md");
    expect(protocol).toContain("| a prompt given to `muster spawn`/`send` | 1 MiB |");
    expect(protocol).toContain("refuse prompts over 1 MiB");
    // The old, wrong limit (the protocol once said prompts over 64 KiB were refused).
    expect(protocol).not.toMatch(/prompts? over 64 KiB|`send` \| 64 KiB/);
    expect(read("docs/agents.md")).toContain("muster takes up to\n  1 MiB");
  });
});
