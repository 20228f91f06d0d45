// Lists in help text that name things the code defines: the MCP tools, the clients `mcp install` knows and
// the runners with a TUI mode. A tool or CLI added without its help line fails here.
import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";
import { CLIENTS } from "../../src/mcp/install/spec.js";
import { toolTable } from "../../src/mcp/tools.js";
import { TUI_RUNNERS } from "../../src/runners/tui/registry.js";

const helpOf = async (...path: string[]): Promise<string> => {
  let cmd = await buildProgram();
  for (const name of path) cmd = cmd.commands.find((c) => c.name() === name)!;
  // outputHelp, not helpInformation: only it adds the addHelpText sections.
  let text = "";
  cmd.configureOutput({
    writeOut: (s) => {
      text += s;
    },
  });
  cmd.outputHelp();
  return text.replace(/\s+/g, " "); // commander wraps long lines
};

describe("help text lists", () => {
  it("muster mcp --help names every tool of the table and every client install knows", async () => {
    const help = await helpOf("mcp");
    const named = new Set(help.match(/\bsubagents_[a-z]+/g));
    expect([...named].sort()).toEqual(
      toolTable("")
        .map((t) => t.name)
        .sort(),
    );
    for (const c of CLIENTS) expect(help).toContain(c);
    expect(await helpOf("mcp", "install")).toContain(
      `${CLIENTS.slice(0, -1).join(", ")} or ${CLIENTS.at(-1)}`,
    );
  });

  it("muster spawn --help names every runner with a TUI mode", async () => {
    expect(await helpOf("spawn")).toContain(`(${TUI_RUNNERS().join(", ")})`);
  });
});
