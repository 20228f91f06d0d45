import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readEvents, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-cwd");

describe("a child whose working directory is gone", () => {
  it("the next turn settles errored: working directory … no longer exists (not 'command not found')", async () => {
    const dir = fs.mkdtempSync(path.join(sb.cwd, "gone-"));
    // `sh -c pwd <prompt>`: the prompt is only $0; the answer is the working directory.
    const r = await sb.run([
      "spawn",
      "--agent",
      "command",
      "--cwd",
      dir,
      "--wait",
      "--json",
      "one",
      "--",
      "sh",
      "-c",
      "pwd",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const first = JSON.parse(r.stdout);
    expect(first.results[0].text.trim()).toBe(dir);
    const id = first.spawned.id as string;
    fs.rmSync(dir, { recursive: true });
    const second = await sb.json(["send", id, "--wait", "two"]);
    expect(second.exitCode).toBe(1);
    expect(second.data.results[0]).toMatchObject({
      status: "errored",
      reason: `working directory ${dir} no longer exists`,
    });
    // No runner was started for it.
    const events = readEvents(second.data.results[0].artifactDir);
    expect(events.filter((e) => e.type === "runner_started")).toHaveLength(1);
  });
});
