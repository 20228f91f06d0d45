import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { appendSession, type SessionMessage } from "../../src/sessions/store.js";
import { BIN, readEvents, useSandbox } from "../helpers/cli.js";
import { bytesReadFrom, readsOfNode, traceReadsOf } from "../helpers/strace.js";

const sb = useSandbox("mt-longconv");
const sessionFile = (artifactDir: string, id: string) =>
  path.join(artifactDir, "..", "..", "subagents", `${id}.jsonl`);

// Attaching to a process that is not our own child takes root where Yama's ptrace scope is on (the CI's case is root).
const scope = (() => {
  try {
    return Number(fs.readFileSync("/proc/sys/kernel/yama/ptrace_scope", "utf8"));
  } catch {
    return 0;
  }
})();
const canTrace = process.getuid?.() === 0 || scope === 0;

/** ~100 KB answers as the host writes them: a conversation of `turns` more turns, ~turns × 100 KB. */
function grow(file: string, turns: number): void {
  const lines: SessionMessage[] = [];
  for (let i = 0; i < turns; i++) {
    const turnId = `filler-${i}`;
    lines.push(
      {
        type: "message",
        role: "user",
        text: `question ${i}`,
        ts: new Date().toISOString(),
        metadata: { turnId, source: "inbox", model: "mock:deep" },
      },
      {
        type: "message",
        role: "assistant",
        text: `answer ${i} ${"z".repeat(100_000)}`,
        ts: new Date().toISOString(),
        metadata: { turnId, status: "completed" },
      },
    );
  }
  appendSession(file, lines);
}

/** The reads of one CLI command run under strace, in the sandbox. */
const cliTrace = (args: string[]): string => readsOfNode([BIN, ...args], sb);

describe("a follow-up costs the same however long the conversation grew", () => {
  it.skipIf(!canTrace)(
    "send and resume read the conversation's end only, and the host's next turn does not read it",
    async () => {
      const first = (await sb.json(["spawn", "--wait", "mock: reply=one"])).data;
      const id = first.spawned.id as string;
      const dir = first.results[0].artifactDir as string;
      const file = sessionFile(dir, id);
      // The host is idle between turns: nothing else writes the file now.
      grow(file, 60);
      const size = fs.statSync(file).size;
      expect(size).toBeGreaterThan(6_000_000);

      // `send` in a process of its own under strace: the follow-up's defaults come from the file's end.
      const conversationRead = (args: string[]) => {
        const read = bytesReadFrom(cliTrace(args), (f) => f.endsWith(`${id}.jsonl`));
        expect(read).toBeGreaterThan(0);
        expect(read).toBeLessThan(512 * 1024);
      };
      conversationRead(["send", id, "mock: reply=two"]);
      const two = (await sb.json(["wait", id])).data;
      expect(two.results[0].text).toContain("two");
      // The defaults it found: the last user message's model (the first turn had none).
      const started = readEvents(dir).filter((e) => e.type === "turn_started");
      expect(started.at(-1)).toMatchObject({ turnId: two.results[0].turnId, model: "mock:deep" });

      // The host across a whole turn: its runner resumes its own session, so the conversation is not read.
      const hostPid = JSON.parse(fs.readFileSync(path.join(dir, "host.json"), "utf8")).pid as number;
      const tracing = await traceReadsOf(hostPid);
      const three = (await sb.json(["send", id, "--wait", "mock: reply=three"])).data;
      const trace = await tracing.stop();
      expect(three.results[0].text).toContain("three");
      // The trace saw the turn: the host read its request from the inbox.
      expect(bytesReadFrom(trace, (f) => f.includes(`${path.sep}inbox${path.sep}`))).toBeGreaterThan(0);
      // Only the byte before each append (whether the last line ended): the turn appends its request and answer.
      expect(bytesReadFrom(trace, (f) => f.endsWith(`${id}.jsonl`))).toBeLessThanOrEqual(2);

      // `spawn --resume` looks for a completed turn from the file's end too.
      conversationRead(["spawn", "--resume", id, "mock: reply=four"]);
      const four = (await sb.json(["wait", id])).data;
      expect(four.results[0].text).toContain("four");
    },
    60_000,
  );
});
