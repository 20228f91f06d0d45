import * as fs from "node:fs";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { processesWithEnv, useSandbox } from "../helpers/cli.js";

// A fresh sandbox: its private tmux server is started by the spawn below, from an environment with a secret.
const sb = useSandbox("mt-tmuxenv");
const SECRET = { SECRET_TOKEN: "xyz-not-for-tmux" };
const printSecret = [
  process.execPath,
  "-e",
  "process.stdout.write(String(process.env.SECRET_TOKEN))",
  "{prompt}",
];

const tmux = async (args: string[]): Promise<string> => {
  const r = await execa("tmux", ["-L", sb.socket, ...args], { reject: false });
  expect(r.exitCode, String(r.stderr)).toBe(0);
  return String(r.stdout);
};

describe("the private tmux server's environment", () => {
  it("holds none of the spawning environment's secrets; the child's runner still gets them, after a resume too", async () => {
    const run = await sb.run(
      ["spawn", "--agent", "command", "--wait", "--json", "show it", "--", ...printSecret],
      {
        env: SECRET,
      },
    );
    const first = JSON.parse(run.stdout);
    expect(first.results[0]).toMatchObject({ status: "completed", text: "xyz-not-for-tmux" });
    const id = first.spawned.id as string;

    const global = await tmux(["show-environment", "-g"]);
    expect(global).toContain("PATH=");
    expect(global).not.toContain("SECRET_TOKEN");
    expect(await tmux(["show-environment", "-t", "muster"])).not.toContain("SECRET_TOKEN");
    // Nor the server process's own environment, which every later server-side fork inherits.
    const serverPid = (await tmux(["display-message", "-p", "#{pid}"])).trim();
    expect(fs.readFileSync(`/proc/${serverPid}/environ`, "utf8")).not.toContain("SECRET_TOKEN");
    // The child host (alive, idle) was started by tmux without it: only its runner gets it, from env.json.
    expect(processesWithEnv(`SECRET_TOKEN=${SECRET.SECRET_TOKEN}`)).toEqual([]);

    // A resumed child gets a new host in a new pane: the environment comes with it, not from tmux.
    await sb.run(["cancel", id]);
    const again = await sb.json(["spawn", "--resume", id, "--wait", "again"], { env: SECRET });
    expect(again.data.results[0]).toMatchObject({ status: "completed", text: "xyz-not-for-tmux" });
    expect(await tmux(["show-environment", "-g"])).not.toContain("SECRET_TOKEN");
    await sb.run(["cancel", id]);
  });
});
