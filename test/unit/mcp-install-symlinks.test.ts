// `muster mcp install <client> --project` writes only inside the project: a config folder or file that is a
// symlink leading out (a "victim" folder standing in for /etc) is refused with nothing written anywhere; one
// leading elsewhere inside the project is followed. Real temp dirs, real symlinks.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { doctor, install } from "../../src/mcp/install/index.js";
import { useSandbox } from "../helpers/cli.js";

let base: string;
let home: string;
let project: string;
let victim: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), "mt-install-links-"));
  home = path.join(base, "home");
  project = path.join(base, "project");
  victim = path.join(base, "victim");
  for (const d of [home, project, victim]) fs.mkdirSync(d, { recursive: true });
  env = { HOME: home };
});
afterEach(() => {
  fs.rmSync(base, { recursive: true, force: true });
});

const projectOpts = () => ({ processEnv: env, cwd: project, scope: "project" as const });

/** Every entry under `dir` with its kind and bytes: what "nothing changed" compares. */
function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d)) {
      const p = path.join(d, name);
      const st = fs.lstatSync(p);
      const rel = path.relative(dir, p);
      if (st.isSymbolicLink()) out[rel] = `-> ${fs.readlinkSync(p)}`;
      else if (st.isDirectory()) {
        out[rel] = "dir";
        walk(p);
      } else if (st.isFile()) out[rel] = fs.readFileSync(p, "utf8");
      else out[rel] = "special";
    }
  };
  walk(dir);
  return out;
}

/** Each client's project config: its folder (none for a file in the project's root) and file name. */
const PROJECT_FILES: Record<string, { dir?: string; file: string }[]> = {
  claude: [{ file: ".mcp.json" }, { dir: ".claude", file: "settings.local.json" }],
  codex: [{ dir: ".codex", file: "config.toml" }],
  gemini: [{ dir: ".gemini", file: "settings.json" }],
  opencode: [{ file: "opencode.json" }],
};
const EXISTING: Record<string, string> = {
  "config.toml": 'model = "o3"\n',
};
const existing = (file: string) => EXISTING[file] ?? '{"mine": true}\n';

describe("--project refuses a config folder or file that is a symlink out of the project", () => {
  for (const [client, files] of Object.entries(PROJECT_FILES)) {
    for (const { dir, file } of files) {
      const name = dir ? `${dir}/${file}` : file;

      if (dir)
        it(`${client}: ${dir} -> a folder outside (empty, like /etc): one line naming the link, nothing created`, () => {
          const link = path.join(project, dir);
          fs.symlinkSync(victim, link);
          const before = { victim: tree(victim), project: tree(project) };
          expect(() => install(client, projectOpts())).toThrow(
            `refusing to write ${path.join(link, file)}: ${link} is a symlink to ${fs.realpathSync(victim)}, outside the project ${project}; nothing was written`,
          );
          expect(tree(victim)).toEqual(before.victim);
          expect(tree(project)).toEqual(before.project);
        });

      if (dir)
        it(`${client}: ${dir} -> a folder outside holding ${file}: it is not merged into`, () => {
          fs.writeFileSync(path.join(victim, file), existing(file));
          fs.symlinkSync(victim, path.join(project, dir));
          const before = { victim: tree(victim), project: tree(project) };
          expect(() => install(client, projectOpts())).toThrow(/is a symlink to .*, outside the project/);
          expect(tree(victim)).toEqual(before.victim);
          expect(tree(project)).toEqual(before.project);
        });

      it(`${client}: ${name} -> a file outside: neither it nor the link is written`, () => {
        if (dir) fs.mkdirSync(path.join(project, dir));
        const target = path.join(victim, `target-${file}`);
        fs.writeFileSync(target, existing(file));
        fs.symlinkSync(target, path.join(project, name));
        const before = { victim: tree(victim), project: tree(project) };
        expect(() => install(client, projectOpts())).toThrow(
          `${path.join(project, name)} is a symlink to ${fs.realpathSync(target)}, outside the project`,
        );
        expect(tree(victim)).toEqual(before.victim);
        expect(tree(project)).toEqual(before.project);
      });

      it(`${client}: ${name} -> a missing file outside (dangling): nothing is created there`, () => {
        if (dir) fs.mkdirSync(path.join(project, dir));
        fs.symlinkSync(path.join(victim, "new-file"), path.join(project, name));
        const before = tree(project);
        expect(() => install(client, projectOpts())).toThrow(
          /is a symlink to .*new-file, outside the project/,
        );
        expect(tree(victim)).toEqual({});
        expect(tree(project)).toEqual(before);
      });
    }
  }

  it("a link that leaves and comes back in is judged by where it ends: followed", () => {
    fs.mkdirSync(path.join(project, "real-gemini"));
    fs.symlinkSync(path.join(project, "real-gemini"), path.join(victim, "back"));
    fs.symlinkSync(path.join(victim, "back"), path.join(project, ".gemini"));
    install("gemini", projectOpts());
    expect(
      JSON.parse(fs.readFileSync(path.join(project, "real-gemini", "settings.json"), "utf8")),
    ).toMatchObject({ mcpServers: { muster: { trust: true } } });
    expect(tree(victim)).toEqual({ back: `-> ${path.join(project, "real-gemini")}` });
  });
});

describe("mcp doctor --project", () => {
  it("names a config folder linked out of the project instead of reporting what it finds there", () => {
    // Fully configured, but outside: the client would read it, install --project would not write it.
    install("gemini", { processEnv: { HOME: victim }, cwd: project });
    fs.symlinkSync(path.join(victim, ".gemini"), path.join(project, ".gemini"));
    const d = doctor("gemini", projectOpts());
    expect(d.ok).toBe(false);
    expect(d.files[0]!.missing).toEqual([
      `${path.join(project, ".gemini")} is a symlink to ${path.join(fs.realpathSync(victim), ".gemini")}, outside the project ${project} (muster mcp install --project does not write there)`,
    ]);
    expect(d.files[0]!.fix).toMatch(/^replace the symlink with a file or folder inside the project/);
  });
});

describe("--project follows a symlink that stays inside the project", () => {
  it("gemini: .gemini -> shared/gemini inside: the file is written there", () => {
    fs.mkdirSync(path.join(project, "shared", "gemini"), { recursive: true });
    fs.symlinkSync(path.join("shared", "gemini"), path.join(project, ".gemini"));
    const r = install("gemini", projectOpts());
    expect(r.files[0]).toMatchObject({
      file: path.join(project, ".gemini", "settings.json"),
      status: "created",
    });
    const written = path.join(project, "shared", "gemini", "settings.json");
    expect(fs.lstatSync(written).isFile()).toBe(true);
    expect(JSON.parse(fs.readFileSync(written, "utf8")).mcpServers.muster.trust).toBe(true);
  });

  it("codex and claude: a symlinked config file inside is written at its target; the link stays a link", () => {
    fs.mkdirSync(path.join(project, "cfg"));
    fs.mkdirSync(path.join(project, ".codex"));
    fs.writeFileSync(path.join(project, "cfg", "codex.toml"), '# shared\nmodel = "o3"\n');
    fs.symlinkSync(path.join("..", "cfg", "codex.toml"), path.join(project, ".codex", "config.toml"));
    fs.writeFileSync(path.join(project, "cfg", "mcp.json"), '{"mcpServers": {}}\n');
    fs.symlinkSync(path.join("cfg", "mcp.json"), path.join(project, ".mcp.json"));
    install("codex", projectOpts());
    install("claude", projectOpts());
    expect(fs.lstatSync(path.join(project, ".codex", "config.toml")).isSymbolicLink()).toBe(true);
    expect(fs.lstatSync(path.join(project, ".mcp.json")).isSymbolicLink()).toBe(true);
    const toml = fs.readFileSync(path.join(project, "cfg", "codex.toml"), "utf8");
    expect(toml.startsWith('# shared\nmodel = "o3"\n')).toBe(true);
    expect(toml).toContain("[mcp_servers.muster]");
    expect(
      JSON.parse(fs.readFileSync(path.join(project, "cfg", "mcp.json"), "utf8")).mcpServers.muster,
    ).toBeDefined();
    // The backup sits next to the name the client reads.
    expect(fs.readdirSync(path.join(project, ".codex")).some((f) => f.startsWith("config.toml.bak-"))).toBe(
      true,
    );
  });

  it("a dangling link to a file inside: the file is created at the target, the link kept", () => {
    fs.symlinkSync(path.join("cfg", "opencode.json"), path.join(project, "opencode.json"));
    install("opencode", projectOpts());
    expect(fs.lstatSync(path.join(project, "opencode.json")).isSymbolicLink()).toBe(true);
    expect(
      JSON.parse(fs.readFileSync(path.join(project, "cfg", "opencode.json"), "utf8")).mcp.muster,
    ).toBeDefined();
  });
});

describe("only regular files are written", () => {
  it("--project: a FIFO as the config file (directly or through an in-project link) is refused, not waited on", () => {
    fs.mkdirSync(path.join(project, ".gemini"));
    expect(spawnSync("mkfifo", [path.join(project, "fifo")]).status).toBe(0);
    fs.symlinkSync(path.join("..", "fifo"), path.join(project, ".gemini", "settings.json"));
    expect(() => install("gemini", projectOpts())).toThrow(
      `refusing to write ${path.join(project, ".gemini", "settings.json")}: its target ${path.join(fs.realpathSync(project), "fifo")} is a FIFO; nothing was written`,
    );
    expect(fs.lstatSync(path.join(project, "fifo")).isFIFO()).toBe(true);
  });

  it("user scope: a config file linked to a FIFO or a folder is refused, nothing written", () => {
    fs.mkdirSync(path.join(home, ".gemini"));
    expect(spawnSync("mkfifo", [path.join(victim, "fifo")]).status).toBe(0);
    const link = path.join(home, ".gemini", "settings.json");
    fs.symlinkSync(path.join(victim, "fifo"), link);
    expect(() => install("gemini", { processEnv: env, cwd: project })).toThrow(
      /is a FIFO; it is left untouched/,
    );
    fs.unlinkSync(link);
    fs.symlinkSync(victim, link);
    expect(() => install("gemini", { processEnv: env, cwd: project })).toThrow(/is a directory/);
    expect(tree(victim)).toEqual({ fifo: "special" });
  });
});

describe("the CLI", () => {
  const sb = useSandbox("mt-install-links-cli");

  it("mcp install gemini --project with .gemini -> a folder outside: one line, exit 2, nothing written", async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "mt-victim-"));
    try {
      fs.symlinkSync(outside, path.join(sb.cwd, ".gemini"));
      const r = await sb.run(["mcp", "install", "gemini", "--project"]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(
        `${path.join(sb.cwd, ".gemini")} is a symlink to ${fs.realpathSync(outside)}`,
      );
      expect(fs.readdirSync(outside)).toEqual([]);
    } finally {
      fs.rmSync(path.join(sb.cwd, ".gemini"), { force: true });
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });
});
