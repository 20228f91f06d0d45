// The CLI loads a command's module by the table in src/cli/command-table.ts: each row must name exactly the
// top-level commands (and aliases) its module registers, its file and function must be that module's, and the
// rows in order must make the very program help shows. A command added, renamed or moved fails here.
import * as fs from "node:fs";
import * as path from "node:path";
import { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMAND_MODULES, moduleOf, modulesFor } from "../../src/cli/command-table.js";
import { buildProgram } from "../../src/cli/main.js";
import { programWith } from "../../src/cli/program.js";

const COMMANDS_DIR = path.join(import.meta.dirname, "..", "..", "src", "cli", "commands");
const namesOf = (program: Command): string[] => program.commands.flatMap((c) => [c.name(), ...c.aliases()]);

describe("the command table", () => {
  it.each(
    COMMAND_MODULES.map((m) => [m.file, m] as const),
  )("%s: its loader is its file's register function, which registers exactly its names", async (_file, row) => {
    const register = await row.load();
    const file = path.join(COMMANDS_DIR, `${row.file}.ts`);
    const mod = (await import(/* @vite-ignore */ file)) as Record<string, unknown>;
    expect(mod[row.register]).toBe(register);
    const program = new Command("muster");
    register(program);
    expect(namesOf(program)).toEqual(row.names);
  });

  it("every top-level command and alias of the full program maps to the row that registers it, once", async () => {
    const all = namesOf(await buildProgram());
    expect(COMMAND_MODULES.flatMap((m) => m.names)).toEqual(all);
    expect(new Set(all).size).toBe(all.length);
    for (const name of all) expect(moduleOf([name])?.names).toContain(name);
  });

  it("every module under src/cli/commands that registers commands has its row", () => {
    const dir = COMMANDS_DIR;
    const registering = fs
      .readdirSync(dir)
      .filter((f) => /export function register[A-Z]/.test(fs.readFileSync(path.join(dir, f), "utf8")))
      .map((f) => f.replace(/\.ts$/, ""))
      .sort();
    expect(COMMAND_MODULES.map((m) => m.file).sort()).toEqual(registering);
  });

  it("a command loads its module alone; help, an option first, an unknown command load every one", () => {
    expect(modulesFor(["ls", "--json"]).map((m) => m.file)).toEqual(["inspect"]);
    expect(modulesFor(["list"]).map((m) => m.file)).toEqual(["inspect"]);
    expect(modulesFor(["send", "x", "hi"]).map((m) => m.file)).toEqual(["act"]);
    for (const argv of [[], ["--help"], ["help", "ls"], ["--version"], ["lss"], ["--json", "ls"], ["--"]])
      expect(modulesFor(argv), JSON.stringify(argv)).toBe(COMMAND_MODULES);
  });

  it("one module registered alone gives that command the same help as the full program", async () => {
    const full = await buildProgram();
    for (const row of COMMAND_MODULES) {
      const alone = programWith([await row.load()]);
      for (const name of row.names) {
        const a = alone.commands.find((c) => c.name() === name || c.aliases().includes(name))!;
        const f = full.commands.find((c) => c.name() === name || c.aliases().includes(name))!;
        expect(a.helpInformation(), name).toBe(f.helpInformation());
      }
    }
  });
});
