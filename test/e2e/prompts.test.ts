import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { useSandbox } from "../helpers/cli.js";

const sha = (s: string) => createHash("sha256").update(Buffer.from(s, "utf8")).digest("hex");
const shaIn = (text: string) => /prompt-sha256: ([0-9a-f]{64})/.exec(text)?.[1];

// Every C0 control but NUL, DEL, and characters that tempt a shell or a terminal.
const binaryish =
  Array.from({ length: 31 }, (_, i) => String.fromCharCode(i + 1)).join("") +
  "\x7f\u2028\u2029\ufeff\u00ff\u{1F600}";
const NASTY: Record<string, string> = {
  "shell metacharacters": `'"$(rm -rf ~)";\`whoami\` && echo pwned | cat > /tmp/x; \${HOME} \\ \\n`,
  "escape sequences": "clear the screen \x1b[2J\x1b[H and set a title \x1b]0;owned\x07 then \x1bc reset",
  "binary-ish bytes": `binary ${binaryish} end`,
  "10,000 lines": Array.from({ length: 10_000 }, (_, i) => `line ${i}`).join("\n"),
  "64 KiB": `${"x".repeat(64 * 1024 - 20)}\nthe end of 64 KiB\n`,
};

const sb = useSandbox("mt-prompt");

describe("prompts arrive byte-exact (the mock reports the sha256 of what it received)", () => {
  let followUpTarget = "";
  for (const [name, prompt] of Object.entries(NASTY)) {
    it(`spawn: ${name}`, async () => {
      const r = await sb.json(["spawn", "--wait", prompt]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(shaIn(r.data.results[0].text)).toBe(sha(prompt));
      followUpTarget ||= r.data.spawned.id;
    });
  }
  for (const [name, prompt] of Object.entries(NASTY)) {
    it(`send: ${name}`, async () => {
      const r = await sb.json(["send", followUpTarget, "--wait", prompt]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(shaIn(r.data.results[0].text)).toBe(sha(prompt));
    });
  }
  it("--file and --file - (stdin) carry the prompt exactly too", async () => {
    const prompt = NASTY["escape sequences"]! + NASTY["shell metacharacters"]!;
    const file = path.join(sb.cwd, "prompt.txt");
    fs.writeFileSync(file, prompt);
    const a = await sb.json(["spawn", "--wait", "--file", file]);
    expect(shaIn(a.data.results[0].text)).toBe(sha(prompt));
    const b = await sb.run(["spawn", "--wait", "--file", "-"], { input: prompt });
    expect(shaIn(b.stdout)).toBe(sha(prompt));
  });
  it("the command runner takes its prompt from --file and from stdin: the words after -- are all its argv", async () => {
    const prompt = `${NASTY["shell metacharacters"]!}\n${"y".repeat(300_000)}`;
    const file = path.join(sb.cwd, "command-prompt.txt");
    fs.writeFileSync(file, prompt);
    const hash = ["sha256sum", "{prompt_file}"];
    const a = await sb.run(["spawn", "--agent", "command", "--wait", "--file", file, "--", ...hash]);
    expect(a.exitCode, a.stderr).toBe(0);
    expect(a.stdout.split(" ")[0]).toBe(sha(prompt));
    const b = await sb.run(["spawn", "--agent", "command", "--wait", "--file", "-", "--", ...hash], {
      input: prompt,
    });
    expect(b.exitCode, b.stderr).toBe(0);
    expect(b.stdout.split(" ")[0]).toBe(sha(prompt));
    // A prompt both ways is still refused, before anything is made.
    const both = await sb.run(["spawn", "--agent", "command", "--file", file, "task", "--", "true"]);
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toMatch(/either as an argument or with --file, not both/);
  });

  it("a prompt over 1 MiB is refused with a clear error and nothing is created", async () => {
    const before = (await sb.json(["ls"])).data.children.length;
    const file = path.join(sb.cwd, "huge.txt");
    fs.writeFileSync(file, "y".repeat(1024 * 1024 + 1));
    const r = await sb.run(["spawn", "--file", file]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("limit");
    expect((await sb.json(["ls"])).data.children.length).toBe(before);
  });
});
