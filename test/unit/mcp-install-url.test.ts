// `muster mcp install|doctor <client> --url`: the HTTP form of muster's entry, merged into real files in a
// temp HOME/project (no client needed). The token's value is in the environment, never in a file.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse as parseToml } from "smol-toml";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctor, install } from "../../src/mcp/install/index.js";
import { useSandbox } from "../helpers/cli.js";

// biome-ignore lint/suspicious/noExplicitAny: parsed config files are read loosely
type Loose = any;

const URL_ = "http://127.0.0.1:7421/mcp";
const TOKEN = "tok-the-secret-value-0123456789";
const CLIENTS = ["claude", "codex", "gemini", "opencode"] as const;
type C = (typeof CLIENTS)[number];

let base: string;
let home: string;
let project: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "mt-install-url-"));
  home = path.join(base, "home");
  project = path.join(base, "project");
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(project, { recursive: true });
  // The token is in the environment, as it is for the client: an install must name it, never copy it.
  env = { HOME: home, MUSTER_MCP_TOKEN: TOKEN, MY_TOKEN: TOKEN };
});
afterEach(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

const opts = (more: Parameters<typeof install>[1] = {}) => ({ processEnv: env, cwd: project, ...more });
const http = (more: Parameters<typeof install>[1] = {}) => opts({ url: URL_, ...more });
const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};
const ref = (name: string) => ["${", name, "}"].join("");
/** Every file under the temp dir, as text: the token must be in none of them (backups included). */
const allText = (): string =>
  fs
    .readdirSync(base, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => fs.readFileSync(path.join(d.parentPath, d.name), "utf8"))
    .join("\n");

/** muster's entry in the client's (first) file, parsed. */
function entryOf(client: C, scope: "user" | "project" = "user"): Loose {
  const file = install(client, http({ scope, dryRun: true })).files[0]!.file;
  const text = fs.readFileSync(file, "utf8");
  if (client === "codex") return (parseToml(text) as Loose).mcp_servers.muster;
  const doc = JSON.parse(text);
  return client === "opencode" ? doc.mcp.muster : doc.mcpServers.muster;
}

describe("each client's HTTP form", () => {
  it("claude: type http, the URL, Authorization naming MUSTER_MCP_TOKEN as a reference; the permission rule as for stdio", () => {
    const r = install("claude", http());
    expect(r).toMatchObject({ transport: "http", url: URL_, tokenEnv: "MUSTER_MCP_TOKEN" });
    expect(entryOf("claude")).toEqual({
      type: "http",
      url: URL_,
      headers: { Authorization: `Bearer ${ref("MUSTER_MCP_TOKEN")}` },
      timeout: 3_600_000,
      alwaysLoad: true,
    });
    const settings = JSON.parse(fs.readFileSync(path.join(home, ".claude", "settings.json"), "utf8"));
    expect(settings.permissions.allow).toEqual(["mcp__muster"]);
    // --project: .mcp.json, and the approval of the server in settings.local.json.
    install("claude", http({ scope: "project" }));
    expect(entryOf("claude", "project").url).toBe(URL_);
    const local = JSON.parse(fs.readFileSync(path.join(project, ".claude", "settings.local.json"), "utf8"));
    expect(local.enabledMcpjsonServers).toEqual(["muster"]);
  });

  it("codex: url and bearer_token_env_var, approval, required, the tool timeout; no command", () => {
    install("codex", http());
    expect(entryOf("codex")).toEqual({
      url: URL_,
      bearer_token_env_var: "MUSTER_MCP_TOKEN",
      tool_timeout_sec: 3600,
      default_tools_approval_mode: "approve",
      required: true,
    });
  });

  it("gemini: type http with url (not the deprecated httpUrl), headers by a reference to the variable, trust, timeout", () => {
    install("gemini", http());
    expect(entryOf("gemini")).toEqual({
      type: "http",
      url: URL_,
      headers: { Authorization: `Bearer ${ref("MUSTER_MCP_TOKEN")}` },
      timeout: 3_600_000,
      trust: true,
    });
  });

  it("opencode: type remote, headers by {env:NAME}, no OAuth discovery, enabled, timeout", () => {
    install("opencode", http());
    expect(entryOf("opencode")).toEqual({
      type: "remote",
      url: URL_,
      headers: { Authorization: "Bearer {env:MUSTER_MCP_TOKEN}" },
      oauth: false,
      enabled: true,
      timeout: 3_600_000,
    });
  });

  it("--token-env names another variable; other headers the user set are kept", () => {
    const file = path.join(home, ".gemini", "settings.json");
    write(
      file,
      JSON.stringify({ mcpServers: { muster: { headers: { "X-Trace": "1", authorization: "x" } } } }),
    );
    install("gemini", http({ tokenEnv: "MY_TOKEN" }));
    expect(entryOf("gemini").headers).toEqual({ "X-Trace": "1", Authorization: `Bearer ${ref("MY_TOKEN")}` });
    install("codex", http({ tokenEnv: "MY_TOKEN" }));
    expect(entryOf("codex").bearer_token_env_var).toBe("MY_TOKEN");
    expect(doctor("codex", http({ tokenEnv: "MY_TOKEN" })).ok).toBe(true);
    expect(doctor("codex", http()).files[0]!.missing.join(" ")).toMatch(
      /bearer_token_env_var is not "MUSTER_MCP_TOKEN"/,
    );
  });
});

describe("every client, --url", () => {
  for (const client of CLIENTS) {
    it(`${client}: a second run is "already configured"; doctor --url is ok; the token is in no file`, () => {
      const first = install(client, http());
      expect(first.files.every((f) => f.status === "created")).toBe(true);
      const again = install(client, http());
      expect(again.files.every((f) => f.status === "unchanged")).toBe(true);
      const d = doctor(client, http());
      expect(d).toMatchObject({ ok: true, transport: "http", url: URL_, warnings: [] });
      // A doctor of the stdio form says the entry is the HTTP form, in one line, and where to check it.
      const stdio = doctor(client, opts());
      expect(stdio.ok).toBe(false);
      expect(stdio.files[0]!.missing).toEqual([
        `the entry is the HTTP form (${URL_}); check it with muster mcp doctor ${client} --url ${URL_}`,
      ]);
      // Another URL is named.
      const other = doctor(client, opts({ url: "http://127.0.0.1:9999/mcp" }));
      expect(other.files[0]!.missing.join(" ")).toContain(`url is ${URL_}, not http://127.0.0.1:9999/mcp`);
      expect(allText()).not.toContain(TOKEN);
      expect(JSON.stringify([first, again, d])).not.toContain(TOKEN);
    });

    it(`${client}: switching stdio → url → stdio replaces the entry each time, with nothing of the other form left`, () => {
      install(client, opts());
      const stdio = entryOf(client);
      install(client, http());
      const remote = entryOf(client);
      expect(JSON.stringify(remote)).not.toMatch(/"command"|"args"|"env_vars"|muster\.js/);
      expect(doctor(client, http()).ok).toBe(true);
      install(client, opts());
      expect(entryOf(client)).toEqual(stdio);
      expect(JSON.stringify(entryOf(client))).not.toMatch(/"url"|"headers"|bearer_token|7421/);
      expect(doctor(client, opts()).ok).toBe(true);
      expect(install(client, opts()).files.every((f) => f.status === "unchanged")).toBe(true);
      expect(allText()).not.toContain(TOKEN);
    });
  }

  it("doctor --url warns (not fails) when the token's variable is unset here", () => {
    install("claude", http());
    const unset = { HOME: home };
    const d = doctor("claude", { processEnv: unset, cwd: project, url: URL_ });
    expect(d.ok).toBe(true);
    expect(d.warnings).toEqual([
      "MUSTER_MCP_TOKEN is not set in this environment: the client must have it (the token muster mcp --http printed) when it starts",
    ]);
    const r = install("claude", { processEnv: unset, cwd: project, url: URL_ });
    expect(r.notes.join(" ")).toMatch(/set MUSTER_MCP_TOKEN to the token .* \(it is not set here\)/);
  });

  it("codex: a switch to --url removes the stdio sub-table and keys in place, every other byte kept", () => {
    const file = path.join(home, ".codex", "config.toml");
    const before = [
      "# mine",
      'model = "o3"',
      "",
      "[mcp_servers.muster]",
      'command = "npx"',
      'args = ["muster", "mcp"] # old',
      "tool_timeout_sec = 7200",
      "",
      "[mcp_servers.muster.env]",
      'FIXED = "1"',
      "",
      "[tui]",
      "theme = 'dark'",
      "",
    ].join("\n");
    write(file, before);
    install("codex", http());
    expect(fs.readFileSync(file, "utf8")).toBe(
      [
        "# mine",
        'model = "o3"',
        "",
        "[mcp_servers.muster]",
        "tool_timeout_sec = 7200",
        `url = "${URL_}"`,
        'bearer_token_env_var = "MUSTER_MCP_TOKEN"',
        'default_tools_approval_mode = "approve"',
        "required = true",
        "",
        "[tui]",
        "theme = 'dark'",
        "",
      ].join("\n"),
    );
  });

  it("refuses a bad --url, a bad --token-env, --env with --url and --token-env alone; nothing is written", () => {
    const refused: [Parameters<typeof install>[1], RegExp][] = [
      [
        { url: "127.0.0.1:7421/mcp" },
        /--url: not a URL: 127\.0\.0\.1:7421\/mcp \(expected http:\/\/HOST:PORT\/mcp\)/,
      ],
      [{ url: "localhost:7421/mcp" }, /--url: localhost:7421\/mcp is not an http\(s\) URL/],
      [{ url: "not a url" }, /--url: not a URL: not a url/],
      [{ url: "ftp://h/mcp" }, /not an http\(s\) URL/],
      [{ url: "http://me:pw@h/mcp" }, /no credentials in the URL/],
      [{ url: `http://h/mcp?token=${TOKEN}` }, /has a query or fragment/],
      [{ url: "http://h/$HOME/mcp" }, /contains "\$"/],
      [{ url: URL_, tokenEnv: "BAD-NAME" }, /--token-env: not a variable name: BAD-NAME/],
      [{ url: URL_, env: ["FOO"] }, /--env goes with the stdio form, not --url/],
      [{ tokenEnv: "FOO" }, /--token-env goes with --url/],
    ];
    for (const client of CLIENTS)
      for (const [more, message] of refused) {
        expect(() => install(client, opts(more)), `${client} ${JSON.stringify(more)}`).toThrow(message);
        expect(() => doctor(client, opts(more))).toThrow(message);
      }
    expect(fs.readdirSync(home)).toEqual([]);
    expect(fs.readdirSync(project)).toEqual([]);
  });

  it("an https URL is kept as given (normalised), and a path other than /mcp gets a note", () => {
    const r = install("opencode", opts({ url: "HTTPS://Build.Example:8443/muster" }));
    expect(r.url).toBe("https://build.example:8443/muster");
    expect(r.notes.join(" ")).toContain("muster mcp --http serves /mcp");
  });
});

describe("the CLI, --url", () => {
  const sb = useSandbox("mt-install-url-cli");

  it("install --url --json, doctor --url (a warning when the variable is unset), bad flags exit 2 in one line", async () => {
    const j = await sb.json(["mcp", "install", "codex", "--url", URL_, "--token-env", "MY_TOKEN"]);
    expect(j).toMatchObject({
      exitCode: 0,
      data: { client: "codex", transport: "http", url: URL_, tokenEnv: "MY_TOKEN" },
    });
    const d = await sb.run(["mcp", "doctor", "codex", "--url", URL_, "--token-env", "MY_TOKEN"]);
    expect(d.exitCode, d.stdout).toBe(0);
    expect(d.stdout).toContain("warning: MY_TOKEN is not set in this environment");
    const set = await sb.run(["mcp", "doctor", "codex", "--url", URL_, "--token-env", "MY_TOKEN"], {
      env: { MY_TOKEN: TOKEN },
    });
    expect(set.stdout).not.toContain("warning:");
    // A doctor for another URL fails and names the install that fixes it.
    const other = await sb.run(["mcp", "doctor", "codex", "--url", "http://127.0.0.1:1/mcp"]);
    expect(other.exitCode).toBe(1);
    expect(other.stdout).toContain("fix: muster mcp install codex --url http://127.0.0.1:1/mcp\n");
    for (const args of [
      ["--url", "ftp://x/mcp"],
      ["--url", URL_, "--env", "FOO"],
      ["--token-env", "FOO"],
    ]) {
      const r = await sb.run(["mcp", "install", "claude", ...args]);
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.stderr.trim().split("\n"), r.stderr).toHaveLength(1);
    }
  });
});
