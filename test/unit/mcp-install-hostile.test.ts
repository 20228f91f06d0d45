// Config files as people keep them: comments inside muster's own Codex table, CRLF line endings, and files
// that do not parse (named by line and column). Real files in a temp HOME.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctor, install } from "../../src/mcp/install/index.js";
import { stripJsonComments } from "../../src/mcp/install/json-text.js";
import { useSandbox } from "../helpers/cli.js";

// biome-ignore lint/suspicious/noExplicitAny: parsed config files are read loosely
type Loose = any;

let base: string;
let home: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "mt-install-hostile-"));
  home = path.join(base, "home");
  fs.mkdirSync(home, { recursive: true });
  env = { HOME: home };
});
afterEach(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

const opts = () => ({ processEnv: env, cwd: base });
const codexFile = () => path.join(home, ".codex", "config.toml");
const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};
const read = (file: string) => fs.readFileSync(file, "utf8");
/** No line feed without a carriage return before it. */
const allCrlf = (text: string) => !/(^|[^\r])\n/.test(text);

const BEFORE = ["# my codex settings", 'model = "gpt-5.5" # inline', ""];
const TABLE = [
  "[mcp_servers.muster]",
  "# muster runs from npx here",
  'command = "npx" # the old way',
  'args = ["muster", "mcp"]',
  "  # an indented note",
  "env_vars = [",
  '  "MY_OWN_VAR", # mine',
  "]",
  "tool_timeout_sec = 7200 # long enough",
  "# a note at the end of the table",
  "",
];
const AFTER = ["[mcp_servers.muster.env]", 'FIXED = "1" # pinned', "", "[tui]", "theme = 'dark'", ""];

describe("codex: comments inside [mcp_servers.muster] are kept", () => {
  it("every comment and every line muster does not change stays byte for byte; changed values are replaced in place", () => {
    const original = [...BEFORE, ...TABLE, ...AFTER].join("\n");
    write(codexFile(), original);
    install("codex", opts());
    const text = read(codexFile());
    expect(text.startsWith(BEFORE.join("\n"))).toBe(true);
    expect(text.endsWith(AFTER.join("\n"))).toBe(true);
    const lines = text.split("\n");
    for (const kept of [
      "# muster runs from npx here",
      "  # an indented note",
      "tool_timeout_sec = 7200 # long enough",
      "# a note at the end of the table",
      "# mine", // from inside the env_vars array muster rewrites: kept above the key
    ])
      expect(lines, kept).toContain(kept);
    // The value is replaced, the key's own trailing comment kept.
    expect(lines).toContain(`command = ${JSON.stringify(process.execPath)} # the old way`);
    const doc = parseToml(text) as Loose;
    expect(doc.mcp_servers.muster.env_vars[0]).toBe("MY_OWN_VAR");
    expect(doc.mcp_servers.muster.env).toEqual({ FIXED: "1" });
    // The keys muster adds go after the table's last key, before the comment that closes it.
    const at = (l: string) => lines.findIndex((x) => x.startsWith(l));
    expect(at("required = true")).toBeGreaterThan(at("tool_timeout_sec"));
    expect(at("required = true")).toBeLessThan(at("# a note at the end of the table"));
    expect(doctor("codex", opts()).ok).toBe(true);
    // A second run finds it configured and leaves it alone.
    expect(install("codex", opts()).files[0]!.status).toBe("unchanged");
    expect(read(codexFile())).toBe(text);
  });

  it("a file already holding muster's complete entry, with comments, is not touched at all", () => {
    install("codex", opts());
    const commented = read(codexFile()).replace("[mcp_servers.muster]\n", "[mcp_servers.muster]\n# mine\n");
    fs.writeFileSync(codexFile(), commented);
    expect(install("codex", opts()).files[0]!.status).toBe("unchanged");
    expect(read(codexFile())).toBe(commented);
  });
});

describe("CRLF files stay CRLF", () => {
  it("codex: a new [mcp_servers.muster] appended to a CRLF file is CRLF too; the old bytes are kept", () => {
    const original = 'model = "o3"\r\n\r\n[tui]\r\ntheme = "dark"\r\n';
    write(codexFile(), original);
    install("codex", opts());
    const text = read(codexFile());
    expect(text.startsWith(original)).toBe(true);
    expect(allCrlf(text)).toBe(true);
    expect((parseToml(text) as Loose).mcp_servers.muster.required).toBe(true);
  });

  it("codex: an existing table updated in a CRLF file keeps CRLF, also on the lines muster adds", () => {
    const original = [...BEFORE, ...TABLE, ...AFTER].join("\r\n");
    write(codexFile(), original);
    install("codex", opts());
    const text = read(codexFile());
    expect(allCrlf(text)).toBe(true);
    expect(text.startsWith(BEFORE.join("\r\n"))).toBe(true);
    expect(text).toContain("# muster runs from npx here\r\n");
    expect(doctor("codex", opts()).ok).toBe(true);
  });

  it("gemini, claude and opencode: a CRLF JSON file is rewritten with CRLF", () => {
    const files = {
      gemini: path.join(home, ".gemini", "settings.json"),
      claude: path.join(home, ".claude.json"),
      opencode: path.join(home, ".config", "opencode", "opencode.json"),
    };
    for (const [client, file] of Object.entries(files)) {
      write(file, '{\r\n  "mine": {\r\n    "a": 1\r\n  }\r\n}\r\n');
      install(client, opts());
      const text = read(file);
      expect(allCrlf(text), client).toBe(true);
      expect(text.startsWith('{\r\n  "mine": {\r\n    "a": 1\r\n  },\r\n'), client).toBe(true);
    }
  });
});

describe("a file that does not parse is named with its line and column, and left untouched", () => {
  it("codex: `file:line:column: invalid TOML: …` in one line", () => {
    const text = 'model = "o3"\n\n[mcp_servers.muster]\ncommand = = "x"\n';
    write(codexFile(), text);
    const why = `${codexFile()}:4:11: invalid TOML: `;
    expect(() => install("codex", opts())).toThrow(why);
    try {
      install("codex", opts());
    } catch (e) {
      expect((e as Error).message.split("\n")).toHaveLength(1);
      expect((e as Error).message).toMatch(/; it is left untouched$/);
    }
    expect(doctor("codex", opts()).files[0]!.missing[0]).toContain(why);
    expect(read(codexFile())).toBe(text);
  });

  it("JSON: the position is found also where V8's own message names none", () => {
    const file = path.join(home, ".gemini", "settings.json");
    const cases: [string, string][] = [
      ['{\n  "a": 1,\n  x\n}\n', "3:3: invalid JSON: expected a double-quoted property name"],
      ['{"general": {"vimMode": tru}}', "1:25: invalid JSON: expected a value"],
      ['{\r\n  "a": 1\r\n  "b": 2\r\n}', "3:3: invalid JSON: expected ',' or '}'"],
      ['{"a": [1, 2}', "1:12: invalid JSON: expected ',' or ']'"],
      ['{"a": 1} x', "1:10: invalid JSON: unexpected text after the end"],
      ['{"a": "one\ntwo"}', "1:11: invalid JSON: control character (a raw line break?) in a string"],
      ['{"a": {', "1:8: invalid JSON: expected a double-quoted property name, got the end"],
      // A file with comments: the position is the file's own, past the comments.
      ['{\n  // mine\n  /* two\n     lines */ "a": nope\n}\n', "4:20: invalid JSON: expected a value"],
    ];
    for (const [text, where] of cases) {
      write(file, text);
      expect(() => install("gemini", opts()), JSON.stringify(text)).toThrow(
        `${file}:${where}; it is left untouched`,
      );
      expect(read(file)).toBe(text);
    }
  });

  it("comments are blanked in place (offsets kept) and a comma inside a string is not a trailing comma", () => {
    const text = '{\n  // mine\n  "note": "a,}", /* x */\n  "list": [1,],\n}\n';
    const stripped = stripJsonComments(text);
    expect(stripped).toHaveLength(text.length);
    expect(stripped.split("\n").map((l) => l.length)).toEqual(text.split("\n").map((l) => l.length));
    expect(JSON.parse(stripped)).toEqual({ note: "a,}", list: [1] });
  });
});

describe("the CLI", () => {
  const sb = useSandbox("mt-install-hostile-cli");

  it("mcp install codex on a broken config.toml: one line with file:line:column, exit 2, file untouched", async () => {
    const file = path.join(sb.env.HOME as string, ".codex", "config.toml");
    const text = "[tui]\r\ntheme = 'dark\r\n";
    write(file, text);
    const r = await sb.run(["mcp", "install", "codex"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(
      new RegExp(`^muster: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:2:\\d+: invalid TOML: `),
    );
    expect(read(file)).toBe(text);
    fs.rmSync(file);
  });
});
