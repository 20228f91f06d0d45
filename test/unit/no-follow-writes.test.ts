// The child host's own files (prompts, output.md, the disk reserve, a runner's prompt file) are written
// without following a symlink planted at their path: the link is replaced, its target never written.
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { AnswerSink } from "../../src/child/answer.js";
import { DiskReserve } from "../../src/child/reserve.js";
import { RunSlots } from "../../src/child/slots.js";
import { passPrompt } from "../../src/runners/common/shared.js";
import { getRunner } from "../../src/runners/registry.js";
import { openFreshNoFollow, writeFileAtomic } from "../../src/util/fsx.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mt-nofollow-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let n = 0;
/** A file outside "the artifact dir" and a symlink to it where the host is about to write. */
function planted(name: string) {
  n += 1;
  const victim = path.join(dir, `victim-${n}.txt`);
  fs.writeFileSync(victim, "precious\n");
  const at = path.join(dir, `${n}-${name}`);
  fs.symlinkSync(victim, at);
  return {
    at,
    victimUnchanged: () => expect(fs.readFileSync(victim, "utf8")).toBe("precious\n"),
    replaced: () => expect(fs.lstatSync(at).isSymbolicLink()).toBe(false),
  };
}

describe("writes that replace a planted symlink instead of following it", () => {
  it("writeFileAtomic (prompts/<turn>.txt, the transcript prompt) renames over the link", () => {
    const p = planted("prompt.txt");
    writeFileAtomic(p.at, "the prompt");
    p.victimUnchanged();
    p.replaced();
    expect(fs.readFileSync(p.at, "utf8")).toBe("the prompt");
  });

  it("openFreshNoFollow unlinks the link and creates a new file", () => {
    const p = planted("out");
    const fd = openFreshNoFollow(p.at);
    fs.writeSync(fd, "new");
    fs.closeSync(fd);
    p.victimUnchanged();
    p.replaced();
    expect(fs.readFileSync(p.at, "utf8")).toBe("new");
  });

  it("AnswerSink: output.md planted as a symlink gets the answer, the target keeps its bytes", () => {
    const p = planted("output.md");
    const errors: Error[] = [];
    const sink = new AnswerSink(p.at, (e) => errors.push(e));
    sink.write("streamed ");
    sink.replace("the answer");
    sink.close();
    expect(errors).toEqual([]);
    p.victimUnchanged();
    p.replaced();
    expect(fs.readFileSync(p.at, "utf8")).toBe("the answer");
  });

  it("DiskReserve: .reserve planted as a symlink is replaced by the reserve, not filled with zeros", () => {
    const p = planted(".reserve");
    new DiskReserve(p.at, 4096).hold();
    p.victimUnchanged();
    p.replaced();
    expect(fs.statSync(p.at).size).toBe(4096);
  });

  it("a CLI runner's stdin prompt file (a prompt too long for argv) replaces a planted link", () => {
    const runnerDir = path.join(dir, "runner");
    fs.mkdirSync(runnerDir);
    const victim = path.join(dir, "victim-runner.txt");
    fs.writeFileSync(victim, "precious\n");
    const at = path.join(runnerDir, "prompt-t9.txt");
    fs.symlinkSync(victim, at);
    const prompt = "p".repeat(200 * 1024);
    const r = passPrompt(
      {
        turnId: "t9",
        prompt: "the prompt file holds something else",
        promptFile: path.join(dir, "prompt.txt"),
        cwd: dir,
        env: {},
        runnerDir,
      },
      prompt,
      (q) => [q],
    );
    expect(r.stdinFile).toBe(at);
    expect(fs.readFileSync(victim, "utf8")).toBe("precious\n");
    expect(fs.lstatSync(at).isSymbolicLink()).toBe(false);
    expect(fs.readFileSync(at, "utf8")).toBe(prompt);
  });

  it("gemini's per-child settings file (tool narrowing) replaces a planted link", () => {
    const runnerDir = path.join(dir, "runner-gemini");
    fs.mkdirSync(runnerDir);
    const victim = path.join(dir, "victim-gemini.json");
    fs.writeFileSync(victim, "precious\n");
    const at = path.join(runnerDir, "gemini-settings.json");
    fs.symlinkSync(victim, at);
    const plan = getRunner("gemini")!.plan({
      turnId: "t1",
      prompt: "hi",
      promptFile: path.join(dir, "prompt.txt"),
      cwd: dir,
      env: {},
      runnerDir,
      tools: ["read_file"],
    });
    expect(plan.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH).toBe(at);
    expect(fs.readFileSync(victim, "utf8")).toBe("precious\n");
    expect(fs.lstatSync(at).isSymbolicLink()).toBe(false);
    expect(JSON.parse(fs.readFileSync(at, "utf8"))).toEqual({ tools: { core: ["read_file"] } });
  });

  it("a run-slot ticket replaces a planted link", async () => {
    const slots = path.join(dir, "slots");
    fs.mkdirSync(slots);
    const victim = path.join(dir, "victim-ticket.json");
    fs.writeFileSync(victim, "precious\n");
    const at = path.join(slots, "child-1.json");
    fs.symlinkSync(victim, at);
    expect(await new RunSlots(slots, 4, "child-1", dir).tryAcquire()).toBeUndefined();
    expect(fs.readFileSync(victim, "utf8")).toBe("precious\n");
    expect(fs.lstatSync(at).isSymbolicLink()).toBe(false);
    expect(JSON.parse(fs.readFileSync(at, "utf8"))).toMatchObject({ pid: process.pid, childId: "child-1" });
  });
});
