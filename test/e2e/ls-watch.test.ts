import * as fs from "node:fs";
import * as path from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";
import { BIN, until, useSandbox } from "../helpers/cli.js";
import { killServerAndWait, privateSocket } from "../helpers/tmux.js";

const sb = useSandbox("mt-lsw");
// The terminal `ls --watch` draws on: a pane of its own private tmux server (the children use sb.socket).
const screen = privateSocket("mt-lsw-tty");
const tmux = (a: string[]) => execa("tmux", ["-L", screen, ...a], { stdin: "ignore", timeout: 10_000 });
afterAll(() => killServerAndWait(screen));

const ENV_KEYS = [
  "PATH",
  "HOME",
  "XDG_CONFIG_HOME",
  "MUSTER_HOME",
  "MUSTER_TMUX_SOCKET",
  "NO_COLOR",
  "LANG",
  "LC_ALL",
];
const envWords = () => ENV_KEYS.filter((k) => sb.env[k] !== undefined).map((k) => `${k}=${sb.env[k]}`);
const capture = async () => String((await tmux(["capture-pane", "-p", "-t", "w"])).stdout);

describe("muster ls --watch", () => {
  it("on a terminal: redraws in place as children change; Ctrl-C restores the screen, exits 0, children stay", async () => {
    await tmux([
      "new-session",
      "-d",
      "-s",
      "w",
      "-x",
      "160",
      "-y",
      "30",
      "-c",
      sb.cwd,
      "--",
      "env",
      "-i",
      ...envWords(),
      process.execPath,
      BIN,
      "ls",
      "--watch",
    ]);
    await tmux(["set-option", "-w", "-t", "w", "remain-on-exit", "on"]);
    await until(async () => (await capture()).includes("muster ls --watch"), 20_000, 100);
    expect(await capture()).toContain("no children yet");

    // A child spawned after the watch started appears, working, then waiting for input: no key pressed.
    const id = (await sb.json(["spawn", "--name", "watched", "mock: sleep=5 tools=1"])).data.id as string;
    const row = async () => (await capture()).split("\n").find((l) => l.startsWith(id.slice(-8))) ?? "";
    await until(async () => /\bwatched\b.*\bworking\b/.test(await row()), 20_000, 100);
    await until(async () => /\bwaiting-input\b/.test(await row()), 20_000, 100);
    const screenNow = await capture();
    // Redrawn in place: one header, one table, not a scroll of copies.
    expect(screenNow.split("\n").filter((l) => l.startsWith("muster ls --watch"))).toHaveLength(1);
    expect(screenNow.split("\n").filter((l) => l.startsWith("ID "))).toHaveLength(1);

    await tmux(["send-keys", "-t", "w", "C-c"]);
    const status = await until(async () => {
      const r = await tmux(["display-message", "-p", "-t", "w", "#{pane_dead} #{pane_dead_status}"]);
      const [dead, code] = String(r.stdout).trim().split(" ");
      if (dead !== "1") return undefined;
      if (code) return { code: Number(code) };
      await tmux(["run-shell", "true"]); // tmux 3.3a records a dead pane's status lazily
      return undefined;
    }, 20_000);
    expect(status).toEqual({ code: 0 });
    // The alternate screen is gone: what was on the terminal before is back.
    expect(await capture()).not.toContain("muster ls --watch");
    expect((await sb.json(["status", "watched"])).data.status).toBe("idle");
    await sb.run(["cancel", id]);
  });

  it("not a terminal: the list again after each change; Ctrl-C exits 0", async () => {
    const proc = execa(process.execPath, [BIN, "ls", "--watch"], {
      cwd: sb.cwd,
      env: sb.env,
      extendEnv: false,
      reject: false,
      stdin: "ignore",
      timeout: 60_000,
    });
    let text = "";
    proc.stdout?.on("data", (d: Buffer) => {
      text += d.toString("utf8");
    });
    await until(() => text.includes("muster ls --watch"), 20_000, 50);
    const id = (await sb.json(["spawn", "mock: tools=1"])).data.id as string;
    const rows = () => text.split("\n").filter((l) => l.startsWith(id.slice(-8)));
    await until(() => rows().some((l) => /\bmock\s+waiting-input\b/.test(l)), 20_000, 50);
    expect(text).not.toContain("\u001b");
    expect(text.split("\n").filter((l) => l.startsWith("muster ls --watch")).length).toBeGreaterThanOrEqual(
      2,
    );
    proc.kill("SIGINT");
    expect((await proc).exitCode).toBe(0);
    await sb.run(["cancel", id]);
  });

  it("--all follows every primary; --watch with --json: one line, exit 2", async () => {
    // A second workspace is a second primary.
    const other = path.join(path.dirname(sb.cwd), "other-work");
    fs.mkdirSync(other, { recursive: true });
    const spawnIn = async (cwd: string, prompt: string) => {
      const r = await execa(process.execPath, [BIN, "spawn", prompt, "--json"], {
        cwd,
        env: sb.env,
        extendEnv: false,
      });
      return JSON.parse(String(r.stdout)).id as string;
    };
    const here = await spawnIn(sb.cwd, "mock: tools=1");
    const there = await spawnIn(other, "mock: tools=1");
    const proc = execa(process.execPath, [BIN, "ls", "--watch", "--all"], {
      cwd: sb.cwd,
      env: sb.env,
      extendEnv: false,
      reject: false,
      stdin: "ignore",
      timeout: 60_000,
    });
    let text = "";
    proc.stdout?.on("data", (d: Buffer) => {
      text += d.toString("utf8");
    });
    await until(() => [here, there].every((id) => text.includes(id.slice(-8))), 20_000, 50);
    expect(text).toMatch(/^muster ls --watch · \d+ primaries · /m);
    expect(text.split("\n")[1]).toMatch(/\bPRIMARY$/);
    // A change in either primary redraws.
    await sb.run(["send", here, "again"]);
    await until(
      () =>
        text
          .split("\n")
          .some((l) => l.startsWith(here.slice(-8)) && /\bmock\s+\S+\s+completed\s+2\b/.test(l)),
      20_000,
      50,
    );
    proc.kill("SIGINT");
    expect((await proc).exitCode).toBe(0);
    for (const [id, cwd] of [
      [here, sb.cwd],
      [there, other],
    ])
      await execa(process.execPath, [BIN, "cancel", id], {
        cwd,
        env: sb.env,
        extendEnv: false,
        reject: false,
      });

    const r = await sb.run(["ls", "--watch", "--json"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });
});
