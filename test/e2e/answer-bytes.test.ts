import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";
import { runOnTty } from "../helpers/tty.js";

const sb = useSandbox("mt-bytes");
// An answer that does not end in a line break: the command runner's stdout is the answer, and the prompt
// it appends as the last argument is printed as nothing (%.0s).
const ANSWER = "two words, no line break";
const answering = ["--agent", "command", "task", "--", "printf", `${ANSWER}%.0s`];

describe("an answer goes byte-exact into a pipe from every command that prints one", () => {
  it("spawn --wait, wait, send --wait and result add nothing; a terminal still gets its line break", async () => {
    const spawned = await sb.run(["spawn", "--wait", ...answering]);
    expect(spawned.exitCode).toBe(0);
    expect(spawned.stdout).toBe(ANSWER);
    const id = (await sb.json(["ls"])).data.children[0].id as string;

    const waited = await sb.run(["wait", id]);
    expect(waited.exitCode).toBe(0);
    expect(waited.stdout).toBe(ANSWER);

    const sent = await sb.run(["send", "--wait", id, "again"]);
    expect(sent.exitCode).toBe(0);
    expect(sent.stdout).toBe(ANSWER);

    const result = await sb.run(["result", id]);
    expect(result.stdout).toBe(ANSWER);

    const tty = await runOnTty(sb, ["wait", id]);
    expect(tty.exitCode).toBe(0);
    expect(tty.raw.toString("utf8")).toContain(`${ANSWER}\r\n`);
  });
});
