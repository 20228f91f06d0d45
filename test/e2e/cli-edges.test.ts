import { spawn } from "node:child_process";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { BIN, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-edge");

/** Runs the CLI with a stdout pipe whose reading end is closed before the CLI writes anything. */
function withClosedStdout(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: sb.cwd,
      env: sb.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

describe("a reader that goes away (muster … | head -c 0)", () => {
  for (const args of [["--help"], ["ls", "--json"], ["agents"], ["progress", "--help"]]) {
    it(`muster ${args.join(" ")} ends quietly with 0`, async () => {
      const r = await withClosedStdout(args);
      expect(r.stderr).not.toMatch(/EPIPE|Error|\n\s+at /);
      expect(r.code).toBe(0);
    });
  }
});

describe("--split where no split can be made", () => {
  it("outside tmux the child opens as a window, and the output says so", async () => {
    const human = await sb.run(["spawn", "--split", "split me"]);
    expect(human.exitCode).toBe(0);
    expect(human.stderr).toMatch(/warning: --split needs to run inside tmux.*opened a background window/);
    const json = await sb.json(["spawn", "--split", "split me too"]);
    expect(json.exitCode).toBe(0);
    expect(json.data.warnings).toEqual([expect.stringMatching(/--split needs to run inside tmux/)]);
    // Without --split nothing is said.
    expect((await sb.json(["spawn", "plain"])).data.warnings).toEqual([]);
  });

  it("inside tmux (TMUX and TMUX_PANE of this server) it splits the caller's pane, without a warning", async () => {
    await sb.run(["spawn", "makes the server"]);
    const tmux = (a: string[]) => execa("tmux", ["-L", sb.socket, ...a], { stdin: "ignore" });
    const socketPath = String((await tmux(["display-message", "-p", "#{socket_path}"])).stdout).trim();
    const pid = String((await tmux(["display-message", "-p", "#{pid}"])).stdout).trim();
    const caller = String((await tmux(["list-panes", "-t", "muster:0", "-F", "#{pane_id}"])).stdout).trim();
    const env = { TMUX: `${socketPath},${pid},0`, TMUX_PANE: caller, MUSTER_TMUX_SOCKET: "" };
    const r = await sb.run(["spawn", "--split", "--json", "beside me"], { env });
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).warnings).toEqual([]);
    const panes = String((await tmux(["list-panes", "-t", "muster:0", "-F", "#{pane_id}"])).stdout).split(
      "\n",
    );
    expect(panes).toContain(JSON.parse(r.stdout).paneId);
  });
});
