import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readEvents, useSandbox } from "../helpers/cli.js";

const sb = useSandbox("mt-fork");

/** The prompt files of a child's turns, by name (`<turn>.txt`, and `<turn>.runner.txt` when the runner got more). */
const prompts = (dir: string): Map<string, string> =>
  new Map(
    fs
      .readdirSync(path.join(dir, "prompts"))
      .sort()
      .map((f) => [f, fs.readFileSync(path.join(dir, "prompts", f), "utf8")]),
  );

describe("spawn --fork: a new child starts from another's conversation", () => {
  it("hands the fork's runner the source's tasks and answers once, then its own session continues; the source is untouched", async () => {
    // Not the default agent, and a model and reasoning of its own: the fork goes on with all three.
    const src = await sb.json([
      "spawn",
      "--wait",
      "--agent",
      "reviewer",
      "--model",
      "mock:deep",
      "--reasoning",
      "high",
      "--name",
      "origin",
      "Map the parser module\nmock: reply=PARSER-MAP",
    ]);
    expect(src.exitCode, JSON.stringify(src.data)).toBe(0);
    const srcId = src.data.results[0].id as string;
    const srcDir = (await sb.json(["status", srcId])).data.artifactDir as string;
    const srcSession = path.join(srcDir, "..", "..", "subagents", `${srcId}.jsonl`);
    const before = fs.readFileSync(srcSession);

    // By name, with no --agent: the source's agent.
    const fork = await sb.json(["spawn", "--wait", "--fork", "origin", "Now plan the lexer the same way"]);
    expect(fork.exitCode, JSON.stringify(fork.data)).toBe(0);
    const forkId = fork.data.results[0].id as string;
    const st = await sb.json(["status", forkId]);
    expect(st.data).toMatchObject({ agent: "reviewer", forkedFrom: srcId });
    expect(readEvents(st.data.artifactDir).find((e) => e.type === "turn_started")).toMatchObject({
      model: "mock:deep",
      reasoning: "high",
    });
    const human = await sb.run(["status", forkId]);
    expect(human.stdout).toContain(`forked from ${srcId}`);

    const first = [...prompts(st.data.artifactDir)];
    const runner = first.find(([f]) => f.endsWith(".runner.txt"));
    expect(runner, first.map(([f]) => f).join(", ")).toBeDefined();
    const text = runner![1];
    expect(text).toMatch(
      /^The conversation so far:\n\nUser:\nMap the parser module\nmock: reply=PARSER-MAP\n\nAssistant:\nPARSER-MAP/,
    );
    expect(text.endsWith("The new request:\n\nNow plan the lexer the same way")).toBe(true);
    // The source's conversation file is exactly as it was.
    expect(fs.readFileSync(srcSession).equals(before)).toBe(true);

    // The fork's next turn continues its own runner session: no conversation text again.
    const next = await sb.json(["send", "--wait", forkId, "And the tokens?"]);
    expect(next.exitCode, JSON.stringify(next.data)).toBe(0);
    expect(next.data.results[0].text ?? "").toContain("history-turns: 1");
    const runnerFiles = [...prompts(st.data.artifactDir).keys()].filter((f) => f.endsWith(".runner.txt"));
    expect(runnerFiles).toHaveLength(1);
    await sb.run(["cancel", srcId, forkId]);
  });

  it("inside a child, --fork $MUSTER_CHILD_ID hands a new child the running conversation, its current task included", async () => {
    const script = 'muster spawn --json --wait --fork "$MUSTER_CHILD_ID" --agent mock "carry on from here"';
    // --json before `--`: everything after it is the command's argv.
    const argv = [
      "spawn",
      "--agent",
      "command",
      "--json",
      "--wait",
      "Survey the build scripts",
      "--",
      "sh",
      "-c",
      script,
    ];
    const out = await sb.run(argv);
    expect(out.exitCode, out.stdout + out.stderr).toBe(0);
    const r = { data: JSON.parse(out.stdout) };
    const parentId = r.data.results[0].id as string;
    const inner = JSON.parse(r.data.results[0].text);
    const forkId = inner.results[0].id as string;
    expect(inner.results[0].status).toBe("completed");
    const st = await sb.json(["status", forkId]);
    expect(st.data).toMatchObject({ forkedFrom: parentId, parent: parentId });
    const dir = path.join(st.data.artifactDir, "prompts");
    const carried = fs.readFileSync(
      path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith(".runner.txt"))!),
      "utf8",
    );
    expect(carried).toBe(
      "The conversation so far:\n\nUser:\nSurvey the build scripts\n\nThe new request:\n\ncarry on from here",
    );
    await sb.run(["cancel", parentId, forkId]);
  });

  it("refuses an unknown source and --fork with --resume, creating nothing", async () => {
    const count = async () => (await sb.json(["ls"])).data.children.length;
    const n = await count();
    const unknown = await sb.run(["spawn", "--fork", "nosuchchild", "x"]);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(/no child of this primary is named "nosuchchild"/);
    const both = await sb.run(["spawn", "--fork", "origin", "--resume", "origin", "x"]);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toMatch(/--fork starts a new child/);
    expect(await count()).toBe(n);
  });
});
